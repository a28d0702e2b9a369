#!/usr/bin/env bash
# Compares forge-recon's SENSE with estimated coil maps against BART's ecalib + pics on ISMRMRD's own
# Cartesian Shepp-Logan (ismrmrd_generate_cartesian_shepp_logan, 128x128, 8 coils): fully sampled, and 2x
# accelerated with a 16-line calibration region and a noise scan (first repetition). Prints NRMSE/PSNR
# against the file's phantom (forge's magnitude_quality for both) and wall times; docs/map-estimation.md
# holds a run. Needs a build with forge-recon and forge_mrd_cfl, ismrmrd-tools and bart (apt-get install bart).
#
#   bash scripts/compare-bart.sh [BUILD_DIR] [WORK_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
W=${2:-$(mktemp -d)}
RECON=$BUILD/apps/forge-recon
CFL=$BUILD/apps/forge_mrd_cfl
for t in "$RECON" "$CFL"; do [ -x "$t" ] || { echo "missing $t: cmake --build $BUILD --target forge-recon forge_mrd_cfl" >&2; exit 2; }; done
command -v bart >/dev/null || { echo "bart not installed (apt-get install bart)" >&2; exit 2; }
GEN=$(command -v ismrmrd_generate_cartesian_shepp_logan) || { echo "ismrmrd-tools not installed" >&2; exit 2; }
mkdir -p "$W" && cd "$W"
rm -f full.h5 accel.h5  # the generator appends to an existing file
"$GEN" -m 128 -c 8 -o full.h5 >/dev/null
"$GEN" -m 128 -c 8 -a 2 -w 16 -C -o accel.h5 >/dev/null
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
printf "%-8s %-40s %-28s %s\n" data method "vs phantom" "wall time"
for f in full accel; do
    extra=""; [ $f = accel ] && extra="-r 16"
    # forge: file maps (csm), estimated maps
    t0=$(now); "$RECON" $f.h5 -o forge_csm -q --device cpu >forge_csm.out; t1=$(now)
    printf "%-8s %-40s %-28s %s s\n" $f "forge-recon, the file's csm" "$(sed -n 's/.*NRMSE vs reference \([0-9.]*\)  PSNR \([0-9.]*\).*/NRMSE \1 PSNR \2/p' forge_csm.out | head -1)" "$(secs $t0 $t1)"
    t0=$(now); "$RECON" $f.h5 --smaps estimate -o forge_est -q --device cpu >forge_est.out; t1=$(now)
    printf "%-8s %-40s %-28s %s s\n" $f "forge-recon --smaps estimate" "$(sed -n 's/.*NRMSE vs reference \([0-9.]*\)  PSNR \([0-9.]*\).*/NRMSE \1 PSNR \2/p' forge_est.out | head -1)" "$(secs $t0 $t1)"
    # BART: the first repetition's k-space (zero-filled), ecalib (one set of maps), pics (l2, 10 iterations)
    "$CFL" kspace $f.h5 ksp 0
    t0=$(now)
    bart ecalib -m1 $extra ksp maps >/dev/null
    bart pics -S -l2 -r 0.001 -i 10 ksp maps img >/dev/null 2>&1
    t1=$(now)
    bart resize -c 0 128 img imgc >/dev/null
    printf "%-8s %-40s %-28s %s s\n" $f "bart ecalib -m1 $extra + pics -l2 -r 0.001 -i 10" "$("$CFL" nrmse $f.h5 imgc | sed 's/ dB//; s/  / /')" "$(secs $t0 $t1)"
done
