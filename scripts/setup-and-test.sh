#!/usr/bin/env bash
# forge: install the Debian dependencies (when run as root and any is missing), configure in build/,
# build everything and run the whole test suite (ctest). This is README.md's test command and what
# .ci/run calls.
#
#   bash scripts/setup-and-test.sh [extra cmake configure arguments, e.g. -DFORGE_CUDA=OFF]
#
# Environment: FORGE_BUILD_DIR (default <repo>/build), FORGE_CTEST_JOBS (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FORGE_BUILD_DIR:-$ROOT/build}"
CTEST_JOBS="${FORGE_CTEST_JOBS:-2}"

# shellcheck source=scripts/install-deps.sh
source "$ROOT/scripts/install-deps.sh"
forge_install_deps

echo "== configure ($BUILD_DIR)"
cmake -S "$ROOT" -B "$BUILD_DIR" "$@"
echo "== build (-j$(nproc))"
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "== test"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$CTEST_JOBS"
