// The exact-DFT CPU loops for one instruction set. CMake compiles this file once per set (SSE2, AVX2+FMA,
// AVX-512, native), each time with FORGE_DFTCPU_ISA naming the namespace of its two entry points; the
// dispatcher (DftCpuDispatch.cpp) picks one at run time. Everything else here has internal linkage and no
// standard-library header is included, so no inline function compiled for a wider set can be shared with a
// narrower one by the linker.
//
// Method, per inner point b and outer point a (vectorised over b, W lanes):
//   p = phase in turns (4 fused multiply-adds); r = p - nearest(p) in [-1/2, 1/2] (nearest by adding and
//   subtracting 1.5 * 2^(mantissa bits): exact, no rounding instruction needed);
//   s1 = sqrt2 sin(pi r), c1 = sqrt2 cos(pi r) by polynomials in r^2 on |pi r| <= pi/2;
//   sin(2 pi r) = s1 c1, cos(2 pi r) = 1 - s1^2 (half-angle formulas; the sqrt2 factors fold the 2).
//   Float: minimax polynomials of 5 terms each (max error 5e-9 and 7e-8 before float rounding; evaluated
//   error < 1e-6 absolute). Double: Taylor series to degree 21/20 (truncation < 2e-17).
// Partial sums stay in T over tiles of kTile inner points per outer point (<= kTile / W terms per lane),
// then go to double per lane, the lanes being added after the last tile; each output is summed in the same order
// whatever the thread count (deterministic).
#include "forge/Operators/dft/cpu/DftCpuKernels.h"

#ifndef FORGE_DFTCPU_ISA
#error "FORGE_DFTCPU_ISA must name the instruction set this file is compiled for"
#endif

namespace forge {
namespace dftcpu {
namespace FORGE_DFTCPU_ISA {

namespace {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
#elif defined(__AVX__)
constexpr int kVecBytes = 32;
#else
constexpr int kVecBytes = 16;
#endif

typedef float vfloat __attribute__((vector_size(kVecBytes)));
typedef double vdouble __attribute__((vector_size(kVecBytes)));

template <typename T>
struct Simd;

template <>
struct Simd<float> {
    using V = vfloat;
    static constexpr int W = kVecBytes / 4;
    typedef double VD __attribute__((vector_size(8 * W)));  // W lanes in double
    static constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: (x + kRound) - kRound = nearest(x), |x| < 2^22
    // sqrt2 sin(pi r) / r and sqrt2 cos(pi r) in u = r^2, minimax on |r| <= 1/2.
    static constexpr int kNs = 5, kNc = 5, kNq = 6;
    static constexpr float kSin[kNs] = {4.442883014678955f, -7.308241367340088f, 3.6062893867492676f,
                                        -0.8457654118537903f, 0.10920874774456024f};
    static constexpr float kCos[kNc] = {1.4142135381698608f, -6.978850841522217f, 5.7394609451293945f,
                                        -1.8835630416870117f, 0.31069818139076233f};
    // sin(pi x) / (pi x) in u = x^2, minimax on |x| <= 1 (max error 6e-8; 2.5e-7 evaluated in float).
    static constexpr float kSinc[kNq] = {0.9999999403953552f,  -1.6449296474456787f, 0.8116899132728577f,
                                         -0.1905253827571869f, 0.02570377103984356f, -0.0019387168576940894f};
    static constexpr float kEps = 1e-12f;  // its cube is still a normal float
};

template <>
struct Simd<double> {
    using V = vdouble;
    static constexpr int W = kVecBytes / 8;
    using VD = vdouble;
    static constexpr double kRound = 6755399441055744.0;  // 1.5 * 2^52
    // Taylor coefficients (-1)^i sqrt2 pi^(2i+1) / (2i+1)! and (-1)^i sqrt2 pi^(2i) / (2i)!.
    static constexpr int kNs = 11, kNc = 11, kNq = 15;
    static constexpr double kSin[kNs] = {4.442882938158366,      -7.308249499995439,     3.6064765714707043,
                                         -0.8474880248145934,    0.11617182693861998,    -0.010423363403963591,
                                         0.0006594517520891848,  -3.099299007012146e-05, 1.124590261760991e-06,
                                         -3.245397952309506e-08, 7.626379503190547e-10};
    static constexpr double kCos[kNc] = {1.4142135623730951,      -6.978864199638879,      5.739885734946737,
                                         -1.8883467170460115,     0.33280776909535636,     -0.03649645580644734,
                                         0.0027288301579657267,   -0.00014798062712573576, 6.085459369817187e-06,
                                         -1.9627802803594178e-07, 5.097859182475451e-09};
    // (-1)^i pi^(2i) / (2i+1)!: Taylor series of sin(pi x) / (pi x) to degree 28 (truncation < 1e-19 on |x| <= 1).
    static constexpr double kSinc[kNq] = {1.0,
                                          -1.6449340668482264,
                                          0.8117424252833536,
                                          -0.19075182412208422,
                                          0.0261478478176548,
                                          -0.0023460810354558235,
                                          0.000148428793031071,
                                          -6.975873661656381e-06,
                                          2.5312174041370274e-07,
                                          -7.304711822217775e-09,
                                          1.7165384749821432e-10,
                                          -3.3481335350440666e-12,
                                          5.507458912150965e-14,
                                          -7.743082723388031e-16,
                                          9.411473315855849e-18};
    static constexpr double kEps = 1e-100;  // its cube is still a normal double
};

template <typename V, typename T>
inline V load(const T* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

template <typename V, typename T>
inline V splat(T x) {
    return V{} + x;
}

// Horner's rule; with -ffp-contract=fast each step is one fused multiply-add.
// kScale (+-1) multiplies every coefficient at compile time (a sign costs no instruction).
template <int kScale = 1, typename T, int N, typename V>
inline V poly(const T (&c)[N], V u) {
    V acc = splat<V>(T(kScale) * c[N - 1]);
    for (int i = N - 2; i >= 0; --i) acc = acc * u + T(kScale) * c[i];
    return acc;
}

// sigma sin(2 pi p), cos(2 pi p) for |p| < 2^22 (float) / 2^51 (double) turns.
template <typename T, int kSigma>
inline void sincos_turns(typename Simd<T>::V p, typename Simd<T>::V& s, typename Simd<T>::V& c) {
    using S = Simd<T>;
    using V = typename S::V;
    const V n = (p + S::kRound) - S::kRound;
    const V r = p - n;
    const V u = r * r;
    const V s1 = r * poly<kSigma>(S::kSin, u);  // sigma sqrt2 sin(pi r)
    const V c1 = poly(S::kCos, u);              // sqrt2 cos(pi r)
    s = s1 * c1;
    c = T(1) - s1 * s1;
}

// sincPG(x) = sin(pi x) / (pi x). With x = 2m + r (m the nearest integer to x / 2, |r| <= 1), sin(pi x) =
// sin(pi r), so sincPG(x) = sincPG(r) r / x: returns the polynomial sincPG(r) and, in num and den, r + eps and
// x + eps. Where m = 0, r equals x exactly and the ratio is exactly 1, x = 0 included; elsewhere |x| >= 1 and
// eps changes the ratio by at most eps / |x|. The three axes then share one division.
template <typename T>
inline typename Simd<T>::V sinc_parts(typename Simd<T>::V x, typename Simd<T>::V& num, typename Simd<T>::V& den) {
    using S = Simd<T>;
    using V = typename S::V;
    const V m = (T(0.5) * x + S::kRound) - S::kRound;
    const V r = x - T(2) * m;
    num = r + S::kEps;
    den = x + S::kEps;
    return poly(S::kSinc, r * r);
}

// Whether any lane of a comparison result is set (all bits of a lane are set or none are).
template <typename M>
inline bool any_lane(M m) {
    unsigned long long w[sizeof(M) / 8];
    __builtin_memcpy(w, &m, sizeof m);
    unsigned long long any = 0;
    for (unsigned i = 0; i < sizeof(M) / 8; ++i) any |= w[i];
    return any != 0;
}

// Sums over inner points [b0, b1) for the outer point a, all NB vectors, into acc (double, re/im per vector).
template <typename T, int NB, bool kGrad, bool kForward>
inline void tile_sum(const DftKernelArgs<T>& g, long long a, long long b0, long long b1, typename Simd<T>::VD* acc) {
    using S = Simd<T>;
    using V = typename S::V;
    constexpr int W = S::W;
    constexpr int kSigma = kForward ? -1 : 1;
    const V ox = splat<V>(g.ox[a]), oy = splat<V>(g.oy[a]), oz = splat<V>(g.oz[a]), ow = splat<V>(g.ow[a]);
    V o0{}, o1{}, o2{};
    if constexpr (kGrad) {
        if constexpr (kForward) {
            o0 = splat<V>(g.oa[0][a]);
            o1 = splat<V>(g.oa[1][a]);
            o2 = splat<V>(g.oa[2][a]);
        } else {
            o0 = splat<V>(g.og[0][a]);
            o1 = splat<V>(g.og[1][a]);
            o2 = splat<V>(g.og[2][a]);
        }
    }
    // With one vector (NB = 1) each of re and im has two sums, so that the chains of dependent fused
    // multiply-adds are short enough to overlap; with more vectors the NB chains already do.
    V sr[NB], si[NB], sr2[NB], si2[NB];
    for (int v = 0; v < NB; ++v) sr[v] = si[v] = sr2[v] = si2[v] = V{};
    const long long stride = g.n_in;
    for (long long b = b0; b < b1; b += W) {
        const V p = ox * load<V>(g.ix + b) + oy * load<V>(g.iy + b) + oz * load<V>(g.iz + b) + ow * load<V>(g.iw + b);
        V s, c;
        sincos_turns<T, kSigma>(p, s, c);
        if constexpr (kGrad) {
            V ax, ay, az;
            if constexpr (kForward) {
                ax = o0 + ow * load<V>(g.ig[0] + b);
                ay = o1 + ow * load<V>(g.ig[1] + b);
                az = o2 + ow * load<V>(g.ig[2] + b);
            } else {
                const V tw = load<V>(g.iw + b);
                ax = load<V>(g.ia[0] + b) + o0 * tw;
                ay = load<V>(g.ia[1] + b) + o1 * tw;
                az = load<V>(g.ia[2] + b) + o2 * tw;
            }
            // All arguments of the vector within [-1, 1] (the usual case: k/N lies in [-1/2, 1/2] and G t is
            // small): three polynomials; otherwise the reduction and one division.
            const V ux = ax * ax, uy = ay * ay, uz = az * az;
            V bf;
            if (!any_lane((ux > T(1)) | (uy > T(1)) | (uz > T(1)))) {
                bf = poly(S::kSinc, ux) * poly(S::kSinc, uy) * poly(S::kSinc, uz);
            } else {
                V nx, ny, nz, dx, dy, dz;
                const V q = sinc_parts<T>(ax, nx, dx) * sinc_parts<T>(ay, ny, dy) * sinc_parts<T>(az, nz, dz);
                bf = q * ((nx * ny * nz) / (dx * dy * dz));
            }
            s *= bf;
            c *= bf;
        }
        for (int v = 0; v < NB; ++v) {
            const V re = load<V>(g.in_re + v * stride + b), im = load<V>(g.in_im + v * stride + b);
            // (re + i im)(c + i s), s carrying the direction's sign
            if constexpr (NB == 1) {
                sr[v] += c * re;
                sr2[v] -= s * im;
                si[v] += c * im;
                si2[v] += s * re;
            } else {
                sr[v] = sr[v] + c * re - s * im;
                si[v] = si[v] + c * im + s * re;
            }
        }
    }
    // Per lane into double: the lanes are added only once per output, after the last tile.
    for (int v = 0; v < NB; ++v) {
        acc[2 * v] += __builtin_convertvector(sr[v] + sr2[v], typename S::VD);
        acc[2 * v + 1] += __builtin_convertvector(si[v] + si2[v], typename S::VD);
    }
}

// Inner points per tile: the tile's inner arrays (up to 13 of kTile entries) stay in L1/L2 while a chunk
// of outer points runs over it; float partial sums cover at most kTile / W terms per lane.
constexpr long long kTile = 1024;
constexpr long long kOuterChunk = 32;

template <typename T, int NB, bool kGrad, bool kForward>
void run(const DftKernelArgs<T>& g) {
    const long long nchunks = (g.n_out + kOuterChunk - 1) / kOuterChunk;
#pragma omp parallel for schedule(dynamic, 1)
    for (long long ch = 0; ch < nchunks; ++ch) {
        const long long a0 = ch * kOuterChunk;
        const long long a1 = a0 + kOuterChunk < g.n_out ? a0 + kOuterChunk : g.n_out;
        using VD = typename Simd<T>::VD;
        VD acc[kOuterChunk][2 * NB];
        for (long long a = 0; a < a1 - a0; ++a)
            for (int v = 0; v < 2 * NB; ++v) acc[a][v] = VD{};
        for (long long b0 = 0; b0 < g.n_in; b0 += kTile) {
            const long long b1 = b0 + kTile < g.n_in ? b0 + kTile : g.n_in;
            for (long long a = a0; a < a1; ++a) tile_sum<T, NB, kGrad, kForward>(g, a, b0, b1, acc[a - a0]);
        }
        for (long long a = a0; a < a1; ++a)
            for (int v = 0; v < 2 * NB; ++v) {
                double sum = 0;
                for (int l = 0; l < Simd<T>::W; ++l) sum += acc[a - a0][v][l];
                g.out[2 * (v / 2 * g.n_out + a) + v % 2] = T(sum);
            }
    }
}

template <typename T, int NB>
void run_nb(const DftKernelArgs<T>& g) {
    if (g.forward) {
        if (g.grad)
            run<T, NB, true, true>(g);
        else
            run<T, NB, false, true>(g);
    } else {
        if (g.grad)
            run<T, NB, true, false>(g);
        else
            run<T, NB, false, false>(g);
    }
}

template <typename T>
void run_any(const DftKernelArgs<T>& g) {
    switch (g.nb) {
        case 8: run_nb<T, 8>(g); break;
        case 4: run_nb<T, 4>(g); break;
        case 2: run_nb<T, 2>(g); break;
        default: run_nb<T, 1>(g); break;
    }
}

}  // namespace

void apply_float(const DftKernelArgs<float>& g) { run_any<float>(g); }
void apply_double(const DftKernelArgs<double>& g) { run_any<double>(g); }
int vector_bits() { return 8 * kVecBytes; }

}  // namespace FORGE_DFTCPU_ISA
}  // namespace dftcpu
}  // namespace forge
