#!/bin/bash
# forge-recon --stream: the python ismrmrd package (ismrmrd.serialization, the reference implementation of the MRD
# streaming protocol) sends the oblique demo file's header and acquisitions on stdin; the images that come back on
# stdout, read by its ProtocolDeserializer, equal --mrd-out's images of the same file (values, geometry, indices),
# and nothing but the stream reaches stdout. Cut, garbled or hostile streams (no CLOSE, an unknown message, an
# acquisition before the header or claiming 65535 x 65535 values in a few bytes, text of 4 GiB, an image sent
# in) exit 2 with one line, within the memory limit, writing no image. --server serves the same over TCP, one
# connection after another, answering a failed one with a TEXT message and going on.
#   usage: test_stream.sh FORGE_RECON FORGE_MRD_CFL WORKDIR PYTHON [sanitized]
#   ("sanitized": an AddressSanitizer build, run without ulimit -v: its shadow memory needs terabytes of addresses)
#   (exit 77 = skipped without a python with the ismrmrd package: pip install ismrmrd)
source "$(dirname "$0")/common.sh"
RECON=$1; CFL=$2; W=$3; PY=${FORGE_TEST_PYTHON:-${4:-python3}}; MODE=${5:-}
# 400 MB above what the program's shared libraries map (cuFFT alone maps ~280 MB in CUDA builds), one BLAS and two
# OpenMP threads, as test_input_limits.sh does; no limit under AddressSanitizer, nor in a CUDA build where an NVIDIA
# driver is loaded (its address-space reservations exceed any such limit)
LIB_KB=$(ldd "$RECON" 2>/dev/null | awk '/=> \//{print $3}' | xargs -r stat -L -c %s | awk '{s += $1} END {print int(s / 1024)}')
LIMIT=$((${LIB_KB:-0} + 400000))
[ "$MODE" = sanitized ] && LIMIT=unlimited
if [ -e /dev/nvidiactl ] && ldd "$RECON" 2>/dev/null | grep -qE "libcudart|libcufft"; then LIMIT=unlimited; fi
"$PY" -c 'import ismrmrd.serialization, h5py, numpy' 2>/dev/null \
    || { echo "SKIP: $PY has no ismrmrd package (pip install ismrmrd) with h5py and numpy"; exit 77; }
workdir "$W"
cd "$W" || fail "cannot enter $W"
"$RECON" --demo --demo-size 24 --demo-slices 2 --demo-coils 4 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>demo.stderr \
    || { cat demo.stderr >&2; fail "demo failed"; }
"$CFL" orient demo.h5 oblique.h5 0.8660254 0.5 0 -0.4330127 0.75 0.5 12.5 -30 41 6 240 180 || fail "orient failed"
# the reference: the same file read as a file, coil maps estimated and no field map, as the stream must (a stream
# carries neither the csm nor the fieldmap of the demo's file)
"$RECON" oblique.h5 --smaps estimate --fieldmap none -n 3 --device cpu -o "$W/file" --mrd-out "$W/file_images.h5" >file.stdout \
    2>file.stderr || { cat file.stderr >&2; fail "the file run failed"; }

"$PY" - "$W" "$RECON" <<'PY' || fail "the stream's images are not the file's"
import sys, io, subprocess, numpy as np, h5py, ismrmrd
from ismrmrd.serialization import ProtocolSerializer, ProtocolDeserializer
w, recon = sys.argv[1], sys.argv[2]
d = ismrmrd.Dataset(f"{w}/oblique.h5", "dataset", create_if_needed=False)
buf = io.BytesIO()
with ProtocolSerializer(buf) as s:
    s.serialize(ismrmrd.xsd.CreateFromDocument(d.read_xml_header()))
    for i in range(d.number_of_acquisitions()):
        s.serialize(d.read_acquisition(i))
stream = buf.getvalue()
with open(f"{w}/good.mrd", "wb") as f:
    f.write(stream)
p = subprocess.run([recon, "--stream", "--smaps", "estimate", "-n", "3", "--device", "cpu"], input=stream,
                   capture_output=True)
assert p.returncode == 0, p.stderr.decode()
assert b"forge-recon: wrote 2 images to the MRD stream" in p.stderr, p.stderr.decode()
images = list(ProtocolDeserializer(io.BytesIO(p.stdout)).deserialize())  # ends at CLOSE: nothing else on stdout
f = h5py.File(f"{w}/file_images.h5", "r")["dataset/image_1"]
hdr, data = f["header"][:], f["data"][:]
assert len(images) == 2 and all(isinstance(im, ismrmrd.Image) for im in images), images
for k, im in enumerate(images):
    h = hdr[k]
    for field in ("position", "read_dir", "phase_dir", "slice_dir", "field_of_view", "matrix_size"):
        assert np.array_equal(np.array(getattr(im, field)[:]), np.array(h[field])), (field, getattr(im, field)[:], h[field])
    for field in ("slice", "repetition", "contrast", "image_index", "image_series_index", "image_type", "data_type"):
        assert getattr(im, field) == h[field], (field, getattr(im, field), h[field])
    assert np.array_equal(im.data, data[k]), f"image {k}'s values differ from the file's"
    meta = ismrmrd.Meta.deserialize(im.attribute_string)
    assert meta["iterations"] == "3" and meta["source"] == "stdin", dict(meta)
print("ok  --stream: ismrmrd.serialization's stream in, 2 images out equal to --mrd-out's of the file (values, "
      "geometry, indices, meta)")

# hostile streams, written here byte by byte
import struct
head, acq = stream[:stream.index(struct.pack("<H", 1008))], stream[stream.index(struct.pack("<H", 1008)):]
bad = {
    "cut": stream[: len(stream) // 2],
    "noclose": stream[:-2],
    "garbage": b"\x07\x00" + b"x" * 100,
    "unknown": head + struct.pack("<H", 999) + b"\x00" * 8,
    "beforeheader": acq,
    "bigtext": struct.pack("<HI", 5, 0xFFFFFFFF) + b"\x00" * 64,
    "image": head + struct.pack("<H", 1022) + b"\x00" * 300,
    "empty": b"",
    "noacq": head + struct.pack("<H", 4),
}
# an acquisition claiming 65535 samples x 65535 channels (34 GB) followed by 1 kB; number_of_samples and
# active_channels sit at bytes 34 and 38 of ISMRMRD's acquisition header
h = bytearray(acq[2:2 + 340])
assert ismrmrd.AcquisitionHeader.number_of_samples.offset == 34 and ismrmrd.AcquisitionHeader.active_channels.offset == 38
struct.pack_into("<H", h, 34, 65535)
struct.pack_into("<H", h, 38, 65535)
bad["huge"] = head + struct.pack("<H", 1008) + bytes(h) + b"\x00" * 1024
for name, b in bad.items():
    with open(f"{w}/{name}.mrd", "wb") as f:
        f.write(b)
PY
refuse() {  # name, expected text[, options]
    local name=$1 expected=$2
    shift 2
    ( ulimit -v $LIMIT && export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=2 && exec "$RECON" --stream -n 1 --device cpu "$@" <"$name.mrd" >"$name.out" 2>"$name.stderr" )
    local rc=$?
    [ $rc -eq 2 ] || { cat "$name.stderr" >&2; fail "$name: exit $rc, expected 2"; }
    [ "$(grep -c 'forge-recon: error:' "$name.stderr")" -eq 1 ] || { cat "$name.stderr" >&2; fail "$name: not one error line"; }
    grep -qF -- "$expected" "$name.stderr" || { cat "$name.stderr" >&2; fail "$name: the error does not say '$expected'"; }
    [ -s "$name.out" ] && fail "$name: the refused stream wrote to stdout"
    echo "ok  refused $name: $(sed -n 's/forge-recon: error: //p' "$name.stderr" | cut -c1-150)"
}
refuse cut "ended inside"
refuse noclose "without a CLOSE message"
refuse garbage "unknown message id 7"
refuse unknown "unknown message id 999"
refuse beforeheader "before its XML header"
refuse bigtext "of 4294967295 bytes (at most 16 MiB)"
refuse image "forge-recon reconstructs acquisitions only"
refuse empty "ended after 0 bytes without a CLOSE message"
refuse noacq "has no acquisitions"
# the claim over --max-stream-memory is refused at the acquisition's header; under a cap above it, the values are
# read in pieces and the stream ends first
refuse huge "over the cap of 1024.0 MiB (--max-stream-memory)" --max-stream-memory 1GiB
cp huge.mrd huge_uncapped.mrd
refuse huge_uncapped "ended inside acquisition 0's" --max-stream-memory 64GiB
"$RECON" --stream oblique.h5 >both.out 2>both.stderr
[ $? -eq 2 ] && grep -q "drop the input file" both.stderr || { cat both.stderr >&2; fail "--stream with an input file not refused"; }
echo "ok  refused --stream with an input file"

# slice by slice: the header's encodingLimits/slice and each slice's last acquisition flagged ACQ_LAST_IN_SLICE, as a
# scanner sends them. The slices go out 2 s apart (a process start and one slice took 1.6 s on a loaded 2-core
# machine); the first image must come back before the last slice is sent, and every image must be the file mode's
# (coil maps from a file, then estimated per slice: with --overlap on, slice 1's maps are estimated while slice 0
# solves on the solver's thread)
CLIENT="$(dirname "$0")/mrd_stream_client.py"
"$RECON" oblique.h5 --smaps demo_estimated_smaps.nii --fieldmap none -n 3 --device cpu -o "$W/file_maps" \
    --mrd-out "$W/file_maps_images.h5" >/dev/null 2>file_maps.stderr \
    || { cat file_maps.stderr >&2; fail "the file run with maps failed"; }
"$PY" "$CLIENT" oblique.h5 --flag-slices --delay 2.0 --save paced.npz -- "$RECON" --stream --smaps \
    demo_estimated_smaps.nii --fieldmap none -n 3 --device cpu >paced.json 2>paced.stderr \
    || { cat paced.stderr >&2; fail "the paced client failed"; }
"$PY" "$CLIENT" oblique.h5 --flag-slices --save flagged.npz -- "$RECON" --stream --smaps estimate -n 3 --device cpu \
    --overlap on >flagged.json 2>flagged.stderr || { cat flagged.stderr >&2; fail "the flagged stream failed"; }
for run in paced flagged; do
    grep -q "images sent as their slices completed" $run.stderr \
        || { cat $run.stderr >&2; fail "$run: not reconstructed slice by slice"; }
done
"$PY" - "$W" <<'PY' || fail "the slice-by-slice images are not the file's, or came too late"
import sys, json, numpy as np, h5py
w = sys.argv[1]
for run, ref in (("paced", "file_maps_images.h5"), ("flagged", "file_images.h5")):
    r = json.load(open(f"{w}/{run}.json"))
    assert r["returncode"] == 0 and r["images"] == 2 and not r["texts"], r
    got = np.load(f"{w}/{run}.npz")
    f = h5py.File(f"{w}/{ref}", "r")["dataset/image_1"]
    data, hdr = f["data"][:], f["header"][:]
    idx = [[int(h["slice"]), int(h["repetition"]), int(h["contrast"]), int(h["image_index"])] for h in hdr]
    assert got["index"].tolist() == idx, (got["index"].tolist(), idx)
    err = np.abs(got["data"] - data).max() / np.abs(data).max()
    assert err <= 1e-6, f"{run}: relative difference {err} from the file mode's images"
r = json.load(open(f"{w}/paced.json"))
assert r["first_image_s"] < r["last_acquisition_sent_s"], \
    f"the first image came {r['first_image_s']:.2f} s, after the last acquisition was sent ({r['last_acquisition_sent_s']:.2f} s)"
print(f"ok  slice by slice: the file mode's images; the first {r['first_image_s']:.2f} s after the start, before the "
      f"last slice was sent ({r['last_acquisition_sent_s']:.2f} s)")
PY

# the same over TCP: a --server sends each slice's image while the client is still sending (--overlap on: the
# connection's solver thread shares its compute turn)
"$RECON" --server --port 0 --connections 1 --smaps demo_estimated_smaps.nii --fieldmap none -n 3 --device cpu \
    --overlap on >server1.stdout 2>server1.stderr &
server1=$!
for _ in $(seq 100); do grep -q "listening on" server1.stdout 2>/dev/null && break; sleep 0.1; done
port1=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' server1.stdout)
[ -n "$port1" ] || { kill $server1; cat server1.stderr >&2; fail "the server did not say where it listens"; }
"$PY" "$CLIENT" oblique.h5 --port "$port1" --flag-slices --delay 2.0 --save served.npz >served.json 2>served.stderr \
    || { kill $server1 2>/dev/null; cat served.stderr >&2; fail "the client of the server failed"; }
wait $server1 || { cat server1.stderr >&2; fail "the server failed"; }
"$PY" - "$W" <<'PY' || fail "the server's slice-by-slice images are not the stream's, or came too late"
import sys, json, numpy as np
w = sys.argv[1]
r = json.load(open(f"{w}/served.json"))
assert r["images"] == 2 and not r["texts"] and r["first_image_s"] < r["last_acquisition_sent_s"], r
a, b = np.load(f"{w}/served.npz"), np.load(f"{w}/paced.npz")
assert np.array_equal(a["data"], b["data"]) and np.array_equal(a["index"], b["index"])
print(f"ok  --server slice by slice: --stream's images, the first {r['first_image_s']:.2f} s after the start, before "
      f"the last slice was sent ({r['last_acquisition_sent_s']:.2f} s)")
PY

# two repetitions, repetition 1 sent first: its slices wait for repetition 0's coil maps (the file mode estimates
# each slice's maps from its first frame), and every image carries the file mode's image_index (two solver lanes:
# the groups solve two at a time and their images go out in the order the groups completed)
"$PY" - "$W" <<'PY' || fail "could not write the file of two repetitions"
import sys, ismrmrd
w = sys.argv[1]
d = ismrmrd.Dataset(f"{w}/oblique.h5", "dataset", create_if_needed=False)
h = ismrmrd.xsd.CreateFromDocument(d.read_xml_header())
h.encoding[0].encodingLimits.slice = ismrmrd.xsd.limitType(minimum=0, maximum=1, center=0)
h.encoding[0].encodingLimits.repetition = ismrmrd.xsd.limitType(minimum=0, maximum=1, center=0)
acqs = [d.read_acquisition(i) for i in range(d.number_of_acquisitions())]
last = {a.idx.slice: i for i, a in enumerate(acqs)}
o = ismrmrd.Dataset(f"{w}/reps.h5", "dataset", create_if_needed=True)
o.write_xml_header(ismrmrd.xsd.ToXML(h))
for rep in (1, 0):
    for i, a in enumerate(acqs):
        b = ismrmrd.Acquisition(a.getHead(), a.data * (0.6 if rep else 1.0), a.traj)
        b.idx.repetition = rep
        if i == last[a.idx.slice]:
            b.set_flag(ismrmrd.ACQ_LAST_IN_SLICE)
        o.append_acquisition(b)
o.close()
PY
"$RECON" reps.h5 --smaps estimate --fieldmap none -n 3 --device cpu -o "$W/reps_file" --mrd-out "$W/reps_file.h5" \
    >/dev/null 2>reps_file.stderr || { cat reps_file.stderr >&2; fail "the file run of reps.h5 failed"; }
"$PY" "$CLIENT" reps.h5 --save reps.npz -- "$RECON" --stream --smaps estimate -n 3 --device cpu --overlap on --solvers 2 >reps.json \
    2>reps.stderr || { cat reps.stderr >&2; fail "the stream of reps.h5 failed"; }
grep -q "4 images sent as their slices completed" reps.stderr \
    || { cat reps.stderr >&2; fail "reps.h5: not slice by slice"; }
"$PY" - "$W" <<'PY' || fail "the images of two repetitions are not the file's"
import sys, numpy as np, h5py
w = sys.argv[1]
got = np.load(f"{w}/reps.npz")
f = h5py.File(f"{w}/reps_file.h5", "r")["dataset/image_1"]
data, hdr = f["data"][:], f["header"][:]
idx = [[int(h["slice"]), int(h["repetition"]), int(h["contrast"]), int(h["image_index"])] for h in hdr]
order = np.argsort(got["index"][:, 3])
assert got["index"][order].tolist() == idx, (got["index"].tolist(), idx)
assert got["index"][:2, :2].tolist() == [[0, 0], [0, 1]], got["index"].tolist()  # (0, 1) waited for (0, 0)
err = np.abs(got["data"][order] - data).max() / np.abs(data).max()
assert err <= 1e-6, f"relative difference {err} from the file mode's images"
print("ok  two repetitions, repetition 1 first: the file mode's images and indices, maps from repetition 0")
PY

# failures after an image was sent: the image of the complete slice, then a TEXT error and CLOSE, exit 2
"$PY" - "$W" <<'PY' || fail "could not write the flagged streams"
import sys, io, ismrmrd
from ismrmrd.serialization import ProtocolSerializer
w = sys.argv[1]
d = ismrmrd.Dataset(f"{w}/oblique.h5", "dataset", create_if_needed=False)
def stream(last, slices=2):  # 'last': the acquisitions flagged ACQ_LAST_IN_SLICE
    h = ismrmrd.xsd.CreateFromDocument(d.read_xml_header())
    h.encoding[0].encodingLimits.slice = ismrmrd.xsd.limitType(minimum=0, maximum=slices - 1, center=0)
    buf = io.BytesIO()
    with ProtocolSerializer(buf) as s:
        s.serialize(h)
        for i in range(d.number_of_acquisitions()):
            a = d.read_acquisition(i)
            if i in last:
                a.set_flag(ismrmrd.ACQ_LAST_IN_SLICE)
            s.serialize(a)
    return buf.getvalue()
n = d.number_of_acquisitions()
slice0 = sum(d.read_acquisition(i).idx.slice == 0 for i in range(n))
good = stream({slice0 - 1, n - 1})
for name, b in (("flagged_cut", good[: len(good) - 100]),
                ("flagged_late", stream({0, n - 1})),  # slice 0 flagged complete at its first acquisition
                ("outside", stream({n - 1}, slices=1))):  # slice 1 outside the limits, nothing sent yet
    with open(f"{w}/{name}.mrd", "wb") as f:
        f.write(b)
PY
# an acquisition outside the header's limits before any image was sent: the whole stream, as the file mode reads it
"$RECON" --stream --smaps estimate -n 3 --device cpu <outside.mrd >outside.out 2>outside.stderr \
    || { cat outside.stderr >&2; fail "outside.mrd: the whole-stream path failed"; }
grep -q "once the stream is complete (acquisition 2 (slice 1, repetition 0, contrast 0) lies outside" outside.stderr \
    || { cat outside.stderr >&2; fail "outside.mrd: no note of the acquisition outside the limits"; }
"$PY" - outside.out "$W/file_images.h5" <<'PY' || fail "outside.mrd: the images are not the file mode's"
import sys, io, numpy as np, h5py, ismrmrd
from ismrmrd.serialization import ProtocolDeserializer
with open(sys.argv[1], "rb") as f:
    m = list(ProtocolDeserializer(io.BytesIO(f.read())).deserialize())
data = h5py.File(sys.argv[2], "r")["dataset/image_1/data"][:]
assert len(m) == 2 and all(np.array_equal(a.data, b) for a, b in zip(m, data)), len(m)
PY
echo "ok  outside.mrd: an acquisition outside the limits before any image: the whole stream, the file's images"
sent_then_fail() {  # name, expected text, options (--overlap on: the error waits for the image solving on the other thread)
    local name=$1 expected=$2
    # shellcheck disable=SC2086
    "$RECON" --stream --smaps estimate -n 3 --device cpu $3 <"$name.mrd" >"$name.out" 2>"$name.stderr"
    local rc=$?
    [ $rc -eq 2 ] || { cat "$name.stderr" >&2; fail "$name: exit $rc, expected 2"; }
    [ "$(grep -c 'forge-recon: error:' "$name.stderr")" -eq 1 ] || { cat "$name.stderr" >&2; fail "$name: not one error line"; }
    "$PY" - "$name.out" "$expected" <<'PY' || fail "$name: not one image, then the error as TEXT, then CLOSE"
import sys, io, ismrmrd
from ismrmrd.serialization import ProtocolDeserializer
with open(sys.argv[1], "rb") as f:
    m = list(ProtocolDeserializer(io.BytesIO(f.read())).deserialize())
assert len(m) == 2 and isinstance(m[0], ismrmrd.Image) and m[0].slice == 0, m
assert isinstance(m[1], str) and m[1].startswith("forge-recon: error:") and sys.argv[2] in m[1], m[1]
PY
    echo "ok  $name: slice 0's image, then the error: $(sed -n 's/forge-recon: error: //p' "$name.stderr" | cut -c1-120)"
}
# --solvers without solver threads is refused before any image
"$RECON" --stream --smaps estimate -n 3 --device cpu --overlap off --solvers 2 <flagged_late.mrd >solvers_off.out \
    2>solvers_off.stderr && fail "--solvers 2 --overlap off was accepted"
grep -q "error: --solvers 2: groups solve on solver threads only with --overlap on" solvers_off.stderr \
    || { cat solvers_off.stderr >&2; fail "--solvers 2 --overlap off: no error naming the options"; }
[ -s solvers_off.out ] && fail "--solvers 2 --overlap off wrote images"
echo "ok  --solvers 2 with --overlap off is refused: $(sed -n 's/forge-recon: error: //p' solvers_off.stderr)"
sent_then_fail flagged_cut "ended inside" "--overlap off"
sent_then_fail flagged_cut "ended inside" "--overlap on"
sent_then_fail flagged_late "comes after its group was complete" "--overlap on --solvers 2"

# --server: five connections on a free port, one after another: the good stream gets the images --stream writes;
# a stream cut mid-way, garbage and an unsupported message (an image sent in) each get a TEXT message with the
# error and CLOSE; and the server goes on to serve the fifth, good again
"$RECON" --stream --smaps estimate -n 3 --device cpu <good.mrd >good.out 2>good.stderr \
    || fail "--stream of good.mrd failed"
# the demo's file gives no slice count (encodingLimits/slice) and flags nothing: read whole, as before
grep -q "reconstructing once the stream is complete (its header's encodingLimits do not give the slice count" \
    good.stderr || { cat good.stderr >&2; fail "good.mrd: no note that the whole stream is read first"; }
"$RECON" --server --port 0 --connections 5 --smaps estimate -n 3 --device cpu >server.stdout 2>server.stderr &
server=$!
for _ in $(seq 100); do grep -q "listening on" server.stdout 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' server.stdout)
[ -n "$port" ] || { kill $server; cat server.stderr >&2; fail "the server did not say where it listens"; }
"$PY" - "$W" "$port" <<'PY' || { kill $server 2>/dev/null; fail "the server's replies are wrong"; }
import sys, io, socket, pathlib, ismrmrd
from ismrmrd.serialization import ProtocolDeserializer
w, port = sys.argv[1], int(sys.argv[2])
def ask(payload):
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := s.recv(1 << 16):
            reply += chunk
    return reply
def images(reply):
    return list(ProtocolDeserializer(io.BytesIO(reply)).deserialize())
def same(got, client):  # --stream's images but for the meta attribute naming the source
    assert len(got) == len(expected) == 2, (len(got), len(expected))
    for a, b in zip(got, expected):
        assert (a.data == b.data).all(), "values differ from --stream's"
        assert a.position[:] == b.position[:] and a.read_dir[:] == b.read_dir[:] and a.slice == b.slice
        assert a.image_index == b.image_index and a.image_type == b.image_type
        meta = ismrmrd.Meta.deserialize(a.attribute_string)
        assert meta["source"].startswith(f"client {client} (127.0.0.1:"), meta["source"]
good = pathlib.Path(f"{w}/good.mrd").read_bytes()
expected = images(pathlib.Path(f"{w}/good.out").read_bytes())
same(images(ask(good)), 1)
for name, said in (("cut", "ended inside"), ("garbage", "unknown message id 7"),
                   ("image", "forge-recon reconstructs acquisitions only")):
    payload = good[: len(good) // 2] if name == "cut" else pathlib.Path(f"{w}/{name}.mrd").read_bytes()
    msgs = images(ask(payload))
    assert len(msgs) == 1 and isinstance(msgs[0], str) and said in msgs[0], (name, msgs)
same(images(ask(good)), 5)
print("ok  --server: 5 connections: --stream's images; a TEXT error each for a cut stream, garbage and an image "
      "sent in; then the images again")
PY
wait $server || { cat server.stderr >&2; fail "the server exited with an error after 5 connections"; }
for client in 2 3 4; do
    [ "$(grep -c "forge-recon: error: client $client" server.stderr)" -eq 1 ] ||
        { cat server.stderr >&2; fail "client $client's refused stream is not logged"; }
done
exit 0
