#include "forge/Penalties/ExactTVPenalty.h"

#include <cmath>

#include "forge/Core/Exceptions.h"
#include "forge/Penalties/detail/ProxDispatch.h"

namespace forge {

namespace {

prox::TvGrid tv_grid(const ImageGrid& g) {
    prox::TvGrid t{{g.nx, g.ny, g.nz}, {0, 0, 0}, 0, g.n_pixels()};
    for (int a = 0; a < 3; ++a)
        if (t.n[a] > 1) t.axes[t.n_axes++] = a;
    return t;
}

template <typename T1>
using CVec = forgeCol<forgeComplex<T1>>;

// u = v - tau D^H r
template <typename T1>
void primal(const CVec<T1>& v, const CVec<T1>& r, CVec<T1>& u, T1 tau, const prox::TvGrid& g) {
    if (v.on_gpu()) return cuda::prox_tv_primal<T1>(v.device_memptr(), r.device_memptr(), u.device_memptr(), tau, g);
    const forgeComplex<T1>* pv = v.memptr();
    const forgeComplex<T1>* pr = r.memptr();
    forgeComplex<T1>* pu = u.memptr();
#pragma omp parallel for if (g.n_pixels > detail::kParallelThreshold)
    for (long long i = 0; i < static_cast<long long>(g.n_pixels); ++i)
        pu[i] = pv[i] - prox::div_at(g, uword(i), pr) * tau;
}

template <typename T1>
void dual_step(const CVec<T1>& u, CVec<T1>& p, CVec<T1>& r, T1 c, T1 beta, bool iso, const prox::TvGrid& g) {
    if (u.on_gpu())
        return cuda::prox_tv_dual_step<T1>(u.device_memptr(), p.device_memptr(), r.device_memptr(), c, beta, iso, g);
    const forgeComplex<T1>* pu = u.memptr();
    forgeComplex<T1>* pp = p.memptr();
    forgeComplex<T1>* pr = r.memptr();
#pragma omp parallel for if (g.n_pixels > detail::kParallelThreshold)
    for (long long i = 0; i < static_cast<long long>(g.n_pixels); ++i)
        prox::tv_dual_step_at(g, uword(i), pu, pp, pr, c, beta, iso);
}

}  // namespace

template <typename T1>
ExactTVPenalty<T1>::ExactTVPenalty(const ImageGrid& grid, T1 lambda, const ExactTVOptions& options)
    : ProxPenalty<T1>("ExactTVPenalty", grid, lambda), opts_(options) {
    if (grid.n_dims() == 0) throw invalid_argument("ExactTVPenalty: the grid has one pixel; it has no differences");
    if (options.iterations == 0) throw invalid_argument("ExactTVPenalty: options.iterations must be at least 1");
}

template <typename T1>
double ExactTVPenalty<T1>::value(const ForgeVec& x) const {
    this->check_length(x, "value", "x");
    const prox::TvGrid g = tv_grid(this->grid());
    const bool iso = opts_.norm == TVNorm::Isotropic;
    if (x.on_gpu()) {
        forgeCol<T1> v = forgeCol<T1>::device_uninitialized(g.n_pixels);
        cuda::prox_tv_values<T1>(x.device_memptr(), v.device_memptr(), iso, g);
        return double(this->lambda()) * double(sum(v));
    }
    const forgeComplex<T1>* px = x.memptr();
    const double s = detail::fixed_order_sum<double>(g.n_pixels, g.n_pixels > detail::kParallelThreshold,
                                                     [&](std::size_t i, double& acc) {
                                                         acc += prox::tv_value_at(g, uword(i), px, iso);
                                                     });
    return double(this->lambda()) * s;
}

template <typename T1>
void ExactTVPenalty<T1>::prox(ForgeVec& v, T1 t) const {
    this->check_length(v, "prox", "v");
    this->check_step(t);
    const T1 tau = t * this->lambda();
    if (tau == T1(0)) return;
    const prox::TvGrid g = tv_grid(this->grid());
    const uword nd = uword(g.n_axes) * g.n_pixels;
    if (!opts_.warm_start || dual_.n_elem != nd || dual_.on_gpu() != v.on_gpu()) {
        dual_ = ForgeVec::same_place(v, nd);
        dual_.zeros();
    }
    const bool iso = opts_.norm == TVNorm::Isotropic;
    const T1 c = T1(1) / (tau * T1(4 * g.n_axes));  // 1 / (tau ||D||^2)
    ForgeVec r = dual_;
    ForgeVec u = ForgeVec::same_place(v, v.n_elem);
    double tk = 1;
    for (uword k = 0; k < opts_.iterations; ++k) {
        primal<T1>(v, r, u, tau, g);
        const double tn = 0.5 * (1 + std::sqrt(1 + 4 * tk * tk));
        dual_step<T1>(u, dual_, r, c, T1((tk - 1) / tn), iso, g);
        tk = tn;
    }
    primal<T1>(v, dual_, u, tau, g);
    v = std::move(u);
}

template class ExactTVPenalty<float>;
template class ExactTVPenalty<double>;

}  // namespace forge
