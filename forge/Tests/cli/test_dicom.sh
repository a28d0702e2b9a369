#!/bin/bash
# forge-recon --dicom: the demo's file rewritten with oblique directions and slice centres (forge_mrd_cfl orient)
# gives one MR image per slice whose geometry, read with pydicom, is the NIfTI affine's and the --mrd-out images'
# (ImagePositionPatient at voxel (0, 0, k), ImageOrientationPatient, PixelSpacing, SliceThickness), whose pixels
# times RescaleSlope are the NIfTI magnitudes to within half a step, and which share one study, series and frame
# of reference. A folder that is not empty or is a file is refused before anything is read; a run that fails
# leaves no folder.
#   usage: test_dicom.sh FORGE_RECON FORGE_MRD_CFL WORKDIR
#   (exit 77 = skipped: forge-recon built without DCMTK, or no python3 with pydicom, nibabel and h5py;
#    Debian: libdcmtk-dev to build, python3-pydicom to test)
source "$(dirname "$0")/common.sh"
RECON=$1; CFL=$2; W=$3
PY=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import pydicom, nibabel, numpy, h5py' 2>/dev/null; then PY=$p; break; fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with pydicom, nibabel, numpy and h5py (Debian: python3-pydicom)"; exit 77; }
workdir "$W"
cd "$W" || fail "cannot enter $W"
"$RECON" --demo --demo-size 24 --demo-slices 3 --demo-coils 4 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>demo.stderr \
    || { cat demo.stderr >&2; fail "demo failed"; }
GEOM="0.8660254 0.5 0 -0.4330127 0.75 0.5 12.5 -30 41 6 240 180"
"$CFL" orient demo.h5 oblique.h5 $GEOM || fail "forge_mrd_cfl orient failed"
"$RECON" oblique.h5 -o "$W/recon" -n 3 --device cpu --dicom "$W/dcm/" --mrd-out "$W/images.h5" >recon.stdout 2>recon.stderr
rc=$?
if [ $rc -ne 0 ] && grep -q "built without DCMTK" recon.stderr; then echo "SKIP: forge-recon built without DCMTK"; exit 77; fi
[ $rc -eq 0 ] || { cat recon.stderr >&2; fail "forge-recon --dicom failed"; }
grep -q "wrote 3 DICOM images to $W/dcm/" recon.stdout || { cat recon.stdout >&2; fail "no line saying 3 DICOM images"; }
"$PY" - "$W" <<'PY' || fail "the DICOM images are not the NIfTI's"
import sys, glob, numpy as np, nibabel as nib, h5py, pydicom
w = sys.argv[1]
files = sorted(glob.glob(f"{w}/dcm/*.dcm"))
assert [f.split("/")[-1] for f in files] == ["IM_00001.dcm", "IM_00002.dcm", "IM_00003.dcm"], files
nii = nib.load(f"{w}/recon.nii")
vox = np.asarray(nii.dataobj)
A = nii.affine
flip = np.diag([-1, -1, 1])  # RAS <-> LPS (DICOM's patient frame)
mrd = h5py.File(f"{w}/images.h5", "r")["dataset/image_1/header"][:]
uids = set()
for k, f in enumerate(files):
    d = pydicom.dcmread(f)
    assert d.SOPClassUID == pydicom.uid.MRImageStorage and d.Modality == "MR"
    assert int(d.InstanceNumber) == k + 1 and int(d.Rows) == vox.shape[1] and int(d.Columns) == vox.shape[0]
    uids.add((d.StudyInstanceUID, d.SeriesInstanceUID, d.FrameOfReferenceUID))
    pos = np.array([float(v) for v in d.ImagePositionPatient])
    assert np.allclose(pos, flip @ (A @ [0, 0, k, 1])[:3], atol=1e-3), (k, pos)
    iop = np.array([float(v) for v in d.ImageOrientationPatient])
    row, col = flip @ A[:3, 0], flip @ A[:3, 1]
    assert np.allclose(iop[:3], row / np.linalg.norm(row), atol=1e-6), iop
    assert np.allclose(iop[3:], col / np.linalg.norm(col), atol=1e-6), iop
    dy, dx = (float(v) for v in d.PixelSpacing)
    assert np.isclose(dx, np.linalg.norm(A[:3, 0])) and np.isclose(dy, np.linalg.norm(A[:3, 1])), (dx, dy)
    assert np.isclose(float(d.SliceThickness), 5.0), d.SliceThickness  # the demo's encoded FOV z
    # the MRD image of the slice: its centre pixel is the DICOM's pixel (Nx/2, Ny/2)
    h = mrd[k]
    centre = pos + (vox.shape[0] // 2) * dx * iop[:3] + (vox.shape[1] // 2) * dy * iop[3:]
    assert np.allclose(h["position"], centre, atol=1e-3), (h["position"], centre)
    slope = float(d.RescaleSlope)
    img = d.pixel_array.astype(float).T * slope + float(d.RescaleIntercept)  # rows are y: transposed, x first
    err = np.abs(img - vox[:, :, k]).max()
    assert err <= 0.5 * slope * 1.001, (k, err, slope)
    assert d.pixel_array.max() > 1000, "the pixels use few of their 16 bits"
assert len(uids) == 1, "the images do not share one study, series and frame of reference"
print(f"ok  --dicom: 3 oblique slices, positions, orientation, spacing and thickness as the NIfTI affine and the MRD "
      f"images; pixels x slope within half a step of the NIfTI")
PY

# refused before anything is read: exit 2, one line; a failed run leaves no folder of its own
refuse() {  # name, expected text, forge-recon arguments
    local name=$1 expected=$2; shift 2
    "$RECON" "$@" -n 1 --device cpu -o "$W/refused_$name" >"$name.stdout" 2>"$name.stderr"
    local rc=$?
    [ $rc -eq 2 ] || { cat "$name.stderr" >&2; fail "$name: exit $rc, expected 2"; }
    [ "$(grep -c 'forge-recon: error:' "$name.stderr")" -eq 1 ] || { cat "$name.stderr" >&2; fail "$name: not one error line"; }
    grep -qF -- "$expected" "$name.stderr" || { cat "$name.stderr" >&2; fail "$name: the error does not say '$expected'"; }
    ls "$W"/refused_* >/dev/null 2>&1 && fail "$name: the refused run left an output"
    echo "ok  refused $name: $(sed -n 's/forge-recon: error: //p' "$name.stderr" | cut -c1-150)"
}
refuse notempty "is not empty" oblique.h5 --dicom "$W/dcm"
touch afile
refuse file "exists and is not a folder" oblique.h5 --dicom "$W/afile"
refuse noparent "does not exist" oblique.h5 --dicom "$W/missing/dcm"
refuse operator "--operator fft" oblique.h5 --operator fft --dicom "$W/newdcm"
[ -e "$W/newdcm" ] && fail "the failed run left its DICOM folder"
echo "ok  the failed run left no DICOM folder"
exit 0
