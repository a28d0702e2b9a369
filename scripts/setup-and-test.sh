#!/usr/bin/env bash
# forge: install the Debian dependencies (when run as root and any is missing) and, in a virtual
# environment in the build folder, the Python packages the Python module needs (nanobind, NumPy, pytest,
# from PyPI); configure in build/, build everything (the Python module included) and run the whole test
# suite (ctest: the C++ tests and python/tests). This is README.md's test command and what .ci/run calls.
# Before the tests it fetches the real scanner data python/tests/test_real_data.py reads, once, into a cache
# (scripts/real-data/fetch-real-data.sh; skipped with a message without network).
# It and scripts/setup-and-run-demo.sh share build/ and may run in either order, any number of times.
#
#   bash scripts/setup-and-test.sh [extra cmake configure arguments, e.g. -DFORGE_CUDA=OFF, -DFORGE_PYTHON=OFF]
#
# Environment: FORGE_BUILD_DIR (default <repo>/build), FORGE_CTEST_JOBS (default 2), FORGE_PYTHON_ENV (the
# virtual environment, default <build dir>/python-env), FORGE_DATA_CACHE (the real data's cache, default
# ~/.cache/forge-real-data), FORGE_REAL_DATA=0 (leave the real-data step out).
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
if [ ${#PYTHON_ARGS[@]} -gt 0 ] && [ "${FORGE_REAL_DATA:-1}" != 0 ]; then
    # Real scanner data for python/tests/test_real_data.py, converted once into the cache
    # (${FORGE_DATA_CACHE:-$HOME/.cache/forge-real-data}; about 10 s the first time, then nothing to do).
    # Without PyPI the brain and 3D phantom tests report SKIPPED; FORGE_REAL_DATA=0 leaves the step out.
    echo "== real data (scripts/real-data/fetch-real-data.sh)"
    real_data_rc=0
    PYTHON="$PYTHON_ENV/bin/python" bash "$ROOT/scripts/real-data/fetch-real-data.sh" || real_data_rc=$?
    case $real_data_rc in
        0) ;;
        77) echo "== real data: PyPI unreachable; the tests that need the gpunufft data will be skipped" ;;
        *) echo "warning: scripts/real-data/fetch-real-data.sh failed (exit $real_data_rc); the tests that need its data will be skipped" >&2 ;;
    esac
fi
echo "== test"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$CTEST_JOBS"
