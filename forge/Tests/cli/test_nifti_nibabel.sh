#!/bin/bash
# nibabel reads forge-recon's NIfTI back with the right shape, voxel sizes and orientation, and the
# demo's orientation marker (image x = +0.25 FOV, y = -0.30 FOV in the LPS read/phase frame, i.e. RAS
# (-60 mm, +72 mm) for the 240 mm FOV) is where the affine says.
#   usage: test_nifti_nibabel.sh FORGE_RECON WORKDIR        (exit 77 = skipped without python3 + nibabel)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2
# Debian's python3-nibabel serves /usr/bin/python3, which may not be the python3 first on PATH.
PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import nibabel, numpy' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with nibabel and numpy"; exit 77; }
workdir "$W"
"$RECON" --demo --demo-size 32 --demo-slices 2 -n 10 -q -o "$W/demo" --device cpu >"$W/demo.stdout" 2>"$W/demo.stderr" \
    || { cat "$W/demo.stderr" >&2; fail "demo failed"; }
"$PY" - "$W" <<'PY' || fail "nibabel checks failed"
import sys, numpy as np, nibabel as nib
w = sys.argv[1]
for name in ["demo_truth", "demo_corrected", "demo_uncorrected", "demo_fieldmap"]:
    im = nib.load(f"{w}/{name}.nii")
    assert im.shape == (32, 32, 2), (name, im.shape)
    assert nib.aff2axcodes(im.affine) == ("L", "P", "S"), (name, nib.aff2axcodes(im.affine))
    assert np.allclose(im.header.get_zooms()[:3], (7.5, 7.5, 5.0)), im.header.get_zooms()
    assert np.allclose(im.header.get_qform(), im.header.get_sform(), atol=1e-4), "qform != sform"
    assert im.header["qform_code"] == 1 and im.header["sform_code"] == 1
    assert im.get_data_dtype() == np.float32
t = nib.load(f"{w}/demo_truth.nii")
a = t.get_fdata()
inv = np.linalg.inv(t.affine)
for k, z in enumerate([-2.5, 2.5]):
    i, j, kk = np.rint(inv @ np.array([-60.0, 72.0, z, 1.0]))[:3].astype(int)
    assert kk == k, (kk, k)
    assert a[i, j, k] > 0.7, ("marker not bright", i, j, k, a[i, j, k])
    assert a[32 - i, j, k] < 0.5 and a[i, 32 - j, k] < 0.5, "marker mirrored"
c = nib.load(f"{w}/demo_corrected.nii").get_fdata()
assert np.linalg.norm(c - a) / np.linalg.norm(a) < 0.2, "corrected image far from truth"
print("ok  nibabel: shape, zooms, LPS axes, qform == sform, marker position")
PY
