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
