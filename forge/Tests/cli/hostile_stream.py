#!/usr/bin/env python3
"""Hostile MRD streams and TCP clients for test_stream_limits.sh, one case per command.

    hostile_stream.py CASE FORGE_RECON WORKDIR [ADDRESS_LIMIT_KB]

The streams are made from WORKDIR/demo.h5 (forge-recon --demo, 2 slices, 4 coils) with the ismrmrd package's
ProtocolSerializer; replies are read with its ProtocolDeserializer. Each case prints "ok ..." lines with what it
measured, or fails with an assertion naming what went wrong.
"""
import fcntl
import io
import os
import re
import resource
import socket
import struct
import subprocess
import sys
import termios
import threading
import time

import ismrmrd
import numpy as np
from ismrmrd.serialization import ProtocolDeserializer, ProtocolSerializer

CASE, RECON, W = sys.argv[1], sys.argv[2], sys.argv[3]
LIMIT_KB = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4] != "unlimited" else 0
OPTS = ["-n", "1", "--fieldmap", "none", "--device", "cpu"]


def demo(path="demo.h5"):
    d = ismrmrd.Dataset(f"{W}/{path}", "dataset", create_if_needed=False)
    h = ismrmrd.xsd.CreateFromDocument(d.read_xml_header())
    acqs = [d.read_acquisition(i) for i in range(d.number_of_acquisitions())]
    return h, acqs


def flag_slices(h, acqs):
    """encodingLimits/slice and each slice's last acquisition ACQ_LAST_IN_SLICE, as a scanner sends them."""
    h.encoding[0].encodingLimits.slice = ismrmrd.xsd.limitType(minimum=0, maximum=max(a.idx.slice for a in acqs),
                                                               center=0)
    last = {a.idx.slice: i for i, a in enumerate(acqs)}
    for i in last.values():
        acqs[i].set_flag(ismrmrd.ACQ_LAST_IN_SLICE)


def serialize(h, acqs, close=True):
    buf = io.BytesIO()
    s = ProtocolSerializer(buf)
    s.serialize(h)
    for a in acqs:
        s.serialize(a)
    if close:
        s.close()
    return buf.getvalue()


def reply(data):
    """The images and TEXT messages of a reply (up to its CLOSE)."""
    got = list(ProtocolDeserializer(io.BytesIO(data)).deserialize())
    return [m for m in got if isinstance(m, ismrmrd.Image)], [m for m in got if isinstance(m, str)]


def run_stream(args, stream, limit_kb=LIMIT_KB):
    """forge-recon --stream on 'stream': (return code, stdout, stderr, peak resident memory in MiB). 'stream' is
    bytes or a generator of chunks (written until forge-recon stops reading)."""
    def limits():
        if limit_kb:
            resource.setrlimit(resource.RLIMIT_AS, (limit_kb * 1024, limit_kb * 1024))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="2")
    p = subprocess.Popen([RECON, "--stream"] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, preexec_fn=limits, env=env)
    out, err = [], []

    def write():
        try:
            for chunk in ([stream] if isinstance(stream, bytes) else stream):
                p.stdin.write(chunk)
            p.stdin.close()
        except (BrokenPipeError, ValueError):
            pass

    threads = [threading.Thread(target=write), threading.Thread(target=lambda: out.append(p.stdout.read())),
               threading.Thread(target=lambda: err.append(p.stderr.read()))]
    for t in threads:
        t.start()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    for t in threads:
        t.join()
    return p.returncode, out[0], err[0].decode(), ru.ru_maxrss / 1024


def one_error(err, expected, what):
    lines = [l for l in err.splitlines() if l.startswith("forge-recon: error:")]
    assert len(lines) == 1 and expected in lines[0], f"{what}: expected one error line saying '{expected}':\n{err}"
    return lines[0][len("forge-recon: error: "):]


def case_coils():
    """A coil count or trajectory dimension that changes in slice 1 of a flagged stream is refused as the file
    mode refuses it, after slice 0's image, with a TEXT error and CLOSE."""
    for what, expected in (("channels", "has 8 channels but acquisition 0 has 4"),
                           ("trajectory", "has 3 trajectory dimensions but acquisition 0 has 2")):
        h, acqs = demo()
        flag_slices(h, acqs)
        for i, a in enumerate(acqs):
            if a.idx.slice != 1:
                continue
            head = a.getHead()
            if what == "channels":
                head.active_channels = 8
                acqs[i] = ismrmrd.Acquisition(head, np.concatenate([a.data, a.data]), a.traj)
            else:
                head.trajectory_dimensions = 3
                acqs[i] = ismrmrd.Acquisition(head, a.data, np.concatenate([a.traj, np.zeros_like(a.traj[:, :1])], 1))
        rc, out, err, _ = run_stream(OPTS, serialize(h, acqs))
        assert rc == 2, f"{what}: exit {rc}, expected 2:\n{err}"
        msg = one_error(err, expected, what)
        images, texts = reply(out)
        assert len(images) <= 1 and len(texts) == 1 and expected in texts[0], (what, len(images), texts)
        print(f"ok  {what} changing in slice 1 of a flagged stream: exit 2, {len(images)} image, then: {msg}")


def case_claims():
    """Headers claiming up to 65535 slices, repetitions and contrasts for a 2-slice stream: nothing is sized from
    the claims; the stream is read whole and gives the file mode's 2 images, within the address-space limit."""
    h0, acqs0 = demo()
    base = None
    for name, limits in (("slices", {"slice": 65534}), ("repetitions", {"repetition": 65534}),
                         ("all three", {"slice": 65534, "repetition": 65534, "contrast": 65534}),
                         ("32767 slices x 2 repetitions", {"slice": 32766, "repetition": 1})):
        h, acqs = demo()
        flag_slices(h, acqs)
        for k, v in limits.items():
            setattr(h.encoding[0].encodingLimits, k, ismrmrd.xsd.limitType(minimum=0, maximum=v, center=0))
        stream = serialize(h, acqs)
        t = time.monotonic()
        rc, out, err, peak = run_stream(OPTS, stream)
        dt = time.monotonic() - t
        assert rc == 0, f"{name}: exit {rc}:\n{err}"
        images, texts = reply(out)
        assert len(images) == 2 and not texts, (name, len(images), texts)
        assert "reconstructing once the stream is complete (its header's encodingLimits claim" in err, err
        data = np.array([im.data for im in images])
        if base is None:
            base = data
        assert np.array_equal(data, base), f"{name}: other images than the first claim's"
        assert peak < 400, f"{name}: {peak:.0f} MiB resident"
        print(f"ok  a {len(stream) // 1024} kB stream claiming {name}: the 2 images, {dt:.2f} s, {peak:.0f} MiB peak")


def zeros(total, chunk=1 << 20):
    z = bytes(chunk)
    for _ in range(total // chunk):
        yield z


def case_stdin_cap():
    """--max-stream-memory on stdin: an acquisition claiming 65535 x 65535 values followed by 1 GB of zeros, and
    1 GB of valid acquisitions without a flag, fail at the cap with one line, holding no more than it."""
    h, acqs = demo()
    head = serialize(h, [], close=False)
    a = acqs[0].getHead()
    a.number_of_samples, a.active_channels, a.trajectory_dimensions = 65535, 65535, 0
    claim = struct.pack("<H", 1008) + bytes(a)
    cap = 64
    rc, out, err, peak = run_stream(OPTS + ["--max-stream-memory", f"{cap}MiB"],
                                    (c for part in ([head + claim], zeros(1 << 30)) for c in part))
    assert rc == 2, f"claim: exit {rc}:\n{err}"
    msg = one_error(err, f"over the cap of {cap}.0 MiB (--max-stream-memory)", "claim")
    assert not out and peak < 200, (len(out), peak)
    print(f"ok  65535 x 65535 claimed then zeros: exit 2 at once, {peak:.0f} MiB peak: {msg}")
    one = serialize(h, acqs[:1], close=False)[len(head):]
    reps = (1 << 30) // len(one)
    t = time.monotonic()
    rc, out, err, peak = run_stream(OPTS + ["--max-stream-memory", f"{cap}MiB"],
                                    (c for part in ([head], (one * 64 for _ in range(reps // 64))) for c in part))
    dt = time.monotonic() - t
    assert rc == 2, f"flood: exit {rc}:\n{err}"
    msg = one_error(err, f"over the cap of {cap}.0 MiB (--max-stream-memory)", "flood")
    assert not out and peak < 60 + 2 * cap, (len(out), peak)
    print(f"ok  1 GB of acquisitions on stdin: exit 2 after {dt:.2f} s, {peak:.0f} MiB peak: {msg}")


# ---------------------------------------------------------------- --server
def vm_hwm(pid):
    return int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1)) / 1024


class Client:
    """A connection that sends 'chunks' (with 'pause' seconds between them) on one thread and reads the reply
    on another; read=False reads nothing."""

    def __init__(self, port, chunks, pause=0.0, read=True, rcvbuf=0):
        self.sock = socket.socket()
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.connect(("127.0.0.1", port))
        self.t0 = time.monotonic()
        self.images, self.texts, self.done, self.sent = [], [], None, 0
        self.threads = [threading.Thread(target=self._send, args=(chunks, pause))]
        if read:
            self.threads.append(threading.Thread(target=self._read))
        for t in self.threads:
            t.start()

    def _send(self, chunks, pause):
        try:
            for c in chunks:
                self.sock.sendall(c)
                self.sent += len(c)
                if pause:
                    time.sleep(pause)
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server closed the connection

    def _read(self):
        try:
            for m in ProtocolDeserializer(self.sock.makefile("rb")).deserialize():
                (self.images if isinstance(m, ismrmrd.Image) else self.texts).append(m)
        except Exception:
            pass
        self.done = time.monotonic() - self.t0

    def wait(self, timeout):
        end = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, end - time.monotonic()))
        return self

    def close(self):
        self.sock.close()
        for t in self.threads:
            t.join(5)


def case_server():
    """--server --max-clients 2: a good client, a 1 GB flood without CLOSE (fails at the cap, the server's peak
    memory grows less than the cap), a slow sender and a client that reads nothing (each cut off after its
    deadline) while a good client connecting meanwhile is served within 2 s."""
    h, acqs = demo()
    flag_slices(h, acqs)
    good = serialize(h, acqs)
    hb, ab = demo("big.h5")
    flag_slices(hb, ab)
    big = serialize(hb, ab)
    cap = 32  # MiB, 16 per connection
    srv = subprocess.Popen([RECON, "--server", "--port", "0", "--connections", "7", "--max-clients", "2",
                            "--max-stream-memory", f"{cap}MiB", "--read-timeout", "1", "--write-timeout", "1"] + OPTS,
                           stdout=subprocess.PIPE, stderr=open(f"{W}/server.stderr", "w"), text=True,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="2"))
    try:
        port = int(re.search(r"listening on 127.0.0.1:(\d+)", srv.stdout.readline()).group(1))
        threading.Thread(target=lambda: [None for _ in srv.stdout], daemon=True).start()

        def served(what, limit):
            c = Client(port, [good]).wait(30)
            c.close()
            assert len(c.images) == 2 and not c.texts and c.done is not None and c.done < limit, \
                (what, len(c.images), c.texts, c.done)
            print(f"ok  {what}: 2 images, {c.done:.2f} s after connecting")
            return c

        served("a good client", 10)
        base = vm_hwm(srv.pid)
        one = serialize(h, acqs[:1], close=False)[len(serialize(h, [], close=False)):]
        head = serialize(h, [], close=False)
        flood = Client(port, (c for part in ([head], (one * 64 for _ in range((1 << 30) // len(one) // 64)))
                              for c in part)).wait(30)
        flood.close()
        grown = vm_hwm(srv.pid) - base
        assert len(flood.texts) == 1 and "(--max-stream-memory / --max-clients)" in flood.texts[0], flood.texts
        assert grown < cap, f"the server's peak memory grew {grown:.0f} MiB under the flood (cap {cap} MiB)"
        print(f"ok  1 GB flood without CLOSE: {flood.sent >> 20} MiB taken, a TEXT error after {flood.done:.2f} s, "
              f"peak memory +{grown:.0f} MiB ({base:.0f} MiB before): {flood.texts[0][:150]}")
        served("the next good client", 10)

        slow = Client(port, [head] + [bytes([b]) for b in one[:200]], pause=0.2)
        time.sleep(0.3)
        served("a good client while a slow sender trickles 5 bytes/s", 2)
        slow.wait(5)
        slow.close()
        assert len(slow.texts) == 1 and "stalled" in slow.texts[0] and "(--read-timeout)" in slow.texts[0], slow.texts
        print(f"ok  the slow sender is cut off after {slow.done:.2f} s: {slow.texts[0][:160]}")

        mute = Client(port, [big], read=False, rcvbuf=4096)
        # its reply is blocked once what waits in its socket stops growing (the server holds no reconstruction
        # then: only its send is waiting)
        queued, still = 0, time.monotonic()
        while time.monotonic() - still < 0.3 or not queued:
            assert time.monotonic() - mute.t0 < 60, "no reply reached the client that reads nothing"
            n = struct.unpack("i", fcntl.ioctl(mute.sock, termios.FIONREAD, b"\0" * 4))[0]
            if n != queued:
                queued, still = n, time.monotonic()
            time.sleep(0.02)
        served("a good client while another reads nothing of its images", 2)
        deadline = time.monotonic() + 10
        while "the reader took nothing within the send timeout" not in open(f"{W}/server.stderr").read():
            assert time.monotonic() < deadline, "the client that reads nothing was not cut off"
            time.sleep(0.1)
        print(f"ok  the client that reads nothing is cut off {time.monotonic() - mute.t0:.2f} s after connecting")
        mute.close()
        assert srv.wait(30) == 0, open(f"{W}/server.stderr").read()
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()


{"coils": case_coils, "claims": case_claims, "stdin-cap": case_stdin_cap, "server": case_server}[CASE]()
