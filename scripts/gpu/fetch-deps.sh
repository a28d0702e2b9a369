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
# forge-recon's --report (header-only), for FORGE_GPU_BUILD_APPS=ON beside ISMRMRD, HDF5 and CLI11
apt-get download -q nlohmann-json3-dev
mkdir -p wheels
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d wheels \
  nanobind pytest iniconfig pluggy packaging pygments
ls -1 *.deb | wc -l | xargs echo "packages in .gpu-deps:"
ls -1 wheels/*.whl | wc -l | xargs echo "wheels in .gpu-deps/wheels:"
du -sh .
