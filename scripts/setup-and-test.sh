#!/usr/bin/env bash
# forge: install the Debian dependencies (when run as root and any is missing) and, in a virtual
# environment in the build folder, the Python packages the Python module needs (nanobind, NumPy, pytest,
# from PyPI); configure in build/, build everything (the Python module included) and run the whole test
# suite (ctest: the C++ tests and python/tests). This is README.md's test command and what .ci/run calls.
#
#   bash scripts/setup-and-test.sh [extra cmake configure arguments, e.g. -DFORGE_CUDA=OFF, -DFORGE_PYTHON=OFF]
#
# Environment: FORGE_BUILD_DIR (default <repo>/build), FORGE_CTEST_JOBS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FORGE_BUILD_DIR:-$ROOT/build}"
CTEST_JOBS="${FORGE_CTEST_JOBS:-2}"

# shellcheck source=scripts/install-deps.sh
source "$ROOT/scripts/install-deps.sh"
forge_install_deps

PYTHON_ARGS=()
if [[ " $* " != *" -DFORGE_PYTHON=OFF "* ]]; then
    forge_python_env "$BUILD_DIR/python-env"
    PYTHON_ARGS=(-DFORGE_PYTHON=ON "-DPython_EXECUTABLE=$BUILD_DIR/python-env/bin/python")
fi

echo "== configure ($BUILD_DIR)"
cmake -S "$ROOT" -B "$BUILD_DIR" "${PYTHON_ARGS[@]}" "$@"
echo "== build (-j$(nproc))"
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "== test"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$CTEST_JOBS"
