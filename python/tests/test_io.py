"""forge.io: BART .cfl/.hdr files round-trip bit for bit, store values column-major as BART does (checked
against the bytes of the transposed array and a header written by hand), and reverse=True gives forge's C order;
BART's radial phantom reconstructs from its .cfl files as BART pics reconstructs it; MRD round trips."""

import numpy as np
import pytest

import forge
from forge import io
from reference import crandn


def test_cfl_round_trip_is_bit_exact(tmp_path, rng):
    for shape in [(7,), (5, 3), (4, 1, 6, 2), (3, 2, 1, 1)]:
        a = crandn(rng, *shape, dtype=np.complex64)
        a.reshape(-1)[0] = np.complex64(complex(np.float32(np.nan), -0.0))  # NaN and -0.0 survive too
        io.write_cfl(tmp_path / "x", a)
        b = io.read_cfl(tmp_path / "x")
        assert b.dtype == np.complex64
        assert b.reshape(shape).view(np.uint64).tobytes() == a.view(np.uint64).tobytes()
        assert (tmp_path / "x.cfl").read_bytes() == np.asfortranarray(a).tobytes(order="F")
        assert io.read_cfl_dims(tmp_path / "x.cfl") == shape


def test_cfl_layout_is_column_major_like_bart(tmp_path):
    # A header and values written by hand as BART does: dims 3 x 2, value v[x, y] = x + 10 y at x + 3 y.
    (tmp_path / "m.hdr").write_text("# Dimensions\n3 2 1 1 1 1 1 1 1 1 1 1 1 1 1 1 \n# Command\nbart ones\n")
    vals = np.array([0, 1, 2, 10, 11, 12], dtype=np.complex64)
    (tmp_path / "m.cfl").write_bytes(vals.tobytes())
    a = io.read_cfl(tmp_path / "m")
    assert a.shape == (3, 2) and a[2, 1] == 12 and a[1, 0] == 1
    c = io.read_cfl(tmp_path / "m", reverse=True)
    assert c.shape == (2, 3) and c.flags.c_contiguous and c[1, 2] == 12
    io.write_cfl(tmp_path / "w", c, reverse=True)
    assert (tmp_path / "w.cfl").read_bytes() == vals.tobytes()
    assert (tmp_path / "w.hdr").read_text().splitlines()[:2] == ["# Dimensions", "3 2 "]


def test_cfl_errors(tmp_path):
    (tmp_path / "bad.hdr").write_text("# Dimensions\n4 4\n")
    (tmp_path / "bad.cfl").write_bytes(b"\0" * 8 * 15)
    with pytest.raises(ValueError, match=r"bad.cfl holds 120 bytes, the header's dimensions \(4, 4\) need 128"):
        io.read_cfl(tmp_path / "bad")
    (tmp_path / "nohdr.hdr").write_text("hello\n")
    with pytest.raises(ValueError, match="no '# Dimensions' line"):
        io.read_cfl(tmp_path / "nohdr")
    with pytest.raises(TypeError, match="must be numbers"):
        io.write_cfl(tmp_path / "s", np.array(["a"]))


def test_bart_reads_and_writes_the_same_arrays(tmp_path, rng):
    import shutil
    import subprocess

    bart = shutil.which("bart")
    if bart is None:
        pytest.skip("BART is not installed")
    a = crandn(rng, 5, 3, 2, dtype=np.complex64)
    io.write_cfl(tmp_path / "a", a)
    run = lambda *args: subprocess.run([bart, *map(str, args)], check=True, capture_output=True, cwd=tmp_path)
    run("transpose", 0, 1, "a", "t")  # swaps BART's dimensions 0 (x) and 1 (y)
    assert np.array_equal(io.read_cfl(tmp_path / "t"), a.transpose(1, 0, 2))
    run("scale", 2, "a", "s")
    assert np.array_equal(io.read_cfl(tmp_path / "s"), 2 * a)
    run("ones", 3, 4, 1, 2, "o")
    assert io.read_cfl(tmp_path / "o").shape == (4, 1, 2)
    assert io.read_cfl(tmp_path / "o", reverse=True).shape == (2, 1, 4)
    b = io.read_cfl(tmp_path / "a")
    run("copy", "a", "c")
    assert (tmp_path / "c.cfl").read_bytes() == (tmp_path / "a.cfl").read_bytes() and np.array_equal(b, a)


def mrd_or_skip():
    import forge

    if not forge._native.has_mrd():
        pytest.skip("forge was built without Forge::IO")


def write_test_mrd(path, rng, n_acq=5, nc=3, ns=40):
    data = crandn(rng, n_acq, nc, ns, dtype=np.complex64)
    traj = rng.uniform(-16, 16, (n_acq, ns, 2)).astype(np.float32)
    header = {"encoded_matrix": [32, 32, 1], "encoded_fov_mm": [240.0, 240.0, 5.0], "recon_matrix": [32, 32, 1],
              "recon_fov_mm": [240.0, 240.0, 5.0], "trajectory": "spiral", "echo_times_ms": [2.5],
              "receiver_channels": nc}
    io.write_mrd(path, header, data=data, traj=traj, e1=np.arange(n_acq), dwell_us=2.0, slice_dir=[0.0, 0.0, 1.0])
    return data, traj


def test_mrd_round_trip(tmp_path, rng):
    mrd_or_skip()
    data, traj = write_test_mrd(tmp_path / "s.h5", rng)
    n_acq, nc = data.shape[:2]
    m = io.read_mrd(tmp_path / "s.h5")
    assert len(m.acquisitions) == n_acq and not m.noise
    assert m.data.tobytes() == data.tobytes() and m.traj.tobytes() == traj.tobytes()
    assert np.array_equal(m.field("e1"), np.arange(n_acq)) and np.all(m.field("dwell_us") == 2.0)
    h = m.header
    assert h["encoded_matrix"] == [32, 32, 1] and h["trajectory"] == "spiral" and h["receiver_channels"] == nc
    assert h["echo_times_ms"] == [2.5] and h["te_ms"] == 2.5
    # What read_mrd gives writes back to an equal file.
    io.write_mrd(tmp_path / "t.h5", m.header, m.acquisitions)
    m2 = io.read_mrd(tmp_path / "t.h5")
    assert m2.data.tobytes() == data.tobytes() and m2.header == m.header
    with pytest.raises(ValueError, match="not both"):
        io.write_mrd(tmp_path / "u.h5", h, m.acquisitions, data=data)
    with pytest.raises(TypeError, match="unknown acquisition field 'e3'"):
        io.write_mrd(tmp_path / "u.h5", h, data=data, e3=1)


def test_mrd_file_as_h5py_reads_it(tmp_path, rng):
    mrd_or_skip()
    h5py = pytest.importorskip("h5py")
    data, traj = write_test_mrd(tmp_path / "s.h5", rng)
    # ISMRMRD's compound: data as float pairs with samples fastest, then channels; the trajectory likewise.
    with h5py.File(tmp_path / "s.h5", "r") as f:
        rec = f["dataset/data"]
        assert rec.shape == (data.shape[0],)
        assert np.array_equal(np.asarray(rec[3]["data"], np.float32), data[3].view(np.float32).reshape(-1))
        assert np.array_equal(np.asarray(rec[3]["traj"], np.float32), traj[3].reshape(-1))
        assert rec[3]["head"]["idx"]["kspace_encode_step_1"] == 3


def test_bart_radial_reconstructs_from_cfl_files(tmp_path):
    """BART's radial phantom (traj, k-space and coil maps as BART writes them) reconstructed by forge from the
    .cfl files, as docs/python.md shows it, equals BART pics's image (up to pics's scaling) in orientation and
    values."""
    import shutil
    import subprocess

    bart = shutil.which("bart")
    if bart is None:
        pytest.skip("BART is not installed")
    run = lambda *args: subprocess.run([bart, *map(str, args)], check=True, capture_output=True, cwd=tmp_path)
    n, coils = 64, 4
    run("traj", "-r", "-x", n, "-y", 33, "traj")                  # 33 spokes of n samples, |k| <= n/2
    run("phantom", "-s", coils, "-k", "-t", "traj", "ksp")
    run("phantom", "-S", coils, "-x", n, "maps")
    run("pics", "-S", "-i", 30, "-r", 0.001, "-t", "traj", "ksp", "maps", "pics")

    # The lines of docs/python.md ("BART's data in forge").
    k = io.read_cfl(tmp_path / "traj", reverse=True).real             # (spokes, samples, 3), cycles/FOV
    y = io.read_cfl(tmp_path / "ksp", reverse=True)[..., 0]           # (coils, spokes, samples)
    maps = io.read_cfl(tmp_path / "maps", reverse=True)[:, 0]         # (coils, ny, nx)
    S = forge.SENSE(forge.Gnufft(k[..., 0], k[..., 1], nx=n, ny=n), maps)
    x = forge.solve_pwls_pcg(S, y, penalty=forge.QuadPenalty(n, n, beta=1e-3), niter=30)

    pics = np.squeeze(io.read_cfl(tmp_path / "pics", reverse=True))    # (ny, nx)

    def scaled_error(a, ref):  # pics -S scales its image: compare after the best complex scale
        s = np.vdot(a, ref) / np.vdot(a, a)
        return np.linalg.norm(s * a - ref) / np.linalg.norm(ref)

    assert x.shape == (n, n)
    assert scaled_error(x, pics) < 0.03                               # measured 0.012
    assert scaled_error(x[::-1, ::-1], pics) > 0.3                    # the orientation is BART's
    assert scaled_error(x.T, pics) > 0.3
