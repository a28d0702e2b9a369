#include "forge/Penalties/Wavelet.h"

#include <cmath>
#include <sstream>

#include "forge/Core/Exceptions.h"
#include "forge/Penalties/detail/ProxDispatch.h"

namespace forge {

WaveletFamily wavelet_family_from_name(const std::string& name) {
    if (name == "haar" || name == "db1") return WaveletFamily::Haar;
    if (name == "db2") return WaveletFamily::Db2;
    if (name == "db4") return WaveletFamily::Db4;
    throw invalid_argument("wavelet family '" + name + "' is not known; expected haar, db2 or db4");
}

const char* wavelet_family_name(WaveletFamily f) {
    switch (f) {
        case WaveletFamily::Haar: return "haar";
        case WaveletFamily::Db2: return "db2";
        case WaveletFamily::Db4: return "db4";
    }
    return "?";
}

const std::vector<double>& wavelet_scaling_filter(WaveletFamily f) {
    // Daubechies' minimum-phase orthonormal scaling filters (sum h^2 = 1): db2 in closed form, db4 to double
    // precision (orthonormal and with 4 vanishing moments to 1e-16).
    static const double s3 = std::sqrt(3.0), r2 = std::sqrt(2.0);
    static const std::vector<double> haar{1 / r2, 1 / r2};
    static const std::vector<double> db2{(1 + s3) / (4 * r2), (3 + s3) / (4 * r2), (3 - s3) / (4 * r2),
                                         (1 - s3) / (4 * r2)};
    static const std::vector<double> db4{0.23037781330889559,  0.71484657055291445,  0.63088076792986025,
                                         -0.02798376941685839, -0.18703481171909386, 0.030841381835560528,
                                         0.032883011666885544, -0.010597401785069072};
    switch (f) {
        case WaveletFamily::Haar: return haar;
        case WaveletFamily::Db2: return db2;
        case WaveletFamily::Db4: return db4;
    }
    return db4;
}

namespace {

template <typename T1>
prox::Filters<T1> filters_of(WaveletFamily f) {
    const std::vector<double>& h = wavelet_scaling_filter(f);
    prox::Filters<T1> out{};
    out.taps = int(h.size());
    for (int k = 0; k < out.taps; ++k) {
        out.lo[k] = T1(h[k]);
        out.hi[k] = T1(((k % 2) ? -1.0 : 1.0) * h[h.size() - 1 - k]);
    }
    return out;
}

uword axis_len(const ImageGrid& g, int a) { return a == 0 ? g.nx : a == 1 ? g.ny : g.nz; }
const char* axis_name(int a) { return a == 0 ? "nx" : a == 1 ? "ny" : "nz"; }

uword choose_levels(const ImageGrid& g, WaveletFamily family, uword levels) {
    const uword taps = wavelet_scaling_filter(family).size();
    for (int a = 0; a < 3; ++a) {
        const uword n = axis_len(g, a);
        if (n > 1 && n % 2) {
            std::ostringstream m;
            m << "OrthoWavelet: grid axis " << axis_name(a) << " = " << n
              << " is odd; the periodic orthogonal wavelet transform needs every axis of length > 1 to be even "
                 "(divisible by 2^levels): pad the image to an even size";
            throw invalid_argument(m.str());
        }
    }
    if (g.n_dims() == 0) throw invalid_argument("OrthoWavelet: the grid has one pixel; nothing to transform");
    if (levels > 0) {
        for (int a = 0; a < 3; ++a) {
            const uword n = axis_len(g, a);
            if (n > 1 && (levels >= 64 || n % (uword(1) << levels))) {
                std::ostringstream m;
                m << "OrthoWavelet: levels = " << levels << " needs every axis to be divisible by 2^levels, but "
                  << axis_name(a) << " = " << n << " is not; use fewer levels or pad the image";
                throw invalid_argument(m.str());
            }
        }
        return levels;
    }
    uword j = 1;
    for (;;) {
        bool ok = true;
        for (int a = 0; a < 3; ++a) {
            const uword n = axis_len(g, a);
            if (n > 1 && (n % (uword(1) << (j + 1)) || (n >> (j + 1)) < taps)) ok = false;
        }
        if (!ok) return j;
        ++j;
    }
}

}  // namespace

template <typename T1>
OrthoWavelet<T1>::OrthoWavelet(const ImageGrid& grid, WaveletFamily family, uword levels)
    : grid_(grid), family_(family), levels_(0) {
    grid.check("OrthoWavelet");
    levels_ = choose_levels(grid, family, levels);
}

template <typename T1>
ImageGrid OrthoWavelet<T1>::coarse_box() const {
    auto c = [&](uword n) { return n > 1 ? n >> levels_ : n; };
    return ImageGrid(c(grid_.nx), c(grid_.ny), c(grid_.nz));
}

template <typename T1>
void OrthoWavelet<T1>::check(const ForgeVec& x, const char* what) const {
    if (x.n_elem != grid_.n_pixels()) {
        std::ostringstream m;
        m << "OrthoWavelet::" << what << ": the input has " << x.n_elem << " entries, expected nx*ny*nz = " << grid_.nx
          << "*" << grid_.ny << "*" << grid_.nz << " = " << grid_.n_pixels();
        throw invalid_argument(m.str());
    }
}

template <typename T1>
typename OrthoWavelet<T1>::ForgeVec OrthoWavelet<T1>::transform(const ForgeVec& x, bool analysis) const {
    const prox::Filters<T1> f = filters_of<T1>(family_);
    ForgeVec a = x, b = ForgeVec::same_place(x, x.n_elem);
    prox::Dims d{{grid_.nx, grid_.ny, grid_.nz}, {grid_.nx, grid_.ny, grid_.nz}};
    // Analysis goes from the finest level down, synthesis back up; within a level the axes in reverse order.
    for (uword step = 0; step < levels_; ++step) {
        const uword j = analysis ? step : levels_ - 1 - step;
        for (int a_ = 0; a_ < 3; ++a_) d.len[a_] = d.n[a_] > 1 ? d.n[a_] >> j : 1;
        for (int k = 0; k < 3; ++k) {
            const int axis = analysis ? k : 2 - k;
            if (d.n[axis] < 2) continue;
            prox::wavelet_pass<T1>(a, b, d, axis, f, analysis);
            std::swap(a, b);
        }
    }
    return a;
}

template <typename T1>
typename OrthoWavelet<T1>::ForgeVec OrthoWavelet<T1>::forward(const ForgeVec& x) const {
    check(x, "forward");
    return transform(x, true);
}

template <typename T1>
typename OrthoWavelet<T1>::ForgeVec OrthoWavelet<T1>::inverse(const ForgeVec& c) const {
    check(c, "inverse");
    return transform(c, false);
}

template class OrthoWavelet<float>;
template class OrthoWavelet<double>;

}  // namespace forge
