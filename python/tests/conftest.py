"""Shared fixtures and the 'gpu' marker. GPU cases skip (never pass) without a CUDA device and CuPy or
PyTorch. With FORGE_PYTEST_ALL_SKIPPED_EXIT set, a run in which every collected case skipped exits with
that status (ctest's SKIP_RETURN_CODE), so that ctest reports it as skipped, not passed."""

import os

import numpy as np
import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device and CuPy or PyTorch (skipped otherwise)")


def pytest_sessionfinish(session, exitstatus):
    code = os.environ.get("FORGE_PYTEST_ALL_SKIPPED_EXIT")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if not code or reporter is None or exitstatus != 0:
        return
    stats = reporter.stats
    ran = len(stats.get("passed", [])) + len(stats.get("failed", [])) + len(stats.get("error", []))
    if ran == 0 and len(stats.get("skipped", [])) > 0:
        session.exitstatus = int(code)


@pytest.fixture
def rng():
    return np.random.default_rng(20261123)
