#!/usr/bin/env bash
# Checks that every source and header includes only forge modules at or below its own layer:
#
#   Core  <-  CUDA  <-  Penalties, Operators  <-  Solvers  <-  Sim, Recon  <-  IO  <-  apps
#
# Penalties and Operators sit side by side and include neither each other; Sim includes Core, CUDA and Operators
# (the demo's acquisition is simulated with the exact operator), never Penalties, Solvers, Recon or IO.
# forge/Tests and benchmarks/ may include anything.
#
# Private headers: a header in a cuda/, cpu/ or detail/ folder (device kernels, per-ISA CPU loops, internal
# plumbing) belongs to the subject folder holding that folder (forge/Operators/toeplitz/cuda/X.h belongs to
# forge/Operators/toeplitz/) and may be included only from inside that subject and from forge/Tests and benchmarks/.
# forge/CUDA/detail/ (checked CUDA calls, the "built without CUDA" error) is the device plumbing of every subject:
# device code, i.e. any file in a cuda/ folder (its .cu files and the CPU-only build's NoCuda.cpp stubs beside
# them), may include it too. Such headers are not installed, so a public header that included one would break
# every user's build. No file is exempt: each subject's stubs sit in its own cuda/ folder, so forge/CUDA knows none.
#
# An include is `#include "forge/<Module>/..."` (or <...>); other includes (system, Armadillo, a module's own
# relative names) are not checked. An included forge/ path must exist: a header moved without its includers
# fails here even in a CPU-only build, which never compiles the .cu files.
#
# Usage: check-include-layers.sh [ROOT]   (ROOT: the repository, default the one holding this script)
# Exit status: 0 when clean, 1 with one line per violation (file:line: what it includes), 2 on bad usage.
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
if [[ ! -d $root/forge ]]; then
    echo "check-include-layers: $root has no forge/ folder" >&2
    exit 2
fi

# Modules each module may include (its own included). "*" = any.
declare -A allowed=(
    [Core]="Core"
    [CUDA]="Core CUDA"
    [Penalties]="Core CUDA Penalties"
    [Operators]="Core CUDA Operators"
    [Solvers]="Core CUDA Penalties Operators Solvers"
    [Sim]="Core CUDA Operators Sim"
    [Recon]="Core CUDA Penalties Operators Solvers Recon"
    [IO]="Core CUDA Penalties Operators Solvers Recon IO"
    [apps]="Core CUDA Penalties Operators Solvers Sim Recon IO"
    [Tests]="*"
    [benchmarks]="*"
)

violations=0
report() {
    echo "$1"
    violations=$((violations + 1))
}

# The module a file belongs to, from its path relative to root.
module_of() {
    case $1 in
        forge/*/*) local rest=${1#forge/}; echo "${rest%%/*}" ;;
        apps/*) echo apps ;;
        benchmarks/*) echo benchmarks ;;
        *) echo "" ;;
    esac
}

cd "$root"
while IFS= read -r -d '' file; do
    file=${file#./}
    module=$(module_of "$file")
    if [[ -z $module ]]; then continue; fi
    if [[ -z ${allowed[$module]+x} ]]; then
        report "$file: module '$module' has no layer in scripts/check-include-layers.sh"
        continue
    fi
    may=${allowed[$module]}
    # Private headers (cuda/, cpu/, detail/) from outside their subject.
    if [[ $module != Tests && $module != benchmarks ]]; then
        while IFS=: read -r line target; do
            [[ -z $line ]] && continue
            owner=${target%/*}
            owner=${owner%/*}/
            [[ $file == "$owner"* ]] && continue
            [[ $target == forge/CUDA/detail/* && $file == */cuda/* ]] && continue
            report "$file:$line: includes $target, a private header of $owner (only files there may include it)"
        done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]forge/([A-Za-z0-9_]+/)+(cuda|cpu|detail)/[^/">]+[">]' "$file" |
                 sed -E 's/^([0-9]+):.*[<"](forge\/[^">]+)[">].*/\1:\2/' || true)
    fi
    # Included forge/ files that do not exist (a stale path after a move).
    while IFS=: read -r line target; do
        [[ -z $line || -f $target ]] && continue
        report "$file:$line: includes $target, which does not exist"
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]forge/[^">]+[">]' "$file" |
             sed -E 's/^([0-9]+):.*[<"](forge\/[^">]+)[">].*/\1:\2/' || true)
    # line:included-module for each forge include (not commented out: the line starts with #include).
    while IFS=: read -r line target; do
        [[ -z $line || $may == "*" ]] && continue
        if [[ -z ${allowed[$target]+x} || $target == Tests || $target == benchmarks || $target == apps ]]; then
            report "$file:$line: includes forge/$target/, which is not a library module"
        elif [[ " $may " != *" $target "* ]]; then
            report "$file:$line: $module includes forge/$target/ (a $module file may include: $may)"
        fi
    done < <(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]forge/[A-Za-z0-9_]+/' "$file" |
             sed -E 's/^([0-9]+):.*[<"]forge\/([A-Za-z0-9_]+)\/.*/\1:\2/' || true)
done < <(find forge apps benchmarks -type f \
             \( -name '*.h' -o -name '*.hpp' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' \) -print0 2>/dev/null)

if ((violations > 0)); then
    echo "check-include-layers: $violations include(s) reach above their module's layer" >&2
    exit 1
fi
echo "check-include-layers: every forge include respects the module layers"
