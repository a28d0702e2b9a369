#!/bin/bash
# forge-recon --warm-start on a series (the demo's slices acquired three times, each repetition's data a little
# different): the file mode and --stream give the same images bit for bit (the stream carries each slice's previous
# image from group to group as the file mode does from frame to frame), later repetitions take fewer iterations than
# without --warm-start, and their images are as near the minimiser (a solve to 1e-6) as the cold start's. Without
# --warm-start the stream (whose groups reuse the first group's operator) equals the file mode too. The warm stream
# runs with --overlap on --solvers 2: its groups solve on two solver threads while the next are prepared, each
# slice's frames in order on one of them.
#   usage: test_warm_start.sh FORGE_RECON WORKDIR PYTHON
#   (exit 77 = skipped without a python with the ismrmrd package)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2; PY=${FORGE_TEST_PYTHON:-${3:-python3}}
"$PY" -c 'import ismrmrd.serialization, h5py, numpy' 2>/dev/null \
    || { echo "SKIP: $PY has no ismrmrd package (pip install ismrmrd) with h5py and numpy"; exit 77; }
workdir "$W"
cd "$W" || fail "cannot enter $W"
"$RECON" --demo --demo-size 24 --demo-slices 2 --demo-coils 4 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>demo.stderr \
    || { cat demo.stderr >&2; fail "demo failed"; }

# series.h5 and series.mrd: the demo's acquisitions three times as repetitions 0, 1, 2 (repetition r's data times
# 1 + 0.05 r plus 1% noise), flags as a scanner sets them
"$PY" - "$W" <<'PY' || fail "cannot make the series"
import sys, io, numpy as np, ismrmrd
from ismrmrd.serialization import ProtocolSerializer
w = sys.argv[1]
rng = np.random.default_rng()
d = ismrmrd.Dataset(f"{w}/demo.h5", "dataset", create_if_needed=False)
xml = d.read_xml_header()
hdr = ismrmrd.xsd.CreateFromDocument(xml)
acqs = [d.read_acquisition(i) for i in range(d.number_of_acquisitions())]
limits = hdr.encoding[0].encodingLimits
limits.slice = ismrmrd.xsd.limitType(minimum=0, maximum=max(a.idx.slice for a in acqs), center=0)
limits.repetition = ismrmrd.xsd.limitType(minimum=0, maximum=2, center=0)
out = ismrmrd.Dataset(f"{w}/series.h5", "dataset", create_if_needed=True)
out.write_xml_header(ismrmrd.xsd.ToXML(hdr))
series = []
for r in range(3):
    for i, a in enumerate(acqs):
        b = ismrmrd.Acquisition.from_array(a.data.copy(), a.traj.copy() if a.traj.size else None)
        b.setHead(a.getHead())
        b.idx.repetition = r
        scale = np.abs(a.data).max()
        b.data[:] = a.data * (1 + 0.05 * r) + 0.01 * scale * (rng.standard_normal(a.data.shape)
                                                              + 1j * rng.standard_normal(a.data.shape))
        last = i + 1 == len(acqs) or acqs[i + 1].idx.slice != a.idx.slice
        if last:
            b.set_flag(ismrmrd.ACQ_LAST_IN_SLICE)
        out.append_acquisition(b)
        series.append(b)
out.close()
buf = io.BytesIO()
with ProtocolSerializer(buf) as s:
    s.serialize(hdr)
    for b in series:
        s.serialize(b)
open(f"{w}/series.mrd", "wb").write(buf.getvalue())
PY

base=(--smaps estimate --fieldmap none --operator dft --device cpu --complex)
common=("${base[@]}" -n 100 --tolerance 1e-3)  # the streams without -q: their notes say how they ran
"$RECON" series.h5 "${common[@]}" --mrd-out file_cold.h5 --report file_cold.json 2>file_cold.stderr \
    || { cat file_cold.stderr >&2; fail "file mode failed"; }
"$RECON" series.h5 "${common[@]}" --warm-start --mrd-out file_warm.h5 --report file_warm.json 2>file_warm.stderr \
    || { cat file_warm.stderr >&2; fail "file mode with --warm-start failed"; }
"$RECON" series.h5 "${base[@]}" -n 2000 --tolerance 1e-6 --mrd-out best.h5 2>best.stderr \
    || { cat best.stderr >&2; fail "the reference solve failed"; }
# (no output files: the stream then goes group by group, each group's image sent as it completes)
"$RECON" --stream "${common[@]}" --warm-start --overlap on --solvers 2 <series.mrd >stream_warm.mrd \
    2>stream_warm.stderr || { cat stream_warm.stderr >&2; fail "--stream with --warm-start failed"; }
"$RECON" --stream "${common[@]}" <series.mrd >stream_cold.mrd \
    2>stream_cold.stderr || { cat stream_cold.stderr >&2; fail "--stream failed"; }

"$PY" - <<'PY' || fail "the warm start's images or iterations are not as expected"
import io, json, numpy as np, h5py
from ismrmrd.serialization import ProtocolDeserializer
def file_images(path):
    g = h5py.File(path, "r")["dataset"]
    out = {}
    for name in (n for n in g if n.startswith("image")):
        hdr, data = g[name]["header"][:], g[name]["data"][:]
        data = data["real"] + 1j * data["imag"] if data.dtype.names else data  # complex: a (real, imag) compound
        for h, x in zip(hdr, data):
            out[(int(h["slice"]), int(h["repetition"]))] = x
    return out
def stream_images(path):
    with open(path, "rb") as f:
        stream = io.BytesIO(f.read())
    return {(im.slice, im.repetition): im.data for im in ProtocolDeserializer(stream).deserialize()}
def iterations(report):
    r = json.load(open(report))
    out = {}
    for rec in r["reconstructions"]:
        for s in rec["solves"]:
            out[(s["slice"], s["frame"])] = s["iterations"]
    return out, r
fc, fw = file_images("file_cold.h5"), file_images("file_warm.h5")
sw, sc = stream_images("stream_warm.mrd"), stream_images("stream_cold.mrd")
assert len(fc) == 6, sorted(fc)
assert fc.keys() == fw.keys() == sw.keys() == sc.keys(), (sorted(fc), sorted(sw))
for k in fc:
    assert np.array_equal(fw[k], sw[k]), f"{k}: --stream --warm-start differs from the file mode's"
    assert np.array_equal(fc[k], sc[k]), f"{k}: --stream differs from the file mode's"
best = file_images("best.h5")
for k in fc:  # as near the minimiser (a solve to 1e-6) as the cold start
    ec, ew = (np.linalg.norm(x[k] - best[k]) / np.linalg.norm(best[k]) for x in (fc, fw))
    assert ew <= 1.5 * ec + 1e-6, f"{k}: the warm start's image is {ew:.3g} from the minimiser, the cold's {ec:.3g}"
for name in ("stream_warm", "stream_cold"):
    err = open(f"{name}.stderr").read()
    assert "once the stream is complete" not in err, f"{name} read the whole stream first: {err}"
cold, _ = iterations("file_cold.json")
warm, _ = iterations("file_warm.json")
later = [k for k in cold if k[1] > 0]
assert later and all(warm[k] < cold[k] for k in later), (cold, warm)
assert all(warm[k] == cold[k] for k in cold if k[1] == 0), (cold, warm)
print("warm start: iterations", {k: (cold[k], warm[k]) for k in sorted(cold)})
PY
echo "PASS"
