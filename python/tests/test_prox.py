"""Proximal penalties and solvers from Python: the wavelet L1 prox against a NumPy filter bank written from the
transform's definition, prox optimality against perturbations (wavelet L1, exact TV), FISTA / POGM / ADMM against
analytic minimisers and long runs, a penalty written in Python, l1_wavelet_recon, and argument errors."""

import math

import numpy as np
import pytest

import forge
from reference import crandn, rel_err

# ---- an independent periodic orthonormal wavelet transform (Mallat's layout) in NumPy, float64 ----------------

S3, R2 = math.sqrt(3.0), math.sqrt(2.0)
FILTERS = {
    "haar": [1 / R2, 1 / R2],
    "db2": [(1 + S3) / (4 * R2), (3 + S3) / (4 * R2), (3 - S3) / (4 * R2), (1 - S3) / (4 * R2)],
}


def analysis_matrix(m, h):
    """One level on an axis of length m: low half a[j] = sum_k h[k] x[(2j + k) mod m], high half with the
    quadrature mirror g[k] = (-1)^k h[taps - 1 - k]. Orthogonal for an orthonormal h."""
    taps = len(h)
    g = [(-1) ** k * h[taps - 1 - k] for k in range(taps)]
    A = np.zeros((m, m))
    for j in range(m // 2):
        for k in range(taps):
            A[j, (2 * j + k) % m] += h[k]
            A[m // 2 + j, (2 * j + k) % m] += g[k]
    return A


def dwt2(x, levels, h):
    c = np.array(x, dtype=np.complex128)
    ny, nx = c.shape
    for j in range(levels):
        ly, lx = ny >> j, nx >> j
        c[:ly, :lx] = analysis_matrix(ly, h) @ c[:ly, :lx] @ analysis_matrix(lx, h).T
    return c


def idwt2(c, levels, h):
    x = np.array(c, dtype=np.complex128)
    ny, nx = x.shape
    for j in reversed(range(levels)):
        ly, lx = ny >> j, nx >> j
        x[:ly, :lx] = analysis_matrix(ly, h).T @ x[:ly, :lx] @ analysis_matrix(lx, h)
    return x


def soft(c, tau):
    a = np.abs(c)
    return c * np.maximum(0, 1 - tau / np.maximum(a, 1e-300))


def wavelet_l1(x, levels, h, lam):
    c = dwt2(x, levels, h)
    ny, nx = c.shape
    c[: ny >> levels, : nx >> levels] = 0  # the coarsest approximation is not penalised
    return lam * np.abs(c).sum()


def wavelet_prox(x, t, levels, h, lam):
    c = dwt2(x, levels, h)
    ny, nx = c.shape
    coarse = c[: ny >> levels, : nx >> levels].copy()
    c = soft(c, t * lam)
    c[: ny >> levels, : nx >> levels] = coarse
    return idwt2(c, levels, h)


def test_reference_transform_is_orthogonal():
    x = crandn(np.random.default_rng(1), 8, 16)
    c = dwt2(x, 2, FILTERS["db2"])
    assert np.linalg.norm(c) == pytest.approx(np.linalg.norm(x), rel=1e-12)
    assert rel_err(idwt2(c, 2, FILTERS["db2"]), x) < 1e-13


@pytest.mark.parametrize("wavelet,levels", [("db2", 2), ("haar", 3), ("db2", 0)])
def test_wavelet_l1_prox_is_soft_threshold_of_the_reference_transform(rng, wavelet, levels):
    ny, nx = 16, 32
    R = forge.WaveletL1Penalty(nx, ny, lam=0.3, wavelet=wavelet, levels=levels, random_shift=False,
                               dtype=np.float64)
    L = R.levels
    assert L == (levels or 2)  # db2 on 16: 2 levels keep the coarsest band a filter (4 taps) long
    x = crandn(rng, ny, nx)
    h = FILTERS[wavelet]
    assert rel_err(R.wavelet_forward(x), dwt2(x, L, h)) < 1e-12
    assert rel_err(R.wavelet_inverse(dwt2(x, L, h)), x) < 1e-12
    assert R.penalty(x) == pytest.approx(wavelet_l1(x, L, h, 0.3), rel=1e-12)
    p = R.prox(x, 0.7)
    assert p.shape == x.shape and p.dtype == np.complex128
    assert rel_err(p, wavelet_prox(x, 0.7, L, h, 0.3)) < 1e-12
    assert rel_err(R.prox(x.reshape(-1), 0.7), wavelet_prox(x, 0.7, L, h, 0.3).reshape(-1)) < 1e-12  # flat


def test_wavelet_l1_prox_float32(rng):
    R = forge.WaveletL1Penalty(16, 16, lam=0.2, random_shift=False)
    x = crandn(rng, 16, 16, dtype=np.complex64)
    p = R.prox(x, 1.0)
    assert p.dtype == np.complex64
    assert rel_err(p, wavelet_prox(x, 1.0, 2, FILTERS["db2"], 0.2)) < 1e-5


def prox_objective(R, p, x, t):
    return 0.5 * np.linalg.norm(p - x) ** 2 + t * R.penalty(p)


def assert_prox_optimal(R, x, t, rng, rel_scale, slack=0.0):
    """p = prox(x, t) minimises 0.5 ||p - x||^2 + t lam R(p): no random perturbation lowers it (beyond slack)."""
    p = R.prox(x, t)
    f = prox_objective(R, p, x, t)
    scale = np.linalg.norm(p) / math.sqrt(p.size)
    for k in range(60):
        eps = rel_scale * scale * (10.0 ** -(k % 4))
        q = p + eps * crandn(rng, *p.shape)
        assert prox_objective(R, q, x, t) >= f - slack * f, k
    return p


def test_wavelet_l1_prox_is_optimal_against_perturbations(rng):
    R = forge.WaveletL1Penalty(16, 16, lam=1.5, random_shift=False, dtype=np.float64)
    x = crandn(rng, 16, 16)
    p = assert_prox_optimal(R, x, 0.8, rng, 1e-2)
    # Sparsity: a threshold of 1.2 zeroes about half of the detail coefficients of a unit complex Gaussian.
    c = R.wavelet_forward(p)
    assert np.mean(np.abs(c) < 1e-12) > 0.3


@pytest.mark.parametrize("norm", ["isotropic", "anisotropic"])
def test_exact_tv_prox_is_optimal_against_perturbations(rng, norm):
    R = forge.ExactTVPenalty(12, 10, lam=0.4, norm=norm, iterations=4000, warm_start=False, dtype=np.float64)
    x = crandn(rng, 10, 12)
    # FGP stops short of the exact dual optimum: the objective may be above the minimum by a tiny fraction.
    assert_prox_optimal(R, x, 1.0, rng, 1e-2, slack=1e-7)


def tv_value(x, lam, isotropic=True):
    dx = np.zeros_like(x)
    dy = np.zeros_like(x)
    dx[:, :-1] = x[:, 1:] - x[:, :-1]
    dy[:-1, :] = x[1:, :] - x[:-1, :]
    if isotropic:
        return lam * np.sqrt(np.abs(dx) ** 2 + np.abs(dy) ** 2).sum()
    return lam * (np.abs(dx) + np.abs(dy)).sum()


@pytest.mark.parametrize("norm", ["isotropic", "anisotropic"])
def test_exact_tv_value_is_the_forward_difference_norm(rng, norm):
    R = forge.ExactTVPenalty(12, 10, lam=0.4, norm=norm, dtype=np.float64)
    x = crandn(rng, 10, 12)
    assert R.penalty(x) == pytest.approx(tv_value(x, 0.4, norm == "isotropic"), rel=1e-12)


def test_l1_penalty_prox_is_complex_soft_threshold(rng):
    R = forge.L1Penalty(8, 8, lam=0.5, dtype=np.float64)
    x = crandn(rng, 8, 8)
    assert rel_err(R.prox(x, 0.6), soft(x, 0.3)) < 1e-14
    assert R.penalty(x) == pytest.approx(0.5 * np.abs(x).sum(), rel=1e-12)


def test_prox_out_and_random_shift_reproducible(rng):
    x = crandn(rng, 16, 16, dtype=np.complex64)
    a = forge.WaveletL1Penalty(16, 16, lam=0.2, seed=7)
    b = forge.WaveletL1Penalty(16, 16, lam=0.2, seed=7)
    out = np.empty_like(x)
    r = a.prox(x, 1.0, out=out)
    assert r is out
    assert np.array_equal(out, b.prox(x, 1.0))  # the same seed draws the same shifts
    assert not a.fixed_between_calls and forge.WaveletL1Penalty(16, 16, lam=1, random_shift=False).fixed_between_calls


# ---- solvers -------------------------------------------------------------------------------------------------

def fft_problem(rng, n=16, dtype=np.float64):
    """A full Cartesian grid: G^H G = n^2 I, so the minimiser of ||y - G x||^2 + R(x) is prox_{R / (2 n^2)} of
    G^H y / n^2."""
    G = forge.Gfft(n, n, dtype=dtype)
    cd = forge._arrays.complex_dtype(dtype)
    x = crandn(rng, n, n, dtype=cd)
    y = (G @ x + 0.3 * n * crandn(rng, n, n, dtype=cd)).astype(cd)
    return G, y, n * n


@pytest.mark.parametrize("solver", [forge.solve_fista, forge.solve_pogm, forge.solve_admm])
def test_wavelet_l1_solvers_reach_the_analytic_minimiser(rng, solver):
    G, y, m = fft_problem(rng)
    lam = 40.0
    R = forge.WaveletL1Penalty(16, 16, lam=lam, random_shift=False, dtype=np.float64)
    x, info = solver(G, y, penalty=R, niter=300, return_info=True)
    expected = wavelet_prox(G.H @ y / m, 1 / (2 * m), 2, FILTERS["db2"], lam)
    assert x.shape == (16, 16)
    assert rel_err(x, expected) < 1e-6, info
    assert info["iterations"] >= 1 and info["normal_applies"] > 0
    assert (info["rho"] if solver is forge.solve_admm else info["lipschitz"]) > 0


def weighted_problem(rng, n=12):
    """A Cartesian grid with weights in [0.2, 2]: G^H W G is not a multiple of I, the minimiser has no closed form."""
    G = forge.Gfft(n, n, dtype=np.float64)
    x = crandn(rng, n, n)
    w = rng.uniform(0.2, 2.0, (n, n))
    y = G @ x + 0.2 * n * crandn(rng, n, n)
    return G, y, w


@pytest.mark.parametrize("make", [
    lambda: forge.ExactTVPenalty(12, 12, lam=30.0, iterations=20, dtype=np.float64),
    lambda: forge.WaveletL1Penalty(12, 12, lam=30.0, random_shift=False, levels=1, dtype=np.float64),
])
def test_fista_pogm_admm_agree_with_a_long_run(rng, make):
    G, y, w = weighted_problem(rng)
    ref = forge.solve_fista(G, y, weights=w, penalty=make(), niter=3000, tolerance=0)
    cost = lambda x: np.sum(w * np.abs(y - G @ x) ** 2) + make().penalty(x)
    for solver in (forge.solve_fista, forge.solve_pogm, forge.solve_admm):
        x = solver(G, y, weights=w, penalty=make(), niter=400)
        assert rel_err(x, ref) < 2e-3, solver.__name__
        assert cost(x) == pytest.approx(cost(ref), rel=1e-5), solver.__name__


def test_normal_forms_equal_the_data_forms(rng):
    G, y, w = weighted_problem(rng)
    R = lambda: forge.WaveletL1Penalty(12, 12, lam=30.0, random_shift=False, levels=1, dtype=np.float64)
    N = forge.NormalOf(forge.diagonal(np.sqrt(w).astype(np.complex128), dtype=np.float64) @ G)
    b = G.H @ (w * y)
    for data, normal in ((forge.solve_fista, forge.solve_fista_normal), (forge.solve_pogm, forge.solve_pogm_normal),
                         (forge.solve_admm, forge.solve_admm_normal)):
        x1 = data(G, y, weights=w, penalty=R(), niter=60)
        x2 = normal(N, b, penalty=R(), niter=60)
        assert rel_err(x2, x1) < 1e-9, normal.__name__


def test_callback_and_monotone(rng):
    G, y, w = weighted_problem(rng)
    seen = []
    R = forge.ExactTVPenalty(12, 12, lam=30.0, dtype=np.float64)
    x, info = forge.solve_fista(G, y, weights=w, penalty=R, niter=25, monotone=True, callback=seen.append,
                                return_info=True)
    assert [s["iteration"] for s in seen] == list(range(1, 26))
    costs = [s["cost"] for s in seen]
    assert all(b <= a * (1 + 1e-12) for a, b in zip(costs, costs[1:]))
    assert set(seen[0]) == {"iteration", "cost", "gradient_norm", "step", "elapsed_s"}
    assert info["stop_reason"] == "iteration limit" and not info["converged"]
    x2, info2 = forge.solve_pogm(G, y, weights=w, penalty=R, niter=500, tolerance=1e-4, return_info=True)
    assert info2["converged"] and info2["iterations"] < 500


def test_lipschitz_given_skips_the_power_iteration(rng):
    G, y, m = fft_problem(rng)
    R = forge.L1Penalty(16, 16, lam=20.0, dtype=np.float64)
    _, a = forge.solve_fista(G, y, penalty=R, niter=10, return_info=True)
    _, b = forge.solve_fista(G, y, penalty=R, niter=10, lipschitz=2.0 * m, return_info=True)
    assert b["normal_applies"] == a["normal_applies"] - 30
    assert b["lipschitz"] >= 2.0 * m  # given, and only ever raised


def test_slices_in_one_call(rng):
    G, y, m = fft_problem(rng)
    Y = np.stack([y, 2 * y])
    R = forge.L1Penalty(16, 16, lam=20.0, dtype=np.float64)
    X, info = forge.solve_pogm(G, Y, penalty=R, niter=200, return_info=True)
    assert X.shape == (2, 16, 16) and len(info) == 2
    for s in range(2):
        assert rel_err(X[s], soft(G.H @ Y[s] / m, 20.0 / (2 * m))) < 1e-6


# ---- a penalty written in Python ---------------------------------------------------------------------------

class NumpySoftThreshold:
    """lam ||x||_1 in the image domain, prox by NumPy."""

    def __init__(self, lam):
        self.lam = lam
        self.calls = 0

    def prox(self, x, step):
        self.calls += 1
        assert isinstance(x, np.ndarray) and x.shape == (16, 16)
        return soft(x, step * self.lam)

    def penalty(self, x):
        return self.lam * np.abs(x).sum()


@pytest.mark.parametrize("solver", [forge.solve_fista, forge.solve_pogm, forge.solve_admm])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_python_prox_reaches_the_analytic_minimiser(rng, solver, dtype):
    G, y, m = fft_problem(rng, dtype=dtype)
    P = NumpySoftThreshold(20.0)
    x = solver(G, y, penalty=P, niter=200)
    expected = soft((G.H @ y).astype(np.complex128) / m, 20.0 / (2 * m))
    assert P.calls > 0
    assert rel_err(x, expected) < (1e-5 if dtype == np.float32 else 1e-9)
    # The same as forge's own L1Penalty in the same solver, iterate for iterate.
    x_native = solver(G, y, penalty=forge.L1Penalty(16, 16, lam=20.0, dtype=dtype), niter=50)
    x_python = solver(G, y, penalty=NumpySoftThreshold(20.0), niter=50)
    assert rel_err(x_python, x_native) < (1e-5 if dtype == np.float32 else 1e-12)


def test_python_prox_without_penalty_and_its_cost(rng):
    G, y, m = fft_problem(rng)

    class ProxOnly:
        def prox(self, x, step):
            return soft(x, step * 20.0)

    seen = []
    x = forge.solve_fista(G, y, penalty=ProxOnly(), niter=100, callback=seen.append)
    assert rel_err(x, soft(G.H @ y / m, 20.0 / (2 * m))) < 1e-9
    # Without penalty(x) the reported cost is the data term alone.
    assert seen[-1]["cost"] == pytest.approx(np.sum(np.abs(y - G @ x) ** 2), rel=1e-9)


def test_python_prox_errors_reach_the_caller(rng):
    G, y, _ = fft_problem(rng)

    class Boom:
        def prox(self, x, step):
            raise KeyError("inside prox")

    with pytest.raises(KeyError, match="inside prox"):
        forge.solve_pogm(G, y, penalty=Boom(), niter=5)

    class WrongShape:
        def prox(self, x, step):
            return x[:4]

    with pytest.raises(ValueError, match=r"WrongShape.prox returned an array of shape \(4, 16\)"):
        forge.solve_fista(G, y, penalty=WrongShape(), niter=5)

    class NotFixed(NumpySoftThreshold):
        fixed_between_calls = False

    with pytest.raises(ValueError, match="ADMM needs a fixed penalty"):
        forge.solve_admm(G, y, penalty=NotFixed(1.0), niter=5)


# ---- l1_wavelet_recon ------------------------------------------------------------------------------------------

def phantom(n):
    yy, xx = np.mgrid[-1:1:n * 1j, -1:1:n * 1j]
    return ((xx**2 + yy**2 < 0.6) * (1 + (xx > 0.2)) - 0.5 * (np.hypot(xx + 0.3, yy) < 0.15)).astype(np.complex64)


def test_l1_wavelet_recon_beats_least_squares_on_undersampled_radial():
    n = 32
    kx, ky = forge.trajectories.radial(n, spokes=14)
    image = phantom(n)
    G = forge.Gnufft(kx, ky, nx=n, ny=n)
    y = G @ image
    x, info = forge.l1_wavelet_recon(G, y, lam=0.001, niter=80, return_info=True)
    xc = forge.solve_pwls_pcg(G, y, niter=30)
    assert x.shape == (n, n)
    assert rel_err(x, image) < 0.7 * rel_err(xc, image)
    back = G.H @ y
    assert info["lam"] == pytest.approx(0.001 * np.abs(back).max(), rel=1e-6)
    # Relative lam: the data's scale does not change the image.
    x2 = forge.l1_wavelet_recon(G, 1000 * y, lam=0.001, niter=80)
    assert rel_err(x2 / 1000, x) < 1e-4


def test_l1_wavelet_recon_from_a_trajectory_and_maps(rng):
    n, nc = 32, 4
    kx, ky = forge.trajectories.radial(n, spokes=16)
    yy, xx = np.mgrid[-1:1:n * 1j, -1:1:n * 1j]
    a = 2 * np.pi * np.arange(nc) / nc
    maps = np.exp(-((xx - np.cos(a)[:, None, None]) ** 2 + (yy - np.sin(a)[:, None, None]) ** 2) + 1j * a[:, None, None])
    maps = (maps / np.sqrt(np.sum(np.abs(maps) ** 2, axis=0))).astype(np.complex64)
    S = forge.SENSE(forge.Gnufft(kx, ky, nx=n, ny=n), maps)
    y = S @ phantom(n)
    x1 = forge.l1_wavelet_recon((kx, ky), y, maps=maps, lam=0.001, niter=40)
    x2 = forge.l1_wavelet_recon(forge.Gnufft(kx, ky, nx=n, ny=n), y, maps=maps, lam=0.001, niter=40)
    assert x1.shape == (n, n)
    assert np.array_equal(x1, x2)
    assert rel_err(x1, phantom(n)) < 0.1


# ---- argument errors ---------------------------------------------------------------------------------------------

def test_bad_arguments_name_the_argument(rng):
    G, y, _ = fft_problem(rng, dtype=np.float32)
    R = forge.WaveletL1Penalty(16, 16, lam=1.0)
    with pytest.raises(ValueError, match="WaveletL1Penalty: lam must be finite and >= 0"):
        forge.WaveletL1Penalty(16, 16, lam=-1)
    with pytest.raises(ValueError, match="wavelet must be one of"):
        forge.WaveletL1Penalty(16, 16, lam=1, wavelet="sym8")
    with pytest.raises(ValueError, match="nx = 15 is odd"):
        forge.WaveletL1Penalty(15, 16, lam=1)
    with pytest.raises(ValueError, match="ExactTVPenalty: norm must be"):
        forge.ExactTVPenalty(16, 16, lam=1, norm="l2")
    with pytest.raises(ValueError, match="ExactTVPenalty: iterations must be at least 1"):
        forge.ExactTVPenalty(16, 16, lam=1, iterations=0)
    with pytest.raises(ValueError, match="WaveletL1Penalty.prox: step must be finite and >= 0"):
        R.prox(y, -1.0)
    with pytest.raises(ValueError, match=r"WaveletL1Penalty.prox: x has shape \(15,\)"):
        R.prox(np.zeros(15, np.complex64), 1.0)
    with pytest.raises(TypeError, match="x has dtype complex128, expected complex64"):
        R.penalty(np.zeros((16, 16), np.complex128))
    with pytest.raises(TypeError, match="solve_fista: penalty must be a forge proximal penalty"):
        forge.solve_fista(G, y, penalty=3.0)
    with pytest.raises(TypeError, match="solve_pogm: penalty is a smooth QuadPenalty"):
        forge.solve_pogm(G, y, penalty=forge.QuadPenalty(16, 16, beta=1.0))
    with pytest.raises(TypeError, match="solve_fista: penalty is float64 but the operator is float32"):
        forge.solve_fista(G, y, penalty=forge.L1Penalty(16, 16, lam=1.0, dtype=np.float64))
    with pytest.raises(ValueError, match="solve_fista: penalty covers 64 pixels"):
        forge.solve_fista(G, y, penalty=forge.L1Penalty(8, 8, lam=1.0))
    with pytest.raises(ValueError, match="solve_admm: .*random shifts"):
        forge.solve_admm(G, y, penalty=R, niter=2)
    with pytest.raises(ValueError, match="solve_fista: niter must be at least 0"):
        forge.solve_fista(G, y, penalty=R, niter=-1)
    with pytest.raises(ValueError, match="solve_pogm: lipschitz must be finite and >= 0"):
        forge.solve_pogm(G, y, penalty=R, lipschitz=-2.0)
    with pytest.raises(ValueError, match="solve_admm: rho must be > 0"):
        forge.solve_admm(G, y, penalty=forge.L1Penalty(16, 16, lam=1.0), rho=0)
    with pytest.raises(ValueError, match="solve_admm: cg_iterations must be at least 1"):
        forge.solve_admm(G, y, penalty=forge.L1Penalty(16, 16, lam=1.0), cg_iterations=0)
    with pytest.raises(TypeError, match="solve_fista: callback must be callable"):
        forge.solve_fista(G, y, penalty=R, callback=3)
    bad = y.copy()
    bad[0, 3] = np.nan
    with pytest.raises(ValueError, match=r"solve_pogm: y\[3\] is"):
        forge.solve_pogm(G, bad, penalty=R)
    with pytest.raises(ValueError, match="l1_wavelet_recon: solver must be"):
        forge.l1_wavelet_recon(G, y, solver="cg")
    with pytest.raises(ValueError, match="l1_wavelet_recon: a trajectory G needs maps"):
        forge.l1_wavelet_recon((np.zeros(4), np.zeros(4)), y)
    with pytest.raises(ValueError, match="l1_wavelet_recon: E\\^H y is zero"):
        forge.l1_wavelet_recon(G, np.zeros_like(y))


# ---- docs/python.md's examples ------------------------------------------------------------------------------------

def test_docs_compressed_sensing_example():
    from test_docs import python_block, run

    code = python_block("docs/python.md", "## Compressed sensing")
    assert len(code.strip().splitlines()) <= 10
    printed = float(run(code))
    assert printed < 0.07  # the page says about 0.05 (least squares 0.11)


def test_docs_python_penalty_example():
    from test_docs import python_block, run

    setup = python_block("docs/python.md", "## Compressed sensing")
    code = python_block("docs/python.md", "**A penalty written in Python.**")
    check = "\nref = forge.solve_fista(G, y, penalty=forge.L1Penalty(n, n, lam=0.1), niter=100)\n" \
            "print(np.linalg.norm(x - ref) / np.linalg.norm(ref))\n"
    printed = run(setup.replace("x = forge.l1_wavelet_recon", "y = G @ image\nx = forge.l1_wavelet_recon")
                  + code + check)
    assert float(printed.splitlines()[-1]) < 1e-4  # float32: the two soft thresholds round differently
