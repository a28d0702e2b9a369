"""forge.reconstruct and forge.ReconSession: the library's pipeline from Python gives forge-recon's images (the
demo's MRD file, its own maps and with estimated ones), a session fed slice by slice gives the images of the whole,
and bad arguments are refused by name."""

import json
import os
import pathlib
import subprocess

import numpy as np
import pytest

import forge


def forge_recon():
    exe = os.environ.get("FORGE_RECON") or str(pathlib.Path(forge.__file__).resolve().parents[2] / "apps" /
                                                 "forge-recon")
    if not os.access(exe, os.X_OK):
        pytest.skip(f"forge-recon not found at {exe} (set FORGE_RECON)")
    return exe


def read_nifti(path):
    """A NIfTI-1 file's values (float32 or complex64) as an array (..., ny, nx): x fastest in the file."""
    raw = pathlib.Path(path).read_bytes()
    assert int.from_bytes(raw[0:4], "little") == 348
    dim = np.frombuffer(raw, "<i2", 8, 40)
    datatype = int(np.frombuffer(raw, "<i2", 1, 70)[0])
    offset = int(np.frombuffer(raw, "<f4", 1, 108)[0])
    dtype = {16: "<f4", 32: "<c8"}[datatype]
    shape = tuple(int(d) for d in dim[1:1 + dim[0]])
    n = int(np.prod(shape))
    return np.frombuffer(raw, dtype, n, offset).reshape(shape[::-1])


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    if not forge.io._native.has_mrd():
        pytest.skip("forge built without Forge::IO")
    d = tmp_path_factory.mktemp("demo")
    exe = forge_recon()
    subprocess.run([exe, "--demo", "-o", str(d / "demo"), "--demo-size", "32", "--demo-slices", "2",
                    "--demo-coils", "4", "--device", "cpu", "-q"], check=True, capture_output=True)
    return exe, d


def run_forge_recon(demo, name, *options):
    """forge-recon's complex images (slices, ny, nx) of the demo's file, and its --report."""
    exe, d = demo
    subprocess.run([exe, str(d / "demo.h5"), "--complex", "-o", str(d / name), "--device", "cpu",
                    "--fieldmap-extend", "off", "--report", str(d / f"{name}.json"), "-q", *options], check=True,
                   capture_output=True)
    images = read_nifti(d / f"{name}.nii")  # (slices, ny, nx) with one frame
    return images.reshape((-1,) + images.shape[-2:]), json.loads((d / f"{name}.json").read_text())


def assert_same_solves(report, ref_report):
    ref = ref_report["reconstructions"][0]["solves"]
    assert len(report["solves"]) == len(ref)
    for s, r in zip(report["solves"], ref):
        for key in ("slice", "frame", "coil", "segments", "iterations", "stop_reason", "converged"):
            assert s[key] == r[key], key
        assert s["relative_gradient"] == pytest.approx(r["relative_gradient"], rel=1e-6)


def assert_close(a, b):
    err = np.linalg.norm(a - b) / np.linalg.norm(b)
    assert err < 1e-6, err  # the same library calls on the same inputs: equal up to float rounding


def test_read_mrd_problem(demo):
    p = forge.io.read_mrd_problem(demo[1] / "demo.h5")
    assert p["shape"] == (32, 32)
    assert p["data"].shape[:3] == (1, 2, 4)
    assert p["k"].shape == (1, 2, 2, p["data"].shape[-1])
    assert p["maps"].shape == (2, 4, 32, 32)
    assert p["field_map"].shape == (2, 32, 32)


@pytest.mark.parametrize("operator", ["auto", "dft", "timeseg"])
def test_reconstruct_equals_forge_recon(demo, operator):
    ref, ref_report = run_forge_recon(demo, f"given_{operator}", "--operator", operator)
    p = forge.io.read_mrd_problem(demo[1] / "demo.h5")
    x, report = forge.reconstruct(p["data"], p["k"], times=p["times"], field_map=p["field_map"], maps=p["maps"],
                                  shape=p["shape"], operator=operator, device="cpu", return_report=True)
    assert x.shape == (1, 2, 32, 32) and x.dtype == np.complex64
    assert_close(x[0], ref)
    assert report["maps"]["source"] == "given"
    assert report["field_correction"] is True
    assert report["operator"]["requested"] == operator
    assert report["operator"]["name"] == ref_report["operator"]["name"]
    assert report["operator"]["auto_reason"] == ref_report["operator"]["auto_reason"]
    assert_same_solves(report, ref_report)
    if operator == "auto":
        assert report["operator"]["auto_reason"]
    else:
        assert report["operator"]["name"] == operator
    assert len(report["solves"]) == 2
    for s in report["solves"]:
        assert s["iterations"] >= 1 and s["stop_reason"] in ("tolerance", "iteration_limit")
        assert 0 <= s["relative_gradient"] and s["seconds"] >= 0
    assert report["iterations"] == sum(s["iterations"] for s in report["solves"])


def test_estimated_maps_equal_forge_recon(demo):
    ref, ref_report = run_forge_recon(demo, "estimated", "--smaps", "estimate")
    p = forge.io.read_mrd_problem(demo[1] / "demo.h5")
    x, report = forge.reconstruct(p["data"], p["k"], times=p["times"], field_map=p["field_map"], maps="estimate",
                                  shape=p["shape"], device="cpu", return_report=True)
    assert_close(x[0], ref)
    assert report["maps"]["source"] == "estimated"
    assert len(report["maps"]["stats"]) == 2
    assert_same_solves(report, ref_report)


def test_session_slice_by_slice_equals_whole(demo):
    p = forge.io.read_mrd_problem(demo[1] / "demo.h5")
    for maps in ("estimate", "given"):
        whole = forge.reconstruct(p["data"], p["k"], times=p["times"], field_map=p["field_map"], shape=p["shape"],
                                  maps=p["maps"] if maps == "given" else "estimate", device="cpu", operator="dft")
        session = forge.ReconSession(device="cpu", operator="dft")
        reports = []
        for repeat in range(2):  # the second pass reuses the operators and the maps kept per slice
            for s in range(2):
                x, r = session.reconstruct(p["data"][0, s], p["k"][0, s], times=p["times"][0, s],
                                           field_map=p["field_map"][s], shape=p["shape"], slice=s, frame=repeat,
                                           maps=p["maps"][s] if maps == "given" else None, return_report=True)
                assert x.shape == (32, 32)
                assert_close(x, whole[0, s])
                assert r["solves"][0]["slice"] == s and r["solves"][0]["frame"] == repeat
                reports.append(r)
        if maps == "estimate":
            assert [r["maps"]["source"] for r in reports] == ["estimated", "estimated", "kept", "kept"]
        assert reports[-1]["operators_reused"] >= 1


def test_warm_start_session(demo):
    p = forge.io.read_mrd_problem(demo[1] / "demo.h5")
    args = dict(times=p["times"][0, 0], field_map=p["field_map"][0], shape=p["shape"], maps=p["maps"][0])
    cold = forge.reconstruct(p["data"][0, 0], p["k"][0, 0], device="cpu", **args)
    session = forge.ReconSession(device="cpu", warm_start=True)
    session.reconstruct(p["data"][0, 0], p["k"][0, 0], **args)
    x, r = session.reconstruct(p["data"][0, 0], p["k"][0, 0], frame=1, return_report=True, **args)
    assert r["solves"][0]["iterations"] <= 2  # starts at the image a cold start reaches
    assert np.linalg.norm(x - cold) / np.linalg.norm(cold) < 1e-3


def small_problem(n=16, nc=2, ns=400):
    rng = np.random.default_rng(0)
    k = rng.uniform(-n / 2, n / 2, (2, ns)).astype(np.float32)
    data = (rng.standard_normal((nc, ns)) + 1j * rng.standard_normal((nc, ns))).astype(np.complex64)
    return data, k


def test_coil_by_coil_and_array_libraries():
    data, k = small_problem()
    x, r = forge.reconstruct(data, k, shape=(16, 16), maps=None, operator="dft", device="cpu", iterations=5,
                             return_report=True)
    assert x.shape == (16, 16)
    assert r["maps"]["source"] == "none"
    assert [s["coil"] for s in r["solves"]] == [0, 1]
    # a list of lists is taken as an array too
    y = forge.reconstruct(data.tolist(), k.tolist(), shape=(16, 16), maps=None, operator="dft", device="cpu",
                          iterations=5)
    np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("change, message", [
    (dict(k=np.zeros((3, 400), np.float32)), "k has shape"),
    (dict(k=np.zeros((2, 399), np.float32)), "k has 399 samples"),
    (dict(data=np.full((2, 400), np.nan, np.complex64)), "data holds a non-finite"),
    (dict(operator="gridding"), "operator = 'gridding'"),
    (dict(penalty="l2"), "penalty = 'l2'"),
    (dict(device="tpu"), "device = 'tpu'"),
    (dict(maps="espirit"), "maps = 'espirit'"),
    (dict(maps=np.ones((3, 16, 16), np.complex64)), "maps has shape"),
    (dict(field_map=np.zeros((16, 15), np.float32), times=np.zeros(400)), "field_map has shape"),
    (dict(field_map=np.zeros((16, 16), np.float32)), "a field_map needs times"),
    (dict(times=np.zeros(399)), "times has shape"),
    (dict(shape=(16,)), "shape = (16,)"),
    (dict(iterations=0), "iterations = 0"),
])
def test_bad_arguments_are_named(change, message):
    data, k = small_problem()
    args = dict(data=data, k=k, shape=(16, 16), maps=None, operator="dft", device="cpu", iterations=2)
    args.update(change)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        forge.reconstruct(args.pop("data"), args.pop("k"), **args)


def test_gpu_refused_without_a_device():
    if forge.cuda_available():
        pytest.skip("a CUDA device is usable")
    data, k = small_problem()
    with pytest.raises(RuntimeError, match="GPU"):
        forge.reconstruct(data, k, shape=(16, 16), device="gpu")
