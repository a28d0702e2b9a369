"""forge.io: BART .cfl/.hdr files round-trip bit for bit, store values column-major as BART does (checked
against the bytes of the transposed array and a header written by hand), and reverse=True gives forge's C order."""

import numpy as np
import pytest

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
    assert io.read_cfl(tmp_path / "o").shape == (4, 1, 2) and io.read_cfl(tmp_path / "o", reverse=True).shape == (2, 1, 4)
    b = io.read_cfl(tmp_path / "a")
    run("copy", "a", "c")
    assert (tmp_path / "c.cfl").read_bytes() == (tmp_path / "a.cfl").read_bytes() and np.array_equal(b, a)
