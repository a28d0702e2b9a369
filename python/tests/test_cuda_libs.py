"""The CUDA wheel's loading of NVIDIA's pip libraries (forge/_cuda_libs.py): which import errors it answers, and
where it looks (the pip packages' layouts for CUDA 13 and 12)."""

import os

import pytest

from forge import _cuda_libs


def test_only_a_missing_cuda_library_is_answered():
    for name in ("libcudart.so.13", "libcufft.so.12", "libcudart.so.12", "libcufft.so.11"):
        assert _cuda_libs.missing_cuda_library(ImportError(f"{name}: cannot open shared object file: No such file"))
    assert not _cuda_libs.missing_cuda_library(ImportError("libarmadillo.so.11: cannot open shared object file"))
    assert not _cuda_libs.missing_cuda_library(ImportError("undefined symbol: _ZN5forge3fooEv"))


def test_preload_looks_in_the_pip_packages_layouts(tmp_path, monkeypatch):
    opened = []
    monkeypatch.setattr(_cuda_libs.ctypes, "CDLL", lambda path, mode: opened.append((path, mode)))
    monkeypatch.setattr(_cuda_libs, "_nvidia_roots", lambda: [str(tmp_path)])
    assert _cuda_libs.preload() == []  # no packages: nothing loaded, the import error stands
    for sub, name in (("cu13/lib", "libcufft.so.12"), ("cu13/lib", "libcudart.so.13"),
                      ("cuda_runtime/lib", "libcudart.so.12"), ("cu13/lib", "libcublas.so.13")):
        os.makedirs(tmp_path / sub, exist_ok=True)
        (tmp_path / sub / name).write_bytes(b"")
    loaded = _cuda_libs.preload()
    rel = [os.path.relpath(p, tmp_path) for p in loaded]
    # the runtime before the libraries that need it, globally (the extension's sonames resolve to them)
    # (cuBLAS is not needed: left alone)
    assert rel == ["cu13/lib/libcudart.so.13", "cu13/lib/libcufft.so.12", "cuda_runtime/lib/libcudart.so.12"]
    assert [p for p, _ in opened] == loaded and all(m == _cuda_libs.ctypes.RTLD_GLOBAL for _, m in opened)
