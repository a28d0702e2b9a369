#!/usr/bin/env python3
"""Writes hostile ISMRMRD files for forge/Tests/cli/test_hostile_mrd.sh: h5py edits of one valid file
(ISMRMRD's ismrmrd_generate_cartesian_shepp_logan output, with stored trajectories), each changing the
HDF5 structure, a type, a size or a value the way a crafted or damaged file would.

    make_hostile_mrd.py SOURCE.h5 OUTDIR

Writes OUTDIR/<name>.h5 for every case and OUTDIR/manifest.tsv, one case a line:

    name <TAB> expect <TAB> words <TAB> extra forge-recon arguments

expect is "refuse" (forge-recon must exit 2 with one line on stderr containing each of the '|'-separated
words, and write nothing) or "same" (the file is valid MRD written differently: forge-recon must write the
same image as from SOURCE.h5 with the same arguments).
"""
import os
import sys

import h5py
import numpy as np

SRC, OUT = sys.argv[1], sys.argv[2]
os.makedirs(OUT, exist_ok=True)
src = h5py.File(SRC, "r")
ACQ = src["dataset/data"][...]  # structured: head (compound), traj and data (variable-length float32)
XML = src["dataset/xml"][0]
XML = XML.decode() if isinstance(XML, bytes) else XML
NACQ = len(ACQ)
manifest = []


def case(name, expect, words, args=""):
    manifest.append((name, expect, words, args))
    return os.path.join(OUT, name + ".h5")


def clone(name, expect, words, args="", skip=()):
    """A copy of SOURCE.h5 without the objects in 'skip' (names under /dataset), open for editing."""
    f = h5py.File(case(name, expect, words, args), "w")
    g = f.create_group("dataset")
    for k in src["dataset"]:
        if k not in skip:
            src.copy(src["dataset/" + k], g, name=k)
    return f


def with_acquisitions(name, expect, words, acq, args="", **create):
    """SOURCE.h5 with /dataset/data replaced by 'acq' (a structured array)."""
    f = clone(name, expect, words, args, skip=("data",))
    f["dataset"].create_dataset("data", data=acq, dtype=acq.dtype, **create)
    f.close()


def edited(field, value, index=0, sub=None):
    """The acquisitions with head.<field>[.<sub>] of acquisition 'index' (None: all) set to 'value'."""
    a = ACQ.copy()
    col = a["head"][field] if sub is None else a["head"][field][sub]
    if index is None:
        col[...] = value
    else:
        col[index] = value
    return a


def with_xml(name, expect, words, value, dtype=None, shape=None, args=""):
    f = clone(name, expect, words, args, skip=("xml",))
    if value is None:
        f.close()
        return
    if shape == ():
        f["dataset"].create_dataset("xml", data=value, dtype=dtype)
    else:
        f["dataset"].create_dataset("xml", data=value, dtype=dtype, shape=shape)
    f.close()


vstr_ascii = h5py.string_dtype("ascii")
vstr_utf8 = h5py.string_dtype("utf-8")

# ---- the six that crashed or hung inside libismrmrd's reader
with_xml("xml_two_strings", "refuse", "/dataset/xml|2 strings", [XML, XML], vstr_ascii, (2,))
a = edited("number_of_samples", 128)
a["head"]["active_channels"][0] = 4
a["data"][0] = np.arange(10, dtype=np.float32)
with_acquisitions("data_short", "refuse", "acquisition 0|128 samples x 4 channels|10", a)
a = edited("number_of_samples", 65535)
a["head"]["active_channels"][0] = 65535
a["data"][0] = np.zeros(256, np.float32)  # 1 KB
with_acquisitions("dims_65535", "refuse", "acquisition 0|65535 samples x 65535 channels", a)
with_acquisitions("traj_dims_65535", "refuse", "acquisition 0|65535 trajectory dimensions",
                  edited("trajectory_dimensions", 65535))
f = clone("data_plain_float", "refuse", "/dataset/data|not ISMRMRD acquisitions", skip=("data",))
f["dataset"].create_dataset("data", data=np.zeros((NACQ, 300), np.float32))
f.close()
f = clone("count_1e9", "refuse", "/dataset/data|1000000000 acquisitions|at most %d" % NACQ, skip=("data",))
d = f["dataset"].create_dataset("data", shape=(10**9,), dtype=ACQ.dtype, chunks=(1,), maxshape=(None,))
d[:NACQ] = ACQ
f.close()

# ---- the XML header
with_xml("xml_utf8", "same", "", [XML], vstr_utf8, (1,))
with_xml("xml_fixed", "same", "", np.array([XML.encode()], dtype="S%d" % len(XML.encode())), None, (1,))
with_xml("xml_fixed_utf8", "same", "", [XML.encode()],
         h5py.string_dtype("utf-8", len(XML.encode())), (1,))
with_xml("xml_scalar", "same", "", XML, vstr_ascii, ())
with_xml("xml_fixed_two", "refuse", "/dataset/xml|2 strings", np.array([XML.encode()] * 2), None, (2,))
with_xml("xml_integer", "refuse", "/dataset/xml|integer|not a string", np.arange(10, dtype=np.int32), None, (10,))
with_xml("xml_empty", "refuse", "/dataset/xml|empty", [""], vstr_ascii, (1,))
with_xml("xml_missing", "refuse", "not an ISMRMRD dataset", None)
with_xml("xml_garbage", "refuse", "XML header|invalid", ["this is not XML <<<"], vstr_ascii, (1,))
with_xml("xml_no_encoding", "refuse", "encoding",
         [XML[:XML.index("<encoding>")] + XML[XML.index("</encoding>") + len("</encoding>"):]], vstr_ascii, (1,))
f = clone("xml_group", "refuse", "/dataset/xml|not an HDF5 dataset", skip=("xml",))
f["dataset"].create_group("xml")
f.close()


def xml_set(path_tag, value, name, words):
    """The header with the first <path_tag> of encodedSpace and of reconSpace (their matrixSize) set to value."""
    x = XML
    for space in ("encodedSpace", "reconSpace"):
        s = x.index("<" + space + ">")
        a = x.index("<" + path_tag + ">", s) + len(path_tag) + 2
        e = x.index("</" + path_tag + ">", a)
        x = x[:a] + value + x[e:]
    with_xml(name, "refuse", words, [x], vstr_ascii, (1,))


xml_set("x", "-32", "matrix_negative", "matrixSize/x|-32")
xml_set("x", "40000", "matrix_huge", "matrixSize|40000")
xml_set("x", "0", "matrix_zero", "matrix size|0x")
xml_set("x", "31", "matrix_odd", "odd size")
fx = XML
for space in ("encodedSpace", "reconSpace"):
    s = fx.index("<fieldOfView_mm>", fx.index("<" + space + ">"))
    a = fx.index("<x>", s) + 3
    fx = fx[:a] + "NaN" + fx[fx.index("</x>", a):]
with_xml("fov_nan", "refuse", "fieldOfView_mm/x|nan", [fx], vstr_ascii, (1,))

# ---- /dataset/data's structure and types
f = clone("data_missing", "refuse", "no acquisitions", skip=("data",))
f.close()
f = clone("data_group", "refuse", "/dataset/data|not an HDF5 dataset", skip=("data",))
f["dataset"].create_group("data")
f.close()
with_acquisitions("data_2d", "refuse", "/dataset/data|2 dimensions", ACQ.reshape(NACQ // 2, 2))
f = clone("data_scalar", "refuse", "/dataset/data|0 dimensions", skip=("data",))
f["dataset"].create_dataset("data", data=ACQ[0], dtype=ACQ.dtype)
f.close()
with_acquisitions("data_empty", "refuse", "no acquisitions", ACQ[:0], maxshape=(None,), chunks=(1,))


def restructured(name, words, dtype, fill, expect="refuse", args=""):
    """Acquisitions in another compound type 'dtype', each field taken from SOURCE.h5 by 'fill'."""
    a = np.zeros(NACQ, dtype=dtype)
    for n in dtype.names:
        fill(a, n)
    with_acquisitions(name, expect, words, a, args)


def same_field(a, n):
    a[n] = ACQ[n] if a.dtype[n] == ACQ.dtype[n] else a[n]


vf32, vf64, vi16 = h5py.vlen_dtype(np.float32), h5py.vlen_dtype(np.float64), h5py.vlen_dtype(np.int16)
HEAD = ACQ.dtype["head"]
restructured("data_no_traj", "/dataset/data|traj", np.dtype([("head", HEAD), ("data", vf32)]), same_field)
restructured("data_no_head", "/dataset/data|head", np.dtype([("traj", vf32), ("data", vf32)]), same_field)
restructured("data_no_data", "/dataset/data|data", np.dtype([("head", HEAD), ("traj", vf32)]), same_field)


def head_without(field):
    return np.dtype([(n, HEAD[n]) for n in HEAD.names if n != field])


def head_with(field, t):
    return np.dtype([(n, t if n == field else HEAD[n]) for n in HEAD.names])


def copy_head(a, n):
    if n != "head":
        a[n] = ACQ[n]
        return
    for m in a.dtype["head"].names:
        if a.dtype["head"][m] == HEAD[m]:
            a["head"][m] = ACQ["head"][m]
        else:
            a["head"][m] = ACQ["head"][m].astype(a.dtype["head"][m])


restructured("head_no_samples", "number_of_samples",
             np.dtype([("head", head_without("number_of_samples")), ("traj", vf32), ("data", vf32)]), copy_head)
restructured("head_samples_float", "number_of_samples|integer",
             np.dtype([("head", head_with("number_of_samples", np.float32)), ("traj", vf32), ("data", vf32)]), copy_head)
restructured("head_position_scalar", "position",
             np.dtype([("head", head_with("position", np.float32)), ("traj", vf32), ("data", vf32)]),
             lambda a, n: copy_head(a, n) if n != "head" else [
                 a["head"].__setitem__(m, ACQ["head"][m]) for m in a.dtype["head"].names if m != "position"])
restructured("head_not_compound", "head", np.dtype([("head", np.int32), ("traj", vf32), ("data", vf32)]),
             lambda a, n: a.__setitem__(n, ACQ[n]) if n != "head" else None)
restructured("data_vlen_int", "data|float", np.dtype([("head", HEAD), ("traj", vf32), ("data", vi16)]),
             lambda a, n: a.__setitem__(n, ACQ[n]) if n != "data" else
             [a["data"].__setitem__(i, ACQ["data"][i].astype(np.int16)) for i in range(NACQ)])
restructured("data_fixed", "data|variable-length",
             np.dtype([("head", HEAD), ("traj", vf32), ("data", np.float32, (4,))]),
             lambda a, n: a.__setitem__(n, ACQ[n]) if n != "data" else None)
# valid MRD written otherwise: double precision, complex compound samples (newer libismrmrd), an extra member,
# compressed chunks
restructured("data_float64", "", np.dtype([("head", HEAD), ("traj", vf64), ("data", vf64)]),
             lambda a, n: a.__setitem__(n, ACQ[n]) if n == "head" else
             [a[n].__setitem__(i, ACQ[n][i].astype(np.float64)) for i in range(NACQ)], expect="same")
CPLX = np.dtype([("real", np.float32), ("imag", np.float32)])
restructured("data_complex", "", np.dtype([("head", HEAD), ("traj", vf32), ("data", h5py.vlen_dtype(CPLX))]),
             lambda a, n: a.__setitem__(n, ACQ[n]) if n != "data" else
             [a["data"].__setitem__(i, ACQ["data"][i].view(CPLX)) for i in range(NACQ)], expect="same")
restructured("data_extra_member", "", np.dtype([("head", HEAD), ("traj", vf32), ("data", vf32), ("note", np.int32)]),
             lambda a, n: a.__setitem__(n, ACQ[n]) if n != "note" else None, expect="same")
with_acquisitions("data_gzip", "same", "", ACQ, chunks=(8,), compression="gzip", maxshape=(None,))

# ---- sizes the header claims against what the acquisition holds
a = ACQ.copy()
a["data"][3] = np.concatenate([ACQ["data"][3], ACQ["data"][3]])
with_acquisitions("data_long", "refuse", "acquisition 3|1024", a)
a = ACQ.copy()
a["traj"][5] = ACQ["traj"][5][:7]
with_acquisitions("traj_short", "refuse", "acquisition 5|trajectory|7", a)
a = edited("number_of_samples", 0)
a["data"][0] = np.zeros(0, np.float32)
a["traj"][0] = np.zeros(0, np.float32)
with_acquisitions("samples_zero", "refuse", "acquisition 0|no samples", a)
a = edited("active_channels", 0, index=None)
for i in range(NACQ):
    a["data"][i] = np.zeros(0, np.float32)
with_acquisitions("channels_zero", "refuse", "no channels", a)
a = edited("active_channels", 3, index=7)
a["data"][7] = ACQ["data"][7][: 3 * 2 * 64]
with_acquisitions("channels_mixed", "refuse", "acquisition 7|3 channels", a)

# the number of acquisitions against the bytes the file holds
f = clone("count_unwritten", "refuse", "/dataset/data|acquisitions", skip=("data",))
f["dataset"].create_dataset("data", shape=(100000,), dtype=ACQ.dtype)  # contiguous, never written
f.close()
f = clone("count_chunks_missing", "refuse", "/dataset/data|4096 acquisitions|at most %d" % NACQ, skip=("data",))
d = f["dataset"].create_dataset("data", shape=(4096,), dtype=ACQ.dtype, chunks=(16,), maxshape=(None,))
d[:NACQ] = ACQ
f.close()

# ---- values
for name, field, value, words in [
        ("dwell_nan", "sample_time_us", np.nan, "acquisition 0|non-finite"),
        ("position_inf", "position", np.inf, "acquisition 0|non-finite"),
        ("read_dir_nan", "read_dir", np.nan, "acquisition 0|non-finite")]:
    with_acquisitions(name, "refuse", words, edited(field, value))
for name, index, value, words in [("data_nan", 2, np.nan, "acquisition 2|NaN"),
                                  ("data_inf", 4, np.inf, "acquisition 4|Inf")]:
    a = ACQ.copy()
    a["data"][index] = ACQ["data"][index].copy()
    a["data"][index][17] = value
    with_acquisitions(name, "refuse", words, a)
for name, value, words in [("traj_nan", np.nan, "trajectory value|nan"), ("traj_inf", np.inf, "trajectory value|inf"),
                           ("traj_large", 10.0, "trajectory value|10")]:
    a = ACQ.copy()
    a["traj"][1] = ACQ["traj"][1].copy()
    a["traj"][1][3] = value
    with_acquisitions(name, "refuse", words, a)
a = ACQ.copy()
a["head"]["flags"] |= np.uint64(1 << 18)  # ACQ_IS_NOISE_MEASUREMENT (bit 19)
with_acquisitions("all_noise", "refuse", "only noise scans", a)
# k-space from the encoding counters (--cartesian): a centre or a line far outside the grid
with_acquisitions("center_sample_65535", "refuse", "center_sample|65535", edited("center_sample", 65535, index=None),
                  args="--cartesian")
with_acquisitions("e1_65535", "refuse", "kspace_encode_step_1|65535",
                  edited("idx", 65535, index=3, sub="kspace_encode_step_1"), args="--cartesian")

# ---- damaged files
raw = open(SRC, "rb").read()
for name, data in [("truncated_half", raw[: len(raw) // 2]), ("truncated_1k", raw[:1024]),
                   ("not_hdf5", bytes(np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8)))]:
    open(case(name, "refuse", "'" if name != "not_hdf5" else "not an HDF5 file"), "wb").write(data)

# ---- maps stored in the file
f = clone("csm_wrong_shape", "refuse", "sensitivity maps|/dataset/csm", skip=("csm",))
f["dataset"].create_dataset("csm", data=src["dataset/csm"][:, :3])
f.close()
f = clone("csm_nan", "refuse", "sensitivity maps|NaN", skip=("csm",))
c = src["dataset/csm"][...]
c["real"][0, 1, 5, 5] = np.nan
f["dataset"].create_dataset("csm", data=c)
f.close()
f = clone("csm_claims_huge", "refuse", "sensitivity maps", skip=("csm",))
f["dataset"].create_dataset("csm", shape=(1, 4, 30000, 30000), dtype=src["dataset/csm"].dtype, chunks=(1, 1, 64, 64))
f.close()
f = clone("phantom_string", "refuse", "/dataset/phantom|not numeric", skip=("phantom",))
f["dataset"].create_dataset("phantom", data=["a phantom"], dtype=vstr_ascii)
f.close()

src.close()
with open(os.path.join(OUT, "manifest.tsv"), "w") as m:
    for row in manifest:
        m.write("\t".join(row) + "\n")
print("%d files in %s" % (len(manifest), OUT))
