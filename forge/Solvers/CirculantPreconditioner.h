#pragma once
// CirculantPreconditioner<T1>: a preconditioner for PCG (PcgOptions::preconditioner) from an operator's response to
// one impulse, for normal operators that are nearly shift-invariant (G^H W G of non-Cartesian sampling, SENSE on
// smooth maps, a quadratic roughness penalty):
//
//   h = H e_p            e_p the unit image at pixel p, H the cost's Hessian up to a factor (for the normal form
//                        N + R.gradient / 2 with a quadratic penalty R)
//   sigma = Re FFT(h circularly shifted so that p is pixel 0)     the eigenvalues of Strang's circulant C of H
//   M g = IFFT(FFT(g) / max(sigma, floor max(sigma)))             M = C^{-1}
//
// G^H W G convolves with the point spread function, whose transform is the sampling density: dense at the centre of
// k-space, sparse at its edge (a spiral's or radial centre by a factor of hundreds). M divides every spatial
// frequency by it, so the conjugate gradients see a nearly flat spectrum: the same minimiser in fewer iterations.
// 'floor' (relative to the largest eigenvalue) bounds M where sigma is small or negative (the response's ripples,
// k-space corners no sample reaches).
//
// support (optional, one 0/1 entry per pixel): where H's data term acts, e.g. where SENSE's coil maps are not zero.
// Outside it H is the penalty alone, and a convolution would carry the gradient there, where no data hold it back
// (a background of large, slowly converging values): M is the circulant's inverse between support pixels and
// 1 / (n max sigma) times the identity elsewhere, M = P_in C^{-1} P_in + P_out / (n max sigma), Hermitian positive
// definite. p should lie in the support.
//
// Works on host or device vectors (FftPlan: FFTW or cuFFT; the eigenvalues and support uploaded once). Copies
// share their state; apply from one thread at a time (one cuFFT plan).
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <string>

#include <armadillo>

#include "forge/CUDA/FftPlan.h"
#include "forge/Core/Exceptions.h"
#include "forge/Core/Geometry.h"
#include "forge/Core/forgeCol.h"

namespace forge {

// The floor forge's reconstructions use. Of 1e-3 to 0.3 (measured without a support), 1e-2 took one iteration fewer
// on a 256x256 spiral and a real radial brain but let a real spiral phantom's final cost rise by 1.6% (1e-3 by 62%),
// 0.1 and 0.3 took more; 3e-2 left the phantom's cost as without a preconditioner.
constexpr double kCirculantFloor = 3e-2;

template <typename T1>
class CirculantPreconditioner {
public:
    using Vec = forgeCol<forgeComplex<T1>>;
    // h: H e_p (grid.n_pixels() finite values); p: the impulse's pixel (x + Nx (y + Ny z)); floor in (0, 1];
    // support: empty (every pixel) or one 0/1 value per pixel.
    CirculantPreconditioner(const ImageGrid& grid, const arma::Col<std::complex<T1>>& h, uword p,
                            double floor = kCirculantFloor, const arma::uvec& support = arma::uvec())
        : state_(std::make_shared<State>(grid)) {
        const uword N[3] = {grid.nx, grid.ny, grid.nz}, n = grid.n_pixels();
        const char* who = "CirculantPreconditioner";
        if (h.n_elem != n)
            throw invalid_argument(std::string(who) + ": h has " + std::to_string(h.n_elem) +
                                   " values (expected the grid's " + std::to_string(n) + " pixels)");
        if (!h.is_finite()) throw invalid_argument(std::string(who) + ": h has a NaN or Inf value");
        if (p >= n)
            throw invalid_argument(std::string(who) + ": the impulse's pixel " + std::to_string(p) +
                                   " is outside the grid's " + std::to_string(n) + " pixels");
        if (!(floor > 0 && floor <= 1)) throw invalid_argument(std::string(who) + ": floor must be in (0, 1]");
        if (!support.is_empty() && support.n_elem != n)
            throw invalid_argument(std::string(who) + ": support has " + std::to_string(support.n_elem) +
                                   " values (expected " + std::to_string(n) + ", or none)");
        const uword p0 = p % N[0], p1 = (p / N[0]) % N[1], p2 = p / (N[0] * N[1]);
        arma::Col<std::complex<T1>> s(n);
        for (uword z = 0; z < N[2]; ++z)
            for (uword y = 0; y < N[1]; ++y)
                for (uword x = 0; x < N[0]; ++x) {
                    const uword xs = (x + N[0] - p0) % N[0], ys = (y + N[1] - p1) % N[1], zs = (z + N[2] - p2) % N[2];
                    s[xs + N[0] * (ys + N[1] * zs)] = h[x + N[0] * (y + N[1] * z)];
                }
        state_->plan.execute(FftMemory::host, reinterpret_cast<forgeComplex<T1>*>(s.memptr()), true);
        double top = 0;
        for (uword i = 0; i < n; ++i) top = std::max(top, double(s[i].real()));
        if (!(top > 0))
            throw invalid_argument(std::string(who) +
                                   ": h has no positive eigenvalue (expected H e_p of a positive semi-definite H)");
        arma::Col<T1> inv(n);
        for (uword i = 0; i < n; ++i) inv[i] = T1(1 / (double(n) * std::max(double(s[i].real()), floor * top)));
        state_->inverse = forgeCol<T1>(inv);
        if (!support.is_empty() && arma::any(support == 0)) {
            state_->support = forgeCol<T1>(arma::conv_to<arma::Col<T1>>::from(support != 0));
            state_->outside = T1(1 / (double(n) * top));
        }
    }

    // M g, where g is (host or device).
    Vec operator()(const Vec& g) const {
        State& st = *state_;
        if (g.n_elem != st.plan.size())
            throw invalid_argument("CirculantPreconditioner: the vector has " + std::to_string(g.n_elem) +
                                   " values (expected " + std::to_string(st.plan.size()) + ")");
        const bool gpu = g.on_gpu();
        const FftMemory where = gpu ? FftMemory::device : FftMemory::host;
        if (st.support.n_elem == 0) return st.circulant_inverse(g, where, gpu);
        const forgeCol<T1>& w = st.place(st.support, st.supportDevice, gpu);
        const Vec inside = g % w;
        Vec z = st.circulant_inverse(inside, where, gpu) % w;
        axpy(forgeComplex<T1>(st.outside), Vec(g - inside), z);  // g outside the support (exactly: w is 0 or 1)
        return z;
    }

private:
    struct State {
        explicit State(const ImageGrid& grid) : plan(grid) {}
        FftPlan<T1> plan;
        forgeCol<T1> inverse;  // 1 / (n sigma)
        forgeCol<T1> support;  // 0/1; empty: every pixel
        T1 outside = 0;        // M outside the support
        forgeCol<T1> inverseDevice, supportDevice;
        std::mutex mutex;
        // C^{-1} v = IFFT(FFT(v) / (n sigma)).
        Vec circulant_inverse(const Vec& v, FftMemory where, bool gpu) {
            Vec z = v;
            plan.execute(where, gpu ? z.device_memptr() : z.memptr(), true);
            z = z % place(inverse, inverseDevice, gpu);
            plan.execute(where, gpu ? z.device_memptr() : z.memptr(), false);
            return z;
        }
        // v where the solve runs: the host copy, or the device copy made on first use.
        const forgeCol<T1>& place(const forgeCol<T1>& host, forgeCol<T1>& device, bool gpu) {
            if (!gpu) return host;
            std::lock_guard<std::mutex> lock(mutex);
            if (!device.on_gpu()) {
                device = host;
                device.put_on_gpu();
            }
            return device;
        }
    };
    std::shared_ptr<State> state_;
};

}  // namespace forge

#ifdef FORGE_GLOBAL_NAMES  // opt-in: these names at global scope too (docs/conventions.md)
using forge::CirculantPreconditioner;
using forge::kCirculantFloor;
#endif
