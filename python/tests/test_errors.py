"""Bad input gives ValueError (sizes, shapes, values) or TypeError (types, dtypes) naming the argument and
what was expected; errors of the C++ library come through as the same Python exceptions."""

import numpy as np
import pytest

import forge
from reference import crandn, grid_problem


@pytest.fixture
def G(rng):
    p = grid_problem(rng, n=8, n1=50)
    return forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=p["field_map"], t=p["t"])


def test_wrong_length_names_the_expected_size(G):
    with pytest.raises(ValueError, match=r"Gdft.forward: x has shape \(63,\), expected \(64,\) or \(nbatch, 64\)"):
        G @ np.zeros(63, np.complex64)
    with pytest.raises(ValueError, match=r"Gdft.adjoint: y has shape \(64,\), expected \(50,\)"):
        G.H @ np.zeros(64, np.complex64)
    with pytest.raises(ValueError, match=r"shape \(2, 3, 64\)"):
        G @ np.zeros((2, 3, 64), np.complex64)


def test_wrong_dtype_is_a_type_error_with_the_fix(G):
    with pytest.raises(TypeError, match=r"x has dtype complex128, expected complex64.*dtype=numpy.float64"):
        G @ np.zeros(64, np.complex128)
    with pytest.raises(TypeError, match=r"x has dtype float32, expected complex64"):
        G @ np.zeros(64, np.float32)
    with pytest.raises(TypeError, match=r"x must be a NumPy, CuPy, PyTorch or JAX array, got builtins.list"):
        G @ [0j] * 64


def test_non_contiguous_input_is_refused(G):
    x = np.zeros(128, np.complex64)[::2]
    with pytest.raises(ValueError, match="not C-contiguous.*numpy.ascontiguousarray"):
        G @ x


def test_geometry_lengths_are_checked(rng):
    p = grid_problem(rng, n=8, n1=50)
    with pytest.raises(ValueError, match=r"Gdft: ky has 49 entries, expected 50 \(the length of kx\)"):
        forge.Gdft(p["kx"], p["ky"][:49], ix=p["ix"], iy=p["iy"])
    with pytest.raises(ValueError, match=r"Gdft: field_map has 10 entries, expected 64 \(the length of ix\)"):
        forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], field_map=np.zeros(10))
    with pytest.raises(TypeError, match="kx must be real numbers"):
        forge.Gdft(p["kx"] + 0j, p["ky"], ix=p["ix"], iy=p["iy"])
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        forge.Gfft(8, 8, dtype=np.float16)


def test_library_errors_arrive_as_value_errors():
    # Raised by the C++ library (forge::invalid_argument): odd axis lengths are refused by the centred FFT.
    with pytest.raises(ValueError, match="even"):
        forge.Gfft(7, 8)
    with pytest.raises(ValueError, match="beta"):
        forge.QuadPenalty(8, 8, beta=-1.0)


def test_sense_maps_and_solver_arguments(G, rng):
    with pytest.raises(ValueError, match=r"SENSE: maps has shape \(3, 60\), expected \(n_coils, 64\)"):
        forge.SENSE(G, np.ones((3, 60), np.complex64))
    with pytest.raises(TypeError, match="G must be a forge operator"):
        forge.SENSE(np.eye(3), np.ones((1, 64)))
    y = crandn(rng, 50, dtype=np.complex64)
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: weights has shape \(49,\), expected \(50,\)"):
        forge.solve_pwls_pcg(G, y, weights=np.ones(49, np.float32))
    with pytest.raises(TypeError, match="solve_pwls_pcg: penalty is float64 but the operator is float32"):
        forge.solve_pwls_pcg(G, y, penalty=forge.QuadPenalty(8, 8, beta=1.0, dtype=np.float64))
    with pytest.raises(ValueError, match="W"):  # negative weights: refused by the C++ solver
        forge.solve_pwls_pcg(G, y, weights=-np.ones(50, np.float32))


def test_native_layer_checks_sizes_too(G):
    # The extension checks again when called directly (a second line behind the Python layer).
    with pytest.raises(ValueError, match="out has 3 entries"):
        G._native.apply(np.zeros(64, np.complex64), np.zeros(3, np.complex64), 1, 0)


def test_gpu_arrays_need_the_gpu_path():
    if forge.cuda_available():
        pytest.skip("a CUDA device is present: covered by test_gpu.py")
    assert forge.cuda_available() is False
    assert isinstance(forge.built_with_cuda(), bool)
    stats = forge.transfer_stats()
    assert set(stats) >= {"host_to_device_count", "device_to_host_count"}


def test_set_devices_errors(rng):
    p = grid_problem(rng, n=8, n1=50)
    G = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"])
    G.set_devices([])  # one GPU, the default
    assert G.devices == []
    G64 = forge.Gdft(p["kx"], p["ky"], ix=p["ix"], iy=p["iy"], dtype=np.float64)
    with pytest.raises(ValueError, match="only for float operators"):
        G64.set_devices([0])
    if not forge.cuda_available():
        with pytest.raises(forge.CudaError, match="built without CUDA|no CUDA device"):
            G.set_devices([0, 0])
        assert G.devices == []


# ------------------------------------------------------------------ sizes and counts
# Checked before the C++ module sees them: nanobind would raise a TypeError listing its private signatures
# for a negative value and would truncate 16.5 to 16.

def _k(rng, n1=40, n=16):
    return rng.uniform(-n / 2, n / 2, n1), rng.uniform(-n / 2, n / 2, n1)


@pytest.mark.parametrize("make,arg,value", [
    (lambda k, v: forge.Gnufft(*k, nx=v, ny=16), "nx", -16),
    (lambda k, v: forge.Gnufft(*k, nx=16, ny=16, nz=v), "nz", -1),
    (lambda k, v: forge.Gnufft(*k, nx=16, ny=16, kernel_width=v), "kernel_width", -5),
    (lambda k, v: forge.Gfft(v, 16), "nx", -16),
    (lambda k, v: forge.QuadPenalty(16, v, beta=1.0), "ny", -16),
    (lambda k, v: forge.TVPenalty(v, 16, beta=1.0, delta=0.1), "nx", 0),
    (lambda k, v: forge.ToeplitzNormal(*k, nx=v, ny=16), "nx", -16),
    (lambda k, v: forge.density_compensation(*k, nx=16, ny=v), "ny", -16),
    (lambda k, v: forge.density_compensation(*k, nx=16, ny=16, iterations=v), "iterations", -1),
    (lambda k, v: forge.image_coords(v, 16), "nx", -2),
])
def test_negative_sizes_are_value_errors_naming_the_argument(rng, make, arg, value):
    with pytest.raises(ValueError, match=rf"{arg} must be at least 1, got {value}") as e:
        make(_k(rng), value)
    assert "_float32" not in str(e.value) and "nanobind" not in str(e.value)


def test_negative_segments_and_iterations_are_value_errors(rng, G):
    n1, n2 = G.codomain_size, G.domain_size
    fm, t = np.zeros(n2), np.linspace(0, 1e-3, n1)
    with pytest.raises(ValueError, match=r"TimeSegmentation: segments must be at least 1, got -1"):
        forge.TimeSegmentation(G, fm, t, -1)
    with pytest.raises(ValueError, match=r"TimeSegmentation.choose_segments: max_segments must be at least 1, got -3"):
        forge.TimeSegmentation.choose_segments(fm, t, 1e-3, max_segments=-3)
    kx, ky = _k(rng, n1, 8)
    with pytest.raises(ValueError, match=r"ToeplitzNormal: segments must be at least 1, got -1"):
        forge.ToeplitzNormal(kx, ky, nx=8, ny=8, field_map=fm, t=t, segments=-1)
    y = crandn(rng, n1, dtype=np.complex64)
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: niter must be at least 0, got -1"):
        forge.solve_pwls_pcg(G, y, niter=-1)
    N = forge.NormalOf(G)
    with pytest.raises(ValueError, match=r"solve_pwls_pcg_normal: niter must be at least 0, got -1"):
        forge.solve_pwls_pcg_normal(N, crandn(rng, n2, dtype=np.complex64), niter=-1)
    with pytest.raises(ValueError, match=r"SENSE: n_coils must be at least 1, got -2"):
        forge.SENSE(G, np.ones(2 * n2, np.complex64), n_coils=-2)
    with pytest.raises(ValueError, match=r"coil_compression_matrix: n_virtual must be at least 1, got -1"):
        forge.coil_compression_matrix(crandn(rng, 4, 30), -1)


def test_fractional_sizes_are_refused_and_whole_floats_accepted(rng):
    k = _k(rng)
    with pytest.raises(ValueError, match=r"Gnufft: nx must be a whole number, got 16.5"):
        forge.Gnufft(*k, nx=16.5, ny=16)
    with pytest.raises(ValueError, match=r"Gfft: ny must be a whole number, got 8.25"):
        forge.Gfft(8, 8.25)
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: niter must be a whole number, got 2.5"):
        G = forge.Gfft(4, 4)
        forge.solve_pwls_pcg(G, np.zeros(16, np.complex64), niter=2.5)
    with pytest.raises(ValueError, match=r"density_compensation: nx must be a whole number, got nan"):
        forge.density_compensation(*k, nx=float("nan"), ny=16)
    with pytest.raises(TypeError, match=r"Gnufft: ny must be an integer, got str '16'"):
        forge.Gnufft(*k, nx=16, ny="16")
    assert forge.Gnufft(*k, nx=16.0, ny=np.int64(16)).domain_size == 256  # e.g. n / 2 in Python 3


def test_only_image_vectors_get_the_image_layout_hint(rng, G):
    with pytest.raises(ValueError, match=r"Gdft.forward: x has shape \(63,\).*images are flattened with x fastest"):
        G @ np.zeros(63, np.complex64)
    with pytest.raises(ValueError, match=r"Gdft.adjoint: y has shape \(49,\), expected \(50,\) or \(nbatch, 50\) with "
                                         r"50 = codomain_size \(data entries\)$"):
        G.H @ np.zeros(49, np.complex64)
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: y has shape \(49,\), expected \(50,\) with 50 = "
                                         r"G.codomain_size$"):
        forge.solve_pwls_pcg(G, np.zeros(49, np.complex64))
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: x0 has shape \(60,\).*images are flattened"):
        forge.solve_pwls_pcg(G, np.zeros(50, np.complex64), x0=np.zeros(60, np.complex64))
    with pytest.raises(ValueError, match=r"QuadPenalty.penalty: x has shape \(15,\).*images are flattened"):
        forge.QuadPenalty(4, 4, beta=1.0).penalty(np.zeros(15, np.complex64))


def test_density_compensation_errors_name_density_compensation(rng):
    kx, ky = _k(rng, 20, 16)
    kx[3] = 8.5
    with pytest.raises(ValueError, match=r"^density_compensation: kx\[3\] = 8.5 is outside \[-8, 8\]") as e:
        forge.density_compensation(kx, ky, nx=16, ny=16)
    assert "Gnufft" not in str(e.value)
    kx[3] = 8.0  # +N/2: the band edge, accepted
    assert np.all(forge.density_compensation(kx, ky, nx=16, ny=16) > 0)
    with pytest.raises(ValueError, match=r"^density_compensation: .*even"):
        forge.density_compensation(kx, ky, nx=15, ny=16)


def test_nan_in_the_data_is_a_value_error(rng, G):
    y = crandn(rng, 50, dtype=np.complex64)
    y[7] = np.nan
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: y\[7\] is \(?nan"):
        forge.solve_pwls_pcg(G, y)
    y[7] = 0
    x0 = np.zeros(64, np.complex64)
    x0[2] = np.inf
    with pytest.raises(ValueError, match=r"solve_pwls_pcg: x0\[2\] is \(?inf"):
        forge.solve_pwls_pcg(G, y, x0=x0)
    b = crandn(rng, 64, dtype=np.complex64)
    b[0] = complex(0, np.nan)
    with pytest.raises(ValueError, match=r"solve_pwls_pcg_normal: b\[0\] is .*nan"):
        forge.solve_pwls_pcg_normal(forge.NormalOf(G), b)


def test_toeplitz_kernels_too_large_for_memory_are_a_value_error(rng):
    kx, ky = _k(rng, 10, 16)
    with pytest.raises(ValueError, match=r"ToeplitzNormal: the kernel of the 1048576 x 1048576 x 1 image grid would "
                                         r"take 3.28e\+04 GiB .*more than half of this machine's"):
        forge.ToeplitzNormal(kx, ky, nx=2**20, ny=2**20)
