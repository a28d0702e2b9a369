#!/bin/bash
# Image geometry from the acquisitions' headers: the demo's ISMRMRD file (2 slices) rewritten with oblique
# read/phase/slice directions and slice centres (forge_mrd_cfl orient) reconstructs to the same voxels, and its
# NIfTI affine (sform and qform, read by nibabel) is the one computed here from those directions, the slice
# centres and the XML header's recon FOV and matrix: voxel (i, j, k) at C + (i - Nx/2) dx R + (j - Ny/2) dy P
# + k spacing (R x P), LPS -> RAS.
#   usage: test_geometry.sh FORGE_RECON FORGE_MRD_CFL WORKDIR     (exit 77 = skipped without python3 + nibabel + h5py)
source "$(dirname "$0")/common.sh"
RECON=$1; CFL=$2; W=$3
PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import nibabel, numpy, h5py' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with nibabel, numpy and h5py"; exit 77; }
workdir "$W"
cd "$W" || fail "cannot enter $W"
"$RECON" --demo --demo-size 24 --demo-slices 2 --demo-coils 4 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>demo.stderr \
    || { cat demo.stderr >&2; fail "demo failed"; }
# read (cos 30, sin 30, 0), phase orthogonal to it and tilted 30 degrees out of the axial plane; slice 0 centred at
# (12.5, -30, 41) mm LPS, slices 6 mm apart
GEOM="0.8660254 0.5 0 -0.4330127 0.75 0.5 12.5 -30 41 6"
"$CFL" orient demo.h5 oblique.h5 $GEOM || fail "forge_mrd_cfl orient failed"
for f in demo oblique; do
    "$RECON" $f.h5 -o "$W/${f}_recon" -n 3 --device cpu >$f.stdout 2>$f.stderr || { cat $f.stderr >&2; fail "$f: forge-recon failed"; }
done
cmp -s <(tail -c +353 demo_recon.nii) <(tail -c +353 oblique_recon.nii) || fail "the geometry changed the voxels"
"$PY" - "$W" $GEOM <<'PY' || fail "the NIfTI affine is not the acquisitions' geometry"
import sys, numpy as np, nibabel as nib, h5py, xml.etree.ElementTree as ET
w = sys.argv[1]
g = [float(v) for v in sys.argv[2:]]
R, P, C, spacing = np.array(g[0:3]), np.array(g[3:6]), np.array(g[6:9]), g[9]
S = np.cross(R, P)
x = h5py.File(f"{w}/oblique.h5", "r")["dataset/xml"][0]
root = ET.fromstring(x.decode() if isinstance(x, bytes) else x)
ns = {"m": root.tag.split("}")[0].strip("{")}
rs = root.find("m:encoding/m:reconSpace", ns)
N = [int(rs.find(f"m:matrixSize/m:{a}", ns).text) for a in "xy"]
fov = [float(rs.find(f"m:fieldOfView_mm/m:{a}", ns).text) for a in "xy"]
dx, dy = fov[0] / N[0], fov[1] / N[1]
origin = C - (N[0] // 2) * dx * R - (N[1] // 2) * dy * P
lps = np.column_stack([R * dx, P * dy, S * spacing, origin])
expected = np.vstack([np.diag([-1, -1, 1]) @ lps, [0, 0, 0, 1]])
im = nib.load(f"{w}/oblique_recon.nii")
assert im.shape[:3] == (N[0], N[1], 2), im.shape
assert im.header["sform_code"] == 1 and im.header["qform_code"] == 1
for name, A in (("sform", im.header.get_sform()), ("qform", im.header.get_qform())):
    err = np.abs(A - expected).max()
    assert err < 1e-3, (name, err, A, expected)
# slice 1's centre pixel (N/2, N/2, 1) is at C + spacing S
centre = im.affine @ np.array([N[0] // 2, N[1] // 2, 1, 1])
assert np.allclose(centre[:3], np.diag([-1, -1, 1]) @ (C + spacing * S), atol=1e-3), centre
print(f"ok  oblique NIfTI affine: sform and qform within {err:.1e} mm of the acquisitions' geometry, voxels unchanged")
PY
exit 0
