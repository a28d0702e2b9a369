# Sourced by build-wheels.sh and test-wheel.sh (and scripts/gpu/test-wheels.sh): which wheel an interpreter gets,
# and venvs with or without a package index.
# FORGE_WHEEL_FIND_LINKS=DIR: no package index; pip installs from the wheels in DIR only (--no-index), and a venv
# sees its interpreter's own packages (--system-site-packages: NumPy, PyTorch, CuPy where the machine has them).

# forge_wheel_tag PYTHON: the Python part of the wheel's tag, as pyproject.toml's wheel.py-api = "cp312" gives it:
# cp312-abi3 for CPython 3.12 and newer, cpXY-cpXY for older ones.
forge_wheel_tag() {
    "$1" -c 'import sys; v = sys.version_info[:2]
print("cp312-abi3" if v >= (3, 12) and sys.implementation.name == "cpython" else "cp%d%d-cp%d%d" % (v + v))'
}

# forge_wheel_pythons: the interpreters build-wheels.sh builds for, one a line: FORGE_WHEEL_PYTHONS if set, else
# FORGE_WHEEL_PYTHON (default python3) and, when that one is older than 3.12, the newest python3.12+ on PATH (the
# abi3 wheel beside the version-specific one).
forge_wheel_pythons() {
    if [[ -n ${FORGE_WHEEL_PYTHONS:-} ]]; then
        printf '%s\n' ${FORGE_WHEEL_PYTHONS}
        return
    fi
    local first=${FORGE_WHEEL_PYTHON:-python3} p
    echo "$first"
    if [[ $(forge_wheel_tag "$first") != cp312-abi3 ]]; then
        for p in python3.15 python3.14 python3.13 python3.12; do
            if command -v "$p" > /dev/null; then echo "$p"; return; fi
        done
    fi
}

# forge_make_venv PYTHON DIR [--system-site-packages]: a fresh venv with pip. Where the interpreter has no
# ensurepip (Debian's and Ubuntu's without python3-venv) or whose ensurepip fails, pip comes from a pip wheel in
# FORGE_WHEEL_FIND_LINKS or the interpreter's PREFIX/share/python-wheels.
forge_make_venv() {
    local python=$1 dir=$2
    shift 2
    local site=("$@")
    [[ -n ${FORGE_WHEEL_FIND_LINKS:-} ]] && site=(--system-site-packages)
    rm -rf "$dir"
    mkdir -p "$(dirname "$dir")"
    if ! "$python" -m venv "${site[@]}" "$dir" 2> "$dir.venv-err"; then
        local pipwhl prefix
        prefix=$("$python" -c 'import sys; print(sys.prefix)')
        pipwhl=$(ls "${FORGE_WHEEL_FIND_LINKS:-/nonexistent}"/pip-*.whl "$prefix"/share/python-wheels/pip-*.whl \
                 2> /dev/null | head -1 || true)
        if [[ -z $pipwhl ]]; then cat "$dir.venv-err" >&2; return 1; fi
        echo "$python: no venv with ensurepip: venv without pip, then pip from $(basename "$pipwhl")"
        rm -rf "$dir"
        "$python" -m venv --without-pip "${site[@]}" "$dir"
        "$dir/bin/python" "$pipwhl/pip" install -q --no-index "$pipwhl"
    fi
    rm -f "$dir.venv-err"
    if [[ -n ${FORGE_WHEEL_MACHINE_SITE:-} ]]; then  # folders of the machine's packages, after the venv's own
        local purelib
        purelib=$("$dir/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        tr ':' '\n' <<< "$FORGE_WHEEL_MACHINE_SITE" > "$purelib/forge-machine-site.pth"
    fi
    if [[ -z ${FORGE_WHEEL_FIND_LINKS:-} ]]; then "$dir/bin/pip" install -q --upgrade pip; fi
}

# forge_pip VENV ARGS...: pip install into VENV, from the index or from FORGE_WHEEL_FIND_LINKS only.
forge_pip() {
    local venv=$1
    shift
    if [[ -n ${FORGE_WHEEL_FIND_LINKS:-} ]]; then
        "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-index \
            --find-links "$FORGE_WHEEL_FIND_LINKS" "$@"
    else
        "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@"
    fi
}
