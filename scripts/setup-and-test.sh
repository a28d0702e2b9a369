#!/usr/bin/env bash
# forge: install the Debian dependencies (when run as root and any is missing) and, in a virtual
# environment in the build folder, the Python packages the Python module needs (nanobind, NumPy, pytest,
# from PyPI); configure in build/, build everything (the Python module included) and run the whole test
# suite (ctest: the C++ tests and python/tests). This is README.md's test command and what .ci/run calls.
# It and scripts/setup-and-run-demo.sh share build/ and may run in either order, any number of times.
#
#   bash scripts/setup-and-test.sh [extra cmake configure arguments, e.g. -DFORGE_CUDA=OFF, -DFORGE_PYTHON=OFF]
#
# Environment: FORGE_BUILD_DIR (default <repo>/build), FORGE_CTEST_JOBS (default 2), FORGE_PYTHON_ENV (the
# virtual environment, default <build dir>/python-env).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FORGE_BUILD_DIR:-$ROOT/build}"
CTEST_JOBS="${FORGE_CTEST_JOBS:-2}"
PYTHON_ENV="${FORGE_PYTHON_ENV:-$BUILD_DIR/python-env}"

# shellcheck source=scripts/install-deps.sh
source "$ROOT/scripts/install-deps.sh"
forge_install_deps

PYTHON_ARGS=()
if [[ " $* " != *" -DFORGE_PYTHON=OFF "* ]]; then
    forge_python_env "$PYTHON_ENV"
    PYTHON_ARGS=(-DFORGE_PYTHON=ON "-DPython_EXECUTABLE=$PYTHON_ENV/bin/python")
fi

echo "== configure ($BUILD_DIR)"
cmake -S "$ROOT" -B "$BUILD_DIR" "${PYTHON_ARGS[@]}" "$@"
echo "== build (-j$(nproc))"
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "== test"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$CTEST_JOBS"
