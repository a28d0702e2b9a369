#include "forge/Recon/FieldMapEstimation.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <string>
#include <utility>

#include "forge/Core/DeviceMemory.h"
#include "forge/Core/Exceptions.h"
#include "forge/Recon/cuda/MapKernels.h"
#include "forge/Solvers/recon_solve.h"

namespace forge {
namespace recon {

namespace {

using cxd = std::complex<double>;

void check_echoes(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times, std::size_t n2,
                  const char* who) {
    if (echoes.size() < 2)
        throw invalid_argument(std::string(who) + ": echoes has " + std::to_string(echoes.size()) +
                               " image(s) (expected at least 2)");
    if (times.size() != echoes.size())
        throw invalid_argument(std::string(who) + ": times has " + std::to_string(times.size()) +
                               " entries (expected one per echo, " + std::to_string(echoes.size()) + ")");
    for (std::size_t m = 0; m < echoes.size(); ++m) {
        if (echoes[m].n_elem != n2 || n2 == 0)
            throw invalid_argument(std::string(who) + ": echo " + std::to_string(m) + " has " +
                                   std::to_string(echoes[m].n_elem) + " pixels (expected " + std::to_string(n2) + ")");
        if (!std::isfinite(times[m]))
            throw invalid_argument(std::string(who) + ": times[" + std::to_string(m) + "] is not finite");
        for (std::size_t n = 0; n < m; ++n)
            if (!(std::fabs(times[m] - times[n]) > 0))
                throw invalid_argument(std::string(who) + ": times[" + std::to_string(n) + "] and times[" +
                                       std::to_string(m) + "] are equal (expected distinct echo times, seconds)");
    }
}

// Sum over a (2 half + 1)^d window, clipped at the faces: axis by axis, each element by cuda::axis_window_sum (the
// device's start adds the same values in the same order).
void window_sum(std::vector<cxd>& img, std::size_t Nx, std::size_t Ny, std::size_t Nz, std::size_t half) {
    const std::size_t N[3] = {Nx, Ny, Nz}, stride[3] = {1, Nx, Nx * Ny}, total = Nx * Ny * Nz;
    std::vector<cxd> line;
    for (int d = 0; d < 3; ++d) {
        const std::size_t n = N[d];
        if (n == 1 || half == 0) continue;
        line.resize(n);
        for (std::size_t start = 0; start < total; ++start) {
            if ((start / stride[d]) % n != 0) continue;
            const double* src = reinterpret_cast<const double*>(img.data() + start);
            for (std::size_t i = 0; i < n; ++i)
                cuda::axis_window_sum(src, n, stride[d], i, half, reinterpret_cast<double*>(&line[i]));
            for (std::size_t i = 0; i < n; ++i) img[start + i * stride[d]] = line[i];
        }
    }
}

double wrap(double s) { return s - 2 * M_PI * std::floor((s + M_PI) / (2 * M_PI)); }

}  // namespace

arma::fvec phase_difference_field_map(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times) {
    check_echoes(echoes, times, echoes.empty() ? 0 : echoes[0].n_elem, "phase_difference_field_map");
    const double dt = times[1] - times[0];
    arma::fvec w(echoes[0].n_elem);
    for (std::size_t j = 0; j < w.n_elem; ++j)
        w[j] = float(std::arg(cxd(echoes[0][j]) * std::conj(cxd(echoes[1][j]))) / dt);
    return w;
}

namespace {

// The echo pairs (m < n) and their data terms: a (n2 x npairs, normalised by c, see the header) and phi.
struct PairTerms {
    std::vector<cuda::EchoPair> pairs;
    arma::mat a, phi;
};

std::vector<cuda::EchoPair> echo_pairs(const std::vector<double>& times) {
    std::vector<cuda::EchoPair> pairs;
    for (std::size_t m = 0; m < times.size(); ++m)
        for (std::size_t n = m + 1; n < times.size(); ++n)
            pairs.push_back({unsigned(m), unsigned(n), times[n] - times[m]});
    return pairs;
}

PairTerms pair_terms(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times) {
    PairTerms T;
    T.pairs = echo_pairs(times);
    const std::size_t n2 = echoes[0].n_elem, np = T.pairs.size();
    T.a.set_size(n2, np);
    T.phi.set_size(n2, np);
    for (std::size_t p = 0; p < np; ++p)
        for (std::size_t j = 0; j < n2; ++j) {
            const cxd ym(echoes[T.pairs[p].m][j]), yn(echoes[T.pairs[p].n][j]);
            T.a(j, p) = std::abs(ym) * std::abs(yn);
            T.phi(j, p) = std::arg(ym * std::conj(yn));  // = w (t_n - t_m): forward exp(-i w t)
        }
    double c = 0;
    for (std::size_t j = 0; j < n2; ++j) {
        double s = 0;
        for (std::size_t p = 0; p < np; ++p) s += T.a(j, p) * T.pairs[p].dt * T.pairs[p].dt;
        c = std::max(c, s);
    }
    if (c > 0) T.a /= c;
    return T;
}

// Psi(x) (see the header).
double objective(const PairTerms& T, const arma::vec& x, std::size_t Nx, std::size_t Ny, std::size_t Nz, double beta) {
    const std::size_t n2 = Nx * Ny * Nz, np = T.pairs.size();
    const std::size_t N[3] = {Nx, Ny, Nz}, stride[3] = {1, Nx, Nx * Ny};
    double f = 0;
    for (std::size_t j = 0; j < n2; ++j)
        for (std::size_t p = 0; p < np; ++p) f += T.a(j, p) * (1 - std::cos(T.phi(j, p) - x[j] * T.pairs[p].dt));
    double r = 0;
    for (std::size_t j = 0; j < n2; ++j)
        for (int d = 0; d < 3; ++d)
            if ((j / stride[d]) % N[d] + 1 < N[d]) {
                const double e = x[j] - x[j + stride[d]];
                r += 0.5 * e * e;
            }
    return f + beta * r;
}

arma::fvec estimate_fieldmap_host(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times,
                                  std::size_t Nx, std::size_t Ny, std::size_t Nz, const FieldMapOptions& o,
                                  std::vector<double>* cost) {
    const std::size_t n2 = Nx * Ny * Nz;
    const PairTerms T = pair_terms(echoes, times);
    const std::size_t np = T.pairs.size();
    const arma::mat &a = T.a, &phi = T.phi;
    // start: smoothed phase difference of the first two echoes (pair 0)
    arma::vec w(n2);
    {
        std::vector<cxd> z(n2);
        for (std::size_t j = 0; j < n2; ++j) z[j] = cxd(echoes[0][j]) * std::conj(cxd(echoes[1][j]));
        window_sum(z, Nx, Ny, Nz, static_cast<std::size_t>(o.init_kernel / 2));
        for (std::size_t j = 0; j < n2; ++j) w[j] = std::arg(z[j]) / T.pairs[0].dt;
    }
    // neighbour structure of R: first differences along each axis longer than 1
    const std::size_t N[3] = {Nx, Ny, Nz}, stride[3] = {1, Nx, Nx * Ny};
    arma::vec penaltyCurv(n2, arma::fill::zeros);
    for (std::size_t j = 0; j < n2; ++j)
        for (int d = 0; d < 3; ++d) {
            const std::size_t i = (j / stride[d]) % N[d];
            if (i > 0) penaltyCurv[j] += 2;
            if (i + 1 < N[d]) penaltyCurv[j] += 2;
        }
    if (cost) cost->assign(1, objective(T, w, Nx, Ny, Nz, o.beta));
    arma::vec next(n2);
    for (int it = 0; it < o.iterations; ++it) {
#pragma omp parallel for schedule(static) if (n2 >= 4096)
        for (long long jj = 0; jj < (long long)n2; ++jj) {
            const std::size_t j = static_cast<std::size_t>(jj);
            double grad = 0, curv = 0;
            for (std::size_t p = 0; p < np; ++p) {
                const double dt = T.pairs[p].dt, s = wrap(phi(j, p) - w[j] * dt), sn = std::sin(s);
                grad -= a(j, p) * dt * sn;
                curv += a(j, p) * dt * dt * (std::fabs(s) < 1e-8 ? 1.0 : sn / s);
            }
            double rg = 0;
            for (int d = 0; d < 3; ++d) {
                const std::size_t i = (j / stride[d]) % N[d];
                if (i > 0) rg += w[j] - w[j - stride[d]];
                if (i + 1 < N[d]) rg += w[j] - w[j + stride[d]];
            }
            grad += o.beta * rg;
            curv += o.beta * penaltyCurv[j];
            next[j] = curv > 0 ? w[j] - grad / curv : w[j];
        }
        w.swap(next);
        if (cost) cost->push_back(objective(T, w, Nx, Ny, Nz, o.beta));
    }
    return arma::conv_to<arma::fvec>::from(w);
}

// The same on the GPU, in double: the echoes are uploaded once, the estimate downloaded once (and after every
// iteration when 'cost' asks for Psi, evaluated on the host).
arma::fvec estimate_fieldmap_device(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times,
                                    std::size_t Nx, std::size_t Ny, std::size_t Nz, const FieldMapOptions& o,
                                    std::vector<double>* cost) {
    using fc = forgeComplex<float>;
    const std::size_t n2 = Nx * Ny * Nz, ne = echoes.size();
    const cuda::MapGrid grid{Nx, Ny, Nz};
    const std::vector<cuda::EchoPair> pairs = echo_pairs(times);
    const std::size_t np = pairs.size();
    DeviceBuffer pairsDev(np * sizeof(cuda::EchoPair)), echoesDev(ne * n2 * sizeof(fc));
    device::copy_to_device(pairsDev.get(), pairs.data(), np * sizeof(cuda::EchoPair));
    for (std::size_t m = 0; m < ne; ++m)
        device::copy_to_device(echoesDev.as<fc>() + m * n2, echoes[m].memptr(), n2 * sizeof(fc));
    DeviceBuffer a(n2 * np * sizeof(double)), phi(n2 * np * sizeof(double)), w(n2 * sizeof(double)),
        next(n2 * sizeof(double));
    {
        DeviceBuffer curvSum(n2 * sizeof(double));
        cuda::field_map_weights(echoesDev.as<fc>(), pairsDev.as<cuda::EchoPair>(), np, a.as<double>(), phi.as<double>(),
                                curvSum.as<double>(), n2);
        const double c = cuda::device_max(curvSum.as<double>(), n2);
        if (c > 0) cuda::divide(a.as<double>(), c, n2 * np);
    }
    {
        DeviceBuffer scratch(2 * n2 * sizeof(forgeComplex<double>));
        cuda::field_map_start(echoesDev.as<fc>(), w.as<double>(), scratch.as<forgeComplex<double>>(), grid,
                              std::size_t(o.init_kernel / 2), pairs[0].dt);
    }
    arma::vec x(n2);
    PairTerms T;
    auto psi = [&](const DeviceBuffer& v) {
        device::copy_to_host(x.memptr(), v.get(), n2 * sizeof(double));
        return objective(T, x, Nx, Ny, Nz, o.beta);
    };
    if (cost) {
        T = pair_terms(echoes, times);
        cost->assign(1, psi(w));
    }
    for (int it = 0; it < o.iterations; ++it) {
        cuda::field_map_sqs_step(a.as<double>(), phi.as<double>(), pairsDev.as<cuda::EchoPair>(), np, w.as<double>(),
                                 next.as<double>(), grid, o.beta);
        std::swap(w, next);
        if (cost) cost->push_back(psi(w));
    }
    device::copy_to_host(x.memptr(), w.get(), n2 * sizeof(double));
    return arma::conv_to<arma::fvec>::from(x);
}

}  // namespace

arma::fvec estimate_field_map(const std::vector<arma::cx_fvec>& echoes, const std::vector<double>& times,
                              std::size_t Nx, std::size_t Ny, std::size_t Nz, const FieldMapOptions& o,
                              std::vector<double>* cost) {
    const std::size_t n2 = Nx * Ny * Nz;
    check_echoes(echoes, times, n2, "estimate_field_map");
    if (!(o.beta >= 0) || !std::isfinite(o.beta))
        throw invalid_argument("estimate_field_map: beta is " + std::to_string(o.beta) + " (expected >= 0)");
    if (o.iterations < 0)
        throw invalid_argument("estimate_field_map: iterations is " + std::to_string(o.iterations) +
                               " (expected >= 0)");
    if (o.init_kernel < 1 || o.init_kernel % 2 == 0)
        throw invalid_argument("estimate_field_map: init_kernel is " + std::to_string(o.init_kernel) +
                               " (expected an odd width >= 1)");
    if (solver_detail::recon_on_gpu<float>(o.device, "estimate_field_map"))
        return estimate_fieldmap_device(echoes, times, Nx, Ny, Nz, o, cost);
    return estimate_fieldmap_host(echoes, times, Nx, Ny, Nz, o, cost);
}

std::vector<arma::fvec> estimate_field_map(const ReconProblem& scan, const ReconSettings& settings,
                                           const FieldMapOptions& options, std::vector<arma::cx_fvec>* echoImages) {
    // the first frame of each echo, echoes ordered by their time
    std::map<std::size_t, std::size_t> firstFrameOfContrast;  // contrast -> frame index
    std::map<std::size_t, double> timeOfContrast;
    for (const auto& fr : scan.frames) {
        auto it = firstFrameOfContrast.find(fr.contrast);
        if (it == firstFrameOfContrast.end() || fr.frame < it->second) {
            firstFrameOfContrast[fr.contrast] = fr.frame;
            timeOfContrast[fr.contrast] = fr.echo_time;
        }
    }
    std::vector<std::pair<double, std::size_t>> order;  // (TE, contrast)
    for (const auto& kv : timeOfContrast) order.push_back({kv.second, kv.first});
    std::sort(order.begin(), order.end());
    if (order.size() < 2)
        throw invalid_argument("estimate_field_map: '" + scan.source + "' has " + std::to_string(order.size()) +
                               " echo(es) (expected at least 2 contrasts with distinct echo times)");
    for (std::size_t e = 1; e < order.size(); ++e)
        if (!(order[e].first > order[e - 1].first))
            throw invalid_argument("estimate_field_map: echoes " + std::to_string(order[e - 1].second) + " and " +
                                   std::to_string(order[e].second) + " of '" + scan.source +
                                   "' have the same echo time (the header's sequenceParameters/TE needs one per echo)");
    ReconProblem E = scan;
    E.frames.clear();
    E.nframes = order.size();
    E.field_map.clear();
    for (std::size_t e = 0; e < order.size(); ++e)
        for (const auto& fr : scan.frames)
            if (fr.contrast == order[e].second && fr.frame == firstFrameOfContrast[order[e].second]) {
                ReconFrame f = fr;
                f.frame = e;
                E.frames.push_back(std::move(f));
            }
    const ReconResult R = reconstruct(E, false, settings, "field map echo");
    // Auto follows the echo reconstructions: a run kept off the GPU (settings.gpu false) keeps its map there too
    FieldMapOptions o = options;
    if (o.device == ReconDevice::Auto && !settings.gpu) o.device = ReconDevice::Host;
    std::vector<double> times;
    for (const auto& o : order) times.push_back(o.first);
    std::vector<arma::fvec> maps(scan.nslices);
    for (std::size_t s = 0; s < scan.nslices; ++s) {
        std::vector<arma::cx_fvec> echoes;
        for (std::size_t e = 0; e < order.size(); ++e) echoes.push_back(R.complex_image[e * scan.nslices + s]);
        maps[s] = estimate_field_map(echoes, times, scan.Nx, scan.Ny, scan.Nz, o);
    }
    if (echoImages) *echoImages = R.complex_image;
    return maps;
}

}  // namespace recon
}  // namespace forge
