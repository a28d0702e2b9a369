#!/bin/bash
# No image the data do not determine is written. A single finite sample of 1e25 or 3e38 in one slice's data is left
# out (one warning naming the slice) and the image is the clean data's, in the file mode (coil maps estimated),
# --stream (slice by slice), --server and from BART arrays. All-zero k-space, coil maps that are zero on a whole
# slice and stored maps that are zero where the object is exit 2 with one line naming the slice, and write nothing; maps that miss part of the object are warned about. --server answers
# the failed client with a TEXT error and serves the next one.
#   usage: test_zero_images.sh FORGE_RECON FORGE_MRD_CFL WORKDIR PYTHON
#   (exit 77 = skipped without a python with h5py and numpy; the stream and server parts also need ismrmrd)
source "$(dirname "$0")/common.sh"
RECON=$1; CFL=$2; W=$3; PY=${FORGE_TEST_PYTHON:-${4:-python3}}
CLIENT="$(cd "$(dirname "$0")" && pwd)/mrd_stream_client.py"
"$PY" -c 'import h5py, numpy' 2>/dev/null || { echo "SKIP: $PY has no h5py and numpy"; exit 77; }
workdir "$W"
cd "$W" || fail "cannot enter $W"
"$RECON" --demo --demo-size 24 --demo-slices 2 --demo-coils 4 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>demo.stderr \
    || { cat demo.stderr >&2; fail "demo failed"; }

# edit.py SRC DST WHAT [VALUE]: a copy of the demo's file with one change. spike: VALUE at acquisition 2 (slice 1),
# sample 5, coil 1; data0: slice 1's data zero; csm0: every map zero; csm1: slice 1's maps zero; csmobject: the maps
# zero where the phantom exceeds 5% of its largest value; csmquarter: zero on the image's 6 leftmost columns.
# edit.py SRC.cfl DST.cfl spike|zero [VALUE]: a BART array (its .hdr copied) with element 5 of coil 1 set, or zero.
cat >edit.py <<'PY'
import sys, shutil, h5py, numpy as np
src, dst, what = sys.argv[1], sys.argv[2], sys.argv[3]
if src.endswith(".cfl"):
    shutil.copyfile(src[:-4] + ".hdr", dst[:-4] + ".hdr")
    a = np.fromfile(src, dtype=np.complex64)
    if what == "zero":
        a[:] = 0
    else:  # [1, samples, readouts, coils]: coil 1 starts at a quarter of a 4-coil array
        a[a.size // 4 + 5] = np.float32(sys.argv[4])
    a.tofile(dst)
    sys.exit(0)
shutil.copyfile(src, dst)
with h5py.File(dst, "r+") as f:
    d, c = f["dataset/data"], f["dataset/csm"]
    if what == "spike":
        rec = d[2]
        ns = int(rec["head"]["number_of_samples"])
        assert rec["head"]["idx"]["slice"] == 1
        data = np.array(rec["data"], dtype=np.float32)
        data[2 * (1 * ns + 5)] = np.float32(sys.argv[4])
        rec["data"] = data
        d[2] = rec
    elif what == "data0":
        for i in range(d.shape[0]):
            rec = d[i]
            if rec["head"]["idx"]["slice"] == 1:
                rec["data"] = np.zeros_like(rec["data"])
                d[i] = rec
    else:
        m = c[...]  # [1, coils, slices, y, x]
        if what == "csm0":
            zero = np.ones(m.shape[2:], bool)
        elif what == "csm1":
            zero = np.zeros(m.shape[2:], bool)
            zero[1] = True
        elif what == "csmobject":
            ph = np.abs(f["dataset/phantom"][...]["real"])[0]
            zero = ph > 0.05 * ph.max()
        else:
            zero = np.zeros(m.shape[2:], bool)
            zero[:, :, :6] = True
        for coil in range(m.shape[1]):
            m["real"][0, coil][zero] = 0
            m["imag"][0, coil][zero] = 0
        c[...] = m
PY
edit() { "$PY" edit.py "$@" || fail "edit.py $* failed"; }

# ---------------------------------------------------------------- spikes: left out, the clean image
for v in 1e25 3e38; do edit demo.h5 spike$v.h5 spike $v; done
run_ok() {  # name, forge-recon arguments: exit 0, outputs written
    local name=$1; shift
    "$RECON" "$@" -o "$W/$name" -n 5 --device cpu >"$name.stdout" 2>"$name.stderr" \
        || { cat "$name.stderr" >&2; fail "$name: forge-recon failed"; }
    [ -s "$name.nii" ] || fail "$name: no image written"
}
close_to() {  # name, reference name: the images agree after the scale fit (a zero or spike-ruined image: ~1)
    local d; d=$("$CFL" compare "$2.nii" "$1.nii" | sed -n 's/relative difference \([0-9.eE+-]*\).*/\1/p')
    [ -n "$d" ] && le "$d" 0.01 || fail "$1: relative difference ${d:-?} from $2's image (expected <= 0.01)"
    echo "$d"
}
spike_warned() {  # name: one warning naming slice 1
    grep -q "slice 1: 1 k-space sample(s) left out as spikes" "$1.stderr" \
        || { cat "$1.stderr" >&2; fail "$1: no warning naming slice 1's spike"; }
}
run_ok clean demo.h5 --smaps estimate --fieldmap none
for v in 1e25 3e38; do
    run_ok file$v spike$v.h5 --smaps estimate --fieldmap none
    spike_warned file$v
    echo "ok  file mode, a sample of $v in slice 1: left out, relative difference $(close_to file$v clean) from the clean image"
done

"$CFL" bart demo.h5 b >/dev/null || fail "forge_mrd_cfl bart failed"
run_ok bclean --bart-kspace b_k --bart-traj b_t
for v in 1e25 3e38; do
    edit b_k.cfl bk$v.cfl spike $v
    run_ok bart$v --bart-kspace bk$v --bart-traj b_t
    grep -q "slice 0: 1 k-space sample(s) left out as spikes" bart$v.stderr || { cat bart$v.stderr >&2; fail "bart$v: no warning"; }
    echo "ok  BART arrays, a sample of $v: left out, relative difference $(close_to bart$v bclean) from the clean image"
done

# ---------------------------------------------------------------- refused: exit 2, one line, nothing written
refuse() {  # name, expected text, forge-recon arguments
    local name=$1 expected=$2; shift 2
    "$RECON" "$@" -o "$W/refused_$name" -n 5 --device cpu >"$name.stdout" 2>"$name.stderr"
    local rc=$?
    [ $rc -eq 2 ] || { cat "$name.stderr" >&2; fail "$name: exit $rc, expected 2"; }
    [ "$(grep -c '^forge-recon: error: ' "$name.stderr")" -eq 1 ] || { cat "$name.stderr" >&2; fail "$name: not one error line"; }
    grep -qF -- "$expected" "$name.stderr" || { cat "$name.stderr" >&2; fail "$name: the error does not say '$expected'"; }
    ls "$W"/refused_* >/dev/null 2>&1 && fail "$name: the refused run left an output"
    echo "ok  refused $name: $(sed -n 's/forge-recon: error: //p' "$name.stderr")"
}
edit demo.h5 data0.h5 data0
edit demo.h5 csm0.h5 csm0
edit demo.h5 csm1.h5 csm1
edit demo.h5 csmobject.h5 csmobject
edit demo.h5 csmquarter.h5 csmquarter
edit b_k.cfl bk0.cfl zero
edit b_s.cfl bs0.cfl zero
refuse data0 "data0.h5: slice 1: the k-space data are all zero" data0.h5 --fieldmap none
refuse csm0 "slice 0: the coil maps are zero on every pixel (/dataset/csm in the input" csm0.h5 --fieldmap none
refuse csm1 "slice 1: the coil maps are zero on every pixel (/dataset/csm in the input" csm1.h5 --fieldmap none
refuse csmobject "slice 0: the coil maps (/dataset/csm in the input) are zero where the data's gridded image holds" \
    csmobject.h5 --fieldmap none
grep -q "do not cover the object" csmobject.stderr || fail "csmobject: the error does not say the maps miss the object"
refuse bart_data0 "slice 0: the k-space data are all zero" --bart-kspace bk0 --bart-traj b_t --bart-maps b_s
refuse bart_maps0 "slice 0: the coil maps are zero on every pixel (--bart-maps bs0.cfl" \
    --bart-kspace b_k --bart-traj b_t --bart-maps bs0

# maps that miss a part of the object: written, with a warning per slice saying how much
run_ok quarter csmquarter.h5 --fieldmap none
[ "$(grep -c 'that part of the object is set to zero' quarter.stderr)" -eq 2 ] \
    || { cat quarter.stderr >&2; fail "quarter: not one warning per slice"; }
echo "ok  maps zero on the 6 leftmost columns: written, warned: $(grep -m1 -o 'slice 0: .*energy' quarter.stderr)"

# ---------------------------------------------------------------- --stream (slice by slice) and --server
"$PY" -c 'import ismrmrd.serialization' 2>/dev/null || { echo "SKIP: the stream part ($PY has no ismrmrd package)"; exit 0; }
stream() {  # name, file: the client's JSON in name.json, forge-recon's stderr in name.stderr
    "$PY" "$CLIENT" "$2" --flag-slices --save "$1.npz" -- "$RECON" --stream --smaps estimate --fieldmap none -n 5 \
        --device cpu >"$1.json" 2>"$1.stderr" || { cat "$1.stderr" >&2; fail "$1: the stream client failed"; }
}
stream sclean demo.h5
for v in 1e25 3e38; do
    stream s$v spike$v.h5
    spike_warned s$v
    "$PY" - s$v <<'PY' || fail "s$v: the stream's images are not the clean stream's"
import sys, json, numpy as np
r = json.load(open(f"{sys.argv[1]}.json"))
assert r["returncode"] == 0 and r["images"] == 2 and not r["texts"], r
a, b = np.load(f"{sys.argv[1]}.npz")["data"], np.load("sclean.npz")["data"]
d = np.linalg.norm(a - b) / np.linalg.norm(b)
assert d <= 0.01, d
print(f"ok  --stream slice by slice, a sample of {sys.argv[1][1:]} in slice 1: left out, relative difference {d:.3g}")
PY
done
stream szero data0.h5
"$PY" - <<'PY' || { cat szero.stderr >&2; fail "szero: the stream of all-zero data was not refused"; }
import json
r = json.load(open("szero.json"))
assert r["returncode"] == 2 and r["images"] == 1, r  # slice 0 was sent before slice 1 arrived
assert len(r["texts"]) == 1 and "slice 1: the k-space data are all zero" in r["texts"][0], r
PY
[ "$(grep -c '^forge-recon: error: .*slice 1: the k-space data are all zero' szero.stderr)" -eq 1 ] \
    || { cat szero.stderr >&2; fail "szero: not one error line"; }
echo "ok  --stream: slice 1's all-zero data refused after slice 0's image, exit 2, one TEXT message and one line"

"$RECON" --server --port 0 --connections 2 --smaps estimate --fieldmap none -n 5 --device cpu >server.stdout \
    2>server.stderr &
server=$!
for _ in $(seq 100); do grep -q "listening on" server.stdout 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' server.stdout)
[ -n "$port" ] || { kill $server; cat server.stderr >&2; fail "the server did not say where it listens"; }
"$PY" "$CLIENT" data0.h5 --port "$port" >served0.json 2>served0.stderr \
    || { kill $server 2>/dev/null; fail "the first client of the server failed"; }
"$PY" "$CLIENT" spike3e38.h5 --port "$port" --save served.npz >served.json 2>served.stderr \
    || { kill $server 2>/dev/null; fail "the second client of the server failed"; }
wait $server || { cat server.stderr >&2; fail "the server exited with an error"; }
"$PY" - <<'PY' || { cat server.stderr >&2; fail "the server's replies are wrong"; }
import json, numpy as np
r0, r1 = json.load(open("served0.json")), json.load(open("served.json"))
assert r0["images"] == 0 and len(r0["texts"]) == 1 and "slice 1: the k-space data are all zero" in r0["texts"][0], r0
assert r1["images"] == 2 and not r1["texts"], r1
a, b = np.load("served.npz")["data"], np.load("sclean.npz")["data"]
assert np.linalg.norm(a - b) / np.linalg.norm(b) <= 0.01
PY
grep -q "forge-recon: error: client 1.*slice 1: the k-space data are all zero" server.stderr \
    || { cat server.stderr >&2; fail "the server did not log client 1's error"; }
echo "ok  --server: all-zero data answered with a TEXT error, then the next client's spike left out"
exit 0
