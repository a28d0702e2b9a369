#!/usr/bin/env bash
# forge's main job (until the command-line reconstruction lands): install the Debian dependencies
# if missing, build the library and apps/gdft_example, and run it. It builds a Gdft/GdftR2 on a 64x64
# Shepp-Logan phantom with a spiral trajectory and a smooth field map and prints forward/adjoint
# timings and errors against float64.
#
#   bash scripts/setup-and-run-example.sh [extra cmake configure arguments]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${FORGE_BUILD_DIR:-$ROOT/build}"

# shellcheck source=scripts/install-deps.sh
source "$ROOT/scripts/install-deps.sh"
forge_install_deps

cmake -S "$ROOT" -B "$BUILD_DIR" "$@"
cmake --build "$BUILD_DIR" --target gdft_example -j"$(nproc)"
"$BUILD_DIR/apps/gdft_example"
