#!/usr/bin/env bash
# Old header paths against an installed forge: install the build tree to a temporary prefix (cmake --install),
# then check that
#   1. every public header path from before the move into subject folders (and the solvers' .hpp) is installed,
#      forwards to the new header, and everything installed includes only installed forge headers;
#   2. the old paths, all in one file, declare their names at global scope, with one deprecation message each,
#      and none with FORGE_NO_DEPRECATED_HEADER_WARNINGS;
#   3. the new paths alone declare none of forge's names at global scope;
#   4. code that uses the old names of renamed fields and functions (before snake_case and the field_map spelling)
#      compiles against the installed headers, with a deprecation warning naming each new name;
#   5. legacy/operators_page_example.cpp (the operators page's example, verbatim) builds with find_package(Forge)
#      and reconstructs its images within their bounds.
#
#   run_legacy_paths_test.sh <forge build dir>
set -euo pipefail

BUILD_DIR="$(cd "${1:?usage: run_legacy_paths_test.sh <forge build dir>}" && pwd)"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/forge-legacy-paths-test.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

cmake --install "$BUILD_DIR" --prefix "$TMP/prefix" > "$TMP/install.log" || { cat "$TMP/install.log"; exit 1; }
inc="$TMP/prefix/include"

# 1. The old paths (git log --diff-filter=R) of the headers that are public now.
old_paths="forge/Operators/Gdft.h forge/Operators/GdftR2.h forge/Operators/DftOperator.h
forge/Operators/CpuKernelIsa.h forge/Operators/Gfft.h forge/Operators/GfftSampled.h forge/Operators/Gnufft.h
forge/Operators/DensityCompensation.h forge/Operators/ToeplitzNormal.h forge/CUDA/CudaDftPipeline.h
forge/CUDA/CudaMultiDft.h forge/CUDA/CudaNufftPipeline.h forge/Solvers/solve_pwls_pcg.hpp
forge/Solvers/solve_grad_desc.hpp forge/Solvers/SolverCommon.hpp forge/Solvers/reconSolve.hpp"
for h in $old_paths; do
    [ -f "$inc/$h" ] || { echo "FAIL: $h is not installed" >&2; exit 1; }
    grep -q FORGE_NO_DEPRECATED_HEADER_WARNINGS "$inc/$h" || { echo "FAIL: $h is not a forwarding header" >&2; exit 1; }
done
missing=$(cd "$inc" && grep -rhoE '^#include "forge/[^"]+"' forge | sed 's/^#include "//; s/"$//' | sort -u |
          while read -r p; do [ -f "$p" ] || echo "$p"; done)
if [ -n "$missing" ]; then
    echo "FAIL: installed headers include forge headers that are not installed:" >&2
    echo "$missing" >&2
    exit 1
fi
echo "$(echo $old_paths | wc -w) old paths installed; every forge header they and the others include is installed"

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$BUILD_DIR/CMakeCache.txt" | head -n 1; }
CXX_BIN="$(cache_value CMAKE_CXX_COMPILER)"
ARMA_INC="$(cache_value ARMADILLO_INCLUDE_DIR)"
CUDA_DEF=""
[ "$(cache_value FORGE_CUDA_PATH)" = "ON" ] && CUDA_DEF="-DFORGE_HAS_CUDA"
syntax() { "${CXX_BIN:-g++}" -std=c++17 -fsyntax-only $CUDA_DEF -I"$inc" ${ARMA_INC:+-I"$ARMA_INC"} "$@"; }

# 2. All old paths in one file; each of their names must be found at global scope.
forwarders=$(cd "$inc" && grep -rl FORGE_NO_DEPRECATED_HEADER_WARNINGS forge | sort)
legacy_names=$(cd "$inc" && cat $forwarders | sed -n 's/^using forge::\([A-Za-z_0-9]*\);$/\1/p' | sort -u)
{
    for h in $forwarders; do echo "#include \"$h\""; done
    echo "namespace legacy_names {"
    for n in $legacy_names; do echo "using ::$n;"; done
    echo "}"
} > "$TMP/old_paths.cpp"
if ! syntax "$TMP/old_paths.cpp" > "$TMP/old_paths.log" 2>&1; then
    cat "$TMP/old_paths.log"
    echo "FAIL: the old paths do not compile or do not declare their names at global scope (above)" >&2
    exit 1
fi
nmsg=$(grep -oE "forge/[A-Za-z0-9_/]+\.hp?p? is deprecated: include forge/" "$TMP/old_paths.log" | sort -u | wc -l)
nfwd=$(echo "$forwarders" | wc -l)
if [ "$nmsg" -ne "$nfwd" ]; then
    cat "$TMP/old_paths.log"
    echo "FAIL: $nmsg old paths of $nfwd named in deprecation messages" >&2
    exit 1
fi
syntax -DFORGE_NO_DEPRECATED_HEADER_WARNINGS "$TMP/old_paths.cpp" > "$TMP/quiet.log" 2>&1 ||
    { cat "$TMP/quiet.log"; exit 1; }
if grep -q "deprecated" "$TMP/quiet.log"; then
    cat "$TMP/quiet.log"
    echo "FAIL: deprecation messages with FORGE_NO_DEPRECATED_HEADER_WARNINGS" >&2
    exit 1
fi
echo "$nfwd old paths: $(echo $legacy_names | wc -w) names at global scope; a message each, none when silenced"

# 3. Every other installed header in one file, and a program's own names: a global forge name would make
#    them ambiguous.
all_names=$(cd "$inc" && grep -rh '^using forge::[A-Za-z_0-9]*;$' forge | sed 's/^using forge::\(.*\);$/\1/' | sort -u)
{
    (cd "$inc" && find forge \( -name '*.h' -o -name '*.hpp' \) | sort) | while read -r h; do
        echo "$forwarders" | grep -qx "$h" || echo "#include \"$h\""
    done
    echo "namespace user {"
    for n in $all_names; do echo "struct $n {};"; done
    echo "}"
    echo "using namespace user;"
    for n in $all_names; do echo "using probe_$n = $n;"; done
} > "$TMP/new_paths.cpp"
if ! syntax "$TMP/new_paths.cpp" > "$TMP/new_paths.log" 2>&1; then
    grep -E "error" "$TMP/new_paths.log" | head -20 >&2
    # Where the global names came from: the headers that turn FORGE_GLOBAL_NAMES on, with the chain that
    # included each (g++ -H: one dot per level), and any header the list above did not expect.
    syntax -H "$TMP/new_paths.cpp" 2>&1 | grep -E '^\.+ ' | sed "s|$inc/||" > "$TMP/includes.log" || true
    echo "headers in the test: $(grep -c '^#include' "$TMP/new_paths.cpp"); installed: $(cd "$inc" &&
          find forge \( -name '*.h' -o -name '*.hpp' \) | wc -l); old paths: $nfwd" >&2
    for h in $(cd "$inc" && grep -rl '^#define FORGE_GLOBAL_NAMES' forge); do
        grep -n -B3 -E "^\.+ (\./)?$h\$" "$TMP/includes.log" | head -8 >&2 || true
    done
    echo "FAIL: the new paths put forge names at global scope (above)" >&2
    exit 1
fi
echo "new paths: none of forge's $(echo $all_names | wc -w) names at global scope"

# 4. Old field and function names (forge/Core/DeprecatedFields.h, FORGE_DEPRECATED) against the install tree.
cat > "$TMP/old_names.cpp" <<'CPP'
#include "forge/Recon/FieldMapExtension.h"
#include "forge/Recon/ReconProblem.h"
#include "forge/Recon/Reconstruct.h"
#include "forge/Sim/FieldMaps.h"
int old_names() {
    forge::recon::ReconProblem p;
    p.fftGrid = {{4, 4, 1}};
    p.fieldmap.push_back(forge::sim::two_blob_fieldmap(4));
    forge::recon::ReconSettings s;
    s.toeplitzError = 1e-2;
    const arma::fvec e = forge::recon::extend_fieldmap(p.fieldmap[0], 4, 4, 1);
    return int(p.fft_grid[0] + p.field_map.size() + e.n_elem) + int(s.toeplitz_error > 0);
}
CPP
syntax -Wall "$TMP/old_names.cpp" > "$TMP/old_names.log" 2>&1 || { cat "$TMP/old_names.log"; echo "FAIL: code with the old names does not compile" >&2; exit 1; }
for new_name in fft_grid field_map two_blob_field_map toeplitz_error extend_field_map; do
    grep -q "renamed: use $new_name" "$TMP/old_names.log" ||
        { cat "$TMP/old_names.log"; echo "FAIL: no deprecation warning naming $new_name" >&2; exit 1; }
done
echo "old field and function names compile, each with a warning naming its new name"

# 5. The operators page's example against the install tree.
cmake -S "$HERE/legacy" -B "$TMP/build" -DCMAKE_PREFIX_PATH="$TMP/prefix" -DCMAKE_BUILD_TYPE=Release \
    > "$TMP/configure.log" || { cat "$TMP/configure.log"; exit 1; }
if ! cmake --build "$TMP/build" > "$TMP/build.log" 2>&1; then
    cat "$TMP/build.log"
    echo "FAIL: the operators page's example did not build" >&2
    exit 1
fi
# No warning but #pragma messages: the old paths' (GCC: notes; Clang: -W#pragma-messages warnings), or a
# dependency's (Armadillo's without SuperLU's headers).
grep -F "is deprecated: include forge/" "$TMP/build.log" | grep -F "#pragma message" || true
if grep -F "warning:" "$TMP/build.log" | grep -vF -e "is deprecated: include forge/" -e "[-W#pragma-messages]"; then
    echo "FAIL: the operators page's example builds with warnings (above)" >&2
    exit 1
fi
(cd "$TMP" && "$TMP/build/operators_page_example") || { echo "FAIL: operators_page_example" >&2; exit 1; }
echo "legacy paths test passed"
