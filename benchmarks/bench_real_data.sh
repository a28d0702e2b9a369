#!/usr/bin/env bash
# forge-recon against BART (ecalib + pics) on real scanner data: time to image and agreement of the images.
#
#   benchmarks/bench_real_data.sh [DATA_SET ...]      (default: octopus-spiral brain-radial; also phantom3d-radial)
#
# The data sets are BART arrays made by scripts/real-data/fetch-real-data.sh (run first when they are missing;
# see scripts/real-data/convert_real_data.py for what each holds). For each data set and thread count:
#
#   forge   forge-recon --bart-kspace K --bart-traj T --complex --report forge.json --device cpu (default
#           options: coil maps from the central 48 cycles/FOV in 2D, 24 in 3D, QuadPenalty beta 1e-3, -n 50,
#           tolerance 2e-4); time to image = the wall time of the whole command.
#   BART    its default calibration size, 24 (forge-recon's is 48 in 2D): the readout samples that reach the
#           24x24(x24) box's corners are taken out (bart extract along the samples; the range is found from the
#           trajectory before the clock starts), inverse NUFFT onto a small grid (bart nufft -i), bart fft -u,
#           zero-padded to the image matrix (bart resize -c), bart ecalib -m1 -r 24; then bart pics -S -l2 -r LAMBDA -i ITER with ITER =
#           forge's iteration count (both conjugate gradients). LAMBDA gives BART's Tikhonov term the weight
#           forge gives its own, 1e-3 of the data term's mean curvature: 1e-3 x (BART's NUFFT normal operator
#           at the centre pixel, measured with bart nufft on a delta) x (the mean of sum_c |S_c|^2 of its maps).
#           The penalties differ in kind: forge's on first differences, BART's on the image (pics has no
#           quadratic difference penalty). Time to image = calibration + pics, wall time.
#   NRMSE   of forge's magnitude image against BART's, after the least-squares scale, over BART's ecalib mask
#           (pixels where its maps are non-zero); the complex NRMSE (least-squares complex scale) is printed as
#           well: it also counts the smooth phase in which the two sets of maps differ (forge's maps make the
#           coil-combined image real, ESPIRiT's keep the object's phase), so it is large by construction.
#   PNG     PNG_DIR/<data set>.png: forge | BART | |difference| x 5, each scaled to 1.1 x BART's 99.5th
#           percentile (forge after the scale fit), x to the right and y upwards; 3D: the three central planes.
#
# Threads: OMP_NUM_THREADS=2, and 16 as well on machines with at least 16 cores (THREADS="2 16" sets the list);
# BART runs with the same count. With a GPU (nvidia-smi lists one) forge-recon also runs with --device gpu
# (BART's Debian build has no GPU path: its rows stay on the CPU).
# Environment: FORGE_RECON (default build/apps/forge-recon), FORGE_REAL_DATA_DIR (the converted arrays, default
# ${FORGE_DATA_CACHE:-$HOME/.cache/forge-real-data}/cfl), WORK (default /tmp/forge-bench-real-data), PNG_DIR
# (default WORK/png), PYTHON (NumPy and nibabel; default build/python-env/bin/python), LIMIT_S (seconds allowed
# to each forge-recon and BART command; 0 = none, the default), FORGE_ARGS (more forge-recon options, e.g.
# "-n 3 --tolerance 0" to time a few iterations of a large data set: pics then runs as many).
# Output: a Markdown table on stdout and in WORK/results.md, the images and logs under WORK/<data set>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RECON="${FORGE_RECON:-$ROOT/build/apps/forge-recon}"
CACHE="${FORGE_DATA_CACHE:-$HOME/.cache/forge-real-data}"
DATA="${FORGE_REAL_DATA_DIR:-$CACHE/cfl}"
WORK="${WORK:-/tmp/forge-bench-real-data}"
PNG_DIR="${PNG_DIR:-$WORK/png}"
LIMIT_S="${LIMIT_S:-0}"
FORGE_ARGS="${FORGE_ARGS:-}"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$ROOT/build/python-env/bin/python" ]; then PYTHON="$ROOT/build/python-env/bin/python"; else PYTHON=python3; fi
fi
DATASETS=("$@")
[ ${#DATASETS[@]} -gt 0 ] || DATASETS=(octopus-spiral brain-radial)
if [ -z "${THREADS:-}" ]; then
    THREADS=2
    [ "$(nproc)" -ge 16 ] && THREADS="2 16"
fi
GPU=0
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU && GPU=1

[ -x "$RECON" ] || { echo "bench_real_data: $RECON missing (cmake --build build --target forge-recon)" >&2; exit 2; }
command -v bart >/dev/null || { echo "bench_real_data: bart not installed (apt-get install bart)" >&2; exit 2; }
"$PYTHON" -c "import numpy, nibabel" 2>/dev/null || { echo "bench_real_data: $PYTHON lacks numpy or nibabel" >&2; exit 2; }
for d in "${DATASETS[@]}"; do
    if [ ! -f "$DATA/$d/kspace.cfl" ]; then
        echo "bench_real_data: $DATA/$d missing: running scripts/real-data/fetch-real-data.sh" >&2
        FORGE_DATA_CACHE="$CACHE" PYTHON="$PYTHON" bash "$ROOT/scripts/real-data/fetch-real-data.sh" "$DATA" || true
        [ -f "$DATA/$d/kspace.cfl" ] || { echo "bench_real_data: no $d data" >&2; exit 2; }
    fi
done
mkdir -p "$WORK" "$PNG_DIR"

# Python helper: calibration range, lambda, NRMSE and PNGs (NumPy, nibabel; a PNG writer of its own).
HELPER=$(cat <<'PYEOF'
import json, struct, sys, zlib
import numpy as np

def read_cfl(base):
    lines = open(base + ".hdr").read().splitlines()
    dims = [int(v) for v in lines[lines.index("# Dimensions") + 1].split()]
    while len(dims) > 3 and dims[-1] == 1:
        dims.pop()
    dims += [1] * (3 - len(dims))                            # at least x, y, z
    return np.fromfile(base + ".cfl", dtype="<c8").reshape(dims, order="F")

def write_cfl(base, a):
    open(base + ".hdr", "w").write("# Dimensions\n" + " ".join(map(str, a.shape)) + " \n")
    np.asfortranarray(a.astype(np.complex64)).ravel(order="F").tofile(base + ".cfl")

def write_png(path, img):  # img: 2-D uint8, row 0 at the top
    h, w = img.shape
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))  # filter 0 per row; zlib does the rest
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))

def cmd_calib(traj, cal):
    # Samples (one contiguous range along the readout) that reach the corners of the cal^d box, and the even
    # grid that holds them: "first last grid".
    k = read_cfl(traj).real
    k = k.reshape(3, k.shape[1], -1)
    d = 3 if np.any(k[2] != 0) else 2
    r = np.sqrt((k[:d] ** 2).sum(0)).min(axis=1)            # per sample index, smallest radius over readouts
    need = (float(cal) / 2) * np.sqrt(d) + 1.0
    idx = np.nonzero(r <= need)[0]
    lo, hi = int(idx.min()), int(idx.max())
    g = 2 * int(np.ceil(np.abs(k[:d, lo:hi + 1]).max())) + 2
    print(lo, hi + 1, g, d)

def cmd_delta(out, nx, ny, nz):
    a = np.zeros((int(nx), int(ny), int(nz)), np.complex64)
    a[int(nx) // 2, int(ny) // 2, int(nz) // 2] = 1
    write_cfl(out, a)

def cmd_lambda(back, maps, beta):
    b = read_cfl(back)
    centre = float(abs(b[b.shape[0] // 2, b.shape[1] // 2, b.shape[2] // 2]))
    m = read_cfl(maps)                                       # [x, y, z, coils]
    energy = float((np.abs(m) ** 2).reshape(m.shape[0] * m.shape[1] * m.shape[2], -1).sum(-1).mean())
    print(f"{float(beta) * centre * energy:.6g} {centre:.6g} {energy:.6g}")

def planes(x):  # 2-D: the image; 3-D: the three central planes side by side (x right, y/z up)
    if x.shape[2] == 1:
        return [x[:, :, 0]]
    nx, ny, nz = x.shape
    return [x[:, :, nz // 2], x[:, ny // 2, :], x[nx // 2, :, :]]

def cmd_compare(forge_nii, bart_img, bart_maps, png, report):
    import nibabel
    f = np.asarray(nibabel.load(forge_nii).dataobj)
    b = read_cfl(bart_img)
    shape = b.shape[:3]
    f = f.reshape(shape)
    b = b.reshape(shape)
    m = read_cfl(bart_maps)
    mask = ((np.abs(m) ** 2).reshape(shape + (-1,), order="F").sum(-1) > 0)
    def fit(x, r):
        return np.vdot(x, r) / np.vdot(x, x)
    fm, bm = np.abs(f), np.abs(b)
    a_mag = fit(fm[mask], bm[mask]).real
    nrmse_mag = np.linalg.norm(a_mag * fm[mask] - bm[mask]) / np.linalg.norm(bm[mask])
    a_c = fit(f[mask], b[mask])
    nrmse_c = np.linalg.norm(a_c * f[mask] - b[mask]) / np.linalg.norm(b[mask])
    # forge's image energy outside BART's mask, relative to its total: what one tool keeps and the other does not
    outside = float((fm[~mask] ** 2).sum() / max((fm ** 2).sum(), 1e-30))
    scale = 1.1 * np.percentile(bm, 99.5)
    tiles = []
    for pf, pb in zip(planes(a_mag * fm), planes(bm)):
        row = [pf, pb, 5 * np.abs(pf - pb)]
        tiles.append(np.concatenate([np.clip(t / scale * 255, 0, 255).T[::-1] for t in row], axis=1))
    w = max(t.shape[1] for t in tiles)
    img = np.concatenate([np.pad(t, ((0, 0), (0, w - t.shape[1]))) for t in tiles], axis=0)
    write_png(png, img.astype(np.uint8))
    json.dump(dict(nrmse_magnitude=float(nrmse_mag), nrmse_complex=float(nrmse_c), mask_fraction=float(mask.mean()),
                   forge_energy_outside_bart_mask=outside), open(report, "w"))
    print(f"{nrmse_mag:.4f} {nrmse_c:.4f} {mask.mean():.3f} {outside:.4f}")

def cmd_report(path, key):
    r = json.load(open(path))
    if key == "iterations":
        print(max(s["iterations"] for rec in r["reconstructions"] for s in rec["solves"]))
    elif key == "summary":
        print(r["timing"]["summary"].replace("forge-recon: time ", ""))
    elif key == "operator":
        print(r["operator"]["name"])
    elif key == "matrix":
        print(" ".join(str(v) for v in r["data"]["matrix"]))

globals()["cmd_" + sys.argv[1]](*sys.argv[2:])
PYEOF
)
helper() { "$PYTHON" -c "$HELPER" "$@"; }
limit() { if [ "$LIMIT_S" != 0 ]; then timeout "$LIMIT_S" "$@"; else "$@"; fi; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

CPU_MODEL="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
MACHINE="$CPU_MODEL, $(nproc) cores"
[ $GPU = 1 ] && MACHINE="$MACHINE, $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
RESULTS="$WORK/results.md"
{
    echo "bench_real_data: $(date -u +%Y-%m-%dT%H:%MZ), $MACHINE, BART $(bart version), forge-recon $RECON"
    echo
    echo "| data set | run | load (1, 5, 15 min) | forge-recon: time to image | forge-recon's account | BART: ecalib + pics | NRMSE (magnitude, complex) |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
} | tee "$RESULTS"

for d in "${DATASETS[@]}"; do
    K="$DATA/$d/kspace" T="$DATA/$d/traj" W="$WORK/$d"
    mkdir -p "$W"
    runs=()
    for t in $THREADS; do runs+=("cpu:$t"); done
    [ $GPU = 1 ] && runs+=("gpu:${THREADS##* }")
    read -r lo hi grid dims <<<"$(helper calib "$T" 24)"
    lambda=""
    for run in "${runs[@]}"; do
        dev=${run%%:*} th=${run##*:}
        export OMP_NUM_THREADS=$th
        l0="$(load)"
        # forge-recon
        t0=$(now)
        # shellcheck disable=SC2086
        limit "$RECON" --bart-kspace "$K" --bart-traj "$T" -o "$W/forge_${dev}_$th" --complex -q $FORGE_ARGS \
            --report "$W/forge_${dev}_$th.json" --device "$dev" >"$W/forge_${dev}_$th.log" 2>&1 ||
            {
                echo "bench_real_data: $d: forge-recon failed (log: $W/forge_${dev}_$th.log)" >&2
                tail -3 "$W/forge_${dev}_$th.log" >&2
                continue
            }
        t1=$(now)
        forge_s=$(secs "$t0" "$t1")
        iters=$(helper report "$W/forge_${dev}_$th.json" iterations)
        account="$(helper report "$W/forge_${dev}_$th.json" summary); $(helper report "$W/forge_${dev}_$th.json" operator), $iters iterations"
        read -r nx ny nz <<<"$(helper report "$W/forge_${dev}_$th.json" matrix)"
        # BART: calibration (the clock runs from bart extract to ecalib), then pics
        bart_cell="(the CPU rows')"
        nrmse="(no BART image)"
        if [ "$dev" = cpu ] || [ ! -f "$W/bart_img.cfl" ]; then
            (
                cd "$W"
                dimarg="$grid:$grid:1"; bits=3
                [ "$dims" = 3 ] && { dimarg="$grid:$grid:$grid"; bits=7; }
                c0=$(now)
                bart extract 1 "$lo" "$hi" "$K" cal_k >/dev/null
                bart extract 1 "$lo" "$hi" "$T" cal_t >/dev/null
                limit bart nufft -i -d "$dimarg" cal_t cal_k cal_img >/dev/null
                bart fft -u $bits cal_img cal_grid >/dev/null
                if [ "$dims" = 3 ]; then bart resize -c 0 "$nx" 1 "$ny" 2 "$nz" cal_grid grid_full >/dev/null
                else bart resize -c 0 "$nx" 1 "$ny" cal_grid grid_full >/dev/null; fi
                limit bart ecalib -m1 -r 24 grid_full bart_maps >/dev/null
                c1=$(now)
                secs "$c0" "$c1" >calib_s
            ) || { echo "bench_real_data: $d: BART calibration failed" >&2; continue; }
            if [ -z "$lambda" ]; then
                helper delta "$W/delta" "$nx" "$ny" "$nz"
                bart nufft "$T" "$W/delta" "$W/delta_k" >/dev/null
                bart nufft -a -d "$nx:$ny:$nz" "$T" "$W/delta_k" "$W/delta_back" >/dev/null
                read -r lambda centre energy <<<"$(helper lambda "$W/delta_back" "$W/bart_maps" 1e-3)"
                echo "bench_real_data: $d: BART lambda $lambda = 1e-3 x normal-operator centre $centre x mean map energy $energy; calibration samples $lo..$((hi - 1)) on a ${grid} grid" >&2
            fi
            p0=$(now)
            if limit bart pics -S -l2 -r "$lambda" -i "$iters" -t "$T" "$K" "$W/bart_maps" "$W/bart_img" >"$W/bart_pics_$th.log" 2>&1; then
                p1=$(now)
                calib_s=$(cat "$W/calib_s")
                pics_s=$(secs "$p0" "$p1")
                bart_cell="$(awk -v a="$calib_s" -v b="$pics_s" 'BEGIN { printf "%.2f s (%.2f + %.2f)", a + b, a, b }')"
            else
                bart_cell="pics did not finish (log: $W/bart_pics_$th.log)"
            fi
        fi
        if [ -f "$W/bart_img.cfl" ]; then
            read -r nm nc frac outside <<<"$(helper compare "$W/forge_${dev}_$th.nii" "$W/bart_img" "$W/bart_maps" \
                "$PNG_DIR/$d.png" "$W/compare_${dev}_$th.json")"
            nrmse="$nm, $nc (mask $frac of the grid; forge's energy outside it $outside)"
        fi
        echo "| $d | $dev, OMP_NUM_THREADS=$th${FORGE_ARGS:+, forge-recon $FORGE_ARGS} | $l0 -> $(load) | $forge_s s | $account | $bart_cell | $nrmse |" | tee -a "$RESULTS"
    done
done
echo
echo "bench_real_data: PNGs in $PNG_DIR; table in $RESULTS"
