#!/usr/bin/env bash
# Tests scripts/check-include-layers.sh on small trees: a clean one passes, and each tree with one include
# that reaches above its module's layer, reaches into another subject's private folder (cuda/, cpu/, detail/) or
# names a file that does not exist fails, naming the offending file and line.
# Usage: test_check_include_layers.sh CHECKER WORKDIR
set -euo pipefail
checker=$1
work=$2
rm -rf "$work"
mkdir -p "$work"

failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# A tree that respects the layers, with one file per module.
make_clean_tree() {
    local t=$1
    mkdir -p "$t"/forge/{Core,CUDA,Penalties,Operators,Solvers,Sim,Recon,IO,Tests} "$t"/forge/Operators/{dft,nufft}/cuda \
        "$t"/forge/CUDA/detail "$t"/forge/Operators/dft/detail "$t"/apps "$t"/benchmarks
    printf '#pragma once\n#include <cstddef>\n' >"$t/forge/Core/Config.h"
    printf '#include "forge/Core/Config.h"\n' >"$t/forge/CUDA/Kernels.h"
    printf '#include "forge/CUDA/Kernels.h"\n#include "forge/Penalties/Quad.h"\n' >"$t/forge/Penalties/Quad.h"
    printf '#include "forge/CUDA/Kernels.h"\n#include <forge/Core/Config.h>\n' >"$t/forge/Operators/dft/Gdft.h"
    printf '#include "forge/Operators/dft/Gdft.h"\n#include "forge/Penalties/Quad.h"\n' >"$t/forge/Solvers/pcg.hpp"
    printf '#include "forge/Core/Config.h"\n' >"$t/forge/Sim/Phantoms.h"
    # Private kernel headers: included from their own subject (its .cu files and the CPU-only build's stubs beside
    # them) and the tests.
    printf '#include "forge/Core/Config.h"\n' >"$t/forge/Operators/dft/cuda/Kernels.h"
    printf '#include "forge/Core/Config.h"\n' >"$t/forge/Operators/nufft/cuda/Spread.h"
    printf '#include "forge/Operators/dft/cuda/Kernels.h"\n' >"$t/forge/Operators/dft/cuda/Plan.cu"
    printf '#include "forge/Operators/dft/cuda/Kernels.h"\n' >"$t/forge/Operators/dft/Gdft.cpp"
    printf '#include "forge/Operators/dft/cuda/Kernels.h"\n#include "forge/CUDA/detail/NoCuda.h"\n' \
        >"$t/forge/Operators/dft/cuda/NoCuda.cpp"
    printf '#include "forge/Solvers/pcg.hpp"\n' >"$t/forge/Recon/Reconstruct.h"
    printf '#include "forge/Recon/Reconstruct.h"\n' >"$t/forge/IO/Mrd.h"
    printf '#include "forge/IO/Mrd.h"\n#include "forge/Sim/Phantoms.h"\n' >"$t/apps/recon.cpp"
    printf '#include "forge/Sim/Phantoms.h"\n#include "TestHelpers.h"\n#include "forge/Operators/dft/cuda/Kernels.h"\n' \
        >"$t/forge/Tests/T.cpp"
    printf '#pragma once\n' >"$t/forge/Tests/TestHelpers.h"
    printf '#include "forge/Tests/TestHelpers.h"\n' >"$t/benchmarks/b.cpp"
    # detail/ headers are private like cuda/ and cpu/; forge/CUDA/detail/ also serves device code (cuda/ folders).
    printf '#include "forge/Core/Config.h"\n' >"$t/forge/CUDA/detail/Check.h"
    printf '#include "forge/CUDA/detail/Check.h"\n' >"$t/forge/CUDA/Ops.cu"
    printf '#include "forge/CUDA/detail/Check.h"\n' >"$t/forge/CUDA/NoCuda.cpp"
    printf '#pragma once\n' >"$t/forge/CUDA/detail/NoCuda.h"
    printf '#include "forge/CUDA/detail/Check.h"\n' >>"$t/forge/Operators/dft/cuda/Plan.cu"
    printf '#include "forge/Core/Config.h"\n' >"$t/forge/Operators/dft/detail/Impl.h"
    printf '#include "forge/Operators/dft/detail/Impl.h"\n' >>"$t/forge/Operators/dft/Gdft.cpp"
    printf '#include "forge/Operators/dft/detail/Impl.h"\n#include "forge/CUDA/detail/Check.h"\n' >>"$t/forge/Tests/T.cpp"
    # A commented-out include is not an include.
    printf '// #include "forge/Solvers/pcg.hpp"\n#include "forge/Core/Config.h"\n' >"$t/forge/Core/Types.h"
}

make_clean_tree "$work/clean"
if ! out=$(bash "$checker" "$work/clean" 2>&1); then
    fail "clean tree rejected: $out"
fi

# Each case: file (relative), the include line it gains; the checker must fail and name file:line.
cases=(
    'forge/Core/Config.h|#include "forge/Operators/dft/Gdft.h"'
    'forge/CUDA/Kernels.h|#include "forge/Penalties/Quad.h"'
    'forge/Penalties/Quad.h|#include "forge/Operators/dft/Gdft.h"'
    'forge/Operators/dft/Gdft.h|#include "forge/Penalties/Quad.h"'
    'forge/Operators/dft/Gdft.h|  #  include <forge/Solvers/pcg.hpp>'
    'forge/Solvers/pcg.hpp|#include "forge/Recon/Reconstruct.h"'
    'forge/Sim/Phantoms.h|#include "forge/Recon/Reconstruct.h"'
    'forge/Recon/Reconstruct.h|#include "forge/IO/Mrd.h"'
    'forge/IO/Mrd.h|#include "forge/Sim/Phantoms.h"'
    'apps/recon.cpp|#include "forge/Tests/TestHelpers.h"'
    'forge/Core/Config.h|#include "forge/Nowhere/X.h"'
    'forge/Operators/dft/Gdft.h|#include "forge/Operators/nufft/cuda/Spread.h"'
    'forge/Operators/nufft/cuda/Spread.h|#include <forge/Operators/dft/cuda/Kernels.h>'
    'forge/Recon/Reconstruct.h|#include "forge/Operators/dft/cuda/Kernels.h"'
    'forge/Operators/dft/Gdft.h|#include "forge/CUDA/detail/Check.h"'
    'forge/Penalties/Quad.h|#include "forge/CUDA/detail/Check.h"'
    'forge/Operators/nufft/cuda/Spread.h|#include "forge/Operators/dft/detail/Impl.h"'
    'forge/Solvers/pcg.hpp|#include "forge/Operators/dft/detail/Impl.h"'
    'forge/Operators/dft/cuda/Plan.cu|#include "forge/CUDA/Gone.h"'
    # The plumbing's stubs know no subject: neither its headers nor its private ones.
    'forge/CUDA/NoCuda.cpp|#include "forge/Operators/dft/Gdft.h"'
    'forge/CUDA/NoCuda.cpp|#include "forge/Operators/dft/cuda/Kernels.h"'
)
i=0
for c in "${cases[@]}"; do
    file=${c%%|*}
    inc=${c#*|}
    tree="$work/bad$i"
    make_clean_tree "$tree"
    echo "$inc" >>"$tree/$file"
    line=$(wc -l <"$tree/$file")
    set +e
    out=$(bash "$checker" "$tree" 2>&1)
    rc=$?
    set -e
    if [[ $rc -ne 1 ]]; then
        fail "$file + '$inc': exit $rc, expected 1 ($out)"
    elif [[ $out != *"$file:$line:"* ]]; then
        fail "$file + '$inc': the report does not name $file:$line ($out)"
    fi
    i=$((i + 1))
done

# A module folder the checker has no layer for is reported, not skipped.
make_clean_tree "$work/unknown"
mkdir -p "$work/unknown/forge/Extra"
printf '#include "forge/Core/Config.h"\n' >"$work/unknown/forge/Extra/E.h"
if bash "$checker" "$work/unknown" >/dev/null 2>&1; then
    fail "a module with no layer (forge/Extra) passed"
fi

if ((failures > 0)); then
    echo "$failures check(s) of check-include-layers.sh failed"
    exit 1
fi
echo "check-include-layers.sh: clean tree passes; ${#cases[@]} bad includes and an unlisted module are caught"
