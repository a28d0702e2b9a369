#!/usr/bin/env python3
"""Sends an ISMRMRD file to forge-recon as a scanner does and times the images that come back.

The acquisitions go out through ismrmrd.serialization's ProtocolSerializer, slice by slice with --delay seconds
between slices (a scanner's acquisition time); with --flag-slices the header gets encodingLimits/slice and each
slice's last acquisition ACQ_LAST_IN_SLICE, as scanners set them (forge-recon --demo's files carry neither). The
images are read on another thread as they arrive. Prints one JSON line: when the first image arrived and when the
last acquisition was sent (seconds from the start), the total, and the images' count.

    mrd_stream_client.py FILE.h5 [--delay S] [--flag-slices] [--save OUT.npz] -- forge-recon --stream [options]
    mrd_stream_client.py FILE.h5 --port P [...]          (a forge-recon --server)
"""
import argparse
import json
import socket
import subprocess
import sys
import threading
import time

import ismrmrd
import numpy as np
from ismrmrd.serialization import ProtocolDeserializer, ProtocolSerializer


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds between slices")
    ap.add_argument("--flag-slices", action="store_true")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--save", default="")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    a.command = argv[cut + 1:]
    d = ismrmrd.Dataset(a.file, "dataset", create_if_needed=False)
    header = ismrmrd.xsd.CreateFromDocument(d.read_xml_header())
    acqs = [d.read_acquisition(i) for i in range(d.number_of_acquisitions())]
    slices = sorted({q.idx.slice for q in acqs})
    if a.flag_slices:
        header.encoding[0].encodingLimits.slice = ismrmrd.xsd.limitType(minimum=0, maximum=max(slices), center=0)
        last = {q.idx.slice: i for i, q in enumerate(acqs)}
        for i in last.values():
            acqs[i].set_flag(ismrmrd.ACQ_LAST_IN_SLICE)

    if a.port:
        sock = socket.create_connection(("127.0.0.1", a.port), timeout=120)
        out, inp, proc = sock.makefile("wb"), sock.makefile("rb"), None
    else:
        proc = subprocess.Popen(a.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        out, inp = proc.stdin, proc.stdout
    t0 = time.monotonic()
    got, first = [], [None]

    def receive():
        for m in ProtocolDeserializer(inp).deserialize():
            if first[0] is None and isinstance(m, ismrmrd.Image):
                first[0] = time.monotonic() - t0
            got.append(m)

    reader = threading.Thread(target=receive)
    reader.start()
    with ProtocolSerializer(out) as s:
        s.serialize(header)
        for i, q in enumerate(acqs):
            if i and a.delay and q.idx.slice != acqs[i - 1].idx.slice:
                out.flush()
                time.sleep(a.delay)
            s.serialize(q)
        out.flush()
        last_sent = time.monotonic() - t0
    if a.port:
        sock.shutdown(socket.SHUT_WR)
        out.close()
    else:
        out.close()
    reader.join()
    inp.close()
    total = time.monotonic() - t0
    rc = proc.wait() if proc else 0
    if a.port:
        sock.close()
    images = [m for m in got if isinstance(m, ismrmrd.Image)]
    texts = [m for m in got if isinstance(m, str)]
    if a.save:
        np.savez(a.save, data=np.array([im.data for im in images]),
                 index=np.array([[im.slice, im.repetition, im.contrast, im.image_index] for im in images]))
    print(json.dumps({"first_image_s": first[0], "last_acquisition_sent_s": last_sent, "total_s": total,
                      "images": len(images), "slices": len(slices), "texts": texts, "returncode": rc}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
