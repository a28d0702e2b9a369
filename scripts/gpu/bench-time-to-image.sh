#!/usr/bin/env bash
# Time to image with forge-recon: the demo at two sizes, then the larger demo's own files reconstructed with the
# maps they carry, with maps estimated from the field-map scan, and with each operator; every run's stage
# timings (--report's stages_s) in one table.
#   bash scripts/gpu/bench-time-to-image.sh FORGE_RECON [LOGDIR] [DEVICE]
# FORGE_RECON: the forge-recon binary; LOGDIR (default $OUT, else ./time-to-image) receives the reports and
# logs (the demo's images and raw data go to a scratch folder); DEVICE: gpu (default) or cpu.
# The demo sizes: 128x128 x 16 slices x 8 coils and 256x256 x 4 slices x 16 coils (FORGE_TTI_SIZES to change,
# e.g. "64,4,8 128,16,8": size,slices,coils each).
set -uo pipefail
R=${1:?usage: bench-time-to-image.sh FORGE_RECON [LOGDIR] [DEVICE]}
LOG=${2:-${OUT:-$PWD/time-to-image}}
DEV=${3:-gpu}
mkdir -p "$LOG"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
status=0
echo "forge-recon time to image: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) CPUs," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -1

# run NAME ARGS...: forge-recon with --report, wall time measured around it.
run() {
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$R" "$@" --device "$DEV" --report "$LOG/$name.json" > "$LOG/$name.log" 2>&1 || { echo "$name: failed"; tail -5 "$LOG/$name.log"; status=1; }
  t1=$(date +%s.%N)
  awk -v n="$name" -v a="$t0" -v b="$t1" 'BEGIN { printf "%s %.3f\n", n, b - a }' >> "$LOG/wall.txt"
}

: > "$LOG/wall.txt"
last=""
for spec in ${FORGE_TTI_SIZES:-128,16,8 256,4,16}; do
  IFS=, read -r n s c <<< "$spec"
  d=$SCRATCH/demo$n
  mkdir -p "$d"
  run "demo_${n}x${s}x${c}" --demo --demo-size "$n" --demo-slices "$s" --demo-coils "$c" -o "$d/demo"
  last=$d/demo
done
if [ -n "$last" ] && [ -f "$last.h5" ]; then
  run file_maps "$last.h5" -o "$SCRATCH/r_file"
  run file_estimated_maps "$last.h5" --smaps estimate --fieldmap-scan "${last}_fieldmap_scan.h5" -o "$SCRATCH/r_est"
  for op in auto timeseg toeplitz; do run "file_$op" "$last.h5" --operator "$op" -o "$SCRATCH/r_$op"; done
fi

python3 - "$LOG" <<'EOF'
import json, os, sys
log = sys.argv[1]
walls = dict(l.split() for l in open(os.path.join(log, "wall.txt")))
rows, keys = [], []
for name in walls:
    path = os.path.join(log, name + ".json")
    if not os.path.exists(path):
        continue
    r = json.load(open(path))
    st = r.get("stages_s", {})
    keys += [k for k in st if k not in keys and k != "total"]
    rows.append((name, r.get("operator", {}).get("name", "?"), float(walls[name]), st))
print("| run | operator | wall [s] | " + " | ".join(keys) + " | total (report) |")
print("|" + "---|" * (len(keys) + 4))
for name, op, wall, st in rows:
    cells = ["%.2f" % st[k] if isinstance(st.get(k), (int, float)) else "-" for k in keys]
    print("| %s | %s | %.2f | %s | %.2f |" % (name, op, wall, " | ".join(cells), st.get("total", float("nan"))))
EOF
exit $status
