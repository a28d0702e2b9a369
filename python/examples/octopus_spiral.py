"""B0 field correction of a real spiral scan with forge's Python API (docs/python.md, "Field correction of a real
spiral scan"; docs/reconstruction.md, "Field correction on a real spiral").

The data are OCTOPUS's sample spiral (imr-framework/OCTOPUS, Examples/sample_data): a phantom on a 3T scanner,
20 coils, 54 spiral-out interleaves of 310 samples, FOV 384 mm, matrix 192, dwell 10 us, TE 4.6 ms, and a measured
field map in rad/s, 0 outside the object. The script reads the files as they are (scipy.io.loadmat, numpy.load,
nibabel), converts k to forge's cycles/FOV (k [1/m] x FOV [m]), builds the sample times t = TE + dwell * j,
orients the field map (FIELDMAP_ORIENTATION below: how it was worked out is in docs/reconstruction.md), extends it
beyond the object (forge.extend_field_map), and reconstructs SENSE with and without time-segmented field
correction. It writes PNGs and prints each image's edge sharpness and interior variation.

    PYTHONPATH=build/python build/python-env/bin/python python/examples/octopus_spiral.py \\
        ../shared/data/octopus-spiral -o octopus_out

Needs NumPy, SciPy and nibabel (without it, a small NIfTI-1 reader here); the PNGs are written with zlib.
"""

import argparse
import pathlib
import time

import numpy as np
import scipy.io
import scipy.ndimage as ndi

import forge

FOV_M = 0.384       # field of view, metres
N = 192             # image matrix
DWELL_S = 10e-6     # seconds per sample
TE_S = 4.6e-3       # echo time: the time of each readout's first sample (spiral-out)

# The NIfTI's array a (192 x 192, as nibabel returns it) as forge's (ny, nx) image: flipped left-right (as OCTOPUS's
# example flips it) and transposed (OCTOPUS's images have axis 0 along kx, forge's along ky), i.e. pixel (y, x) takes
# a[x, 191 - y]; the sign as stored (rad/s, forge's exp(-i w t)). Worked out by reconstructing all 8
# transposes/flips x 2 signs (docs/reconstruction.md, "Field correction on a real spiral").
FIELDMAP_ORIENTATION = dict(transpose=True, flip_y=True, flip_x=False, sign=+1)


def orient(fieldmap, transpose=False, flip_y=False, flip_x=False, sign=+1):
    """The NIfTI array as forge's (ny, nx) map: transposed, then flipped along y (rows) and x (columns), times sign."""
    a = fieldmap.T if transpose else fieldmap
    if flip_y:
        a = a[::-1, :]
    if flip_x:
        a = a[:, ::-1]
    return np.ascontiguousarray(sign * a, dtype=np.float32)


def read_nifti(path):
    """A NIfTI-1 image as nibabel's get_fdata() gives it (array axes i, j, k, scaled), by nibabel when it is
    installed, else by reading the header (little-endian, float32/float64/int16 data) from the gzip file."""
    try:
        import nibabel
    except ImportError:
        import gzip
        import struct

        raw = gzip.open(path).read() if str(path).endswith(".gz") else open(path, "rb").read()
        dim = struct.unpack_from("<8h", raw, 40)
        datatype = struct.unpack_from("<h", raw, 70)[0]
        offset, slope, inter = struct.unpack_from("<3f", raw, 108)
        dtype = {4: "<i2", 16: "<f4", 64: "<f8"}[datatype]
        shape = dim[1:1 + dim[0]]
        a = np.frombuffer(raw, dtype, int(np.prod(shape)), int(offset)).reshape(shape, order="F")
        return a * (slope if slope != 0 else 1.0) + inter
    return nibabel.load(path).get_fdata()


def load(folder):
    """The OCTOPUS files as forge's arrays: data (coils, interleaves, samples), kx, ky (interleaves, samples) in
    cycles/FOV, t (s), the density weights, and the NIfTI's field map array (rad/s) as stored."""
    folder = pathlib.Path(folder)
    raw = scipy.io.loadmat(folder / "rawdata_spiral.mat")["dat"]            # (310 samples, 54 interleaves, 20 coils)
    ktraj = np.load(folder / "ktraj.npy")                                   # (310, 54) kx + i ky, cycles/m
    dcf = scipy.io.loadmat(folder / "dcf.mat")["dcf_out"]                   # (310, 54)
    fm = np.asarray(read_nifti(folder / "fieldmap_unwrapped.nii.gz"), np.float32)  # (192, 192) rad/s
    data = np.ascontiguousarray(raw.transpose(2, 1, 0), dtype=np.complex64)  # (coils, interleaves, samples)
    kx = np.ascontiguousarray((ktraj.real * FOV_M).T, dtype=np.float32)      # cycles/FOV, |k| <= 96
    ky = np.ascontiguousarray((ktraj.imag * FOV_M).T, dtype=np.float32)
    t = np.broadcast_to(TE_S + DWELL_S * np.arange(kx.shape[1]), kx.shape).astype(np.float32)
    weights = np.ascontiguousarray(dcf.T, dtype=np.float32)
    return data, kx, ky, t, weights, fm


def coil_maps(G, data, kx, ky, weights, width=12.0):
    """Coil maps from low-resolution coil images (the data within |k| < width cycles/FOV under a Hann taper,
    density-compensated, through G's adjoint) over their root-sum-of-squares."""
    k = np.hypot(kx, ky)
    taper = np.where(k < width, 0.5 + 0.5 * np.cos(np.pi * k / width), 0).astype(np.float32)
    low = np.stack([G.H @ (taper * weights * d) for d in data])
    rss = np.sqrt((np.abs(low) ** 2).sum(0))
    return (low / np.maximum(rss, 1e-3 * rss.max())).astype(np.complex64)


def object_mask(image):
    """The object: the largest connected region above 25% of the image's largest magnitude, holes filled."""
    m = np.abs(image)
    obj = ndi.binary_fill_holes(m > 0.25 * m.max())
    labels, n = ndi.label(obj)
    sizes = ndi.sum(obj, labels, range(1, n + 1))
    return labels == 1 + int(np.argmax(sizes))


def _band(mask, width=6):
    return ndi.binary_dilation(mask, iterations=width) & ~ndi.binary_erosion(mask, iterations=width)


def sharpness(image, mask):
    """Edge sharpness: the normalised gradient energy at the object's edge, the mean of |grad m|^2 (central
    differences) over the pixels within 6 of the object's boundary, m = |image| / median(|image| over the object).
    Larger is sharper: spiral-out off-resonance blurs the edge (and twice the field blurs it twice as much); the
    normalisation makes it independent of the image's scale."""
    m = np.abs(image) / np.median(np.abs(image)[mask])
    gy, gx = np.gradient(m)
    return float(((gx ** 2 + gy ** 2)[_band(mask)]).mean())


def interior_variation(image, mask):
    """Off-resonance artefacts inside the object: the coefficient of variation (std / mean) of |image| over the
    object eroded by 6 pixels. Smaller is better: the phantom is uniform apart from its inner tube, and the
    uncorrected spiral shows dark bands where the field's phase cancels the signal."""
    m = np.abs(image)[ndi.binary_erosion(mask, iterations=6)]
    return float(m.std() / m.mean())


def reconstruct(data, kx, ky, t, weights, fieldmap, *, segments=10, iterations=15, beta=1e-3, maps=None):
    """SENSE (+ time segmentation when fieldmap is not None) around Gnufft: the density-compensated adjoint
    (conjugate phase) and the penalized least-squares image after 'iterations' CG steps. Returns (adjoint,
    iterative, maps)."""
    G = forge.Gnufft(kx, ky, nx=N, ny=N)
    if maps is None:
        maps = coil_maps(G, data, kx, ky, weights)
    E = G if fieldmap is None else forge.TimeSegmentation(G, fieldmap, t, segments)
    S = forge.SENSE(E, maps)
    y = data / np.abs(data).max()
    adjoint = S.H @ (weights * y)
    iterative = forge.solve_pwls_pcg(S, y, penalty=forge.QuadPenalty(N, N, beta=beta), niter=iterations)
    return adjoint, iterative, maps


def write_png(path, image, scale):
    """|image| / scale (clipped to [0, 1]) as an 8-bit grey PNG, y up (zlib; no imaging library needed)."""
    import struct
    import zlib

    a = (255 * np.clip(np.abs(image) / scale, 0, 1)[::-1, :]).astype(np.uint8)
    rows = b"".join(b"\x00" + row.tobytes() for row in a)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", a.shape[1], a.shape[0], 8, 0, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    pathlib.Path(path).write_bytes(png)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("data", help="folder holding rawdata_spiral.mat, ktraj.npy, dcf.mat, fieldmap_unwrapped.nii.gz")
    p.add_argument("-o", "--output", default="octopus_out", help="folder for the PNGs and the .npy images")
    p.add_argument("--iterations", type=int, default=15)
    args = p.parse_args()
    out = pathlib.Path(args.output)
    out.mkdir(parents=True, exist_ok=True)

    data, kx, ky, t, weights, fm_nifti = load(args.data)
    fm = forge.extend_field_map(orient(fm_nifti, **FIELDMAP_ORIENTATION))  # 0 outside the object -> smooth
    t0 = time.time()
    u_adj, u_it, maps = reconstruct(data, kx, ky, t, weights, None, iterations=args.iterations)
    t1 = time.time()
    c_adj, c_it, _ = reconstruct(data, kx, ky, t, weights, fm, iterations=args.iterations, maps=maps)
    t2 = time.time()
    mask = object_mask(u_adj)
    for name, img in (("uncorrected", u_it), ("corrected", c_it)):
        np.save(out / f"forge_{name}.npy", img)
        write_png(out / f"forge_{name}.png", img, np.percentile(np.abs(img), 99.5))
    print(f"field map: {fm_nifti.min():.0f} to {fm_nifti.max():.0f} rad/s ({fm_nifti.min() / 2 / np.pi:.0f} to "
          f"{fm_nifti.max() / 2 / np.pi:.0f} Hz), orientation {FIELDMAP_ORIENTATION}")
    pairs = ((f"iterative ({args.iterations} CG)", u_it, c_it), ("density-compensated adjoint", u_adj, c_adj))
    for what, u, c in pairs:
        print(f"{what}: edge sharpness uncorrected {sharpness(u, mask):.5f}, corrected {sharpness(c, mask):.5f}; "
              f"interior variation uncorrected {interior_variation(u, mask):.4f}, corrected "
              f"{interior_variation(c, mask):.4f}")
    print(f"time: uncorrected {t1 - t0:.1f} s, corrected {t2 - t1:.1f} s; images in {out}/")


if __name__ == "__main__":
    main()
