// Benchmark of one large exact DFT over several GPUs of one machine (DftOptions::devices,
// forge/Operators/dft/cuda/CudaMultiDft.h) against the same Gdft on one GPU: forward (split by samples) and adjoint (split
// by pixels) on device-resident data, seconds per call, pair evaluations per second, the speed-up and the
// relative difference of the results.
//
//   bench_multigpu_gdft [--grid NXxNYxNZ] [--samples N] [--devices 0,1] [--reps R] [--sizes small|large]
//
// Defaults: a 128x128x64 grid, 2^21 samples, devices 0,1 when the machine has two GPUs, else 0,0 (two parts
// on one GPU: the split's overhead, no speed-up to expect). --sizes small: 32x32x16, 2^16 samples.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "BenchCommon.h"
#include "forge/Core/DeviceMemory.h"
#include "forge/Core/forgeCol.h"
#include "forge/Operators/dft/Gdft.h"

using namespace forge;
using namespace forge_bench;
using cvec = forgeCol<forgeComplex<float>>;

namespace {

std::vector<int> parse_devices(const std::string& s) {
    std::vector<int> d;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');) d.push_back(std::stoi(item));
    return d;
}

std::string list(const std::vector<int>& d) {
    std::string s = "{";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "}";
}

}  // namespace

int main(int argc, char** argv) {
    uword nx = 128, ny = 128, nz = 64, n1 = uword(1) << 21;
    int reps = 3;
    std::vector<int> devices;
    for (int a = 1; a < argc; ++a) {
        const std::string s = argv[a];
        auto next = [&]() -> std::string {
            if (a + 1 >= argc) {
                std::fprintf(stderr, "bench_multigpu_gdft: %s needs a value\n", s.c_str());
                std::exit(2);
            }
            return argv[++a];
        };
        if (s == "--grid") {
            if (std::sscanf(next().c_str(), "%llux%llux%llu", (unsigned long long*)&nx, (unsigned long long*)&ny,
                            (unsigned long long*)&nz) != 3) {
                std::fprintf(stderr, "bench_multigpu_gdft: --grid NXxNYxNZ\n");
                return 2;
            }
        } else if (s == "--samples") {
            n1 = std::stoull(next());
        } else if (s == "--devices") {
            devices = parse_devices(next());
        } else if (s == "--reps") {
            reps = std::max(1, std::stoi(next()));
        } else if (s == "--sizes") {
            if (next() == "small") {
                nx = 32, ny = 32, nz = 16;
                n1 = uword(1) << 16;
            }
        } else {
            std::fprintf(stderr, "usage: bench_multigpu_gdft [--grid NXxNYxNZ] [--samples N] [--devices 0,1] "
                                 "[--reps R] [--sizes small|large]\n");
            return 2;
        }
    }
    if (!device::available()) {
        std::printf("bench_multigpu_gdft: no CUDA device (%s); nothing to measure\n",
                    device::built_with_cuda() ? "none present" : "forge built without CUDA");
        return 0;
    }
    const int count = device::device_count();
    if (devices.empty()) devices = count >= 2 ? std::vector<int>{0, 1} : std::vector<int>{0, 0};
    const uword n2 = nx * ny * nz;
    std::printf("bench_multigpu_gdft: %s; %d CUDA device(s), %s; Gdft %llux%llux%llu pixels, %llu samples\n",
                machine_line().c_str(), count, device::device_name(), (unsigned long long)nx, (unsigned long long)ny,
                (unsigned long long)nz, (unsigned long long)n1);

    // A random trajectory over the grid's k-space extent, 25 ms readouts, a smooth +-150 Hz field map.
    arma::arma_rng::set_seed(1234);
    const arma::fvec kx = (arma::randu<arma::fvec>(n1) - 0.5f) * float(nx),
                     ky = (arma::randu<arma::fvec>(n1) - 0.5f) * float(ny),
                     kz = (arma::randu<arma::fvec>(n1) - 0.5f) * float(nz),
                     t = arma::linspace<arma::fvec>(0.f, 0.025f, n1);
    arma::fvec ix(n2), iy(n2), iz(n2), fm(n2);
    for (uword z = 0; z < nz; ++z)
        for (uword y = 0; y < ny; ++y)
            for (uword x = 0; x < nx; ++x) {
                const uword i = x + nx * (y + ny * z);
                ix[i] = (float(x) - nx / 2.0f) / nx;
                iy[i] = (float(y) - ny / 2.0f) / ny;
                iz[i] = (float(z) - nz / 2.0f) / nz;
                fm[i] = float(2 * M_PI * 150.0 * std::sin(2.0 * ix[i]) * std::cos(3.0 * iy[i] + iz[i]));
            }
    device::set_device(0);
    const Gdft<float> one(n1, n2, kx, ky, kz, ix, iy, iz, fm, t);
    const Gdft<float> multi(n1, n2, kx, ky, kz, ix, iy, iz, fm, t, DftOptions{nullptr, devices});
    const arma::cx_fvec x = arma::randn<arma::cx_fvec>(n2), y = arma::randn<arma::cx_fvec>(n1);
    cvec dx(x), dy(y);
    dx.put_on_gpu();
    dy.put_on_gpu();

    Table table({"transform", "devices", "n2", "n1", "seconds", "pairs/s", "speed-up", "rel. difference"});
    double worst = 1e300;
    for (int dir = 0; dir < 2; ++dir) {
        const bool fwd = dir == 0;
        cvec r1, rm;
        const double t1 = median_seconds(reps, [&] {
            r1 = fwd ? one * dx : one / dy;
            device::synchronize();
        });
        const double tm = median_seconds(reps, [&] {
            rm = fwd ? multi * dx : multi / dy;
            device::synchronize();  // device 0's default stream waits for every part
        });
        r1.get_from_gpu();
        rm.get_from_gpu();
        const double diff = double(arma::norm(rm.to_arma() - r1.to_arma()) / arma::norm(r1.to_arma()));
        const double pairs = double(n1) * double(n2);
        const char* name = fwd ? "Gdft forward" : "Gdft adjoint";
        table.add(
            {name, "{0}", std::to_string(n2), std::to_string(n1), fmt("%.3f", t1), fmt("%.3e", pairs / t1), "1", "-"});
        table.add({name, list(devices), std::to_string(n2), std::to_string(n1), fmt("%.3f", tm),
                   fmt("%.3e", pairs / tm), fmt("%.2fx", t1 / tm), fmt("%.1e", diff)});
        worst = std::min(worst, t1 / tm);
    }
    table.print();
    std::printf("speed-up over one GPU (the smaller of forward and adjoint): %.2fx on %s%s\n", worst,
                list(devices).c_str(),
                count >= 2 ? " (target >= 1.8x on two GPUs)" : " (one GPU: two parts share it, no speed-up expected)");
    return 0;
}
