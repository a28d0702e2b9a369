#include "forge/Sim/DemoAcquisition.h"

#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/SENSE.h"
#include "forge/Operators/dft/Gdft.h"
#include "forge/Sim/Coils.h"
#include "forge/Sim/FieldMaps.h"
#include "forge/Sim/Phantoms.h"
#include "forge/Sim/Trajectories.h"

namespace forge {
namespace sim {

using cxf = std::complex<float>;

void DemoOptions::check() const {
    if (size < 16 || size > 256 || size % 2)
        throw invalid_argument("demo_acquisition: size is " + std::to_string(size) +
                               " (expected an even number from 16 to 256)");
    if (slices < 1 || slices > 16)
        throw invalid_argument("demo_acquisition: slices is " + std::to_string(slices) + " (expected 1 to 16)");
    if (coils < 1 || coils > 32)
        throw invalid_argument("demo_acquisition: coils is " + std::to_string(coils) + " (expected 1 to 32)");
    if (!(noise >= 0) || !std::isfinite(noise))
        throw invalid_argument("demo_acquisition: noise is " + std::to_string(noise) +
                               " (expected a finite value >= 0)");
}

namespace {

// The objects and the geometry: phantom, coil maps scaled to sum_c |S_c|^2 = 1 (a prescan-normalised array: the
// receive field's overall shading is not in the data, and maps estimated from them follow the same normalisation),
// field map; contiguous slices centred on 0.
DemoAcquisition objects(const DemoOptions& o) {
    DemoAcquisition d;
    d.N = o.size;
    d.slices = o.slices;
    d.coils = o.coils;
    for (std::size_t s = 0; s < d.slices; ++s) {
        d.slice_offset_mm.push_back(float((double(s) - double(d.slices - 1) / 2) * d.thickness_mm));
        d.truth.push_back(smooth_shepp_logan_slice(d.N, s, d.slices));
        d.smaps.push_back(normalise_coil_maps(ring_coil_maps(d.N, d.coils, s), d.coils));
        d.field_map.push_back(two_blob_field_map(d.N, s));
    }
    return d;
}

// The spiral's readouts: 2 interleaves per slice, Archimedean, constant angular rate, spiral-out from k = 0,
// 3 N samples per turn, 16 ms each from TE 1 ms.
SimulatedScan spiral_readouts(const DemoAcquisition& d, std::size_t shots) {
    const std::size_t N = d.N, turns = N / (2 * shots), perTurn = 3 * N;
    const std::size_t nsamp = turns * perTurn;
    const double dwell_us = 16000.0 / double(nsamp);  // 16 ms readout
    SimulatedScan scan;
    scan.echo_times_ms = {1.0};
    for (std::size_t s = 0; s < d.slices; ++s)
        for (std::size_t sh = 0; sh < shots; ++sh) {
            Readout r;
            r.slice = s;
            r.line = sh;
            r.samples = nsamp;
            r.center_sample = 0;
            r.dwell_us = static_cast<float>(dwell_us);
            const Trajectory2D k = spiral_interleave_normalised(nsamp, turns, sh, shots);
            r.traj.resize(2 * nsamp);
            for (std::size_t j = 0; j < nsamp; ++j) {
                r.traj[2 * j] = float(k.kx[j]);
                r.traj[2 * j + 1] = float(k.ky[j]);
            }
            r.data.assign(nsamp * d.coils, cxf(0, 0));
            scan.readouts.push_back(std::move(r));
        }
    return scan;
}

// The field-map scan of the usual protocol: fully sampled Cartesian, 2 echoes, short readouts (4 us dwell).
SimulatedScan fieldmap_readouts(const DemoAcquisition& d) {
    const std::size_t N = d.N;
    SimulatedScan scan;
    scan.cartesian = true;
    scan.echo_times_ms = {2.0, 4.5};
    scan.centre_line = N / 2;
    for (std::size_t s = 0; s < d.slices; ++s)
        for (std::size_t e = 0; e < scan.echo_times_ms.size(); ++e)
            for (std::size_t line = 0; line < N; ++line) {
                Readout r;
                r.slice = s;
                r.contrast = e;
                r.line = line;
                r.samples = N;
                r.center_sample = N / 2;
                r.dwell_us = 4.0f;
                r.data.assign(N * d.coils, cxf(0, 0));
                scan.readouts.push_back(std::move(r));
            }
    return scan;
}

// The frames of 'scan' (echo-major, slice within echo), with ISMRMRD's conventions as forge's MRD reader applies
// them: k = the normalised trajectory x N (the recon FOV is the encoded one), or from the counters (sample -
// center_sample, line - centre_line); t = TE + (sample - center_sample) x dwell.
void make_frames(SimulatedScan& scan, const DemoAcquisition& d) {
    const double kmax = double(d.N) / 2;
    for (std::size_t e = 0; e < scan.echo_times_ms.size(); ++e)
        for (std::size_t s = 0; s < d.slices; ++s) {
            SimulatedFrame fr;
            fr.slice = s;
            fr.contrast = e;
            fr.echo_time = scan.echo_times_ms[e] * 1e-3;
            std::size_t n1 = 0;
            for (const Readout& r : scan.readouts)
                if (r.slice == s && r.contrast == e) n1 += r.samples;
            fr.k = Trajectory<float>(arma::fvec(n1), arma::fvec(n1), arma::fvec(n1, arma::fill::zeros), arma::fvec(n1));
            std::size_t off = 0;
            for (const Readout& r : scan.readouts) {
                if (r.slice != s || r.contrast != e) continue;
                const double dwell = r.dwell_us * 1e-6;
                for (std::size_t j = 0; j < r.samples; ++j) {
                    double k[2];
                    if (scan.cartesian) {
                        k[0] = double(j) - double(r.center_sample);
                        k[1] = double(r.line) - double(scan.centre_line);
                    } else {
                        for (int a = 0; a < 2; ++a) {
                            const double v = r.traj[2 * j + std::size_t(a)];
                            k[a] = v * double(d.N);
                        }
                    }
                    for (double& ka : k)  // inside [-N/2, N/2): the +N/2 edge sample wraps (NUFFT convention)
                        if (ka >= kmax && ka <= kmax + 1e-6) ka -= 2 * kmax;
                    fr.k.kx[off + j] = float(k[0]);
                    fr.k.ky[off + j] = float(k[1]);
                    fr.k.t[off + j] = float(fr.echo_time + (double(j) - double(r.center_sample)) * dwell);
                }
                off += r.samples;
            }
            scan.frames.push_back(std::move(fr));
        }
}

// Every frame's data: SENSE on the exact Gdft with the true field map (all coils in one batch), plus complex
// Gaussian noise at 'noise' of the frame's RMS; written into the frame and back into its readouts.
void simulate(SimulatedScan& scan, const DemoAcquisition& d, double noise, bool gpu, std::mt19937& rng) {
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    const PixelGeometry<float> px = PixelGeometry<float>::on_grid(ImageGrid(d.N, d.N));
    const std::size_t n2 = d.N * d.N, nc = d.coils;
    for (SimulatedFrame& fr : scan.frames) {
        const std::size_t n1 = fr.k.kx.n_elem;
        Gdft<float> G(n1, n2, fr.k.kx, fr.k.ky, fr.k.kz, px.x, px.y, px.z, d.field_map[fr.slice], fr.k.t);
        SENSE<float, Gdft<float>> E(G, d.smaps[fr.slice], nc);
        arma::cx_fvec y;
        if (gpu) {  // simulate where the reconstruction runs: one batched SENSE apply on the GPU
            forgeCol<forgeComplex<float>> xg(arma::conv_to<arma::cx_fvec>::from(d.truth[fr.slice]));
            xg.put_on_gpu();
            forgeCol<forgeComplex<float>> yg = E * xg;
            yg.get_from_gpu();
            y = yg.to_arma();
        } else {
            y = E * arma::conv_to<arma::cx_fvec>::from(d.truth[fr.slice]);
        }
        const double rms = std::sqrt(double(arma::accu(arma::square(arma::abs(y)))) / double(y.n_elem));
        const float sigma = float(noise * rms / std::sqrt(2.0));
        for (auto& v : y) v += cxf(sigma * gauss(rng), sigma * gauss(rng));
        fr.y = y;
        std::size_t off = 0;
        for (Readout& r : scan.readouts) {
            if (r.slice != fr.slice || r.contrast != fr.contrast) continue;
            for (std::size_t c = 0; c < nc; ++c)
                for (std::size_t j = 0; j < r.samples; ++j) r.data[c * r.samples + j] = y[c * n1 + off + j];
            off += r.samples;
        }
    }
}

}  // namespace

DemoAcquisition demo_acquisition(const DemoOptions& o) {
    o.check();
    if (o.gpu && !device::available())
        throw cuda_error("demo_acquisition: gpu was asked for but no CUDA device is usable (built with CUDA: " +
                         std::string(device::built_with_cuda() ? "yes" : "no") + ")");
    DemoAcquisition d = objects(o);
    d.shots = 2;
    d.spiral = spiral_readouts(d, d.shots);
    d.field_map_scan = fieldmap_readouts(d);
    make_frames(d.spiral, d);
    make_frames(d.field_map_scan, d);
    const auto t0 = std::chrono::steady_clock::now();
    std::mt19937 rng(o.seed);
    if (o.simulate) {
        // both scans where the reconstruction runs: the field-map scan's N^2 samples of every slice and echo are
        // as many sample-pixel products as the spiral's (the host's exact DFT took 9 s of a 256x256x4x16 demo)
        simulate(d.spiral, d, o.noise, o.gpu, rng);
        simulate(d.field_map_scan, d, o.noise, o.gpu, rng);
    } else {
        for (SimulatedScan* scan : {&d.spiral, &d.field_map_scan})
            for (SimulatedFrame& fr : scan->frames) fr.y.zeros(fr.k.kx.n_elem * d.coils);
    }
    d.simulation_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return d;
}

}  // namespace sim
}  // namespace forge
