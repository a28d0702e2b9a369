"""forge.reconstruct and forge.ReconSession on the GPU give forge-recon --device gpu's images of the demo's MRD file
to float rounding, and the host's (its own maps, and maps estimated on each device) to the solves' float
differences, under the exact DFT, time segmentation and Toeplitz, and a GPU session fed slice by slice gives the
whole GPU reconstruction. Skips without a CUDA device or forge's CUDA build."""

import json
import subprocess

import numpy as np
import pytest

import forge
from test_recon_pipeline import assert_close, assert_same_solves, read_nifti
from test_recon_pipeline import demo  # noqa: F401  (the module's fixture: forge-recon's demo file)

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _device():
    if not forge.built_with_cuda():
        pytest.skip("forge was built without CUDA")
    if not forge.cuda_available():
        pytest.skip("no CUDA device")


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("operator", ["dft", "timeseg", "toeplitz"])
def test_gpu_equals_host(demo, operator):  # noqa: F811
    p = forge.io.read_mrd_problem(demo[1] / "demo.h5")
    args = dict(times=p["times"], field_map=p["field_map"], shape=p["shape"], maps=p["maps"], operator=operator,
                iterations=20, tolerance=0)
    host = forge.reconstruct(p["data"], p["k"], device="cpu", **args)
    gpu, report = forge.reconstruct(p["data"], p["k"], device="gpu", return_report=True, **args)
    assert report["device"].lower().startswith("gpu")
    # 20 PCG iterations of float arithmetic summed in other orders (cuBLAS, cuFFT, device reductions)
    assert rel(gpu, host) < 1e-3, (operator, rel(gpu, host))


@pytest.mark.parametrize("operator", ["auto", "dft", "toeplitz"])
def test_gpu_session_equals_forge_recon_on_the_gpu(demo, operator):  # noqa: F811
    exe, d = demo
    name = f"gpu_{operator}"
    subprocess.run([exe, str(d / "demo.h5"), "--complex", "-o", str(d / name), "--device", "gpu", "--operator",
                    operator, "--fieldmap-extend", "off", "--report", str(d / f"{name}.json"), "-q"], check=True,
                   capture_output=True)
    ref = read_nifti(d / f"{name}.nii")
    ref = ref.reshape((-1,) + ref.shape[-2:])
    ref_report = json.loads((d / f"{name}.json").read_text())
    p = forge.io.read_mrd_problem(d / "demo.h5")
    x, report = forge.reconstruct(p["data"], p["k"], times=p["times"], field_map=p["field_map"], maps=p["maps"],
                                  shape=p["shape"], operator=operator, device="gpu", return_report=True)
    assert report["device"].lower().startswith("gpu")
    assert report["operator"]["name"] == ref_report["operator"]["name"]
    assert_close(x[0], ref)  # the same library calls on the same device: equal up to float rounding
    assert_same_solves(report, ref_report)


def test_gpu_estimated_maps_and_session(demo):  # noqa: F811
    p = forge.io.read_mrd_problem(demo[1] / "demo.h5")
    args = dict(times=p["times"], field_map=p["field_map"], shape=p["shape"], operator="dft", iterations=20,
                tolerance=0)
    host = forge.reconstruct(p["data"], p["k"], device="cpu", maps="estimate", **args)
    whole = forge.reconstruct(p["data"], p["k"], device="gpu", maps="estimate", **args)
    assert rel(whole, host) < 1e-3
    session = forge.ReconSession(device="gpu", operator="dft", iterations=20, tolerance=0)
    assert session.on_gpu
    for s in range(p["data"].shape[1]):
        x = session.reconstruct(p["data"][0, s], p["k"][0, s], times=p["times"][0, s], field_map=p["field_map"][s],
                                shape=p["shape"], slice=s)
        assert rel(x, whole[0, s]) < 1e-5  # the same device, the same library calls: rounding at most
