#!/usr/bin/env bash
# Installs a forge wheel into a fresh venv and tests it there with the build machine's libraries out of sight:
#   cpu   dist/cpu/*.whl + numpy, pytest, scipy, h5py; python/tests (not the GPU cases)
#   cuda  dist/cuda/*.whl, which brings NVIDIA's CUDA libraries from PyPI, + pytest, scipy, h5py; import it, ask
#         for the device, and run python/tests (the GPU cases too where there is a device)
# Out of sight: inside a private mount namespace (unshare, root) every system library the wheel bundles
# (Armadillo, BLAS/LAPACK, OpenBLAS, FFTW, HDF5, ISMRMRD, libgfortran, ...) is covered by an empty file and
# /usr/local/cuda* by an empty folder, so a library the wheel failed to bundle cannot load from there. Checks
# then that ldd resolves every library of the extension inside site-packages (or to the C and C++ runtimes
# the manylinux policy allows), and LD_DEBUG=libs shows where each came from (build/wheel-test-KIND/ld-debug.log).
# Usage: scripts/python/test-wheel.sh cpu|cuda [WHEEL]   (FORGE_WHEEL_PYTHON as in build-wheels.sh; WHEEL defaults to
# the one in dist/KIND for that interpreter's tag: cp312-abi3 from 3.12 on)
# FORGE_WHEEL_FIND_LINKS=DIR (scripts/python/wheel-env.sh): no package index: a fresh venv with
# --system-site-packages gets the wheel and pytest from DIR and NumPy, SciPy, h5py, PyTorch, CuPy and the nvidia-*
# packages from the interpreter's own site-packages. Where `unshare --mount` is not allowed (a container without
# CAP_SYS_ADMIN) nothing is hidden; LD_LIBRARY_PATH is unset all the same.
# FORGE_WHEEL_TEST_OFFLINE=1: no package index and no venv: the wheel alone (no dependencies) is installed into a
# folder put on that interpreter's path, which brings the rest from its own environment (NumPy, pytest, PyTorch
# and the nvidia-* packages PyTorch brings).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=scripts/python/wheel-env.sh
source "$root/scripts/python/wheel-env.sh"
kind=${1:?usage: test-wheel.sh cpu|cuda [WHEEL]}
python=${FORGE_WHEEL_PYTHON:-python3}
tag=$(forge_wheel_tag "$python")
whl=$(realpath "${2:-$(ls "$root"/dist/"$kind"/*-"$tag"-*.whl)}")
work=$root/build/wheel-test-$kind-$tag
venv=$work/venv

rm -rf "$work"
mkdir -p "$work"
cd "$work"  # not the repository root, whose forge/ folder (C++) is no Python package but could be taken for one
bin=$venv/bin
if [[ -n ${FORGE_WHEEL_TEST_OFFLINE:-} ]]; then
    echo "== $(basename "$whl") into $work/site for $python"
    "$python" -m pip install -q --no-index --no-deps --target "$work/site" "$whl"
    # A wrapper, not a link: a venv's interpreter must be started by its own path to be that venv's.
    bin=$work/bin
    mkdir -p "$bin"
    printf '#!/bin/sh\nPYTHONPATH=%s exec %s "$@"\n' "$work/site" "$(command -v "$python")" > "$bin/python"
    chmod +x "$bin/python"
elif [[ -n ${FORGE_WHEEL_FIND_LINKS:-} ]]; then
    echo "== fresh venv $venv (--system-site-packages) for $(basename "$whl"), packages from $FORGE_WHEEL_FIND_LINKS"
    forge_make_venv "$python" "$venv"
    # The CUDA wheel's nvidia-* dependencies: those of the interpreter's PyTorch where they satisfy it, else none
    # (forge/_cuda_libs.py then finds libcudart and libcufft wherever the loader does).
    forge_pip "$venv" "$whl" pytest || { echo "== installed without its dependencies"; forge_pip "$venv" --no-deps "$whl" pytest; }
elif [[ $kind == cpu ]]; then
    echo "== fresh venv $venv for $(basename "$whl")"
    forge_make_venv "$python" "$venv"
    forge_pip "$venv" "$whl" numpy pytest scipy h5py
else
    echo "== fresh venv $venv for $(basename "$whl")"
    forge_make_venv "$python" "$venv"
    forge_pip "$venv" "$whl" pytest scipy h5py
fi
"$bin/python" -m pip list 2>/dev/null | grep -Ei "forge|numpy|nvidia|scipy|pytest|h5py|torch" || true
site=$("$bin/python" -c "import os, forge; print(os.path.dirname(os.path.dirname(forge.__file__)))" 2>/dev/null \
       || "$bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")

# The system libraries to hide: their real files (the names are symbolic links to them).
hidden=$work/hidden.txt
for pattern in libarmadillo libopenblas libblas liblapack libarpack libsuperlu libfftw3 libhdf5 libismrmrd \
               libpugixml libpng16 libsz libaec libcurl libgfortran libquadmath libgomp; do
    for f in /usr/lib/x86_64-linux-gnu/"$pattern"*.so* /usr/lib/"$pattern"*.so* \
             /usr/lib/x86_64-linux-gnu/{openblas-pthread,blas,lapack}/"$pattern"*.so*; do
        if [[ -e $f ]]; then realpath "$f"; fi
    done
done | sort -u > "$hidden"
# BART (python/tests/test_io.py runs it when found) links the hidden libraries: hidden too, its test skips.
if [[ -e /usr/bin/bart ]]; then realpath /usr/bin/bart >> "$hidden"; fi
echo "== $(wc -l < "$hidden") system library files hidden, /usr/local/cuda* hidden"

# CuPy compiles its own elementwise kernels at run time and needs the toolkit's headers (not its libraries): a copy
# of them outside the hidden /usr/local/cuda, named by CUDA_PATH for CuPy alone (forge's wheel reads no header).
cupy_headers=""
if [[ $kind == cuda && -d /usr/local/cuda/include ]]; then
    rm -rf "$work/cuda-headers"
    mkdir -p "$work/cuda-headers"
    # -L: include is often a relative link (to targets/x86_64-linux/include), which would dangle in the copy
    cp -rL /usr/local/cuda/include "$work/cuda-headers/include"
    if [[ -f $work/cuda-headers/include/cuda_runtime.h ]]; then
        cupy_headers=$work/cuda-headers
    else
        echo "== no cuda_runtime.h in the copy of /usr/local/cuda/include: CuPy's run-time kernels will fail"
    fi
fi

# Runs inside the namespace: covers the libraries, then the checks and the tests.
hide=1
if ! unshare --mount --propagation private true 2> /dev/null; then
    hide=0
    echo "== unshare --mount is not allowed here: nothing hidden (LD_LIBRARY_PATH unset)"
fi
cat > "$work/inside.sh" <<EOF
set -euo pipefail
touch "$work/empty.so"
mkdir -p "$work/empty-dir"
if [[ $hide == 1 ]]; then
    while read -r f; do mount --bind "$work/empty.so" "\$f"; done < "$hidden"
    for d in /usr/local/cuda*/; do [[ -d \$d ]] && mount --bind "$work/empty-dir" "\$d"; done
fi
export PATH=$bin:/usr/bin:/bin
unset LD_LIBRARY_PATH LD_PRELOAD PYTHONPATH CUDA_HOME CUDA_PATH
if [[ -n "$cupy_headers" ]]; then export CUDA_PATH=$cupy_headers; fi
cd "$work"
echo "== ldd of the installed extension"
ext=\$(ls "$site"/forge/_native*.so)
echo "\$ext"
# From 3.12 on the wheel is abi3: its extension must be the limited-API one (forge/_native.abi3.so).
if [[ $tag == cp312-abi3 && \$ext != *.abi3.so ]]; then echo "test-wheel: \$ext in a $tag wheel"; exit 1; fi
ldd "\$ext" | tee "$work/ldd.txt"
# Everything outside site-packages must be a library of the manylinux policy (auditwheel's lib_whitelist of
# manylinux_2_34: glibc's, libstdc++, libgcc_s, libz, ...); the CUDA wheel's NVIDIA libraries are not on the
# extension's path: forge/__init__.py loads them first.
policy="libc|libm|libmvec|libanl|libdl|librt|libnsl|libutil|libpthread|libresolv|libstdc\\+\\+|libgcc_s|libatomic"
policy+="|libz|libexpat"
bad=\$(grep "=>" "$work/ldd.txt" | grep -v "$site/" | grep -Ev "^\s*(\$policy)\.so\.[0-9]+ " || true)
if [[ $kind == cuda ]]; then
    bad=\$(printf '%s\n' "\$bad" | grep -Ev "^\s*(libcudart|libcufft|libcublas|libcublasLt)\.so.*not found" || true)
fi
if [[ -n \$bad ]]; then echo "test-wheel: libraries resolved outside the wheel:"; echo "\$bad"; exit 1; fi
echo "== LD_DEBUG=libs: where import forge finds each library"
LD_DEBUG=libs LD_DEBUG_OUTPUT=$work/ld-debug python -c "import forge; print('forge', forge.__version__, \
'built with CUDA:', forge.built_with_cuda(), 'device:', forge.cuda_available() and forge.device_name())"
cat $work/ld-debug.* > "$work/ld-debug.log"
grep "calling init:" "$work/ld-debug.log" | sed 's/.*calling init: //' | sort -u | tee "$work/loaded.txt"
if grep -Fxf "$hidden" "$work/loaded.txt" | grep . ; then echo "test-wheel: a hidden library was loaded"; exit 1; fi
if grep "^/usr/local/cuda" "$work/loaded.txt"; then echo "test-wheel: CUDA loaded from /usr/local"; exit 1; fi
if [[ $kind == cuda ]] && python -c "import forge, sys; sys.exit(0 if forge.cuda_available() else 1)"; then
    echo "== python/tests (GPU cases included) against the installed wheel"
    OMP_WAIT_POLICY=PASSIVE python -m pytest -q -p no:cacheprovider "$root/python/tests"
else
    echo "== python/tests (not gpu) against the installed wheel"
    OMP_WAIT_POLICY=PASSIVE python -m pytest -q -p no:cacheprovider -m "not gpu" "$root/python/tests"
fi
EOF
if [[ $hide == 1 ]]; then
    unshare --mount --propagation private bash "$work/inside.sh"
    echo "== $kind wheel ($tag) passed with the system's libraries hidden"
else
    bash "$work/inside.sh"
    echo "== $kind wheel ($tag) passed (nothing hidden)"
fi
