#include "forge/Penalties/ProxPenalty.h"

#include <cmath>
#include <sstream>

#include "forge/Core/Exceptions.h"
#include "forge/Penalties/L1Penalty.h"
#include "forge/Penalties/detail/ProxDispatch.h"

namespace forge {

template <typename T1>
ProxPenalty<T1>::ProxPenalty(std::string name, const ImageGrid& grid, T1 lambda)
    : name_(std::move(name)), grid_(grid), lambda_(lambda) {
    grid.check(name_.c_str());
    if (!(std::isfinite(lambda) && lambda >= T1(0))) {
        std::ostringstream m;
        m << name_ << ": lambda must be finite and >= 0, got " << lambda;
        throw invalid_argument(m.str());
    }
}

template <typename T1>
void ProxPenalty<T1>::check_length(const ForgeVec& x, const char* what, const char* arg) const {
    if (x.n_elem != grid_.n_pixels()) {
        std::ostringstream m;
        m << name_ << "::" << what << ": " << arg << " has " << x.n_elem << " entries, expected nx*ny*nz = " << grid_.nx
          << "*" << grid_.ny << "*" << grid_.nz << " = " << grid_.n_pixels();
        throw invalid_argument(m.str());
    }
}

template <typename T1>
void ProxPenalty<T1>::check_step(T1 t) const {
    if (!(std::isfinite(t) && t >= T1(0))) {
        std::ostringstream m;
        m << name_ << "::prox: the step t must be finite and >= 0, got " << t;
        throw invalid_argument(m.str());
    }
}

template <typename T1>
L1Penalty<T1>::L1Penalty(const ImageGrid& grid, T1 lambda) : ProxPenalty<T1>("L1Penalty", grid, lambda) {}

template <typename T1>
double L1Penalty<T1>::value(const ForgeVec& x) const {
    this->check_length(x, "value", "x");
    return double(this->lambda()) * prox::abs_sum<T1>(x, prox::Dims{}, false);
}

template <typename T1>
void L1Penalty<T1>::prox(ForgeVec& v, T1 t) const {
    this->check_length(v, "prox", "v");
    this->check_step(t);
    prox::soft_threshold<T1>(v, t * this->lambda(), prox::Dims{}, false);
}

template class ProxPenalty<float>;
template class ProxPenalty<double>;
template class L1Penalty<float>;
template class L1Penalty<double>;

}  // namespace forge
