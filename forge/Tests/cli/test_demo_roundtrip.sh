#!/bin/bash
# forge-recon --demo (small size for CI) writes NIfTI, PNG and ISMRMRD files; the field-corrected NRMSE is
# at least 2x better than the uncorrected one; 'forge-recon demo.h5' reproduces the corrected NRMSE.
#   usage: test_demo_roundtrip.sh FORGE_RECON WORKDIR
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
workdir "$W"
# -n 10 throughout keeps it fast (the default stopping rule runs about 16 iterations here)
"$RECON" --demo --demo-size 32 --demo-slices 2 -n 10 -o "$W/demo" --device cpu >"$W/demo.stdout" 2>"$W/demo.stderr" \
    || { cat "$W/demo.stderr" >&2; fail "demo failed"; }
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
unc=$(sed -n 's/^ *uncorrected *NRMSE \([0-9.]*\).*/\1/p' "$W/demo.stdout")
cor=$(sed -n 's/^ *field-corrected *NRMSE \([0-9.]*\).*/\1/p' "$W/demo.stdout")
[ -n "$unc" ] && [ -n "$cor" ] || fail "could not read the NRMSE lines"
le "$(awk -v c="$cor" 'BEGIN{print 2*c}')" "$unc" || fail "corrected NRMSE $cor is not 2x better than uncorrected $unc"
le "$cor" 0.1 || fail "corrected NRMSE $cor above 0.1"
echo "ok  demo: uncorrected $unc, corrected $cor"

"$RECON" "$W/demo.h5" -n 10 -o "$W/roundtrip" --device cpu >"$W/rt.stdout" 2>"$W/rt.stderr" \
    || { cat "$W/rt.stderr" >&2; fail "round trip failed"; }
cat "$W/rt.stdout"
rt=$(sed -n 's/.*NRMSE vs reference \([0-9.]*\).*/\1/p' "$W/rt.stdout" | head -n 1)
[ -n "$rt" ] || fail "round trip printed no NRMSE"
awk -v a="$rt" -v b="$cor" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 + 1e-3 * b) }' \
    || fail "round trip NRMSE $rt differs from the demo's corrected NRMSE $cor"
[ -s "$W/roundtrip.nii" ] && [ -s "$W/roundtrip.png" ] || fail "round trip outputs missing"
# without field correction the file reproduces the uncorrected image
"$RECON" "$W/demo.h5" -n 10 -o "$W/roundtrip_unc" --no-field-correction --device cpu -q >"$W/rtu.stdout" 2>"$W/rtu.stderr" \
    || { cat "$W/rtu.stderr" >&2; fail "uncorrected round trip failed"; }
rtu=$(sed -n 's/.*NRMSE vs reference \([0-9.]*\).*/\1/p' "$W/rtu.stdout" | head -n 1)
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
