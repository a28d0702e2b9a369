#!/usr/bin/env bash
# forge's GPU Gnufft against cufinufft on a machine with an NVIDIA GPU and no network, from the project root:
#   bash scripts/gpu/run-cufinufft-peer.sh [LOGDIR]
# Needs in .gpu-deps/ (ignored by git, carried along): the Debian packages of scripts/gpu/fetch-deps.sh and
# finufft-src.tar.gz, FINUFFT's source with what its CMake would download (made by
# scripts/gpu/fetch-cufinufft-src.sh on a machine with network). Builds, under /tmp:
#   1. forge's library with CUDA (sm_90), installed to /tmp/forge-peer-install;
#   2. cufinufft only (FINUFFT_USE_CPU=OFF, shared, sm_90) from the tarball;
#   3. scripts/gpu/cufinufft-peer/bench_nufft_cufinufft against both,
# then runs it (2D 256x256 / 131072 and 3D 128x128x64 / 2M samples, uniform and spiral points, tolerances
# 1e-3, 1e-4, 1e-5, forward and adjoint, plan times (forge's split into the upload of k, the device sort and the
# rest; cufinufft's makeplan + setpts), each library's plan plus a 10-iteration normal loop, errors vs exact float64
# sums). Logs in LOGDIR (default
# $OUT if set, else ./gpu-logs). Environment: FORGE_PEER_ARGS (e.g. "--reps 10 --quick"), FORGE_GPU_ARCH
# (default 90), FORGE_PEER_JOBS (default nproc), FORGE_PEER_FORGE_BUILD (a CUDA build tree of forge with
# everything it installs built, e.g. .gpu-build after run-gpu-suite.sh: installed instead of step 1).
# Not part of forge's build or CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
LOG=${1:-${OUT:-$PWD/gpu-logs}}
mkdir -p "$LOG"
ARCH=${FORGE_GPU_ARCH:-90}
J=${FORGE_PEER_JOBS:-$(nproc)}
# shellcheck source=scripts/gpu/deps-env.sh
source scripts/gpu/deps-env.sh
step() { echo; echo "=== $* ($(date +%T))"; }
[ -f .gpu-deps/finufft-src.tar.gz ] || { echo "missing .gpu-deps/finufft-src.tar.gz (scripts/gpu/fetch-cufinufft-src.sh)"; exit 1; }

step "unpack .gpu-deps into $DEPS"
forge_gpu_unpack_deps
GEN=""
command -v ninja >/dev/null && GEN="-G Ninja"

if [ -n "${FORGE_PEER_FORGE_BUILD:-}" ]; then
  # A forge build tree made already (e.g. run-gpu-suite.sh's .gpu-build): install it instead of building again.
  step "forge library from $FORGE_PEER_FORGE_BUILD -> /tmp/forge-peer-install"
  cmake --install "$FORGE_PEER_FORGE_BUILD" --prefix /tmp/forge-peer-install > "$LOG/peer-forge-install.log" 2>&1 ||
    { tail -20 "$LOG/peer-forge-install.log"; exit 1; }
else
  step "forge library (CUDA, sm_$ARCH) -> /tmp/forge-peer-install"
  cmake -S . -B /tmp/forge-peer-build $GEN -DCMAKE_BUILD_TYPE=Release -DFORGE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$ARCH \
    -DFORGE_BUILD_APPS=OFF -DFORGE_BUILD_IO=OFF -DFORGE_BUILD_BENCHMARKS=OFF -DFORGE_BUILD_TESTS=OFF -DFORGE_PYTHON=OFF \
    -DCMAKE_PREFIX_PATH=$DEPS/usr -DARMADILLO_INCLUDE_DIR=$DEPS/usr/include \
    -DARMADILLO_LIBRARY=$DEPS/usr/lib/libarmadillo.so -DCMAKE_INSTALL_PREFIX=/tmp/forge-peer-install \
    > "$LOG/peer-forge-configure.log" 2>&1 || { tail -30 "$LOG/peer-forge-configure.log"; exit 1; }
  cmake --build /tmp/forge-peer-build -j"$J" --target ForgeCommon > "$LOG/peer-forge-build.log" 2>&1 ||
    { grep -E "error" "$LOG/peer-forge-build.log" | head -30; exit 1; }
  cmake --install /tmp/forge-peer-build > "$LOG/peer-forge-install.log" 2>&1 ||
    { tail -20 "$LOG/peer-forge-install.log"; exit 1; }
fi

step "cufinufft (CUDA only, shared, sm_$ARCH)"
rm -rf /tmp/peer && mkdir -p /tmp/peer && tar -xzf .gpu-deps/finufft-src.tar.gz -C /tmp/peer
cmake -S /tmp/peer/finufft -B /tmp/cufb $GEN -DCMAKE_BUILD_TYPE=Release -DFINUFFT_USE_CPU=OFF -DFINUFFT_USE_CUDA=ON \
  -DFINUFFT_STATIC_LINKING=OFF -DCMAKE_CUDA_ARCHITECTURES=$ARCH -DCPM_SOURCE_CACHE=/tmp/peer/cache \
  -DCPM_POET_SOURCE=/tmp/peer/poet > "$LOG/peer-cufinufft-configure.log" 2>&1 ||
  { tail -30 "$LOG/peer-cufinufft-configure.log"; exit 1; }
cmake --build /tmp/cufb -j"$J" --target cufinufft > "$LOG/peer-cufinufft-build.log" 2>&1 ||
  { grep -E "error" "$LOG/peer-cufinufft-build.log" | head -30; exit 1; }
CUFLIB=$(find /tmp/cufb -name 'libcufinufft*.so' | head -1)
[ -n "$CUFLIB" ] || { echo "libcufinufft.so not found under /tmp/cufb"; exit 1; }
echo "cufinufft: $CUFLIB (FINUFFT $(cd /tmp/peer/finufft && grep -m1 -oE 'VERSION [0-9.]+' CMakeLists.txt || true))"

step "bench_nufft_cufinufft"
cmake -S scripts/gpu/cufinufft-peer -B /tmp/peer-bench $GEN -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="/tmp/forge-peer-install;$DEPS/usr" -DCUFINUFFT_INCLUDE_DIR=/tmp/peer/finufft/include \
  -DCUFINUFFT_LIBRARY="$CUFLIB" > "$LOG/peer-bench-configure.log" 2>&1 || { tail -30 "$LOG/peer-bench-configure.log"; exit 1; }
cmake --build /tmp/peer-bench -j"$J" > "$LOG/peer-bench-build.log" 2>&1 || { grep -E "error" "$LOG/peer-bench-build.log" | head -30; exit 1; }
export LD_LIBRARY_PATH=/tmp/forge-peer-install/lib:/tmp/forge-peer-install/lib64:$(dirname "$CUFLIB"):$LD_LIBRARY_PATH
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv | tee "$LOG/peer-gpu.txt"
/tmp/peer-bench/bench_nufft_cufinufft ${FORGE_PEER_ARGS:-} | tee "$LOG/bench_nufft_cufinufft.txt"
echo "run-cufinufft-peer: done (logs in $LOG)"
