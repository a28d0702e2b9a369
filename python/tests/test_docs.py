"""The Python examples of README.md and docs/python.md run as printed and print what they say."""

import contextlib
import io
import pathlib
import re

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def python_block(path, heading):
    text = (ROOT / path).read_text()
    section = text[text.index(heading):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def run(code):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "<example>", "exec"), {"__name__": "__example__"})
    return out.getvalue()


def test_readme_python_quick_start():
    printed = float(run(python_block("README.md", "## Python quick start")))
    assert printed == pytest.approx(1024, rel=1e-5)


def test_docs_python_quick_start():
    printed = float(run(python_block("docs/python.md", "## Quick start")))
    assert printed < 0.02  # the page says about 0.013


def test_docs_python_spiral_with_a_field_map():
    printed = float(run(python_block("docs/python.md", "## An 8-coil spiral with a field map")))
    assert printed < 0.07  # the page says about 0.06


def test_docs_python_whole_reconstruction():
    printed = run(python_block("docs/python.md", "## The whole reconstruction")).split()
    # operator="auto": the cost model calibrated on the machine in use picks one of the operators that reproduce a
    # field-corrected non-Cartesian model
    assert printed[0] in ("dft", "timeseg", "toeplitz"), printed
    assert printed[1:] == ["estimated", "tolerance"], printed
