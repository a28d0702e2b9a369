"""OCTOPUS's real spiral through forge.reconstruct (python/examples/octopus_reconstruct.py; the data from
../shared/data/octopus-spiral beside the repository, SKIPPED when absent): the pipeline picks a field-free operator
without the field map and a field-corrected one with it (by its cost model), the field-corrected image has a sharper
edge and less variation inside the object than the uncorrected one, and the script writes its PNG."""

import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import forge

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "octopus-spiral"
FILES = ("rawdata_spiral.mat", "ktraj.npy", "dcf.mat", "fieldmap_unwrapped.nii.gz")
SCRIPT = ROOT / "python" / "examples" / "octopus_reconstruct.py"

pytestmark = pytest.mark.skipif(not all((DATA / f).exists() for f in FILES), reason=f"no OCTOPUS data in {DATA}")


def example():
    pytest.importorskip("scipy")
    spec = importlib.util.spec_from_file_location("octopus_reconstruct", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pipeline_field_correction_sharpens_the_real_spiral():
    r = example().run(DATA, iterations=20)
    for name in ("uncorrected", "corrected"):
        assert r[name].shape == (192, 192) and r[name].dtype == np.complex64 and np.isfinite(r[name]).all()
        assert r["reports"][name]["maps"]["source"] == "estimated"
        assert r["reports"][name]["solves"][0]["iterations"] >= 1
    assert r["reports"]["uncorrected"]["operator"]["name"] in ("nufft", "toeplitz")   # by the cost model
    assert r["reports"]["corrected"]["operator"]["name"] in ("timeseg", "toeplitz")
    assert r["reports"]["corrected"]["field_correction"]
    print(r["sharpness"], r["interior_variation"], r["seconds"])
    assert r["sharpness"]["corrected"] > 1.15 * r["sharpness"]["uncorrected"]
    assert r["interior_variation"]["corrected"] < 0.99 * r["interior_variation"]["uncorrected"]


def test_script_writes_the_png(tmp_path):
    pytest.importorskip("scipy")
    env_path = str(pathlib.Path(forge.__file__).resolve().parents[1])
    out = subprocess.run([sys.executable, str(SCRIPT), str(DATA), "-o", str(tmp_path), "--iterations", "5"],
                         capture_output=True, text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
                         timeout=600)
    assert out.returncode == 0, out.stderr
    png = (tmp_path / "octopus_reconstruct.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = np.frombuffer(png[16:24], ">u4")
    assert (width, height) == (3 * 192 + 2 * 4, 192)
    assert out.stdout.count("edge sharpness") == 2 and "corrected" in out.stdout
