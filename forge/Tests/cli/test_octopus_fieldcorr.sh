#!/bin/bash
# forge-recon field-corrects a real spiral given as BART arrays: OCTOPUS's phantom (../shared/data/octopus-spiral,
# 20 coils, field up to +-720 Hz) with its field map (oriented as python/examples/octopus_spiral.py works out,
# written as a BART array) and --dwell/--echo-time reconstructs sharper at the edge and more uniform inside than
# without correction, by the example's measures (docs/reconstruction.md, "Field correction on a real spiral").
# SKIPPED (77) without the data or without a Python that has NumPy, SciPy and the forge module.
#   usage: test_octopus_fieldcorr.sh FORGE_RECON WORKDIR PYTHON FORGE_PYTHON_DIR
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2; PY=$3; PYDIR=$4
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
DATA="${FORGE_OCTOPUS_DIR:-$ROOT/../shared/data/octopus-spiral}"
[ -f "$DATA/rawdata_spiral.mat" ] || { echo "SKIPPED: no OCTOPUS data at $DATA"; exit 77; }
PYTHONPATH="$PYDIR${PYTHONPATH:+:$PYTHONPATH}" "$PY" -c "import numpy, scipy.ndimage, forge" 2>/dev/null \
    || { echo "SKIPPED: $PY lacks NumPy, SciPy or the forge module"; exit 77; }
workdir "$W"
cd "$W" || fail "cannot enter $W"
export PYTHONPATH="$PYDIR${PYTHONPATH:+:$PYTHONPATH}" ROOT DATA
"$PY" - <<'PYEOF' || fail "cannot write the BART arrays"
import importlib.util, os, pathlib
import numpy as np
from forge import io as fio
root = pathlib.Path(os.environ["ROOT"])
def module(path, name):
    spec = importlib.util.spec_from_file_location(name, root / path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m
conv = module("scripts/real-data/convert_real_data.py", "convert_real_data")
ex = module("python/examples/octopus_spiral.py", "octopus_spiral")
arrays, _ = conv.load_octopus(os.environ["DATA"])
fio.write_cfl("k", arrays["kspace"])
fio.write_cfl("t", arrays["traj"])
a = ex.read_nifti(pathlib.Path(os.environ["DATA"]) / "fieldmap_unwrapped.nii.gz")
fm = ex.orient(a, **ex.FIELDMAP_ORIENTATION)      # forge's (ny, nx)
fio.write_cfl("fm", fm.T.astype(np.complex64))    # BART: x first
PYEOF
run() {  # name, forge-recon arguments
    local name=$1; shift
    "$RECON" --bart-kspace k --bart-traj t "$@" -o "$W/$name" -n 20 --device cpu -q >"$name.log" 2>&1 \
        || { cat "$name.log" >&2; fail "$name: forge-recon failed"; }
}
run plain
run corrected --fieldmap fm.cfl --dwell 10e-6 --echo-time 4.6e-3
"$PY" - <<'PYEOF' || fail "the field-corrected image is not sharper and more uniform than the uncorrected one"
import importlib.util, os, pathlib
root = pathlib.Path(os.environ["ROOT"])
spec = importlib.util.spec_from_file_location("octopus_spiral", root / "python/examples/octopus_spiral.py")
ex = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ex)
plain = ex.read_nifti("plain.nii").squeeze().T          # forge-recon's NIfTI: x first; the example's (y, x)
corrected = ex.read_nifti("corrected.nii").squeeze().T
mask = ex.object_mask(plain)
e0, e1 = ex.sharpness(plain, mask), ex.sharpness(corrected, mask)
i0, i1 = ex.interior_variation(plain, mask), ex.interior_variation(corrected, mask)
print(f"edge sharpness {e0:.5f} -> {e1:.5f}, interior variation {i0:.4f} -> {i1:.4f}")
assert e1 >= 1.1 * e0 and i1 < i0
PYEOF
echo "ok  OCTOPUS spiral, BART arrays with --fieldmap and --dwell/--echo-time: field correction sharpens it"
