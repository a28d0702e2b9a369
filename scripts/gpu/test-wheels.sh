#!/usr/bin/env bash
# Run on a machine with an NVIDIA GPU and no package index, from the project root, after scripts/gpu/fetch-deps.sh
# filled .gpu-deps/ elsewhere (the Debian packages, and in .gpu-deps/wheel-build the build tools and pytest as
# wheels):
#   bash scripts/gpu/test-wheels.sh [LOGDIR]
# Builds the CUDA wheel with the machine's nvcc for its python3 (cp312-abi3 from CPython 3.12 on) through
# scripts/python/build-wheels.sh, repairs it with auditwheel (the unpacked Debian libraries bundled), installs it
# into a fresh venv (--system-site-packages: the machine's NumPy, PyTorch, CuPy and their nvidia-* libraries) and
# runs python/tests there, the GPU cases (CuPy, PyTorch) included, from build/wheel-test-cuda-TAG, outside the
# source tree's package (scripts/python/test-wheel.sh). Logs go to LOGDIR (default: $OUT if set, else
# ./gpu-logs); the wheel is copied there. FORGE_GPU_WHEEL_DRY_RUN=1: everything up to the build, then the
# commands it would run.
# Environment: FORGE_WHEEL_CUDA_ARCHITECTURES (build-wheels.sh's default: 80-real;90a-real;90-virtual),
# FORGE_WHEEL_JOBS (default: the cores), FORGE_WHEEL_PYTHON (default python3).
set -uo pipefail
cd "$(dirname "$0")/../.."
LOG=${1:-${OUT:-$PWD/gpu-logs}}
mkdir -p "$LOG"
step() { echo; echo "=== $* ($(date +%T))"; }
dry=${FORGE_GPU_WHEEL_DRY_RUN:-0}
python=${FORGE_WHEEL_PYTHON:-python3}

ls .gpu-deps/wheel-build/*.whl > /dev/null 2>&1 || { echo "no .gpu-deps/wheel-build: run scripts/gpu/fetch-deps.sh"; exit 1; }
# shellcheck source=scripts/gpu/deps-env.sh
source scripts/gpu/deps-env.sh
step "unpack .gpu-deps into $DEPS (the library's and Forge::IO's Debian packages)"
if [ "$dry" = 1 ]; then
  echo "(dry run) forge_gpu_unpack_deps; forge_gpu_unpack_app_deps"
else
  forge_gpu_unpack_deps
  forge_gpu_unpack_app_deps || exit 1
fi

forge_gpu_pick_cxx  # the system g++ where the default one links libstdc++ statically (deps-env.sh)
[ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH

step "machine"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv 2>&1
  "$python" -V; command -v nvcc && nvcc --version | tail -2; cmake --version | head -1; ${CXX:-g++} --version | head -1
  "$python" -c "import numpy; print('numpy', numpy.__version__)" 2>&1
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" 2>&1 | tail -1
  "$python" -c "import cupy; print('cupy', cupy.__version__)" 2>&1 | tail -1
  "$python" -m pip list 2>/dev/null | grep -Ei "^nvidia-(cuda-runtime|cufft)" ; } | tee "$LOG/wheel-machine.txt"

# No package index: the tools and pytest from the carried wheels; the Debian libraries through CMake's prefix
# path (configure) and LD_LIBRARY_PATH (auditwheel finds them there and bundles them).
export FORGE_WHEEL_FIND_LINKS=$PWD/.gpu-deps/wheel-build
# The machine's NumPy, PyTorch, CuPy and their nvidia-* libraries wherever its python3 keeps them (a python3 that is
# itself a venv passes only its base interpreter's site to venvs made with --system-site-packages): forge_make_venv
# puts these folders in the new venvs' sys.path (a .pth file), so they import them and pip counts them as installed.
machine_site=$("$python" - <<'PY' 2>/dev/null
import importlib, os
dirs = []
for name in ("numpy", "torch", "cupy"):
    try:
        d = os.path.dirname(os.path.dirname(importlib.import_module(name).__file__))
    except Exception:
        continue
    if d not in dirs:
        dirs.append(d)
print(":".join(dirs))
PY
)
export FORGE_WHEEL_MACHINE_SITE=$machine_site
export FORGE_WHEEL_PYTHONS=$python FORGE_WHEEL_JOBS=${FORGE_WHEEL_JOBS:-$(nproc)}
export CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$DEPS/usr -DARMADILLO_INCLUDE_DIR=$DEPS/usr/include \
-DARMADILLO_LIBRARY=$DEPS/usr/lib/libarmadillo.so"
if [ "$dry" = 1 ]; then
  step "(dry run) would run"
  echo "FORGE_WHEEL_FIND_LINKS=$FORGE_WHEEL_FIND_LINKS FORGE_WHEEL_PYTHONS=$FORGE_WHEEL_PYTHONS" \
       "FORGE_WHEEL_JOBS=$FORGE_WHEEL_JOBS CMAKE_ARGS='$CMAKE_ARGS'"
  echo "scripts/python/build-wheels.sh cuda   (tag $(bash -c 'source scripts/python/wheel-env.sh; forge_wheel_tag "$1"' _ "$python"))"
  echo "scripts/python/build-wheels.sh test-cuda"
  exit 0
fi

status=0
step "CUDA wheel (scripts/python/build-wheels.sh cuda)"
scripts/python/build-wheels.sh cuda > "$LOG/wheel-build.log" 2>&1 || status=1
grep -E "^== |built in|forge: (CUDA|Python|Forge::IO)|^-rw|Error|error:" "$LOG/wheel-build.log" | tail -30
if [ $status = 0 ]; then
  cp dist/cuda/*.whl "$LOG/"
  step "fresh venv, python/tests with the GPU cases (scripts/python/build-wheels.sh test-cuda)"
  scripts/python/build-wheels.sh test-cuda > "$LOG/wheel-test.log" 2>&1 || status=1
  grep -E "^== |passed|failed|error" "$LOG/wheel-test.log" | tail -25
  cp build/wheel-test-cuda-*/{ldd.txt,loaded.txt} "$LOG/" 2>/dev/null
fi
echo; echo "test-wheels: status $status (logs in $LOG)"
exit $status
