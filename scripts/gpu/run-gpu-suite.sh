#!/usr/bin/env bash
# Run on a machine with an NVIDIA GPU (e.g. an H100) from the project root, after
# scripts/gpu/fetch-deps.sh filled .gpu-deps/ elsewhere:
#   bash scripts/gpu/run-gpu-suite.sh [LOGDIR]
# Unpacks the Debian packages into /opt/deps (never into /), configures with CUDA for the default
# architectures (the visible GPUs': sm_90a on H100/H200), builds (the library, tests and benchmarks; apps/
# needs ISMRMRD and HDF5: FORGE_GPU_BUILD_APPS=ON builds them with the packages fetch-deps.sh put in
# .gpu-deps/apps), runs every test (CPU and GPU), compute-sanitizer memcheck and racecheck on the GPU tests,
# and the benchmarks. Step "ptx" builds the library and GPU tests again for each of FORGE_GPU_PTX_ARCHS
# (default 80-virtual: compute_80 PTX, which the driver compiles for this GPU, as on GPUs without code of
# their own in the binary; the mma.sync coil-batch kernel instead of wgmma) in $B-<arch> and runs the GPU
# tests there. The Python module is built for the machine's python3 when it has nanobind (the GPU image
# does; FORGE_GPU_PYTHON=OFF skips it); step "python" runs its GPU tests (CuPy and PyTorch) verbosely,
# benchmarks/bench_python_gdft.py (Python against C++ on one Gdft) and benchmarks/bench_gdft_torch_peer.py
# (Gdft and its coil batches against the same DFT written in PyTorch). Logs go to LOGDIR (default: $OUT if
# set, else ./gpu-logs). Exit status: non-zero if any test or sanitizer run failed.
# Environment: FORGE_GPU_STEPS (unset: "test ptx python sanitize bench"; any subset, run in that order; empty: build
# only; "gpu": the GPU test binary without the CPU tests of "test"; "mpi": scripts/gpu/bench-mpi-recon.sh, arguments
# FORGE_MPI_BENCH_ARGS, default "256 10 gpu"),
# FORGE_GPU_BUILD_DIR (default $B), FORGE_SANITIZER_FILTER / FORGE_BENCH_ARGS (see docs/gpu.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
LOG=${1:-${OUT:-$PWD/gpu-logs}}
mkdir -p "$LOG"
# shellcheck source=scripts/gpu/deps-env.sh
source scripts/gpu/deps-env.sh
status=0
STEPS=" ${FORGE_GPU_STEPS-test ptx python sanitize bench} "  # set but empty: configure and build only
B=${FORGE_GPU_BUILD_DIR:-.gpu-build}
has() { [[ "$STEPS" == *" $1 "* ]]; }
step() { echo; echo "=== $* ($(date +%T))"; }

step "unpack .gpu-deps into $DEPS"
forge_gpu_unpack_deps
if [ "${FORGE_GPU_BUILD_APPS:-OFF}" = ON ]; then
  forge_gpu_unpack_app_deps || exit 1
fi

# nanobind and pytest for the Python module: the machine's own when python3 has them, else the wheels
# fetch-deps.sh carried (pure Python: unpacked, not installed).
if ! python3 -c "import nanobind, pytest" 2>/dev/null && ls .gpu-deps/wheels/*.whl >/dev/null 2>&1; then
  step "unpack .gpu-deps/wheels into $DEPS/python"
  for w in .gpu-deps/wheels/*.whl; do python3 -m zipfile -e "$w" "$DEPS/python"; done
  export PYTHONPATH=$DEPS/python${PYTHONPATH:+:$PYTHONPATH}
fi

forge_gpu_pick_cxx  # the system g++ where the default one links libstdc++ statically (deps-env.sh)
# A build folder configured with another compiler keeps it in its cache: start that one afresh.
if [ -n "${CXX:-}" ] && [ -f "$B/CMakeCache.txt" ] && ! grep -qx "CMAKE_CXX_COMPILER:[A-Z]*=$CXX" "$B/CMakeCache.txt"; then
  rm -rf "$B/CMakeCache.txt" "$B/CMakeFiles"
fi

step "configure (CUDA, default architectures: the visible GPUs')"
nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv | tee "$LOG/gpu.txt"
DEPS_ARGS=(-DCMAKE_PREFIX_PATH=$DEPS/usr -DARMADILLO_INCLUDE_DIR=$DEPS/usr/include
           -DARMADILLO_LIBRARY=$DEPS/usr/lib/libarmadillo.so -DCatch2_DIR=$DEPS/usr/lib/cmake/Catch2)
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFORGE_CUDA=ON "${DEPS_ARGS[@]}" \
  -DFORGE_BUILD_APPS=${FORGE_GPU_BUILD_APPS:-OFF} -DFORGE_BUILD_BENCHMARKS=ON \
  -DFORGE_PYTHON=${FORGE_GPU_PYTHON:-AUTO} -DPython_EXECUTABLE="$(command -v python3)" \
  > "$LOG/configure.log" 2>&1 || { tail -40 "$LOG/configure.log"; exit 1; }
grep -E "forge: CUDA" "$LOG/configure.log"

step "build"
cmake --build $B -j"$(nproc)" > "$LOG/build.log" 2>&1 || { grep -E "error" "$LOG/build.log" | head -40; exit 1; }

if has test; then
  step "ctest (CPU and GPU tests)"
  (cd $B && ctest --output-on-failure -j4 --timeout 900) > "$LOG/ctest.log" 2>&1 || status=1
  tail -15 "$LOG/ctest.log"
fi
# The GPU test binary alone, verbose: also step "gpu" without "test", where the CPU tests (CI runs them on every
# change) would take the lease's minutes (over 5 on a 16-core host).
if has test || has gpu; then
  step "GPU tests, verbose"
  $B/forge/Tests/forge_gpu_tests -d yes > "$LOG/gpu-tests.log" 2>&1 || status=1
  grep -E "passed|failed|assertions" "$LOG/gpu-tests.log" | tail -3
fi

# The GPU tests of builds without this GPU's own code: PTX for an older architecture, which the driver
# compiles at load time, runs the kernels a GPU of that generation runs (80-virtual: mma.sync, not wgmma).
if has ptx; then
  for arch in ${FORGE_GPU_PTX_ARCHS:-80-virtual}; do
    step "GPU tests of a build for $arch only ($B-$arch)"
    cmake -S . -B "$B-$arch" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFORGE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      "${DEPS_ARGS[@]}" -DFORGE_BUILD_APPS=OFF -DFORGE_BUILD_BENCHMARKS=OFF -DFORGE_BUILD_IO=OFF -DFORGE_PYTHON=OFF \
      > "$LOG/configure-$arch.log" 2>&1 &&
      cmake --build "$B-$arch" -j"$(nproc)" --target forge_gpu_tests > "$LOG/build-$arch.log" 2>&1 ||
      { tail -40 "$LOG/configure-$arch.log" "$LOG/build-$arch.log"; status=1; continue; }
    # The coil-batch kernel this build runs here (the INFO of the kernel test, shown with -s).
    "$B-$arch/forge/Tests/forge_gpu_tests" "[mma]" -s 2>&1 | grep -m1 "fastest batch kernel here" | sed 's/^ *//'
    "$B-$arch/forge/Tests/forge_gpu_tests" -d yes > "$LOG/gpu-tests-$arch.log" 2>&1 || status=1
    grep -E "passed|failed|assertions" "$LOG/gpu-tests-$arch.log" | tail -3
  done
fi

if has python; then
  step "Python: GPU tests (CuPy, PyTorch), Python against C++ on one Gdft, Gdft against PyTorch"
  grep -E "forge: Python" "$LOG/configure.log"
  if [ -d $B/python/forge ]; then
    PYTHONPATH=$B/python${PYTHONPATH:+:$PYTHONPATH} python3 -m pytest -v -rs -p no:cacheprovider -m gpu python/tests \
      > "$LOG/python-gpu-tests.log" 2>&1 || status=1
    tail -4 "$LOG/python-gpu-tests.log"
    for lib in cupy torch; do
      PYTHONPATH=$B/python${PYTHONPATH:+:$PYTHONPATH} python3 benchmarks/bench_python_gdft.py --library $lib \
        > "$LOG/bench_python_gdft_$lib.txt" 2>&1 || status=1
      cat "$LOG/bench_python_gdft_$lib.txt"
    done
    PYTHONPATH=$B/python${PYTHONPATH:+:$PYTHONPATH} python3 benchmarks/bench_gdft_torch_peer.py \
      > "$LOG/bench_gdft_torch_peer.txt" 2>&1 || status=1
    cat "$LOG/bench_gdft_torch_peer.txt"
  else
    echo "the Python module was not built (configure.log says why)"
    status=1
  fi
fi

has sanitize && for tool in memcheck racecheck; do
  step "compute-sanitizer --tool $tool on the GPU tests"
  compute-sanitizer --tool $tool --error-exitcode 3 $B/forge/Tests/forge_gpu_tests \
    ${FORGE_SANITIZER_FILTER:-} > "$LOG/sanitizer-$tool.log" 2>&1 || status=1
  tail -4 "$LOG/sanitizer-$tool.log"
done

has bench && step "benchmarks"
has bench && for b in $B/benchmarks/bench_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  echo "--- $name"
  "$b" ${FORGE_BENCH_ARGS:-} > "$LOG/$name.txt" 2>&1 || status=1
  tail -14 "$LOG/$name.txt"
done
# forge-recon over MPI ranks, one GPU each: needs forge-recon (FORGE_GPU_BUILD_APPS=ON where ISMRMRD, HDF5 and
# CLI11 are installed) built with MPI, and mpirun. Not in the default steps: FORGE_GPU_STEPS="mpi".
if has mpi; then
  step "forge-recon, 16 frames on 1 and 2 MPI ranks (scripts/gpu/bench-mpi-recon.sh)"
  if [ -x $B/apps/forge-recon ] && grep -q "forge: MPI for forge-recon ON" "$LOG/configure.log"; then
    bash scripts/gpu/bench-mpi-recon.sh $B/apps/forge-recon ${FORGE_MPI_BENCH_ARGS:-256 10 gpu} \
      > "$LOG/bench-mpi-recon.txt" 2>&1 || status=1
    cat "$LOG/bench-mpi-recon.txt"
  else
    echo "skipped: forge-recon was not built with MPI (configure.log: $(grep -E 'forge: (MPI|Forge::IO)|forge-recon not built' "$LOG/configure.log" | xargs))"
  fi
fi
echo; echo "run-gpu-suite: status $status (logs in $LOG)"
exit $status
