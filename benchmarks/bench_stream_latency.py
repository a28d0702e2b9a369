#!/usr/bin/env python3
"""Paced MRD streams: sends a stream file's acquisitions to forge-recon at a scanner's pace and times each image.

    bench_stream_latency.py prepare IN.mrd OUT.mrd [--take-slices K] [--slices N] [--frames F]
                            [--fieldmap IN.nii --fieldmap-out OUT.nii]
    bench_stream_latency.py run STREAM.mrd [--every S] [--per N|group] [--json OUT] [--label L]
                            (-- forge-recon --stream [options] | --port P [--host H])
    bench_stream_latency.py summary RUN.json...

prepare: the acquisitions as a scanner sends them: the header's encodingLimits give the slice (and repetition)
count and each slice x repetition group's last acquisition carries ACQ_LAST_IN_SLICE; --take-slices keeps the first
K slices, --slices N repeats the slices up to N (each copy shifted along the slice axis past the ones before),
--frames F repeats the whole as repetitions 0..F-1 (a real-time series); --fieldmap repeats a NIfTI field map's
slices the same way.

run: the header goes out at once, then --per acquisitions (or one group: a slice x repetition x contrast) every
--every seconds on an absolute schedule, to forge-recon --stream on pipes (the command after --) or to a
forge-recon --server; a reader thread parses the IMAGE messages coming back. A group's latency is its image's
arrival minus the time the write of its last acquisition returned. Prints a Markdown table (per group, and a
summary: median, max, growth = median of the last quarter's latencies minus the first quarter's, the first
group's latency, images/s sustained) and the client's own overhead (send jitter: a send's start minus its
scheduled time; the longest write; the client's CPU time). --json writes the numbers for 'summary', which prints
one row per run.

Python 3 standard library only; the MRD stream format as ISMRMRD's ProtocolSerializer frames it (docs/streaming.md).
"""
import argparse
import json
import os
import re
import resource
import socket
import statistics
import struct
import subprocess
import sys
import threading
import time

ACQ_HEADER, IMAGE_HEADER = 340, 198
MSG_CONFIG_FILE, MSG_CONFIG_TEXT, MSG_HEADER, MSG_CLOSE, MSG_TEXT = 1, 2, 3, 4, 5
MSG_ACQUISITION, MSG_IMAGE = 1008, 1022
ACQ_LAST_IN_SLICE, ACQ_IS_NOISE = 1 << 7, 1 << 18  # ISMRMRD flags 8 and 19
# AcquisitionHeader offsets (ISMRMRD, packed)
O_FLAGS, O_SAMPLES, O_CHANNELS, O_TRAJ_DIMS = 2, 34, 38, 176
O_POSITION, O_SLICE_DIR, O_SLICE, O_CONTRAST, O_REPETITION = 182, 218, 248, 250, 254
# ImageHeader offsets
I_DATA_TYPE, I_MATRIX, I_CHANNELS, I_SLICE, I_CONTRAST, I_REPETITION = 2, 16, 34, 98, 100, 104
DATA_TYPE_BYTES = {1: 2, 2: 2, 3: 4, 4: 4, 5: 4, 6: 8, 7: 8, 8: 16}
LIMIT_ORDER = ["kspace_encoding_step_0", "kspace_encoding_step_1", "kspace_encoding_step_2", "average", "slice",
               "contrast", "phase", "repetition", "set", "segment"]


class Acq:
    """One ACQUISITION message: its header (editable) and its trajectory and data (a view of the file)."""
    __slots__ = ("head", "payload")

    def __init__(self, head, payload):
        self.head, self.payload = bytearray(head), payload

    def u16(self, off):
        return struct.unpack_from("<H", self.head, off)[0]

    def set_u16(self, off, v):
        struct.pack_into("<H", self.head, off, v)

    @property
    def flags(self):
        return struct.unpack_from("<Q", self.head, O_FLAGS)[0]

    @flags.setter
    def flags(self, v):
        struct.pack_into("<Q", self.head, O_FLAGS, v)

    def group(self):
        return (self.u16(O_SLICE), self.u16(O_REPETITION), self.u16(O_CONTRAST))

    def copy(self):
        return Acq(self.head, self.payload)

    def message(self):
        return struct.pack("<H", MSG_ACQUISITION) + bytes(self.head), self.payload


def read_stream(path):
    """(XML header, [Acq]) of an MRD stream file; configuration and text messages are skipped."""
    with open(path, "rb") as f:
        data = f.read()
    mv, p, xml, acqs = memoryview(data), 0, None, []
    while True:
        if p + 2 > len(data):
            raise SystemExit(f"{path}: ended after {p} bytes without a CLOSE message")
        mid = struct.unpack_from("<H", data, p)[0]
        p += 2
        if mid == MSG_CLOSE:
            break
        if mid == MSG_CONFIG_FILE:
            p += 1024
        elif mid in (MSG_CONFIG_TEXT, MSG_HEADER, MSG_TEXT):
            n = struct.unpack_from("<I", data, p)[0]
            if mid == MSG_HEADER:
                xml = bytes(mv[p + 4:p + 4 + n]).decode().rstrip("\0")
            p += 4 + n
        elif mid == MSG_ACQUISITION:
            h = mv[p:p + ACQ_HEADER]
            s, c, t = (struct.unpack_from("<H", h, o)[0] for o in (O_SAMPLES, O_CHANNELS, O_TRAJ_DIMS))
            n = s * t * 4 + s * c * 8
            acqs.append(Acq(h, mv[p + ACQ_HEADER:p + ACQ_HEADER + n]))
            p += ACQ_HEADER + n
        else:
            raise SystemExit(f"{path}: message id {mid} after {p - 2} bytes is not one a client sends")
    if xml is None or not acqs:
        raise SystemExit(f"{path}: no XML header or no acquisitions")
    return xml, acqs


def write_stream(path, xml, acqs):
    x = xml.encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<HI", MSG_HEADER, len(x)) + x)
        for a in acqs:
            for part in a.message():
                f.write(part)
        f.write(struct.pack("<H", MSG_CLOSE))


def set_limits(xml, **limits):
    """The first encoding's encodingLimits with the given (name: count) limits from 0, in the schema's order."""
    m = re.search(r"<encodingLimits\s*/>|<encodingLimits>(.*?)</encodingLimits>", xml, re.S)
    if not m:
        m = re.search(r"</reconSpace>", xml)
        if not m:
            raise SystemExit("the XML header has no reconSpace to put encodingLimits after")
        xml = xml[:m.end()] + "<encodingLimits/>" + xml[m.end():]
        m = re.search(r"<encodingLimits\s*/>", xml)
    items = dict(re.findall(r"<(\w+)>(.*?)</\1>", m.group(1) or "", re.S))
    for name, count in limits.items():
        items[name] = f"<minimum>0</minimum><maximum>{count - 1}</maximum><center>0</center>"
    inner = "".join(f"<{k}>{items[k]}</{k}>" for k in sorted(items, key=lambda k: LIMIT_ORDER.index(k)
                                                                      if k in LIMIT_ORDER else len(LIMIT_ORDER)))
    return xml[:m.start()] + f"<encodingLimits>{inner}</encodingLimits>" + xml[m.end():]


def slice_spacing(xml, acqs, slices):
    """The position shift from one slice to the next (from two slices' positions, else the FOV's z)."""
    pos = {}
    for a in acqs:
        pos.setdefault(a.u16(O_SLICE), struct.unpack_from("<3f", a.head, O_POSITION))
    if len(slices) > 1:
        p0, p1 = pos[slices[0]], pos[slices[1]]
        return [b - a for a, b in zip(p0, p1)]
    m = re.search(r"<encodedSpace>.*?<fieldOfView_mm>.*?<z>([^<]+)</z>", xml, re.S)
    dz = float(m.group(1)) if m else 5.0
    return [dz * v for v in struct.unpack_from("<3f", acqs[0].head, O_SLICE_DIR)]


def prepare(a):
    xml, acqs = read_stream(a.input)
    noise = [q for q in acqs if q.flags & ACQ_IS_NOISE]
    acqs = [q for q in acqs if not q.flags & ACQ_IS_NOISE]
    base = sorted({q.u16(O_SLICE) for q in acqs})
    if a.take_slices:
        base = base[:a.take_slices]
        acqs = [q for q in acqs if q.u16(O_SLICE) in base]
    n = a.slices or len(base)
    step = slice_spacing(xml, acqs, base)
    by_slice = {s: [q for q in acqs if q.u16(O_SLICE) == s] for s in base}
    out = []
    for s in range(n):
        k = s // len(base)
        for q in by_slice[base[s % len(base)]]:
            c = q.copy()
            c.set_u16(O_SLICE, s)
            p = struct.unpack_from("<3f", c.head, O_POSITION)
            struct.pack_into("<3f", c.head, O_POSITION, *(v + k * len(base) * d for v, d in zip(p, step)))
            out.append(c)
    frames = a.frames or 1
    series = []
    for r in range(frames):
        for q in out:
            c = q.copy()
            c.set_u16(O_REPETITION, r)
            series.append(c)
    last = {}
    for i, q in enumerate(series):
        q.flags &= ~ACQ_LAST_IN_SLICE
        last[(q.u16(O_SLICE), q.u16(O_REPETITION))] = i
    for i in last.values():
        series[i].flags |= ACQ_LAST_IN_SLICE
    limits = {"slice": n}
    if frames > 1:
        limits["repetition"] = frames
    xml = set_limits(xml, **limits)
    write_stream(a.output, xml, noise + series)
    size = os.path.getsize(a.output)
    print(f"{a.output}: {len(series)} acquisitions, {n} slices x {frames} frames, {size / 1e6:.1f} MB")
    if a.fieldmap:
        nifti_slices(a.fieldmap, a.fieldmap_out, base, n)


def nifti_slices(src, dst, base, n):
    """A NIfTI-1 volume's slices 'base' repeated up to n slices (z the third axis)."""
    with open(src, "rb") as f:
        b = bytearray(f.read())
    dims = list(struct.unpack_from("<8h", b, 40))
    bits = struct.unpack_from("<h", b, 72)[0]
    off = int(struct.unpack_from("<f", b, 108)[0])
    plane = dims[1] * dims[2] * bits // 8
    if dims[0] > 3 and any(d > 1 for d in dims[4:dims[0] + 1]):
        raise SystemExit(f"{src}: more than 3 dimensions")
    planes = [bytes(b[off + z * plane:off + (z + 1) * plane]) for z in base]
    dims[3] = n
    struct.pack_into("<8h", b, 40, *dims)
    with open(dst, "wb") as f:
        f.write(bytes(b[:off]) + b"".join(planes[s % len(planes)] for s in range(n)))
    print(f"{dst}: {dims[1]}x{dims[2]}x{n}")


class Reply(threading.Thread):
    """Reads forge-recon's reply (IMAGE, TEXT, CLOSE) and records each image's group and arrival time."""

    def __init__(self, f, t0):
        super().__init__(daemon=True)
        self.f, self.t0 = f, t0
        self.images, self.meta, self.texts, self.closed, self.error = [], [], [], False, None

    def read(self, n):
        b = self.f.read(n)
        if len(b) != n:
            raise EOFError(f"the reply ended after {len(self.images)} images, inside a message")
        return b

    def run(self):
        try:
            while True:
                b = self.f.read(2)
                if len(b) < 2:
                    raise EOFError(f"the reply ended after {len(self.images)} images without CLOSE")
                mid = struct.unpack("<H", b)[0]
                if mid == MSG_CLOSE:
                    self.closed = True
                    return
                if mid == MSG_IMAGE:
                    h = self.read(IMAGE_HEADER)
                    attr = struct.unpack("<Q", self.read(8))[0]
                    meta = dict(re.findall(r"<name>([^<]*)</name>\s*<value>([^<]*)</value>",
                                           self.read(attr).decode(errors="replace")))
                    nx, ny, nz = struct.unpack_from("<3H", h, I_MATRIX)
                    ch, dt = struct.unpack_from("<H", h, I_CHANNELS)[0], struct.unpack_from("<H", h, I_DATA_TYPE)[0]
                    self.read(nx * ny * nz * ch * DATA_TYPE_BYTES[dt])
                    group = tuple(struct.unpack_from("<H", h, o)[0] for o in (I_SLICE, I_REPETITION, I_CONTRAST))
                    self.images.append((group, time.perf_counter() - self.t0))
                    self.meta.append(meta)
                elif mid in (MSG_TEXT, MSG_CONFIG_TEXT, MSG_HEADER):
                    n = struct.unpack("<I", self.read(4))[0]
                    self.texts.append(self.read(n).decode(errors="replace").rstrip("\0"))
                else:
                    raise ValueError(f"unexpected message id {mid} in the reply")
        except Exception as e:  # reported with the results
            self.error = str(e)


def send_all(fd, buf):
    mv = memoryview(buf).cast("B")
    while mv:
        mv = mv[os.write(fd, mv):]


def system_line():
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    gpu = ""
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                           text=True, timeout=20)
        gpu = q.stdout.strip().splitlines()[0] if q.returncode == 0 and q.stdout.strip() else ""
    except (OSError, subprocess.SubprocessError):
        pass
    return cpu, os.cpu_count(), gpu


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def median(v):
    return statistics.median(v) if v else float("nan")


def run(a):
    xml, acqs = read_stream(a.stream)
    x = xml.encode()
    header = struct.pack("<HI", MSG_HEADER, len(x)) + x
    noise = [q for q in acqs if q.flags & ACQ_IS_NOISE]
    acqs = [q for q in acqs if not q.flags & ACQ_IS_NOISE]
    ticks = []
    if a.per == "group":
        for q in acqs:
            if not ticks or q.group() != ticks[-1][-1].group():
                ticks.append([])
            ticks[-1].append(q)
    else:
        per = int(a.per)
        ticks = [acqs[i:i + per] for i in range(0, len(acqs), per)]
    last_of, due_of = {}, []
    for i, q in enumerate(acqs):
        last_of[q.group()] = i
    for i, t in enumerate(ticks):
        due_of += [i * a.every] * len(t)
    groups = sorted(last_of, key=last_of.get)
    msgs = [[q.message() for q in t] for t in ticks]
    stream_bytes = os.path.getsize(a.stream)

    cpu, ncpu, gpu = system_line()
    load0 = loadavg()
    proc, sock = None, None
    if a.port:
        sock = socket.create_connection((a.host, a.port), timeout=a.timeout)
        sock.settimeout(None)
        fd, rfile = sock.fileno(), sock.makefile("rb")
        target = f"forge-recon --server on {a.host}:{a.port}"
    else:
        if not a.command:
            raise SystemExit("run: give the command after -- (forge-recon --stream ...) or --port")
        proc = subprocess.Popen(a.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=open(a.stderr, "wb") if a.stderr else None)
        fd, rfile = proc.stdin.fileno(), proc.stdout
        target = " ".join(a.command)
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    reply = Reply(rfile, t0)
    reply.start()
    sent_at = [None] * len(acqs)  # when each acquisition's write returned
    jitter, writes = [], []
    k = 0
    try:
        send_all(fd, header)
        for q in noise:
            for part in q.message():
                send_all(fd, part)
        for i, t in enumerate(msgs):
            due = i * a.every
            now = time.perf_counter() - t0
            if due > now:
                time.sleep(due - now)
            start = time.perf_counter() - t0
            jitter.append(start - due)
            for h, payload in t:
                send_all(fd, h)
                send_all(fd, payload)
                sent_at[k] = time.perf_counter() - t0
                k += 1
            writes.append(time.perf_counter() - t0 - start)
        send_all(fd, struct.pack("<H", MSG_CLOSE))
        send_error = None
    except OSError as e:
        send_error = f"sending stopped after {k} acquisitions: {e}"
    if sock:
        sock.shutdown(socket.SHUT_WR)
    else:
        proc.stdin.close()
    reply.join(a.timeout)
    total = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    rc = proc.wait() if proc else 0
    if sock:
        sock.close()
    load1 = loadavg()

    arrived = {}
    for g, t in reply.images:
        arrived.setdefault(g, t)
    rows = []
    for g in groups:
        last = sent_at[last_of[g]]
        t = arrived.get(g)
        rows.append({"slice": g[0], "repetition": g[1], "contrast": g[2], "last_sent_s": last, "image_s": t,
                     "latency_s": None if t is None or last is None else t - last})
    lat = [r["latency_s"] for r in rows if r["latency_s"] is not None]
    q = max(1, len(lat) // 4)
    times = sorted(arrived.values())
    res = {
        "label": a.label or os.path.basename(a.stream), "stream": a.stream, "stream_mb": stream_bytes / 1e6,
        "acquisitions": len(acqs), "groups": len(groups), "images": len(reply.images),
        "every_s": a.every, "per": a.per, "target": target, "cpu": cpu, "cpus": ncpu, "gpu": gpu,
        "load_start": load0, "load_end": load1,
        "median_s": median(lat), "max_s": max(lat) if lat else float("nan"),
        "growth_s": median(lat[-q:]) - median(lat[:q]) if lat else float("nan"),
        "first_s": rows[0]["latency_s"] if rows and rows[0]["latency_s"] is not None else float("nan"),
        "images_per_s": (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0]
        else float("nan"),
        "scheduled_groups_per_s": (len(groups) - 1) / (due_of[last_of[groups[-1]]] - due_of[last_of[groups[0]]])
        if len(groups) > 1 and due_of[last_of[groups[-1]]] > due_of[last_of[groups[0]]] else float("nan"),
        "operator": sorted({m.get("operator", "?") for m in reply.meta}),
        "iterations": [int(m["iterations"]) for m in reply.meta if m.get("iterations", "").isdigit()],
        "last_sent_s": sent_at[-1] or float("nan"), "total_s": total,
        "jitter_median_ms": 1e3 * median(jitter), "jitter_max_ms": 1e3 * max(jitter) if jitter else float("nan"),
        "write_max_ms": 1e3 * max(writes) if writes else float("nan"),
        "client_cpu_s": (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime),
        "returncode": rc, "closed": reply.closed, "texts": reply.texts,
        "error": send_error or reply.error, "rows": rows,
    }
    print_run(res, a.rows)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f)
    ok = rc == 0 and reply.closed and not res["error"] and len(arrived) == len(groups)
    return 0 if ok else 1


def fmt(v, digits=3):
    return "-" if v is None or v != v else f"{v:.{digits}f}"


def its(r):
    v = r["iterations"]
    return "-" if not v else f"{min(v)}" if min(v) == max(v) else f"{min(v)} to {max(v)}"


def pace(r):
    what = "group (slice x repetition)" if r["per"] == "group" else f"{r['per']} acquisition(s)"
    return f"{what} every {1e3 * r['every_s']:g} ms"


def print_run(r, rows="all"):
    print(f"\n{r['label']}: {r['stream']} ({r['acquisitions']} acquisitions, {r['groups']} groups, "
          f"{r['stream_mb']:.1f} MB), {pace(r)}, to `{r['target']}`")
    print(f"CPU {r['cpu']} ({r['cpus']} CPUs)" + (f", GPU {r['gpu']}" if r["gpu"] else "") +
          f", load average {r['load_start']} at start, {r['load_end']} at end")
    print(f"client: send jitter (start - schedule) median {r['jitter_median_ms']:.2f} ms, max "
          f"{r['jitter_max_ms']:.2f} ms; longest send {r['write_max_ms']:.1f} ms; client CPU "
          f"{r['client_cpu_s']:.2f} s (sender and reader) over {r['total_s']:.2f} s")
    print(f"forge-recon: operator {', '.join(r['operator']) or '-'}, iterations {its(r)} per image")
    if rows == "all":
        print("\n| slice | repetition | last readout sent s | image arrived s | latency s |")
        print("|---|---|---|---|---|")
        for w in r["rows"]:
            print(f"| {w['slice']} | {w['repetition']} | {fmt(w['last_sent_s'])} | {fmt(w['image_s'])} | "
                  f"{fmt(w['latency_s'])} |")
    print("\n| images | median latency s | max latency s | growth s | first latency s | images/s sustained "
          "| groups/s scheduled | total s |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {r['images']}/{r['groups']} | {fmt(r['median_s'])} | {fmt(r['max_s'])} | {fmt(r['growth_s'])} | "
          f"{fmt(r['first_s'])} | {fmt(r['images_per_s'], 2)} | {fmt(r['scheduled_groups_per_s'], 2)} | "
          f"{fmt(r['total_s'], 2)} |")
    if r["error"] or r["texts"] or r["returncode"] or not r["closed"]:
        print(f"\nfailed: exit {r['returncode']}, CLOSE {'received' if r['closed'] else 'missing'}; "
              f"{r['error'] or ''} {' '.join(r['texts'])}")


def summary(a):
    runs = [json.load(open(p)) for p in a.runs]
    if not runs:
        return 1
    r0 = runs[0]
    print(f"CPU {r0['cpu']} ({r0['cpus']} CPUs)" + (f", GPU {r0['gpu']}" if r0["gpu"] else ""))
    print("\n| case | stream MB | pace | operator, iterations | images | median latency s | max s | growth s | first s | images/s "
          "sustained | groups/s scheduled | send jitter median / max ms | load start / end |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['label']} | {r['stream_mb']:.0f} | {pace(r)} | {', '.join(r['operator']) or '-'}, {its(r)} | "
              f"{r['images']}/{r['groups']} | "
              f"{fmt(r['median_s'])} | {fmt(r['max_s'])} | {fmt(r['growth_s'])} | {fmt(r['first_s'])} | "
              f"{fmt(r['images_per_s'], 2)} | {fmt(r['scheduled_groups_per_s'], 2)} | "
              f"{r['jitter_median_ms']:.2f} / {r['jitter_max_ms']:.2f} | {r['load_start']} / {r['load_end']} |")
    return 0


def main():
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--take-slices", type=int, default=0)
    p.add_argument("--slices", type=int, default=0)
    p.add_argument("--frames", type=int, default=0)
    p.add_argument("--fieldmap", default="")
    p.add_argument("--fieldmap-out", default="")
    p = sub.add_parser("run")
    p.add_argument("stream")
    p.add_argument("--every", type=float, default=0.025, help="seconds between sends (default 0.025)")
    p.add_argument("--per", default="1", help="acquisitions per send, or 'group' (default 1)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for the reply after sending")
    p.add_argument("--json", default="")
    p.add_argument("--label", default="")
    p.add_argument("--stderr", default="", help="forge-recon's stderr to this file")
    p.add_argument("--rows", choices=["all", "summary"], default="all")
    p = sub.add_parser("summary")
    p.add_argument("runs", nargs="*")
    a = ap.parse_args(argv[:cut])
    a.command = argv[cut + 1:]
    if a.cmd == "prepare":
        if bool(a.fieldmap) != bool(a.fieldmap_out):
            ap.error("--fieldmap and --fieldmap-out go together")
        return prepare(a) or 0
    if a.cmd == "run":
        if a.per != "group" and not a.per.isdigit():
            ap.error("--per takes a count or 'group'")
        return run(a)
    return summary(a)


if __name__ == "__main__":
    sys.exit(main())
