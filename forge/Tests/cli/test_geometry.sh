#!/bin/bash
# Image geometry from the acquisitions' headers: the demo's ISMRMRD file (2 slices) rewritten with oblique
# read/phase/slice directions and slice centres (forge_mrd_cfl orient) reconstructs to the same voxels, and its
# NIfTI affine (sform and qform, read by nibabel) is the one computed here from those directions, the slice
# centres and the XML header's recon FOV and matrix: voxel (i, j, k) at C + (i - Nx/2) dx R + (j - Ny/2) dy P
# + k spacing (R x P), LPS -> RAS. --mrd-out's ISMRMRD images (read with h5py) carry the same geometry, values and
# indices, and how they were made as meta attributes.
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
# (12.5, -30, 41) mm LPS, slices 6 mm apart; FOV 240 x 180 mm (10 x 7.5 mm pixels)
GEOM="0.8660254 0.5 0 -0.4330127 0.75 0.5 12.5 -30 41 6 240 180"
"$CFL" orient demo.h5 oblique.h5 $GEOM || fail "forge_mrd_cfl orient failed"
for f in demo oblique; do
    "$RECON" $f.h5 -o "$W/${f}_recon" -n 3 --device cpu --mrd-out "$W/${f}_images.h5" >$f.stdout 2>$f.stderr \
        || { cat $f.stderr >&2; fail "$f: forge-recon failed"; }
done
"$RECON" oblique.h5 -o "$W/complex_recon" -n 3 --device cpu --complex --mrd-out "$W/complex_images.h5" >complex.stdout \
    2>complex.stderr || { cat complex.stderr >&2; fail "complex: forge-recon failed"; }
cmp -s <(tail -c +353 demo_recon.nii) <(tail -c +353 oblique_recon.nii) || fail "the geometry changed the voxels"
"$PY" - "$W" $GEOM <<'PY' || fail "the NIfTI affine is not the acquisitions' geometry"
import sys, numpy as np, nibabel as nib, h5py, xml.etree.ElementTree as ET
w = sys.argv[1]
g = [float(v) for v in sys.argv[2:]]
R, P, C, spacing = np.array(g[0:3]), np.array(g[3:6]), np.array(g[6:9]), g[9]  # g[10:12]: the FOV, in the XML
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

# --mrd-out, read with h5py (not libismrmrd): one image per slice with the same geometry, values and indices
fovz = float(rs.find("m:fieldOfView_mm/m:z", ns).text)
flip = np.diag([-1, -1, 1])
for kind in ("oblique", "complex"):
    f = h5py.File(f"{w}/{kind}_images.h5", "r")
    assert "xml" in f["dataset"], "the images carry no XML header"
    hdr, data = f["dataset/image_1/header"][:], f["dataset/image_1/data"][:]
    attrs = f["dataset/image_1/attributes"][:]
    if data.dtype.names:  # ISMRMRD's complex_float: a compound of two floats
        data = data[data.dtype.names[0]] + 1j * data[data.dtype.names[1]]
    nii = nib.load(f"{w}/{kind}_recon.nii")
    vox = np.asarray(nii.dataobj)
    assert data.shape == (2, 1, 1, N[1], N[0]), data.shape
    for s in range(2):
        h = hdr[s]
        assert tuple(h["matrix_size"]) == (N[0], N[1], 1), h["matrix_size"]
        assert np.allclose(h["field_of_view"], [fov[0], fov[1], fovz]), h["field_of_view"]
        # the image's centre pixel (N/2, N/2) is its position; NIfTI's affine says where that voxel is
        centre = flip @ (nii.affine @ np.array([N[0] // 2, N[1] // 2, s, 1]))[:3]
        assert np.allclose(h["position"], centre, atol=1e-3), (h["position"], centre)
        assert np.allclose(h["read_dir"], R, atol=1e-6) and np.allclose(h["phase_dir"], P, atol=1e-6)
        assert np.allclose(h["slice_dir"], S, atol=1e-6), h["slice_dir"]
        assert h["slice"] == s and h["repetition"] == 0 and h["contrast"] == 0 and h["image_index"] == s + 1
        assert h["image_series_index"] == 1
        assert h["image_type"] == (5 if kind == "complex" else 1), h["image_type"]
        assert h["data_type"] == (7 if kind == "complex" else 5), h["data_type"]  # ISMRMRD_CXFLOAT, ISMRMRD_FLOAT
        im = data[s, 0, 0].T  # stored (y, x): x fastest, as NIfTI's
        assert np.array_equal(im, vox[:, :, s]), "image values differ from the NIfTI's"
        meta = ET.fromstring(attrs[s])
        values = {m.find("name").text: [v.text for v in m.findall("value")] for m in meta.findall("meta")}
        assert values["iterations"] == ["3"] and values["stop_reason"] == ["iteration_limit"], values
        assert values["operator"] == ["dft"] and values["source"] == ["oblique.h5"], values
print("ok  --mrd-out (magnitude and --complex): positions, directions, FOV, indices, types, values and meta as the NIfTI")
PY
exit 0
