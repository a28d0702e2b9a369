#!/bin/bash
# forge-recon --stream and --server against careless and hostile senders (hostile_stream.py makes the streams and
# plays the clients): a coil count or trajectory dimension that changes mid-stream is refused as the file mode
# refuses it, even slice by slice; headers claiming 65535 slices, repetitions and contrasts cost no memory; a
# stream over --max-stream-memory fails at the cap (stdin and TCP) and the server goes on; a slow sender and a
# client that reads nothing are cut off after --read-timeout / --write-timeout while a good client connecting
# meanwhile is served within 2 s.
#   usage: test_stream_limits.sh FORGE_RECON WORKDIR PYTHON [sanitized]
#   (exit 77 = skipped without a python with the ismrmrd package: pip install ismrmrd)
source "$(dirname "$0")/common.sh"
RECON=$1; W=$2; PY=${FORGE_TEST_PYTHON:-${3:-python3}}; MODE=${4:-}
# the address-space limit of the claims' runs, as test_stream.sh sets it: 400 MB above the shared libraries
LIB_KB=$(ldd "$RECON" 2>/dev/null | awk '/=> \//{print $3}' | xargs -r stat -L -c %s | awk '{s += $1} END {print int(s / 1024)}')
LIMIT=$((${LIB_KB:-0} + 400000))
[ "$MODE" = sanitized ] && LIMIT=unlimited
if [ -e /dev/nvidiactl ] && ldd "$RECON" 2>/dev/null | grep -qE "libcudart|libcufft"; then LIMIT=unlimited; fi
"$PY" -c 'import ismrmrd.serialization, numpy' 2>/dev/null \
    || { echo "SKIP: $PY has no ismrmrd package (pip install ismrmrd) with numpy"; exit 77; }
HOSTILE="$(dirname "$0")/hostile_stream.py"
workdir "$W"
cd "$W" || fail "cannot enter $W"
"$RECON" --demo --demo-size 24 --demo-slices 2 --demo-coils 4 -n 1 -q -o "$W/demo" --device cpu >/dev/null 2>demo.stderr \
    || { cat demo.stderr >&2; fail "demo failed"; }
# the same acquisitions on a 720 x 720 grid: two images of 2 MB, more than a socket holds
"$PY" - "$W" <<'PY' || fail "could not write big.h5"
import sys, ismrmrd
w = sys.argv[1]
d = ismrmrd.Dataset(f"{w}/demo.h5", "dataset", create_if_needed=False)
h = ismrmrd.xsd.CreateFromDocument(d.read_xml_header())
for space in (h.encoding[0].encodedSpace, h.encoding[0].reconSpace):
    space.matrixSize.x = space.matrixSize.y = 720
o = ismrmrd.Dataset(f"{w}/big.h5", "dataset", create_if_needed=True)
o.write_xml_header(ismrmrd.xsd.ToXML(h))
for i in range(d.number_of_acquisitions()):
    o.append_acquisition(d.read_acquisition(i))
o.close()
PY
for case in coils claims stdin-cap server; do
    "$PY" "$HOSTILE" "$case" "$RECON" "$W" "$LIMIT" || { [ -f server.stderr ] && tail -20 server.stderr >&2; fail "$case"; }
done
