#!/usr/bin/env bash
# forge's main job, from a fresh Debian 12 machine: install the Debian dependencies if missing, build
# forge-recon and run its demo. The demo synthesises a phantom, 8 coil maps, a spiral trajectory and a
# field map, simulates data with the exact Gdft, reconstructs with and without field correction, and
# writes NIfTI + PNG images and the simulated ISMRMRD file into ./forge_demo/ (created when missing:
# demo_*.nii, demo_*.png, demo.h5), and prints NRMSE/PSNR and timings (see docs/forge-recon.md).
#
#   bash scripts/setup-and-run-demo.sh [forge-recon options, e.g. -o PREFIX]
# It and scripts/setup-and-test.sh share build/ and may run in either order, any number of times.
# Environment: FORGE_BUILD_DIR (default <repo>/build), FORGE_CMAKE_ARGS (extra configure arguments).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FORGE_BUILD_DIR:-$ROOT/build}"

# shellcheck source=scripts/install-deps.sh
source "$ROOT/scripts/install-deps.sh"
forge_install_deps

# shellcheck disable=SC2086
cmake -S "$ROOT" -B "$BUILD_DIR" ${FORGE_CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" --target forge-recon -j"$(nproc)"
"$BUILD_DIR/apps/forge-recon" --demo "$@"
