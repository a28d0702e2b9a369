#!/usr/bin/env bash
# Package test: install forge's build tree to a temporary prefix (cmake --install), then configure,
# build and run the outside project in this folder against it with find_package(Forge CONFIG REQUIRED).
# Also checks that readme_example.cpp is README.md's usage example verbatim, that the installed headers are
# the public API only (no cuda/, cpu/ or detail/ folder, no *Kernels*.h, no include of a forge header that is not
# installed, no CUDA include) and each compiles on its own with the install tree and Armadillo alone on the include
# path, that api_example.cpp's deprecated names warn, and that the installed programs (forge-recon) start from the
# install tree.
#
#   run_package_test.sh <forge build dir> [<forge source dir>]
set -euo pipefail

BUILD_DIR="$(cd "${1:?usage: run_package_test.sh <forge build dir> [<forge source dir>]}" && pwd)"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC_DIR="$(cd "${2:-$HERE/../../..}" && pwd)"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/forge-package-test.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# 1. README's example and readme_example.cpp are the same text (the ```cpp block after the marker).
awk '/<!-- readme-example: forge\/Tests\/package\/readme_example.cpp -->/ {m=1; next}
     m==1 && /^```cpp/ {m=2; next}
     m==2 && /^```/ {exit}
     m==2 {print}' "$SRC_DIR/README.md" > "$TMP/readme_block.cpp"
if ! diff -u "$HERE/readme_example.cpp" "$TMP/readme_block.cpp"; then
    echo "FAIL: README.md's usage example differs from forge/Tests/package/readme_example.cpp" >&2
    exit 1
fi
echo "README example matches readme_example.cpp ($(wc -l < "$HERE/readme_example.cpp") lines)"

# 2. Install the build tree.
cmake --install "$BUILD_DIR" --prefix "$TMP/prefix" > "$TMP/install.log" || { cat "$TMP/install.log"; exit 1; }
test -f "$TMP/prefix/include/forge/Operators/dft/Gdft.h"

# 3. The installed headers are the public API: no private folder (device kernels in cuda/, per-ISA CPU loops in
#    cpu/, internal plumbing in detail/), no kernel header, no forge header included that is not installed, no CUDA
#    header included (a grep: where CUDA is installed its headers may be on the compiler's default path, e.g.
#    /usr/local/include, so step 4 alone would not see it).
inc="$TMP/prefix/include"
private=$(cd "$inc" && find forge \( -type d \( -name cuda -o -name cpu -o -name detail \) \) -o -name '*Kernels*.h')
if [ -n "$private" ]; then
    echo "FAIL: private headers or folders installed:" >&2
    echo "$private" >&2
    exit 1
fi
# Every forge header an installed header includes is installed: "forge/..." and <forge/...> against the include
# folder, another quoted header name against the header's own folder.
missing=$(cd "$inc" && find forge -name '*.h' -o -name '*.hpp' | sort | while read -r h; do
    sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*([<"])([^>"]+)[>"].*/\1\2/p' "$h" | while read -r i; do
        kind=${i:0:1} path=${i:1}
        case $path in
            forge/*) [ -f "$path" ] || echo "$h includes $path" ;;
            *.h | *.hpp) [ "$kind" = '<' ] || [ -f "$(dirname "$h")/$path" ] || echo "$h includes \"$path\"" ;;
        esac
    done
done || true)
if [ -n "$missing" ]; then
    echo "FAIL: installed headers include headers that are not installed:" >&2
    echo "$missing" >&2
    exit 1
fi
if grep -rlE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cuda|cufft|cublas|cuComplex|cuda_runtime|vector_types)[A-Za-z_]*\.h[">]' "$inc/forge"; then
    echo "FAIL: the installed headers above include CUDA headers" >&2
    exit 1
fi

# 4. Every installed header compiles on its own: one translation unit per header, with the install tree and
#    Armadillo as the only include paths (no CUDA), as forge was configured (FORGE_HAS_CUDA).
cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD_DIR/CMakeCache.txt" | head -n 1; }
CXX_BIN="$(cache_value CMAKE_CXX_COMPILER)"
ARMA_INC="$(cache_value ARMADILLO_INCLUDE_DIR)"
CUDA_DEF=""
[ "$(cache_value FORGE_CUDA_PATH)" = "ON" ] && CUDA_DEF="-DFORGE_HAS_CUDA"
export CXX_BIN ARMA_INC CUDA_DEF inc
check_header() {  # one header; prints the compiler's errors with the header's name
    if ! log=$(printf '#include "%s"\n' "$1" |
               "${CXX_BIN:-g++}" -std=c++17 -fsyntax-only $CUDA_DEF -I"$inc" ${ARMA_INC:+-I"$ARMA_INC"} -x c++ - 2>&1); then
        printf 'FAIL: installed header %s does not compile on its own:\n%s\n' "$1" "$log"
        return 1
    fi
}
export -f check_header
headers=$(cd "$inc" && find forge -name '*.h' -o -name '*.hpp' | sort)
nheaders=$(echo "$headers" | wc -l)
if ! echo "$headers" | xargs -P 2 -n 1 bash -c 'check_header "$0"' >&2; then
    echo "FAIL: installed headers that do not compile on their own (above)" >&2
    exit 1
fi
echo "$nheaders installed headers compile on their own (-I install prefix, Armadillo; no CUDA include path)"

# 5. Configure, build and run the outside project against the install tree only.
cmake -S "$HERE" -B "$TMP/build" -DCMAKE_PREFIX_PATH="$TMP/prefix" -DCMAKE_BUILD_TYPE=Release
if ! cmake --build "$TMP/build" -j2 2>&1 | tee "$TMP/build.log"; then
    echo "FAIL: the outside project did not build" >&2
    exit 1
fi
out="$("$TMP/build/readme_example")"
echo "$out"
# On a Cartesian grid G^H G = n I, so |G'G x| / |x| must be n = 64.
echo "$out" | grep -q "= 64.0000 (expected n = 64)" || { echo "FAIL: unexpected output" >&2; exit 1; }
# api_example.cpp uses each deprecated name once: the compiler must have said so for each.
for warning in "forge/Solvers/solve_pwls_pcg.hpp is deprecated" "renamed: use to_arma()" "renamed: use penalty()" \
               "renamed: use gradient()" "renamed: use denom()" "renamed: use recon_solve()" \
               "renamed: use density_compensation()"; do
    grep -qF "$warning" "$TMP/build.log" || { echo "FAIL: no deprecation warning '$warning' in the build output" >&2; exit 1; }
done
echo "api_example: the build output has the deprecation warning of each deprecated name"
# (run as readme_example is: the run path alone is checked for the installed programs below, and where Armadillo's
# own libraries sit outside the system folders, as on a machine with unpacked packages, they need the loader path)
(cd "$TMP" && "$TMP/build/api_example") || { echo "FAIL: api_example" >&2; exit 1; }
# The caller's loader path without the entries inside the build tree (installed programs must not need them).
BUILD_REAL=$(readlink -f "$BUILD_DIR")
LD_OUTSIDE_BUILD=$(printf '%s' "${LD_LIBRARY_PATH:-}" | tr ':' '\n' | grep -v -e '^$' -e "^$BUILD_REAL" | paste -sd: - || true)
# Forge::IO: installed with its headers, and an outside program links it, when forge built it.
if [ -f "$BUILD_DIR/libForgeIO.so" ]; then
    test -f "$TMP/prefix/include/forge/IO/Nifti.h" || { echo "FAIL: forge/IO headers not installed" >&2; exit 1; }
    test -x "$TMP/build/io_example" || { echo "FAIL: Forge::IO not found by find_package(Forge)" >&2; exit 1; }
    (cd "$TMP" && env LD_LIBRARY_PATH="$LD_OUTSIDE_BUILD" "$TMP/build/io_example") || { echo "FAIL: io_example" >&2; exit 1; }
fi

# 6. Installed programs start from the install tree alone (their run path finds libForgeCommon), with
#    no LD_LIBRARY_PATH entry pointing into the build tree (the caller's other entries stay: on a machine with
#    unpacked packages Armadillo's own libraries are found only through them).
for prog in forge-recon gdft_example; do
    if [ -f "$BUILD_DIR/apps/$prog" ]; then
        exe="$TMP/prefix/bin/$prog"
        test -x "$exe" || { echo "FAIL: $prog was not installed to $TMP/prefix/bin" >&2; exit 1; }
        if ldd "$exe" | grep -q "not found"; then
            ldd "$exe" >&2
            echo "FAIL: installed $prog cannot find its libraries" >&2
            exit 1
        fi
    fi
done
if [ -f "$BUILD_DIR/apps/forge-recon" ]; then
    env LD_LIBRARY_PATH="$LD_OUTSIDE_BUILD" "$TMP/prefix/bin/forge-recon" --help > "$TMP/help.txt" \
        || { cat "$TMP/help.txt"; echo "FAIL: installed forge-recon --help did not run" >&2; exit 1; }
    grep -q "forge-recon" "$TMP/help.txt" || { echo "FAIL: installed forge-recon --help printed no usage" >&2; exit 1; }
    echo "installed forge-recon runs from $TMP/prefix/bin"
fi
echo "package test passed"
