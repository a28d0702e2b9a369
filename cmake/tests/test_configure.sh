#!/usr/bin/env bash
# Configures forge (the library alone: no tests, programs or Python unless a case needs them) in scratch
# folders and checks what the configure decides:
#   cuda_auto   FORGE_CUDA=AUTO with nvidia-smi listing no GPU: the CUDA path is off, and the summary says
#               so and why (with nvcc: "nvcc found ... but no GPU visible").
#   cuda_on     (needs nvcc) FORGE_CUDA=ON without a GPU: on, the portable architecture list (every code
#               path, oldest GPU nvcc supports, compute_90 PTX), no -Xptxas=-v in the compile flags unless
#               FORGE_CUDA_PTXAS_VERBOSE=ON.
#   nanobind    (needs PYTHON with nanobind) a build folder whose cache holds nanobind_DIR-NOTFOUND, as a
#               configure with a Python without nanobind leaves it, configures with PYTHON and builds the
#               Python module.
#   fftw        a Python environment's fftw3.h on CMAKE_PREFIX_PATH (where pip install puts site-packages) is
#               not taken for FFTW's.
#
#   test_configure.sh SOURCE_DIR WORK_DIR CASE [PYTHON [BUILD_DIR]]
# BUILD_DIR: the build whose compilers and dependency locations (CMAKE_PREFIX_PATH, Armadillo: set by hand on
# machines without the Debian packages) the scratch configures take.
# Exit status 0 when the case holds, 1 with the reason otherwise, 77 when the case cannot run here.
set -uo pipefail
SRC=$1
WORK=$2
CASE=$3
PYTHON=${4:-}
PARENT=${5:-}
INHERITED=()
PREFIX_PATH=""
if [ -n "$PARENT" ] && [ -f "$PARENT/CMakeCache.txt" ]; then
    for var in CMAKE_CXX_COMPILER CMAKE_C_COMPILER ARMADILLO_INCLUDE_DIR ARMADILLO_LIBRARY; do
        val=$(sed -n "s/^$var:[A-Z]*=//p" "$PARENT/CMakeCache.txt")
        [ -n "$val" ] && [[ $val != *-NOTFOUND ]] && INHERITED+=("-D$var=$val")
    done
    PREFIX_PATH=$(sed -n "s/^CMAKE_PREFIX_PATH:[A-Z]*=//p" "$PARENT/CMakeCache.txt")
fi
MINIMAL=(-DFORGE_BUILD_TESTS=OFF -DFORGE_BUILD_APPS=OFF -DFORGE_BUILD_BENCHMARKS=OFF -DFORGE_BUILD_IO=OFF
         -DFORGE_MPI=OFF "${INHERITED[@]}")
[ -n "$PREFIX_PATH" ] && MINIMAL+=("-DCMAKE_PREFIX_PATH=$PREFIX_PATH")
rm -rf "$WORK"
mkdir -p "$WORK"

fail() {
    echo "FAIL ($CASE): $*" >&2
    exit 1
}
# configure DIR LOG ARGS...: cmake's output goes to LOG; fails the test when cmake fails.
configure() {
    local dir=$1 log=$2
    shift 2
    cmake -S "$SRC" -B "$dir" "$@" >"$log" 2>&1 || { cat "$log"; fail "cmake $* failed (log above)"; }
}
# A stand-in nvidia-smi that finds no GPU, as the real one does on a machine without one (exit 6).
NO_GPU_SMI=$WORK/nvidia-smi-no-gpu
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$NO_GPU_SMI"
chmod +x "$NO_GPU_SMI"
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)

case $CASE in
cuda_auto)
    configure "$WORK/b" "$WORK/log" "${MINIMAL[@]}" -DFORGE_PYTHON=OFF -DFORGE_CUDA=AUTO "-DFORGE_NVIDIA_SMI=$NO_GPU_SMI"
    line=$(grep "forge: CUDA path" "$WORK/log") || fail "the configure summary has no 'forge: CUDA path' line"
    echo "$line"
    [[ $line == *"CUDA path OFF (FORGE_CUDA=AUTO: "* ]] || fail "AUTO without a GPU: expected the CUDA path OFF with the reason"
    if [ -n "$NVCC" ]; then
        [[ $line == *"nvcc found"*"no GPU visible"*"-DFORGE_CUDA=ON"* ]] || fail "the reason does not name nvcc and the missing GPU"
    else
        [[ $line == *"no CUDA compiler"* ]] || fail "the reason does not say nvcc is missing"
    fi
    ! grep -q "^CMAKE_CUDA_COMPILER:" "$WORK/b/CMakeCache.txt" || fail "AUTO without a GPU enabled the CUDA language"
    ;;
cuda_on)
    [ -n "$NVCC" ] || { echo "no nvcc here: skipped"; exit 77; }
    configure "$WORK/b" "$WORK/log" "${MINIMAL[@]}" -DFORGE_PYTHON=OFF -DFORGE_CUDA=ON "-DFORGE_NVIDIA_SMI=$NO_GPU_SMI" \
        "-DCMAKE_CUDA_COMPILER=$NVCC"
    grep "forge: CUDA" "$WORK/log"
    grep -q "forge: CUDA path ON (FORGE_CUDA=ON" "$WORK/log" || fail "FORGE_CUDA=ON: the summary does not say the CUDA path is on"
    if "$NVCC" --list-gpu-code 2>/dev/null | grep -qx sm_70; then oldest=70; else oldest=75; fi
    want="architectures $oldest-real;80-real;90a-real;90-virtual (no GPU visible"
    grep -qF "$want" "$WORK/log" || fail "expected the default '$want', got: $(grep 'forge: CUDA ' "$WORK/log")"
    # The flags of every compile command (Makefiles: flags.make; Ninja: build.ninja), into FILE.
    flags() { find "$WORK/b" \( -name flags.make -o -name build.ninja \) -exec cat {} + >"$1"; }
    flags "$WORK/flags"
    grep -q -- "--expt-relaxed-constexpr" "$WORK/flags" || fail "no CUDA compile flags found in the build files"
    ! grep -q -- "-Xptxas=-v" "$WORK/flags" || fail "-Xptxas=-v is in the compile flags by default"
    configure "$WORK/b" "$WORK/log2" -DFORGE_CUDA_PTXAS_VERBOSE=ON
    flags "$WORK/flags2"
    grep -q -- "-Xptxas=-v" "$WORK/flags2" || fail "FORGE_CUDA_PTXAS_VERBOSE=ON did not add -Xptxas=-v"
    ;;
nanobind)
    [ -n "$PYTHON" ] && "$PYTHON" -m nanobind --cmake_dir >/dev/null 2>&1 || { echo "no Python with nanobind: skipped"; exit 77; }
    # The state a configure with a Python without nanobind leaves (scripts/setup-and-run-demo.sh's, with the
    # system python3, before scripts/setup-and-test.sh's with the virtual environment's).
    configure "$WORK/b" "$WORK/log1" "${MINIMAL[@]}" -DFORGE_CUDA=OFF -DFORGE_PYTHON=OFF -Dnanobind_DIR=nanobind_DIR-NOTFOUND
    grep -q "^nanobind_DIR:.*=nanobind_DIR-NOTFOUND$" "$WORK/b/CMakeCache.txt" || fail "the stale cache entry was not made"
    configure "$WORK/b" "$WORK/log2" -DFORGE_PYTHON=ON "-DPython_EXECUTABLE=$PYTHON"
    grep "forge: Python module" "$WORK/log2"
    grep -q "forge: Python module ON" "$WORK/log2" || fail "the Python module is not built after the stale nanobind_DIR"
    ;;
fftw)
    # A Python environment's site-packages with an fftw3.h of its own, as finufft's wheel installs it.
    decoy=$WORK/venv/lib/python3/site-packages
    mkdir -p "$decoy/include"
    echo '#error "not the FFTW forge links"' >"$decoy/include/fftw3.h"
    configure "$WORK/b" "$WORK/log" "${MINIMAL[@]}" -DFORGE_CUDA=OFF -DFORGE_PYTHON=OFF \
        "-DCMAKE_PREFIX_PATH=$decoy${PREFIX_PATH:+;$PREFIX_PATH}"
    found=$(sed -n 's/^FFTW3_INCLUDE_DIR:PATH=//p' "$WORK/b/CMakeCache.txt")
    echo "FFTW3_INCLUDE_DIR=$found"
    [ -n "$found" ] && [ -f "$found/fftw3.h" ] || fail "no fftw3.h found"
    [[ $found != "$decoy"* ]] || fail "fftw3.h taken from the Python environment ($found)"
    ;;
*)
    echo "test_configure.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
echo "ok ($CASE)"
