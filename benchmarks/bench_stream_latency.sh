#!/usr/bin/env bash
# Latency at the scanner: forge-recon --demo's spiral scans made into MRD streams as a scanner sends them, replayed
# to forge-recon --stream (pipes) or --server (TCP) at a scanner's pace by bench_stream_latency.py, which times each
# image after its slice's last readout. Prints each run's per-slice table, one summary table (Markdown) and the cost
# model's cached rates that --operator auto chose with.
#
#   bash benchmarks/bench_stream_latency.sh [--device cpu|gpu] [--operator OP] [--cases LIST] [--every S]
#        [--per N|group] [--mode stream|server] [--work DIR] [--recon PATH] [--tool PATH] [--python PY]
#        [--sim-slices N] [--frames F] [--prepare-only] [-- more forge-recon options]
#
# Cases (LIST, comma-separated; default d,a16,a64,b,c):
#   d    64x64, 8 coils, 16 slices, spiral 2 x 3072 samples per slice
#   a16  128x128, 8 coils, 16 slices, spiral 2 x 12288 samples
#   a64  a16's slices repeated to 64 slices
#   b    256x256, 16 coils, 16 slices, spiral 2 x 49152 samples, field-corrected (--fieldmap, the demo's true map);
#        --sim-slices N simulates N slices (default 16) and repeats them to 16
#   c    a real-time series: a16's first slice as F frames (repetitions; default 200)
# The streams (WORK/*.mrd, made once and reused) carry encodingLimits and ACQ_LAST_IN_SLICE as a scanner sets them;
# d, a and c are reconstructed without a field map (--fieldmap none), every case with coil maps estimated from the
# data. Pace: --per acquisitions (1: one interleave) every --every seconds (default 1 every 0.025 s).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RECON=$ROOT/build/apps/forge-recon
TOOL=$ROOT/build/benchmarks/mrd_to_stream
PY=python3
WORK=/tmp/forge-stream-bench
DEVICE=cpu
OPERATOR=auto
CASES=d,a16,a64,b,c
EVERY=0.025
PER=1
MODE=stream
SIM_SLICES=16
FRAMES=200
PREPARE_ONLY=0
EXTRA=()
while [ $# -gt 0 ]; do
  case $1 in
    --device) DEVICE=$2; shift 2 ;;
    --operator) OPERATOR=$2; shift 2 ;;
    --cases) CASES=$2; shift 2 ;;
    --every) EVERY=$2; shift 2 ;;
    --per) PER=$2; shift 2 ;;
    --mode) MODE=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --recon) RECON=$2; shift 2 ;;
    --tool) TOOL=$2; shift 2 ;;
    --python) PY=$2; shift 2 ;;
    --sim-slices) SIM_SLICES=$2; shift 2 ;;
    --frames) FRAMES=$2; shift 2 ;;
    --prepare-only) PREPARE_ONLY=1; shift ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "bench_stream_latency.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
case $MODE in stream|server) ;; *) echo "--mode stream|server" >&2; exit 2 ;; esac
CLIENT=$HERE/bench_stream_latency.py
[ -x "$RECON" ] || { echo "no forge-recon at $RECON (--recon)" >&2; exit 2; }
[ -x "$TOOL" ] || { echo "no mrd_to_stream at $TOOL (--tool; cmake --build build --target mrd_to_stream)" >&2; exit 2; }
mkdir -p "$WORK/logs"
has() { [[ ",$CASES," == *",$1,"* ]]; }

# demo N SLICES COILS: forge-recon --demo's raw data as a plain MRD stream, WORK/demoN.plain.mrd (and its field map)
demo() {
  local n=$1 s=$2 c=$3 d=$WORK/demo$1
  [ -s "$WORK/demo$n.plain.mrd" ] && return 0
  mkdir -p "$d"
  if [ ! -s "$d/demo.h5" ]; then
    echo "making the ${n}x${n} x $s slices x $c coils demo ..." >&2
    "$RECON" --demo --demo-size "$n" --demo-slices "$s" --demo-coils "$c" -n 1 -q -o "$d/demo" --device "$DEVICE" \
      >"$d/demo.log" 2>&1 || { tail -5 "$d/demo.log" >&2; echo "the demo failed" >&2; exit 1; }
  fi
  "$TOOL" "$d/demo.h5" "$WORK/demo$n.plain.mrd" || exit 1
}
prep() {  # OUT.mrd IN.plain.mrd [prepare options]
  local out=$1 in=$2
  shift 2
  [ -s "$out" ] || "$PY" "$CLIENT" prepare "$in" "$out" "$@" >&2 || exit 1
}
has d && { demo 64 16 8; prep "$WORK/d.mrd" "$WORK/demo64.plain.mrd"; }
if has a16 || has a64 || has c; then demo 128 16 8; fi
has a16 && prep "$WORK/a16.mrd" "$WORK/demo128.plain.mrd"
has a64 && prep "$WORK/a64.mrd" "$WORK/demo128.plain.mrd" --slices 64
has c && prep "$WORK/c$FRAMES.mrd" "$WORK/demo128.plain.mrd" --take-slices 1 --frames "$FRAMES"
if has b; then
  demo 256 "$SIM_SLICES" 16
  prep "$WORK/b.mrd" "$WORK/demo256.plain.mrd" --slices 16 --fieldmap "$WORK/demo256/demo_fieldmap.nii" \
    --fieldmap-out "$WORK/b_fieldmap.nii"
fi
ls -l "$WORK"/*.mrd >&2
[ "$PREPARE_ONLY" = 1 ] && exit 0

label() {
  case $1 in
    d) echo "d: 64x64, 8 coils, 16 slices" ;;
    a16) echo "a16: 128x128, 8 coils, 16 slices" ;;
    a64) echo "a64: 128x128, 8 coils, 64 slices" ;;
    b) echo "b: 256x256, 16 coils, 16 slices, field-corrected" ;;
    c) echo "c: 128x128, 8 coils, 1 slice x $FRAMES frames" ;;
  esac
}
echo "# forge-recon paced streams: $(git -C "$ROOT" log -1 --format=%h 2>/dev/null), --device $DEVICE --operator $OPERATOR${EXTRA[*]:+ ${EXTRA[*]}}, $MODE mode"
echo "CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) ($(nproc) CPUs), load $(cut -d' ' -f1-3 /proc/loadavg)"
command -v nvidia-smi >/dev/null && echo "GPU $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
status=0
jsons=()
for c in ${CASES//,/ }; do
  fm=(--fieldmap none)
  [ "$c" = b ] && fm=(--fieldmap "$WORK/b_fieldmap.nii")
  opts=(--device "$DEVICE" --operator "$OPERATOR" "${fm[@]}" -q "${EXTRA[@]}")
  json=$WORK/logs/$c.json
  rm -f "$json"
  stream=$WORK/$c.mrd
  [ "$c" = c ] && stream=$WORK/c$FRAMES.mrd
  common=("$stream" --every "$EVERY" --per "$PER" --label "$(label "$c")" --json "$json")
  if [ "$MODE" = stream ]; then
    "$PY" "$CLIENT" run "${common[@]}" --stderr "$WORK/logs/$c.log" -- "$RECON" --stream "${opts[@]}" || status=1
  else
    "$RECON" --server --port 0 --connections 1 "${opts[@]}" >"$WORK/logs/$c.server.out" 2>"$WORK/logs/$c.log" &
    srv=$!
    port=
    for _ in $(seq 300); do
      port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$WORK/logs/$c.server.out")
      [ -n "$port" ] && break
      sleep 0.1
    done
    if [ -z "$port" ]; then
      echo "$c: the server did not start"; cat "$WORK/logs/$c.log"; kill "$srv" 2>/dev/null; status=1; continue
    fi
    "$PY" "$CLIENT" run "${common[@]}" --port "$port" || status=1
    wait "$srv" || status=1
  fi
  [ -s "$json" ] && jsons+=("$json")
  [ -s "$WORK/logs/$c.log" ] && grep -i "error\|warning" "$WORK/logs/$c.log" | head -3
done
echo
echo "## Summary"
"$PY" "$CLIENT" summary "${jsons[@]}"
# The rates --operator auto priced the operators with (forge-recon's cost model, calibrated on this machine and
# cached; docs/forge-recon.md, "Choosing the operator"): a server writes no report, so they are shown here.
for f in "${XDG_CACHE_HOME:-$HOME/.cache}"/forge/cost-model-*.txt; do
  [ -f "$f" ] || continue
  echo
  echo "cost model $f:"
  grep -v '^#' "$f"
done
exit $status
