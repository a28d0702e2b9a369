// ToeplitzNormal's NUFFT kernels by slabs across a Cartesian axis built on the GPU (one plan for identical planes,
// set_points from group to group otherwise; the compressed pair data gathered on the device) against the exact
// float64 G^H W G and the host's build; the Toeplitz normal of a time-segmented NUFFT sharing its phase maps.
#include <complex>

#include "ToeplitzTestProblem.h"
#include "forge/Core/DeviceMemory.h"

using namespace toeplitz_test;

namespace {

forge::ToeplitzOptions nufft_on(bool host) {
    forge::ToeplitzOptions o;
    o.build = host ? forge::KernelBuild::Host : forge::KernelBuild::Auto;
    o.source = forge::KernelSource::Nufft;
    return o;
}

}  // namespace

TEST_CASE("GPU ToeplitzNormal with NUFFT kernels by slabs equals the exact G^H W G and the host's build",
          "[gpu][Toeplitz][slabs]") {
    FORGE_INFO_SEED();
    const Grid g{20, 16, 10};
    for (int axis = 0; axis < 3; ++axis)
        for (const bool shared : {true, false}) {
            INFO("axis " << axis << (shared ? ", identical planes" : ", random per sample"));
            const Trajectory tr =
                shared ? shared_stack(g, axis, 120, 6e-3) : cartesian_along(g, axis, 2 * g.n2(), 6e-3);
            const arma::vec fm = smooth_field_map(g, 2 * kPi * 60);
            const uword L = 3;
            const auto gpu = field_corrected<float>(g, tr, fm, L, nufft_on(false));
            const auto host = field_corrected<float>(g, tr, fm, L, nufft_on(true));
            CHECK(gpu.kernels_built_on_gpu());
            CHECK(host.grouped_axis() == uword(axis));
            // Identical planes share one plan: by slabs on the GPU too. A plan per plane costs more there than the
            // whole grid's NUFFT at test sizes, so the GPU may take that (both equal the reference).
            if (shared) CHECK(gpu.grouped_axis() == uword(axis));
            const arma::cx_vec x = complex_normal<double>(g.n2());
            const arma::cx_vec d = on_device(gpu, x);
            const double tol = toeplitz_tolerance(gpu, tr.kx.n_elem, 1e-6);
            CHECK(rel_error(d, on_device(host, x)) <= tol);
            CHECK(rel_error(d, arma::conv_to<arma::cx_vec>::from(SegmentedNormal(g, tr, fm, L, float())(x))) <= tol);
        }
}

TEST_CASE("GPU ToeplitzNormal of a time-segmented NUFFT: shared phase maps, equal to the field-map build",
          "[gpu][Toeplitz][slabs]") {
    FORGE_INFO_SEED();
    const Grid g{24, 20, 8};
    const Trajectory tr = shared_stack(g, 2, 150, 8e-3);
    const arma::vec fm = smooth_field_map(g, 2 * kPi * 90);
    const uword L = 4;
    const forge::ImageGrid grid(g.Nx, g.Ny, g.Nz);
    const forge::Trajectory<float> k = trajectory_of<float>(tr);
    const auto S = segmented_nufft<float>(g, tr, fm, L);
    const forge::ToeplitzNormal<float> fromSegments(grid, k, as<float>(tr.W), S);
    const forge::ToeplitzNormal<float> fromMap(grid, k, as<float>(tr.W), as<float>(fm), L);
    CHECK(fromSegments.kernels_built_on_gpu());
    S.prepare_device();
    forge::device::reset_transfer_stats();
    fromSegments.prepare_device();  // the phase maps are on the GPU already: only the pair table goes up
    CHECK(forge::device::transfer_stats().host_to_device_bytes < 4096);
    const arma::cx_vec x = complex_normal<double>(g.n2());
    CHECK(rel_error(on_device(fromSegments, x), on_device(fromMap, x)) <= toeplitz_tolerance(fromMap, tr.kx.n_elem));
}
