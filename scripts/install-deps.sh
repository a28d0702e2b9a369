#!/usr/bin/env bash
# Sourced by the set-up scripts: forge_install_deps installs forge's Debian 12 packages with apt-get
# (non-interactive) when any is missing. As root it installs them; otherwise it uses sudo when that
# needs no password, and else stops with the apt-get command to run. forge_python_env makes the Python
# environment the Python package (python/) is built and tested with.
FORGE_DEB_PACKAGES=(build-essential cmake pkg-config libarmadillo-dev libopenblas-dev libfftw3-dev catch2
                    libismrmrd-dev ismrmrd-tools libpugixml-dev libhdf5-dev libpng-dev libcli11-dev nlohmann-json3-dev
                    python3-nibabel
                    python3-h5py python3-dev python3-venv libopenmpi-dev openmpi-bin
                    libdcmtk-dev bart python3-pydicom)

# forge_python_env DIR: a virtual environment of python3 at DIR with nanobind (builds the extension), NumPy,
# pytest and SciPy (run python/tests; SciPy for forge.as_linear_operator's tests), and ismrmrd (its MRD stream
# serialisation is cli_stream's client), scikit-build-core (python_sdist builds the source distribution with
# it), installed from PyPI when missing. Prints nothing else on success.
forge_python_env() {
    local venv=$1
    if [ ! -x "$venv/bin/python" ]; then
        echo "== python: virtual environment $venv ($(python3 --version 2>&1))"
        python3 -m venv "$venv" || { echo "error: python3 -m venv failed (Debian: apt-get install python3-venv)" >&2; return 1; }
    fi
    if ! "$venv/bin/python" -c "import nanobind, numpy, pytest, scipy, ismrmrd.serialization, scikit_build_core" \
            2>/dev/null; then
        echo "== python: pip install nanobind numpy pytest scipy ismrmrd scikit-build-core"
        "$venv/bin/python" -m pip install -q --disable-pip-version-check nanobind numpy pytest scipy ismrmrd \
            scikit-build-core
    fi
}

forge_install_deps() {
    local missing=() p
    for p in "${FORGE_DEB_PACKAGES[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$p")
        fi
    done
    if [ "${#missing[@]}" -eq 0 ]; then
        echo "== dependencies: all Debian packages present"
        return 0
    fi
    echo "== dependencies: installing ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            echo "error: missing Debian packages: ${missing[*]}" >&2
            echo "       run as root: apt-get install -y ${missing[*]}" >&2
            return 1
        fi
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}
