#!/usr/bin/env bash
# Real scanner data for forge's tests and benchmarks, as BART arrays (convert_real_data.py says what each holds):
#
#   bash scripts/real-data/fetch-real-data.sh [OUT_DIR]
#
# 1. octopus-spiral (2D spiral, 20 coils, 192x192) from ../shared/data/octopus-spiral beside the repository
#    ($FORGE_OCTOPUS_DIR overrides; skipped with a note when absent).
# 2. The gpunufft 0.10.8 source archive from PyPI (65 MB, MIT; its matlab/demo/data/ holds a 2D radial brain and
#    a 3D radial phantom) into the cache folder, once: ${FORGE_DATA_CACHE:-$HOME/.cache/forge-real-data}.
#    pip downloads only the source archive (--no-deps --no-binary gpunufft: the archive's build requirements come
#    as wheels for pip's metadata step, nothing is built or installed; --no-binary :all: would compile CMake from
#    source for that step, tens of minutes). The two .mat files are extracted into CACHE/mat/.
# 3. Converts every data set found into OUT_DIR (default CACHE/cfl): OUT_DIR/<name>/{kspace,traj}.{cfl,hdr} and
#    info.json. A data set already converted by the same convert_real_data.py is left as it is.
#
# Exit status: 0 when everything was fetched and converted, 77 when PyPI cannot be reached (the octopus data,
# which needs no network, is converted first all the same), 1 on any other failure.
# Environment: FORGE_DATA_CACHE (cache folder), PYTHON (an interpreter with NumPy and SciPy; default the build's
# virtual environment build/python-env, else python3), FORGE_OCTOPUS_DIR.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${FORGE_DATA_CACHE:-$HOME/.cache/forge-real-data}"
OUT="${1:-$CACHE/cfl}"
VERSION=0.10.8
ARCHIVE="$CACHE/gpunufft-$VERSION.tar.gz"
MATS=(brain_64spokes.mat rawdata_phantom_regridding.mat)

if [ -z "${PYTHON:-}" ]; then
    if [ -x "$ROOT/build/python-env/bin/python" ]; then PYTHON="$ROOT/build/python-env/bin/python"; else PYTHON=python3; fi
fi
if ! "$PYTHON" -c "import numpy, scipy.io" 2>/dev/null; then
    echo "fetch-real-data: $PYTHON lacks NumPy or SciPy (set PYTHON, or run scripts/setup-and-test.sh first)" >&2
    exit 1
fi
mkdir -p "$CACHE/mat" "$OUT"

# A data set is up to date when its stamp names the converter's current checksum.
CONVERTER="$HERE/convert_real_data.py"
STAMP_ID="$(sha256sum "$CONVERTER" | cut -c1-16)"
convert() {  # convert NAME [converter options]
    local name=$1
    shift
    if [ "$(cat "$OUT/$name/.converted" 2>/dev/null)" = "$STAMP_ID" ]; then
        echo "fetch-real-data: $name: up to date in $OUT/$name"
        return 0
    fi
    "$PYTHON" "$CONVERTER" "$OUT" --only "$name" "$@"
    echo "$STAMP_ID" >"$OUT/$name/.converted"
}

OCTOPUS="${FORGE_OCTOPUS_DIR:-$ROOT/../shared/data/octopus-spiral}"
if [ -f "$OCTOPUS/rawdata_spiral.mat" ]; then
    convert octopus-spiral --octopus "$OCTOPUS"
else
    echo "fetch-real-data: octopus-spiral: $OCTOPUS not found, skipped"
fi

have_mats() { local m; for m in "${MATS[@]}"; do [ -s "$CACHE/mat/$m" ] || return 1; done; }

if ! have_mats; then
    if [ ! -s "$ARCHIVE" ]; then
        echo "fetch-real-data: downloading gpunufft==$VERSION (source archive, 65 MB) from PyPI into $CACHE"
        tmp="$(mktemp -d "$CACHE/download.XXXXXX")"
        trap 'rm -rf "$tmp"' EXIT
        log="$tmp/pip.log"
        if ! "$PYTHON" -m pip download --disable-pip-version-check --no-deps --no-binary gpunufft \
                --timeout 30 --retries 2 "gpunufft==$VERSION" -d "$tmp" >"$log" 2>&1; then
            offline="NewConnectionError|Max retries|Temporary failure in name resolution|Name or service not known"
            offline+="|Network is unreachable|ConnectTimeout|ReadTimeout|Connection (refused|reset)|ProxyError|SSLError"
            offline+="|No matching distribution found|Could not find a version"  # what pip says when no index answered
            if grep -qiE "$offline" "$log"; then
                tail -n 3 "$log" | sed 's/^/    pip: /' >&2
                echo "fetch-real-data: PyPI cannot be reached; gpunufft's brain and 3D phantom are not available (octopus-spiral: see above)" >&2
                exit 77
            fi
            cat "$log" >&2
            echo "fetch-real-data: pip download failed" >&2
            exit 1
        fi
        mv "$tmp/gpunufft-$VERSION.tar.gz" "$ARCHIVE"
        rm -rf "$tmp"
        trap - EXIT
    fi
    echo "fetch-real-data: extracting ${MATS[*]} from $ARCHIVE"
    members=()
    for m in "${MATS[@]}"; do members+=("gpunufft-$VERSION/matlab/demo/data/$m"); done
    xdir="$(mktemp -d "$CACHE/extract.XXXXXX")"
    tar -xzf "$ARCHIVE" --no-same-owner -C "$xdir" --strip-components=4 "${members[@]}"
    for m in "${MATS[@]}"; do mv "$xdir/$m" "$CACHE/mat/$m"; done  # whole files only: a cut run leaves none
    rmdir "$xdir"
fi

convert brain-radial --gpunufft-data "$CACHE/mat"
convert phantom3d-radial --gpunufft-data "$CACHE/mat"
echo "fetch-real-data: done: $OUT"
