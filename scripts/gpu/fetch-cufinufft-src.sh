#!/usr/bin/env bash
# Makes .gpu-deps/finufft-src.tar.gz for scripts/gpu/run-cufinufft-peer.sh (the GPU machine has no network,
# and FINUFFT's CMake fetches CPM.cmake and POET at configure time). Run where clones of the public
# repositories flatironinstitute/finufft, flatironinstitute/poet and cpm-cmake/CPM.cmake exist:
#   bash scripts/gpu/fetch-cufinufft-src.sh FINUFFT_GIT POET_GIT CPM_GIT
# (each a git directory or work tree). The tarball holds finufft/ (HEAD, without docs/, matlab/, fortran/,
# tutorial/; test/ and perftest/ stay), poet/ (tag v0.0.1, the version FINUFFT's CMake asks for) and
# cache/cpm/CPM_0.43.1.cmake (CPM.cmake's cmake/CPM.cmake), about 0.7 MB.
set -euo pipefail
[ $# -eq 3 ] || { sed -n 2,9p "$0"; exit 1; }
FIN=$1 POET=$2 CPM=$3
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
mkdir -p "$T/finufft" "$T/poet" "$T/cache/cpm" .gpu-deps
git -C "$FIN" archive HEAD | tar -x -C "$T/finufft" --exclude=docs --exclude=matlab --exclude=fortran --exclude=tutorial
git -C "$POET" archive v0.0.1 | tar -x -C "$T/poet"
git -C "$CPM" show HEAD:cmake/CPM.cmake > "$T/cache/cpm/CPM_0.43.1.cmake"
tar -czf .gpu-deps/finufft-src.tar.gz -C "$T" finufft poet cache
rm -rf "$T"
ls -l .gpu-deps/finufft-src.tar.gz
