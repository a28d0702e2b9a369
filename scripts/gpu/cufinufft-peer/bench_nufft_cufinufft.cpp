// bench_nufft_cufinufft: forge's GPU Gnufft<float> against cufinufft (single precision) on the same device,
// the same points and the same image: 2D 256x256 with 131072 samples and 3D 128x128x64 with 2M samples,
// uniform random and spiral points, requested tolerances 1e-3, 1e-4, 1e-5; forward (cufinufft type 2,
// isign -1) and adjoint (type 1, isign +1). Both write into preallocated device arrays; each repetition runs
// forge forward, cufinufft forward, forge adjoint, cufinufft adjoint (alternating); the table gives medians.
// Plan times are separate: forge's constructor from k on the host (upload of k, device sort, cuFFT plan; split from
// Gnufft::plan_times), and like for like from points already on the device: forge's constructor from forgeCols on
// the GPU against cufinufft's makeplan + setpts for both types. "loop": each library's plan from the device points and
// a 10-iteration normal loop (forward then adjoint) on device arrays, as a solver runs it. Errors: relative to an exact
// float64 sum on 100 samples (forward) / 64 pixels (adjoint).
//   bench_nufft_cufinufft [--reps N] [--quick] [--dim 2|3] [--points uniform|spiral] [--tol T]
// (--quick: 3D with 400000 samples; --dim, --points, --tol: only those cases, e.g. under a profiler)
// Built by scripts/gpu/run-cufinufft-peer.sh; not part of forge's build or CI.
#include <cuda_runtime.h>
#include <cufinufft.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "forge/Core/DeviceMemory.h"
#include "forge/Operators/nufft/Gnufft.h"

namespace {
constexpr double kPi = 3.14159265358979323846;
using cf = std::complex<float>;

#define CUDA_OK(x)                                                                                  \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(2);                                                                           \
        }                                                                                           \
    } while (0)
#define CUF_OK(x)                                                                       \
    do {                                                                                \
        int r_ = (x);                                                                   \
        if (r_ != 0 && r_ != 1) { /* 1: FINUFFT_WARN_EPS_TOO_SMALL */                   \
            std::fprintf(stderr, "%s:%d %s returned %d\n", __FILE__, __LINE__, #x, r_); \
            std::exit(2);                                                               \
        }                                                                               \
    } while (0)

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

template <typename T>
struct Dev {
    T* p = nullptr;
    explicit Dev(size_t n) { CUDA_OK(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T))); }
    ~Dev() { cudaFree(p); }
    Dev(const Dev&) = delete;
    Dev& operator=(const Dev&) = delete;
};

std::string cpu_line() {
    std::ifstream f("/proc/cpuinfo");
    std::string l;
    while (std::getline(f, l))
        if (l.rfind("model name", 0) == 0) return l.substr(l.find(':') + 2);
    return "unknown CPU";
}

struct Points {
    std::vector<float> k[3];  // cycles/FOV
};
Points make_points(const char* kind, size_t n1, const int N[3], std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0, 1);
    Points p;
    for (auto& v : p.k) v.assign(n1, 0.f);
    const bool spiral = std::strcmp(kind, "spiral") == 0;
    const size_t arms = 64, per = n1 / arms;
    for (size_t j = 0; j < n1; ++j) {
        if (spiral) {
            const double f = double(j % per) / per, r = std::pow(f, 1.5);
            const double th = 2 * kPi * (std::max(N[0], N[1]) / 8.0 * f + double(j / per) / arms);
            p.k[0][j] = float(r * (N[0] / 2 - 0.5) * std::cos(th));
            p.k[1][j] = float(r * (N[1] / 2 - 0.5) * std::sin(th));
        } else {
            p.k[0][j] = float((u(rng) - 0.5) * N[0]);
            p.k[1][j] = float((u(rng) - 0.5) * N[1]);
        }
        p.k[2][j] = N[2] > 1 ? float((u(rng) - 0.5) * N[2]) : 0.f;
        for (int d = 0; d < 3; ++d)  // keep every component in [-N/2, N/2)
            if (N[d] > 1 && p.k[d][j] >= float(N[d] / 2)) p.k[d][j] = -float(N[d] / 2);
    }
    return p;
}

double rel(const std::vector<std::complex<double>>& a, const std::vector<std::complex<double>>& ref) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        num += std::norm(a[i] - ref[i]);
        den += std::norm(ref[i]);
    }
    return std::sqrt(num / den);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void run_case(const char* name, const int N[3], size_t n1, const char* kind, int reps, double onlyTol,
              std::mt19937_64& rng) {
    const Points P = make_points(kind, n1, N, rng);
    const size_t n2 = size_t(N[0]) * N[1] * N[2];
    const int dim = N[2] > 1 ? 3 : 2;
    std::normal_distribution<float> g;
    std::vector<cf> img(n2), dat(n1);
    for (auto& v : img) v = {g(rng), g(rng)};
    for (auto& v : dat) v = {g(rng), g(rng)};
    // Exact float64 references on subsets.
    const size_t nsub = 100, npix = 64;
    std::vector<size_t> rows(nsub), pix(npix);
    for (auto& r : rows) r = size_t(rng() % n1);
    for (auto& q : pix) q = size_t(rng() % n2);
    std::vector<std::complex<double>> refF(nsub), refA(npix);
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < long(nsub); ++i) {
        const size_t j = rows[i];
        std::vector<std::complex<double>> e[3];
        for (int d = 0; d < 3; ++d) {
            e[d].resize(N[d]);
            for (int x = 0; x < N[d]; ++x) {
                const double r = N[d] > 1 ? double(x - N[d] / 2) / N[d] : 0.0;
                e[d][x] = std::polar(1.0, -2 * kPi * double(P.k[d][j]) * r);
            }
        }
        std::complex<double> s = 0;
        for (int z = 0; z < N[2]; ++z)
            for (int y = 0; y < N[1]; ++y) {
                std::complex<double> row = 0;
                const cf* m = img.data() + size_t(N[0]) * (y + size_t(N[1]) * z);
                for (int x = 0; x < N[0]; ++x) row += std::complex<double>(m[x]) * e[0][x];
                s += row * e[1][y] * e[2][z];
            }
        refF[i] = s;
    }
#pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < long(npix); ++i) {
        const size_t q = pix[i];
        const int c[3] = {int(q % N[0]), int((q / N[0]) % N[1]), int(q / (size_t(N[0]) * N[1]))};
        double r[3];
        for (int d = 0; d < 3; ++d) r[d] = N[d] > 1 ? double(c[d] - N[d] / 2) / N[d] : 0.0;
        std::complex<double> s = 0;
        for (size_t j = 0; j < n1; ++j) {
            const double ph =
                2 * kPi * (double(P.k[0][j]) * r[0] + double(P.k[1][j]) * r[1] + double(P.k[2][j]) * r[2]);
            s += std::complex<double>(dat[j]) * std::polar(1.0, ph);
        }
        refA[i] = s;
    }

    Dev<cf> dImg(n2), dDat(n1), dOutK(n1), dOutI(n2), cOutK(n1), cOutI(n2);
    Dev<float> dx(n1), dy(n1), dz(n1);
    CUDA_OK(cudaMemcpy(dImg.p, img.data(), n2 * sizeof(cf), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dDat.p, dat.data(), n1 * sizeof(cf), cudaMemcpyHostToDevice));
    {
        std::vector<float> x[3];
        for (int d = 0; d < 3; ++d) {
            x[d].resize(n1);
            for (size_t j = 0; j < n1; ++j) x[d][j] = N[d] > 1 ? float(2 * kPi * double(P.k[d][j]) / N[d]) : 0.f;
        }
        CUDA_OK(cudaMemcpy(dx.p, x[0].data(), n1 * 4, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(dy.p, x[1].data(), n1 * 4, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(dz.p, x[2].data(), n1 * 4, cudaMemcpyHostToDevice));
    }
    arma::fvec kx(const_cast<float*>(P.k[0].data()), n1, false, true),
        ky(const_cast<float*>(P.k[1].data()), n1, false, true), kz(const_cast<float*>(P.k[2].data()), n1, false, true);
    forge::forgeCol<float> gkx(kx), gky(ky), gkz(kz);  // the same k in cycles/FOV, on the GPU
    gkx.put_on_gpu();
    gky.put_on_gpu();
    gkz.put_on_gpu();
    auto* fi = reinterpret_cast<forge::forgeComplex<float>*>(dImg.p);
    auto* fd = reinterpret_cast<forge::forgeComplex<float>*>(dDat.p);
    auto* fok = reinterpret_cast<forge::forgeComplex<float>*>(dOutK.p);
    auto* foi = reinterpret_cast<forge::forgeComplex<float>*>(dOutI.p);

    for (double tol : {1e-3, 1e-4, 1e-5}) {
        if (onlyTol > 0 && std::fabs(std::log10(tol / onlyTol)) > 0.01) continue;
        CUDA_OK(cudaDeviceSynchronize());
        double t0 = now();
        forge::Gnufft<float> G(n1, N[0], N[1], N[2], kx, ky, kz, forge::NufftOptions::for_tolerance(tol));
        G.apply(fi, fok, 1, true, forge::Residency::Device);  // first call: any lazy setup
        CUDA_OK(cudaDeviceSynchronize());
        const double planForge = now() - t0;

        const forge::Gnufft<float>::PlanTimes split = G.plan_times();

        // Plans from points already on the device, like for like: forge's constructor from forgeCols on the GPU (check,
        // device sort, cuFFT plan, tables; both directions) against cufinufft's makeplan + setpts of both types. Median
        // of 5; each plan is released after its timing.
        int64_t modes[3] = {N[0], N[1], N[2]};
        std::vector<double> pfd, pcd, scd;
        for (int r = 0; r < 5; ++r) {
            CUDA_OK(cudaDeviceSynchronize());
            double s = now();
            {
                auto D = std::make_unique<forge::Gnufft<float>>(n1, N[0], N[1], N[2], gkx, gky, gkz,
                                                                forge::NufftOptions::for_tolerance(tol));
                CUDA_OK(cudaDeviceSynchronize());
                pfd.push_back(now() - s);
            }
            cufinufftf_plan q2, q1;
            CUDA_OK(cudaDeviceSynchronize());
            s = now();
            CUF_OK(cufinufftf_makeplan(2, dim, modes, -1, 1, float(tol), &q2, nullptr));
            CUF_OK(cufinufftf_makeplan(1, dim, modes, +1, 1, float(tol), &q1, nullptr));
            CUDA_OK(cudaDeviceSynchronize());
            const double m = now();
            CUF_OK(cufinufftf_setpts(q2, int64_t(n1), dx.p, dy.p, dim == 3 ? dz.p : nullptr, 0, nullptr, nullptr,
                                     nullptr));
            CUF_OK(cufinufftf_setpts(q1, int64_t(n1), dx.p, dy.p, dim == 3 ? dz.p : nullptr, 0, nullptr, nullptr,
                                     nullptr));
            CUDA_OK(cudaDeviceSynchronize());
            pcd.push_back(now() - s);
            scd.push_back(now() - m);
            cufinufftf_destroy(q2);
            cufinufftf_destroy(q1);
        }
        const double planForgeDev = median(pfd), planCuf = median(pcd), setptsCuf = median(scd);
        cufinufftf_plan p2, p1;
        CUF_OK(cufinufftf_makeplan(2, dim, modes, -1, 1, float(tol), &p2, nullptr));
        CUF_OK(cufinufftf_makeplan(1, dim, modes, +1, 1, float(tol), &p1, nullptr));
        CUF_OK(cufinufftf_setpts(p2, int64_t(n1), dx.p, dy.p, dim == 3 ? dz.p : nullptr, 0, nullptr, nullptr, nullptr));
        CUF_OK(cufinufftf_setpts(p1, int64_t(n1), dx.p, dy.p, dim == 3 ? dz.p : nullptr, 0, nullptr, nullptr, nullptr));

        // A 10-iteration normal loop as a solver runs it, each library's plan included (both from the points on the
        // device: forge's constructor from forgeCols on the GPU, cufinufft's makeplan of both types and setpts), on
        // preallocated device arrays.
        CUDA_OK(cudaDeviceSynchronize());
        t0 = now();
        {
            forge::Gnufft<float> L(n1, N[0], N[1], N[2], gkx, gky, gkz, forge::NufftOptions::for_tolerance(tol));
            for (int it = 0; it < 10; ++it) {
                L.apply(it ? foi : fi, fok, 1, true, forge::Residency::Device);
                L.apply(fok, foi, 1, false, forge::Residency::Device);
            }
            CUDA_OK(cudaDeviceSynchronize());
        }
        const double loopForge = now() - t0;
        auto cfl = [&](cf* p) { return reinterpret_cast<cuFloatComplex*>(p); };
        CUDA_OK(cudaDeviceSynchronize());
        t0 = now();
        {
            cufinufftf_plan q2, q1;
            CUF_OK(cufinufftf_makeplan(2, dim, modes, -1, 1, float(tol), &q2, nullptr));
            CUF_OK(cufinufftf_makeplan(1, dim, modes, +1, 1, float(tol), &q1, nullptr));
            CUF_OK(cufinufftf_setpts(q2, int64_t(n1), dx.p, dy.p, dim == 3 ? dz.p : nullptr, 0, nullptr, nullptr,
                                     nullptr));
            CUF_OK(cufinufftf_setpts(q1, int64_t(n1), dx.p, dy.p, dim == 3 ? dz.p : nullptr, 0, nullptr, nullptr,
                                     nullptr));
            for (int it = 0; it < 10; ++it) {
                CUF_OK(cufinufftf_execute(q2, cfl(cOutK.p), cfl(it ? cOutI.p : dImg.p)));
                CUF_OK(cufinufftf_execute(q1, cfl(cOutK.p), cfl(cOutI.p)));
            }
            CUDA_OK(cudaDeviceSynchronize());
            cufinufftf_destroy(q2);
            cufinufftf_destroy(q1);
        }
        const double loopCuf = now() - t0;

        auto cfk = [&](cf* p) { return reinterpret_cast<cuFloatComplex*>(p); };
        std::vector<double> tf, ta, cfw, caw;
        for (int r = 0; r <= reps; ++r) {  // round 0 warms up
            double s = now();
            G.apply(fi, fok, 1, true, forge::Residency::Device);
            CUDA_OK(cudaDeviceSynchronize());
            const double a = now() - s;
            s = now();
            CUF_OK(cufinufftf_execute(p2, cfk(cOutK.p), cfk(dImg.p)));
            CUDA_OK(cudaDeviceSynchronize());
            const double b = now() - s;
            s = now();
            G.apply(fd, foi, 1, false, forge::Residency::Device);
            CUDA_OK(cudaDeviceSynchronize());
            const double c = now() - s;
            s = now();
            CUF_OK(cufinufftf_execute(p1, cfk(dDat.p), cfk(cOutI.p)));
            CUDA_OK(cudaDeviceSynchronize());
            const double d = now() - s;
            if (r) {
                tf.push_back(a);
                cfw.push_back(b);
                ta.push_back(c);
                caw.push_back(d);
            }
        }
        std::vector<cf> hk(n1), hkc(n1), hi(n2), hic(n2);
        CUDA_OK(cudaMemcpy(hk.data(), dOutK.p, n1 * sizeof(cf), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hkc.data(), cOutK.p, n1 * sizeof(cf), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hi.data(), dOutI.p, n2 * sizeof(cf), cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(hic.data(), cOutI.p, n2 * sizeof(cf), cudaMemcpyDeviceToHost));
        std::vector<std::complex<double>> sf(nsub), sfc(nsub), sa(npix), sac(npix);
        for (size_t i = 0; i < nsub; ++i) {
            sf[i] = hk[rows[i]];
            sfc[i] = hkc[rows[i]];
        }
        for (size_t i = 0; i < npix; ++i) {
            sa[i] = hi[pix[i]];
            sac[i] = hic[pix[i]];
        }
        const double mf = median(tf), mc = median(cfw), ma = median(ta), mac = median(caw);
        std::printf(
            "| %-20s | %-7s | %5.0e | %2llu | %8.3f | %8.3f | %5.2f | %8.3f | %8.3f | %5.2f | %7.1e %7.1e | %7.1e "
            "%7.1e | %7.2f (upload %5.2f, sort %5.2f, rest %5.2f) | %6.2f | %6.2f (setpts %5.2f) | %5.2f | %7.1f | "
            "%7.1f | %5.2f |\n",
            name, kind, tol, (unsigned long long)G.kernel_width(), mf * 1e3, mc * 1e3, mf / mc, ma * 1e3, mac * 1e3,
            ma / mac, rel(sf, refF), rel(sfc, refF), rel(sa, refA), rel(sac, refA), planForge * 1e3, split.upload * 1e3,
            split.device_sort * 1e3, split.gpu_plan * 1e3, planForgeDev * 1e3, planCuf * 1e3, setptsCuf * 1e3,
            planForgeDev / planCuf, loopForge * 1e3, loopCuf * 1e3, loopForge / loopCuf);
        std::fflush(stdout);
        cufinufftf_destroy(p2);
        cufinufftf_destroy(p1);
    }
}
}  // namespace

int main(int argc, char** argv) {
    int reps = 20, onlyDim = 0;
    bool quick = false;
    const char* onlyPoints = nullptr;
    double onlyTol = 0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--quick")) {
            quick = true;
        } else if (!std::strcmp(argv[i], "--dim") && i + 1 < argc) {
            onlyDim = std::atoi(argv[++i]);
        } else if (!std::strcmp(argv[i], "--points") && i + 1 < argc) {
            onlyPoints = argv[++i];
        } else if (!std::strcmp(argv[i], "--tol") && i + 1 < argc) {
            onlyTol = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr, "bench_nufft_cufinufft: unknown or incomplete argument %s\n", argv[i]);
            return 2;
        }
    }
    if (!forge::device::available()) {
        std::printf("bench_nufft_cufinufft: no CUDA device\n");
        return 1;
    }
    double load[3] = {0, 0, 0};
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        std::fclose(f);
    }
    std::printf("bench_nufft_cufinufft: GPU %s; CPU %s, load %.2f; float32, %d repetitions (median), alternating\n",
                forge::device::device_name(), cpu_line().c_str(), load[0], reps);
    std::printf(
        "times in ms; ratio = forge / cufinufft; errors vs exact float64 sums (100 samples fwd, 64 pixels adj); "
        "plan host k = forge constructor from k on the host (upload, device sort, rest = cuFFT plan and tables) + "
        "first call; plan device k = forge constructor from k already on the GPU / cufinufft makeplan (both types) + "
        "setpts (both), median of 5, ratio forge / cufinufft; loop = plan from device k + 10 x (forward, adjoint) on "
        "device arrays, ratio forge / cufinufft\n");
    std::printf("| case                 | points  | tol   | W  | fwd forge | fwd cuf | ratio | adj forge | adj cuf "
                "| ratio | fwd err forge cuf | adj err forge cuf | plan host k forge | plan device k forge | plan cuf "
                "| ratio | loop forge | loop cuf | ratio |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::mt19937_64 rng(7);
    const int n2d[3] = {256, 256, 1}, n3d[3] = {128, 128, 64};
    for (const char* kind : {"uniform", "spiral"}) {
        if (onlyPoints && std::strcmp(onlyPoints, kind) != 0) continue;
        if (onlyDim != 3) run_case("2D 256x256, 131072", n2d, 131072, kind, reps, onlyTol, rng);
        if (onlyDim != 2)
            run_case(quick ? "3D 128x128x64, 400k" : "3D 128x128x64, 2M", n3d, quick ? 400000 : 2000000, kind, reps,
                     onlyTol, rng);
    }
    return 0;
}
