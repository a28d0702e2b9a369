#!/bin/bash
# forge-recon --demo (small size for CI) writes NIfTI, PNG and ISMRMRD files; the field-corrected NRMSE is
# at least 2x better than the uncorrected one; 'forge-recon demo.h5' reproduces the corrected NRMSE. The
# NRMSEs come from --report, whose schema is checked and whose NRMSE and PSNR are recomputed here from the
# NIfTI images (truth and reconstructions) as docs/forge-recon.md defines them (to 1e-5: the NIfTI holds the
# magnitudes in float32).
#   usage: test_demo_roundtrip.sh FORGE_RECON WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
workdir "$W"
# -n 10 throughout keeps it fast (the default stopping rule runs about 16 iterations here)
"$RECON" --demo --demo-size 32 --demo-slices 2 -n 10 -o "$W/demo" --device cpu --report "$W/demo.json" \
    >"$W/demo.stdout" 2>"$W/demo.stderr" || { cat "$W/demo.stderr" >&2; fail "demo failed"; }
cat "$W/demo.stdout"
for f in demo.h5 demo_truth.nii demo_uncorrected.nii demo_corrected.nii demo_fieldmap.nii demo_comparison.png demo_corrected.png; do
    [ -s "$W/$f" ] || fail "demo did not write $f"
done
# The comparison figure reads on its own: 32-pixel tiles upscaled 8x to 256, a title line and labelled columns.
# Layout (apps/forge-recon/DemoFigure.h): margins 12, gaps 8, text lines 18 px; 4 columns of 256 px; two
# blocks (images, errors), each a 2-line header and 2 slices of tiles:
#   width  = 2*12 + 4*256 + 3*8                            = 1072
#   height = 12 + 18 + 2 * (8 + 2*18 + 2*256 + 8) + 12     = 1170
command -v python3 >/dev/null || fail "python3 is needed to read the demo's PNG"
python3 - "$W/demo_comparison.png" <<'PYEOF' || fail "demo_comparison.png is not the labelled figure"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, colour = hdr[:4]
assert (depth, colour) == (8, 0), f"expected 8-bit greyscale, got depth {depth} colour type {colour}"
assert (w, h) == (1072, 1170), f"figure is {w} x {h}, expected 1072 x 1170"
raw, rows, prev = zlib.decompress(idat), [], bytearray(w)
for y in range(h):  # undo the PNG row filters (1 byte per pixel)
    f, row = raw[y * (w + 1)], bytearray(raw[y * (w + 1) + 1:(y + 1) * (w + 1)])
    for x in range(w):
        a, b = (row[x - 1] if x else 0), prev[x]
        c = prev[x - 1] if x else 0
        if f == 1: row[x] = (row[x] + a) & 255
        elif f == 2: row[x] = (row[x] + b) & 255
        elif f == 3: row[x] = (row[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(row); prev = row
def ink(y0, y1, x0, x1):  # white text pixels in a box
    return sum(1 for y in range(y0, y1) for x in range(x0, x1) if rows[y][x] == 255)
assert ink(12, 26, 12, w - 12) > 200, "the title line is blank"
for block_top in (38, 38 + 564):  # each block's header: two text lines over every column
    for c in range(4):
        x0 = 12 + c * (256 + 8)
        assert ink(block_top, block_top + 14, x0, x0 + 256) > 40, f"header line 1 of column {c} is blank"
        assert ink(block_top + 18, block_top + 32, x0, x0 + 256) > 40, f"header line 2 of column {c} is blank"
tile = [rows[y][12 + 256 + 8:12 + 2 * 256 + 8] for y in range(74, 74 + 256)]  # slice 1, uncorrected
assert len({v for r in tile for v in r}) > 16, "the uncorrected tile has no image"
print("ok  comparison figure", w, "x", h, "with title and column labels")
PYEOF

# plain progress lines when stderr is not a terminal
grep -q 'iteration 1/10 cost' "$W/demo.stderr" || fail "no plain progress lines on stderr"
[ "$(report_get "$W/demo.json" 'reconstructions.*.name' | tr '\n' ',')" = "uncorrected,field-corrected,estimated maps," ] \
    || fail "the report does not hold the demo's three reconstructions"
unc=$(report_get "$W/demo.json" reconstructions.0.quality.0.nrmse)
cor=$(report_get "$W/demo.json" reconstructions.1.quality.0.nrmse)
[ -n "$unc" ] && [ -n "$cor" ] || fail "could not read the NRMSEs from the report"
# the summary prints the same numbers
printed=$(sed -n 's/^ *field-corrected *NRMSE \([0-9.]*\).*/\1/p' "$W/demo.stdout")
awk -v a="$printed" -v b="$cor" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-6) }' \
    || fail "the summary's field-corrected NRMSE '$printed' is not the report's $cor"

# The report: its schema (docs/forge-recon.md), and its NRMSE/PSNR recomputed from the NIfTI files: magnitudes
# after the least-squares scale, against the truth (float32 images, read with the struct module).
python3 - "$W" <<'PYEOF' || fail "the demo's report is not what docs/forge-recon.md describes"
import json, math, struct, sys
w = sys.argv[1]
r = json.load(open(f"{w}/demo.json"))
top = ["report_version", "forge_version", "mode", "input", "data", "device", "processes", "operator", "segments",
       "penalty", "solver", "iterations", "reconstructions", "coil_map_estimation", "stages_s", "timing"]
assert list(r) == top, list(r)
cm = r["coil_map_estimation"]  # the field-map scan's coil maps are estimated from its first echo
assert cm is not None and sorted(cm) == ["dropped_energy", "map_grid", "masks_dropped", "outliers", "slices"], cm
assert cm["slices"] >= 1 and 0 <= cm["dropped_energy"] <= 0.01 and cm["masks_dropped"] == 0, cm
assert cm["outliers"] == 0 and len(cm["map_grid"]) == 3, cm
assert r["report_version"] == 1 and r["mode"] == "demo" and r["input"] is None and r["device"] == "CPU"
assert r["data"] == {"acquisitions": 4, "coils": 8, "slices": 2, "frames": 1, "matrix": [32, 32, 1],
                     "trajectory": "spiral", "k_from": "acquisitions", "field_map": True}, r["data"]
# auto on the field-corrected spiral: an operator that corrects it, named with the estimates it weighed
assert r["operator"]["requested"] == "auto" and r["operator"]["sense"] is True, r["operator"]
assert r["operator"]["name"] in ("dft", "timeseg", "toeplitz"), r["operator"]
assert r["operator"]["auto_reason"].startswith("non-Cartesian; estimated for 10 of at most 10 iterations"), r["operator"]
assert (r["segments"] == []) == (r["operator"]["name"] == "dft"), (r["operator"], r["segments"])
assert r["penalty"] == {"kind": "quad", "beta": 0.001, "delta": None}
assert r["solver"] == {"iteration_limit": 10, "tolerance": 0.0002}, r["solver"]
stages = ["read", "simulation", "coil_maps", "field_map", "operator_setup", "solve", "write", "total"]
assert list(r["stages_s"]) == stages and all(r["stages_s"][k] >= 0 for k in stages), r["stages_s"]
assert r["stages_s"]["simulation"] > 0 and r["stages_s"]["solve"] > 0 and r["stages_s"]["coil_maps"] > 0
assert r["stages_s"]["field_map"] > 0 and r["stages_s"]["total"] >= r["stages_s"]["solve"]
total = 0
for rec, fc in zip(r["reconstructions"], [False, True, True]):
    assert rec["field_correction"] is fc
    assert len(rec["solves"]) == 2, rec["solves"]  # one SENSE solve per slice
    for k, s in enumerate(rec["solves"]):
        # time segments only where a field map is corrected by an operator that segments it
        segmented = fc and r["operator"]["name"] != "dft"
        assert (s["slice"], s["frame"], s["coil"]) == (k, 0, None), s
        assert (s["segments"] is not None and s["segments"] >= 1) if segmented else s["segments"] is None, s
        assert 1 <= s["iterations"] <= 10 and s["stop_reason"] in ("iteration_limit", "tolerance"), s
        assert s["converged"] == (s["stop_reason"] != "iteration_limit")
        assert abs(s["relative_gradient"] - s["final_gradient_norm"] / s["initial_gradient_norm"]) <= 1e-12
        assert s["final_cost"] > 0 and s["seconds"] > 0
    assert rec["iterations"] == sum(s["iterations"] for s in rec["solves"])
    total += rec["iterations"]
assert r["iterations"] == total

def nifti(path):  # float32 NIfTI-1: dims and values (x fastest)
    b = open(path, "rb").read()
    dims = struct.unpack("<8h", b[40:56])
    assert struct.unpack("<h", b[70:72])[0] == 16, "not float32"
    off = int(struct.unpack("<f", b[108:112])[0])
    n = 1
    for d in dims[1:dims[0] + 1]:
        n *= d
    return struct.unpack(f"<{n}f", b[off:off + 4 * n])

truth = nifti(f"{w}/demo_truth.nii")
for rec, name in zip(r["reconstructions"], ["uncorrected", "corrected", "estimated"]):
    x = nifti(f"{w}/demo_{name}.nii")
    a = sum(p * q for p, q in zip(x, truth)) / sum(p * p for p in x)
    err = sum((a * p - q) ** 2 for p, q in zip(x, truth))
    nrmse = math.sqrt(err / sum(q * q for q in truth))
    psnr = 10 * math.log10(max(truth) ** 2 / (err / len(truth)))
    q = rec["quality"]
    assert len(q) == 1 and q[0]["frame"] == 0
    # (the NIfTI's magnitudes are float32, rounded on their own: an ulp of the image is 2e-6 of the corrected
    # NRMSE, whose error is 2.5% of the image)
    assert abs(q[0]["nrmse"] - nrmse) <= 1e-5 * nrmse, (name, q[0]["nrmse"], nrmse)
    assert abs(q[0]["psnr"] - psnr) <= 1e-4, (name, q[0]["psnr"], psnr)
print("ok  report: schema, and NRMSE/PSNR of the three images recomputed from the NIfTI files")
PYEOF
le "$(awk -v c="$cor" 'BEGIN{print 2*c}')" "$unc" || fail "corrected NRMSE $cor is not 2x better than uncorrected $unc"
le "$cor" 0.1 || fail "corrected NRMSE $cor above 0.1"
echo "ok  demo: uncorrected $unc, corrected $cor"

"$RECON" "$W/demo.h5" -n 10 -o "$W/roundtrip" --device cpu --report "$W/rt.json" >"$W/rt.stdout" 2>"$W/rt.stderr" \
    || { cat "$W/rt.stderr" >&2; fail "round trip failed"; }
cat "$W/rt.stdout"
rt=$(report_get "$W/rt.json" reconstructions.0.quality.0.nrmse)
[ -n "$rt" ] || fail "round trip reported no NRMSE"
[ "$(report_get "$W/rt.json" mode) $(report_get "$W/rt.json" input)" = "file $W/demo.h5" ] || fail "round trip: mode, input"
p=$(number_after 'NRMSE vs reference' "$W/rt.stdout")
awk -v a="$p" -v b="$rt" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-6) }' \
    || fail "round trip: the printed NRMSE '$p' is not the report's $rt"
awk -v a="$rt" -v b="$cor" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 + 1e-3 * b) }' \
    || fail "round trip NRMSE $rt differs from the demo's corrected NRMSE $cor"
[ -s "$W/roundtrip.nii" ] && [ -s "$W/roundtrip.png" ] || fail "round trip outputs missing"
# without field correction the file reproduces the uncorrected image
"$RECON" "$W/demo.h5" -n 10 -o "$W/roundtrip_unc" --no-field-correction --device cpu -q --report "$W/rtu.json" \
    >"$W/rtu.stdout" 2>"$W/rtu.stderr" || { cat "$W/rtu.stderr" >&2; fail "uncorrected round trip failed"; }
rtu=$(report_get "$W/rtu.json" reconstructions.0.quality.0.nrmse)
[ "$(report_get "$W/rtu.json" reconstructions.0.field_correction)" = false ] || fail "--no-field-correction: corrected"
awk -v a="$rtu" -v b="$unc" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 + 1e-3 * b) }' \
    || fail "uncorrected round trip NRMSE $rtu differs from the demo's $unc"
echo "ok  round trip: corrected $rt, uncorrected $rtu"

# without -o the demo writes into ./forge_demo/ (created when missing), nothing into the current folder
mkdir -p "$W/cwd" && cd "$W/cwd" || fail "cd $W/cwd"
for run in 1 2; do  # the second run finds the folder there
    "$RECON" --demo --demo-size 16 --demo-slices 1 -n 2 --device cpu >"$W/default.stdout" 2>"$W/default.stderr" \
        || { cat "$W/default.stderr" >&2; fail "demo without -o failed (run $run)"; }
done
for f in demo.h5 demo_truth.nii demo_uncorrected.nii demo_corrected.nii demo_fieldmap.nii demo_comparison.png demo_corrected.png; do
    [ -s "$W/cwd/forge_demo/$f" ] || fail "demo without -o did not write forge_demo/$f"
done
[ "$(ls -A "$W/cwd")" = "forge_demo" ] || fail "demo without -o wrote into the current folder: $(ls -A "$W/cwd" | tr '\n' ' ')"
grep -q 'reproduce the corrected image with: forge-recon forge_demo/demo.h5' "$W/default.stdout" \
    || fail "the demo does not point at forge_demo/demo.h5"
echo "ok  demo without -o: outputs in forge_demo/"
