// BART arrays -> ISMRMRD content (BartProblem.h).
#include "forge/IO/BartProblem.h"

#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>

#include "forge/Core/BandEdge.h"

namespace forge {
namespace io {

namespace {

std::string quoted(const std::string& name) { return "'" + cfl_base(name) + ".cfl'"; }

// Every digit of a float (80.0000153, not std::to_string's 80.000015 or a rounded 80).
std::string all_digits(float v) {
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<float>::max_digits10) << v;
    return s.str();
}

const char* dim_name(std::size_t d) {
    // BART's read, phase 1, phase 2, ... as the non-Cartesian layout uses them
    static const char* names[kCflDims] = {"coordinates", "samples", "readouts", "coils",  "ESPIRiT maps", "echoes",
                                          "coeff",       "coeff 2", "iter",     "cshift", "time",         "time 2",
                                          "level",       "slices",  "average",  "batch"};
    return names[d];
}

// A dimension of k-space or trajectory forge-recon reads: samples, readouts, coils, time, slices.
bool read_dim(std::size_t d) {
    return d == 1 || d == 2 || d == kBartCoilDim || d == kBartTimeDim || d == kBartSliceDim;
}

// Index of element (i0, i1, ...) of an array with 'dims'; a size-1 dimension of the array is broadcast.
std::size_t offset(const CflDims& dims, const CflDims& idx) {
    std::size_t o = 0, stride = 1;
    for (std::size_t d = 0; d < kCflDims; ++d) {
        o += (dims[d] == 1 ? 0 : idx[d]) * stride;
        stride *= dims[d];
    }
    return o;
}

}  // namespace

void check_bart_dims(const CflDims& k, const std::string& kName, const CflDims& t, const std::string& tName) {
    if (k[0] != 1)
        throw input_error("BART k-space " + quoted(kName) + " has dims " + cfl_dims_string(k) +
                          ": non-Cartesian k-space has size 1 in dimension 0 ([1, samples, readouts, coils]); "
                          "Cartesian k-space needs a trajectory too");
    if (t[0] != 3)
        throw input_error("BART trajectory " + quoted(tName) + " has dims " + cfl_dims_string(t) +
                          ": a trajectory has 3 coordinates in dimension 0 ([3, samples, readouts])");
    for (std::size_t d = 1; d < kCflDims; ++d) {
        if (!read_dim(d) && k[d] != 1)
            throw input_error("BART k-space " + quoted(kName) + " has dims " + cfl_dims_string(k) + ": dimension " +
                              std::to_string(d) + " (" + dim_name(d) + ") is " + std::to_string(k[d]) +
                              "; forge-recon reads samples (1), readouts (2), coils (3), time (10) and slices (13)");
        if (d == kBartCoilDim || (!read_dim(d) && t[d] == 1)) continue;
        if (!read_dim(d))
            throw input_error("BART trajectory " + quoted(tName) + " has dims " + cfl_dims_string(t) + ": dimension " +
                              std::to_string(d) + " (" + dim_name(d) + ") is " + std::to_string(t[d]) + ", expected 1");
        const bool shared = (d == kBartTimeDim || d == kBartSliceDim) && t[d] == 1;
        if (t[d] != k[d] && !shared)
            throw input_error("BART trajectory " + quoted(tName) + " (dims " + cfl_dims_string(t) + ") and k-space " +
                              quoted(kName) + " (dims " + cfl_dims_string(k) + ") differ in dimension " +
                              std::to_string(d) + " (" + dim_name(d) + "): " + std::to_string(t[d]) + " and " +
                              std::to_string(k[d]));
    }
    if (t[kBartCoilDim] != 1)
        throw input_error("BART trajectory " + quoted(tName) + " has dims " + cfl_dims_string(t) +
                          ": dimension 3 (coils) must be 1 (every coil shares the trajectory)");
    if (k[1] > 65535)
        throw input_error("BART k-space " + quoted(kName) + " has " + std::to_string(k[1]) +
                          " samples per readout (dimension 1); forge-recon reads at most 65535");
    if (k[kBartTimeDim] > 65535 || k[kBartSliceDim] > 65535 || k[kBartCoilDim] > 65535)
        throw input_error("BART k-space " + quoted(kName) + " has dims " + cfl_dims_string(k) +
                          ": at most 65535 coils, time points and slices");
}

std::array<std::size_t, 3> check_bart_maps_dims(const CflDims& m, const std::string& mName, const CflDims& k) {
    if (m[kBartMapsDim] != 1)
        throw input_error("BART coil maps " + quoted(mName) + " have dims " + cfl_dims_string(m) + ": " +
                          std::to_string(m[kBartMapsDim]) +
                          " ESPIRiT sets in dimension 4; forge-recon takes one (bart ecalib -m1, or bart slice 4 0)");
    for (std::size_t d = 5; d < kCflDims; ++d)
        if (m[d] != 1 && d != kBartSliceDim)
            throw input_error("BART coil maps " + quoted(mName) + " have dims " + cfl_dims_string(m) + ": dimension " +
                              std::to_string(d) + " (" + dim_name(d) + ") is " + std::to_string(m[d]) + ", expected 1");
    if (m[kBartCoilDim] != k[kBartCoilDim] || m[kBartSliceDim] != k[kBartSliceDim])
        throw input_error("BART coil maps " + quoted(mName) + " have dims " + cfl_dims_string(m) + " (" +
                          std::to_string(m[kBartCoilDim]) + " coils, " + std::to_string(m[kBartSliceDim]) +
                          " slices) but the k-space " + std::to_string(k[kBartCoilDim]) + " coils and " +
                          std::to_string(k[kBartSliceDim]) + " slices");
    if (m[0] < 2 || m[1] < 2 || m[0] % 2 || m[1] % 2 || (m[2] > 1 && m[2] % 2))
        throw input_error("BART coil maps " + quoted(mName) + " have dims " + cfl_dims_string(m) +
                          ": their image matrix " + std::to_string(m[0]) + "x" + std::to_string(m[1]) + "x" +
                          std::to_string(m[2]) + " needs even sizes, at least 2x2 (forge's grids are even)");
    return {{m[0], m[1], m[2]}};
}

std::array<std::size_t, 3> bart_image_matrix(const CflArray& traj, const std::string& trajName) {
    double kmax[3] = {0, 0, 0};
    for (std::size_t i = 0; i < traj.size(); ++i) {
        const std::complex<float> v = traj.data[i];
        if (!std::isfinite(v.real()) || v.imag() != 0.0f)
            throw input_error("BART trajectory " + quoted(trajName) + ": coordinate " + std::to_string(i) + " is (" +
                              std::to_string(v.real()) + ", " + std::to_string(v.imag()) +
                              "i); expected a finite real number");
        kmax[i % 3] = std::max(kmax[i % 3], std::fabs(double(v.real())));
    }
    std::array<std::size_t, 3> n;
    for (int d = 0; d < 3; ++d) {
        n[d] = kmax[d] == 0 ? 1 : 2 * static_cast<std::size_t>((2 * double(float(kmax[d])) + 1.5) / 2);
        if (n[d] == 0)
            throw input_error("BART trajectory " + quoted(trajName) + ": its largest |k" + "xyz"[d] + "| is " +
                              std::to_string(kmax[d]) +
                              ", which BART's image-size estimate turns into 0 pixels along " + "xyz"[d] +
                              "; give the image matrix with --bart-maps");
    }
    return n;
}

MrdFile mrd_from_bart(const CflArray& k, const std::string& kName, const CflArray& t, const std::string& tName,
                      const std::array<std::size_t, 3>& matrix, const std::array<double, 3>& voxel_mm,
                      const BartSampleTimes& sampleTimes) {
    check_bart_dims(k.dims, kName, t.dims, tName);
    const bool timed = sampleTimes.dwell != 0;
    if (timed && !(std::isfinite(sampleTimes.dwell) && sampleTimes.dwell > 0))
        throw input_error("the dwell time of BART k-space " + quoted(kName) + " is " +
                          std::to_string(sampleTimes.dwell) +
                          " s; expected a positive, finite number of seconds per sample");
    if (!(std::isfinite(sampleTimes.echo_time) && sampleTimes.echo_time >= 0))
        throw input_error("the echo time of BART k-space " + quoted(kName) + " is " +
                          std::to_string(sampleTimes.echo_time) + " s; expected a finite number of seconds >= 0");
    const bool is3D = matrix[2] > 1;
    const std::size_t ns = k.dims[1], readouts = k.dims[2], nc = k.dims[kBartCoilDim];
    const std::size_t times = k.dims[kBartTimeDim], slices = k.dims[kBartSliceDim];
    // every coordinate inside the band of its axis (the Gnufft range, docs/conventions.md)
    const char* axis = "xyz";
    for (std::size_t i = 0; i < t.size(); ++i) {
        const std::complex<float> v = t.data[i];
        const std::size_t d = i % 3;
        const double half = band_half_width(matrix[d]);
        if (!std::isfinite(v.real()) || v.imag() != 0.0f)
            throw input_error("BART trajectory " + quoted(tName) + ": coordinate " + std::to_string(i) + " is (" +
                              std::to_string(v.real()) + ", " + std::to_string(v.imag()) +
                              "i); expected a finite real number");
        if (matrix[d] == 1 ? v.real() != 0.0f : !within_band(double(v.real()), half))
            throw input_error("BART trajectory " + quoted(tName) + ": k" + axis[d] + " = " + all_digits(v.real()) +
                              " (sample " + std::to_string((i / 3) % ns) + " of readout " +
                              std::to_string((i / 3 / ns) % readouts) + ") is outside [-" +
                              std::to_string(matrix[d] / 2) + ", " + std::to_string(matrix[d] / 2) +
                              "], the band of the image's " + std::to_string(matrix[d]) + " pixels along " + axis[d] +
                              " (BART's units are cycles/FOV: a 2x oversampled readout needs `bart scale 0.5`)");
    }
    for (std::size_t i = 0; i < k.size(); ++i)
        if (!std::isfinite(k.data[i].real()) || !std::isfinite(k.data[i].imag()))
            throw input_error("BART k-space " + quoted(kName) + " holds a non-finite value (NaN or Inf) at element " +
                              std::to_string(i));

    MrdFile F;
    MrdHeader& H = F.header;
    for (int d = 0; d < 3; ++d) {
        H.encoded_matrix[d] = H.recon_matrix[d] = matrix[d];
        H.encoded_fov_mm[d] = H.recon_fov_mm[d] = double(matrix[d]) * voxel_mm[d];
    }
    H.trajectory = "other";
    H.receiver_channels = nc;
    if (timed) {  // t = TE + (j - center_sample) * dwell with center_sample 0 (problem_from_mrd)
        H.has_te = true;
        H.te_ms = sampleTimes.echo_time * 1e3;
        H.echo_times_ms = {H.te_ms};
    }
    F.acquisitions.reserve(readouts * times * slices);
    const std::size_t traj_dims = is3D ? 3 : 2;
    for (std::size_t sl = 0; sl < slices; ++sl)
        for (std::size_t tm = 0; tm < times; ++tm)
            for (std::size_t r = 0; r < readouts; ++r) {
                MrdAcquisition a;
                a.samples = uint16_t(ns);
                a.channels = uint16_t(nc);
                a.traj_dims = uint16_t(traj_dims);
                a.center_sample = uint16_t(timed ? 0 : ns / 2);
                a.dwell_us = timed ? float(sampleTimes.dwell * 1e6) : 0.0f;
                a.e1 = uint16_t(r % 65536);
                a.slice = uint16_t(sl);
                a.repetition = uint16_t(tm);
                a.read_dir = {{1, 0, 0}};
                a.phase_dir = {{0, 1, 0}};
                a.slice_dir = {{0, 0, 1}};
                a.position = {{0, 0, float(double(sl) * double(matrix[2]) * voxel_mm[2])}};
                a.data.resize(ns * nc);
                a.traj.resize(ns * traj_dims);
                CflDims idx{};
                idx[2] = r;
                idx[kBartTimeDim] = tm;
                idx[kBartSliceDim] = sl;
                for (std::size_t j = 0; j < ns; ++j) {
                    idx[1] = j;
                    idx[kBartCoilDim] = 0;
                    for (std::size_t d = 0; d < traj_dims; ++d) {
                        idx[0] = d;
                        // ISMRMRD's normalised units, as problem_from_mrd() reads them back: k / matrix
                        a.traj[j * traj_dims + d] = t.data[offset(t.dims, idx)].real() / float(matrix[d]);
                    }
                    idx[0] = 0;
                    for (std::size_t c = 0; c < nc; ++c) {
                        idx[kBartCoilDim] = c;
                        a.data[c * ns + j] = k.data[offset(k.dims, idx)];
                    }
                }
                F.acquisitions.push_back(std::move(a));
            }
    return F;
}

void check_bart_times_dims(const CflDims& t, const std::string& tName, const CflDims& k) {
    for (std::size_t d = 0; d < kCflDims; ++d) {
        const bool shared = (d == kBartTimeDim || d == kBartSliceDim) && t[d] == 1;
        const std::size_t expected = d == 1 || d == 2 || d == kBartTimeDim || d == kBartSliceDim ? k[d] : 1;
        if (t[d] != expected && !shared)
            throw input_error("--bart-times " + quoted(tName) + " has dims " + cfl_dims_string(t) +
                              " but the k-space " + cfl_dims_string(k) + ": expected [1, samples, readouts] = [1, " +
                              std::to_string(k[1]) + ", " + std::to_string(k[2]) + "] (dimension " + std::to_string(d) +
                              " (" + dim_name(d) + ") is " + std::to_string(t[d]) + ", expected " +
                              std::to_string(expected) + ")");
    }
}

void set_bart_sample_times(recon::ReconProblem& P, const CflArray& t, const std::string& tName) {
    const std::size_t ns = t.dims[1], readouts = t.dims[2];
    for (recon::ReconFrame& fr : P.frames) {
        if (fr.t.n_elem != ns * readouts)
            throw input_error("--bart-times " + quoted(tName) + " holds " + std::to_string(ns * readouts) +
                              " times per frame, but the frame has " + std::to_string(fr.t.n_elem) + " samples");
        CflDims idx{};
        idx[kBartTimeDim] = fr.frame;
        idx[kBartSliceDim] = fr.slice;
        for (std::size_t r = 0; r < readouts; ++r)
            for (std::size_t j = 0; j < ns; ++j) {
                idx[1] = j;
                idx[2] = r;
                const std::complex<float> v = t.data[offset(t.dims, idx)];
                if (!std::isfinite(v.real()) || v.imag() != 0.0f || v.real() < 0.0f)
                    throw input_error("--bart-times " + quoted(tName) + ": the time of sample " + std::to_string(j) +
                                      " of readout " + std::to_string(r) + " is (" + all_digits(v.real()) + ", " +
                                      all_digits(v.imag()) + "i); expected a finite real number of seconds >= 0");
                fr.t[r * ns + j] = v.real();
            }
    }
}

Array bart_maps_array(const CflArray& m) {
    const std::size_t nx = m.dims[0], ny = m.dims[1], nz = m.dims[2], nc = m.dims[kBartCoilDim],
                      slices = m.dims[kBartSliceDim];
    const std::size_t plane = nx * ny * nz;
    Array a;
    a.dims = {nx, ny, nz * slices, nc};
    a.is_complex = true;
    a.data.resize(plane * slices * nc);
    // BART: x, y, z, coil, ..., slice (dimension 13, stride plane * nc); attach_smaps: x, y, z, slice, coil
    for (std::size_t s = 0; s < slices; ++s)
        for (std::size_t c = 0; c < nc; ++c)
            for (std::size_t p = 0; p < plane; ++p)
                a.data[(c * slices + s) * plane + p] = std::complex<double>(m.data[(s * nc + c) * plane + p]);
    return a;
}

}  // namespace io
}  // namespace forge
