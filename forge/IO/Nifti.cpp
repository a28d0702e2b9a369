// NIfTI-1 (.nii) reader/writer: a fixed 348-byte header (NIfTI-1 spec, nifti1.h), 4 extension bytes,
// then the voxel data at vox_offset = 352.
#include "forge/IO/Nifti.h"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "forge/Core/Exceptions.h"
#include "forge/IO/FileUtil.h"

namespace forge {
namespace io {

namespace {

// Packed to the spec's byte layout; its fields fall on their natural alignment from a 4-aligned start,
// so alignas(4) makes every member access through h.field aligned.
#pragma pack(push, 1)
struct alignas(4) Nifti1Header {
    int32_t sizeof_hdr;
    char data_type[10];
    char db_name[18];
    int32_t extents;
    int16_t session_error;
    char regular;
    char dim_info;
    int16_t dim[8];
    float intent_p1, intent_p2, intent_p3;
    int16_t intent_code;
    int16_t datatype;
    int16_t bitpix;
    int16_t slice_start;
    float pixdim[8];
    float vox_offset;
    float scl_slope;
    float scl_inter;
    int16_t slice_end;
    char slice_code;
    char xyzt_units;
    float cal_max, cal_min;
    float slice_duration;
    float toffset;
    int32_t glmax, glmin;
    char descrip[80];
    char aux_file[24];
    int16_t qform_code;
    int16_t sform_code;
    float quatern_b, quatern_c, quatern_d;
    float qoffset_x, qoffset_y, qoffset_z;
    float srow_x[4], srow_y[4], srow_z[4];
    char intent_name[16];
    char magic[4];
};
#pragma pack(pop)
static_assert(sizeof(Nifti1Header) == 348, "NIfTI-1 header must be 348 bytes");
static_assert(offsetof(Nifti1Header, dim) == 40, "NIfTI-1 dim offset");
static_assert(offsetof(Nifti1Header, datatype) == 70, "NIfTI-1 datatype offset");
static_assert(offsetof(Nifti1Header, pixdim) == 76, "NIfTI-1 pixdim offset");
static_assert(offsetof(Nifti1Header, qform_code) == 252, "NIfTI-1 qform_code offset");
static_assert(offsetof(Nifti1Header, srow_x) == 280, "NIfTI-1 srow_x offset");
static_assert(offsetof(Nifti1Header, magic) == 344, "NIfTI-1 magic offset");

enum : int16_t {
    DT_UINT8 = 2,
    DT_INT16 = 4,
    DT_INT32 = 8,
    DT_FLOAT32 = 16,
    DT_COMPLEX64 = 32,
    DT_FLOAT64 = 64,
    DT_INT8 = 256,
    DT_UINT16 = 512,
    DT_UINT32 = 768,
    DT_COMPLEX128 = 1792
};
constexpr char NIFTI_UNITS_MM = 2;
constexpr char NIFTI_UNITS_SEC = 8;

template <typename T>
struct nifti_type;
template <>
struct nifti_type<float> {
    static constexpr int16_t code = DT_FLOAT32;
};
template <>
struct nifti_type<std::complex<float>> {
    static constexpr int16_t code = DT_COMPLEX64;
};

// Quaternion representation of the affine's 3x3 part (nifti_mat44_to_quatern, for an orthogonal
// direction matrix). Returns false when the columns are not orthogonal.
bool to_quaternion(const Affine& A, float pixdim[8], float q[3]) {
    double R[3][3];
    double d[3];
    for (int c = 0; c < 3; ++c) {
        d[c] = std::sqrt(A[0][c] * A[0][c] + A[1][c] * A[1][c] + A[2][c] * A[2][c]);
        if (d[c] <= 0) return false;
        for (int r = 0; r < 3; ++r) R[r][c] = A[r][c] / d[c];
    }
    for (int a = 0; a < 3; ++a)
        for (int b = a + 1; b < 3; ++b) {
            double dot = R[0][a] * R[0][b] + R[1][a] * R[1][b] + R[2][a] * R[2][b];
            if (std::fabs(dot) > 1e-4) return false;
        }
    double det = R[0][0] * (R[1][1] * R[2][2] - R[1][2] * R[2][1]) - R[0][1] * (R[1][0] * R[2][2] - R[1][2] * R[2][0]) +
                 R[0][2] * (R[1][0] * R[2][1] - R[1][1] * R[2][0]);
    double qfac = 1.0;
    if (det < 0) {
        qfac = -1.0;
        for (int r = 0; r < 3; ++r) R[r][2] = -R[r][2];
    }
    double a = R[0][0] + R[1][1] + R[2][2] + 1.0, b, c, dd;
    if (a > 0.5) {
        a = 0.5 * std::sqrt(a);
        b = 0.25 * (R[2][1] - R[1][2]) / a;
        c = 0.25 * (R[0][2] - R[2][0]) / a;
        dd = 0.25 * (R[1][0] - R[0][1]) / a;
    } else {
        double xd = 1.0 + R[0][0] - (R[1][1] + R[2][2]);
        double yd = 1.0 + R[1][1] - (R[0][0] + R[2][2]);
        double zd = 1.0 + R[2][2] - (R[0][0] + R[1][1]);
        if (xd > 1.0) {
            b = 0.5 * std::sqrt(xd);
            c = 0.25 * (R[0][1] + R[1][0]) / b;
            dd = 0.25 * (R[0][2] + R[2][0]) / b;
            a = 0.25 * (R[2][1] - R[1][2]) / b;
        } else if (yd > 1.0) {
            c = 0.5 * std::sqrt(yd);
            b = 0.25 * (R[0][1] + R[1][0]) / c;
            dd = 0.25 * (R[1][2] + R[2][1]) / c;
            a = 0.25 * (R[0][2] - R[2][0]) / c;
        } else {
            dd = 0.5 * std::sqrt(zd);
            b = 0.25 * (R[0][2] + R[2][0]) / dd;
            c = 0.25 * (R[1][2] + R[2][1]) / dd;
            a = 0.25 * (R[1][0] - R[0][1]) / dd;
        }
        if (a < 0.0) {
            b = -b;
            c = -c;
            dd = -dd;
        }
    }
    pixdim[0] = static_cast<float>(qfac);
    for (int k = 0; k < 3; ++k) pixdim[k + 1] = static_cast<float>(d[k]);
    q[0] = static_cast<float>(b);
    q[1] = static_cast<float>(c);
    q[2] = static_cast<float>(dd);
    return true;
}

template <typename S>
void convert_real(const char* raw, std::size_t n, std::vector<std::complex<double>>& out) {
    for (std::size_t i = 0; i < n; ++i) {
        S v;
        std::memcpy(&v, raw + i * sizeof(S), sizeof(S));
        out[i] = std::complex<double>(static_cast<double>(v), 0.0);
    }
}
template <typename S>
void convert_complex(const char* raw, std::size_t n, std::vector<std::complex<double>>& out) {
    for (std::size_t i = 0; i < n; ++i) {
        S v[2];
        std::memcpy(v, raw + i * 2 * sizeof(S), 2 * sizeof(S));
        out[i] = std::complex<double>(static_cast<double>(v[0]), static_cast<double>(v[1]));
    }
}

}  // namespace

Affine centred_affine(const std::array<std::size_t, 3>& n, const std::array<double, 3>& voxel_mm) {
    Affine A{};
    for (int r = 0; r < 3; ++r) {
        A[r][r] = voxel_mm[r];
        A[r][3] = -static_cast<double>(n[r] / 2) * voxel_mm[r];
    }
    A[3][3] = 1.0;
    return A;
}

template <typename T>
void write_nifti(const std::string& path, const std::vector<T>& data, const std::array<std::size_t, 4>& dims,
                 const Affine& affine, const std::string& description) {
    std::size_t n = dims[0] * dims[1] * dims[2] * dims[3];
    if (n == 0 || n != data.size()) {
        throw forge::invalid_argument("write_nifti: data has " + std::to_string(data.size()) +
                                      " values but dims give " + std::to_string(n));
    }
    for (auto d : dims)
        if (d > 32767) throw forge::invalid_argument("write_nifti: a dimension exceeds NIfTI-1's 32767");
    Nifti1Header h;
    std::memset(&h, 0, sizeof h);
    h.sizeof_hdr = 348;
    h.regular = 'r';
    h.dim[0] = dims[3] > 1 ? 4 : 3;
    for (int k = 0; k < 4; ++k) h.dim[k + 1] = static_cast<int16_t>(dims[k]);
    for (int k = 5; k < 8; ++k) h.dim[k] = 1;
    h.datatype = nifti_type<T>::code;
    h.bitpix = static_cast<int16_t>(8 * sizeof(T));
    for (int k = 0; k < 8; ++k) h.pixdim[k] = 1.0f;
    h.vox_offset = 352.0f;
    h.scl_slope = 1.0f;
    h.scl_inter = 0.0f;
    h.xyzt_units = NIFTI_UNITS_MM | NIFTI_UNITS_SEC;
    std::strncpy(h.descrip, description.c_str(), sizeof h.descrip - 1);
    // sform: the affine itself
    for (int c = 0; c < 4; ++c) {
        h.srow_x[c] = static_cast<float>(affine[0][c]);
        h.srow_y[c] = static_cast<float>(affine[1][c]);
        h.srow_z[c] = static_cast<float>(affine[2][c]);
    }
    h.sform_code = 1;
    float q[3];
    if (to_quaternion(affine, h.pixdim, q)) {
        h.qform_code = 1;
        h.quatern_b = q[0];
        h.quatern_c = q[1];
        h.quatern_d = q[2];
        h.qoffset_x = static_cast<float>(affine[0][3]);
        h.qoffset_y = static_cast<float>(affine[1][3]);
        h.qoffset_z = static_cast<float>(affine[2][3]);
    } else {
        h.pixdim[0] = 1.0f;
        for (int c = 0; c < 3; ++c)
            h.pixdim[c + 1] = static_cast<float>(
                std::sqrt(affine[0][c] * affine[0][c] + affine[1][c] * affine[1][c] + affine[2][c] * affine[2][c]));
    }
    std::memcpy(h.magic, "n+1\0", 4);

    AtomicFile out(path);
    std::ofstream& f = out.stream();
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    const char ext[4] = {0, 0, 0, 0};
    f.write(ext, 4);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(n * sizeof(T)));
    out.commit();
}

template void write_nifti<float>(const std::string&, const std::vector<float>&, const std::array<std::size_t, 4>&,
                                 const Affine&, const std::string&);
template void write_nifti<std::complex<float>>(const std::string&, const std::vector<std::complex<float>>&,
                                               const std::array<std::size_t, 4>&, const Affine&, const std::string&);

NiftiVolume read_nifti(const std::string& path, const DimsCheck& check) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) throw input_error("cannot open NIfTI file '" + path + "'");
    const std::streamoff fileSize = f.tellg();
    f.seekg(0);
    Nifti1Header h;
    f.read(reinterpret_cast<char*>(&h), sizeof h);
    if (!f) throw input_error("'" + path + "' is too short to be a NIfTI-1 file (needs a 348-byte header)");
    if (h.sizeof_hdr != 348) {
        int32_t swapped = static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(h.sizeof_hdr)));
        if (swapped == 348) throw input_error("'" + path + "' is a big-endian NIfTI file (not supported)");
        throw input_error("'" + path + "' is not a NIfTI-1 file (sizeof_hdr is not 348)");
    }
    if (std::memcmp(h.magic, "n+1", 4) != 0)
        throw input_error("'" + path + "' is not a single-file NIfTI-1 (.nii) file (magic is not n+1)");
    NiftiVolume v;
    if (h.dim[0] < 1 || h.dim[0] > 7)
        throw input_error("'" + path + "': header dim[0] = " + std::to_string(h.dim[0]) + " (expected 1 to 7)");
    v.ndim = static_cast<std::size_t>(h.dim[0]);
    std::vector<std::size_t> dims;
    std::string shape;
    std::size_t n = 1;
    bool overflow = false;
    for (int k = 0; k < 7; ++k) {
        if (k < h.dim[0] && h.dim[k + 1] < 1)
            throw input_error("'" + path + "': header dim[" + std::to_string(k + 1) +
                              "] = " + std::to_string(h.dim[k + 1]) + " (each of dim[1..dim[0]] must be at least 1)");
        const std::size_t d = k < h.dim[0] ? static_cast<std::size_t>(h.dim[k + 1]) : 1;
        v.dims[k] = d;
        if (k < h.dim[0]) {
            dims.push_back(d);
            shape += (k ? "x" : "") + std::to_string(d);
        }
        overflow = overflow || __builtin_mul_overflow(n, d, &n);
    }
    for (int k = 0; k < 3; ++k) v.voxel_mm[k] = h.pixdim[k + 1];
    std::size_t esize = 0;
    switch (h.datatype) {
        case DT_UINT8:
        case DT_INT8: esize = 1; break;
        case DT_INT16:
        case DT_UINT16: esize = 2; break;
        case DT_INT32:
        case DT_UINT32:
        case DT_FLOAT32: esize = 4; break;
        case DT_FLOAT64:
        case DT_COMPLEX64: esize = 8; break;
        case DT_COMPLEX128: esize = 16; break;
        default:
            throw input_error("'" + path + "' has NIfTI datatype " + std::to_string(h.datatype) +
                              " (supported: integer, float32/64, complex64/128)");
    }
    // The voxels must be in the file: checked before allocating, so a header that claims gigabytes
    // costs nothing (and a product of dimensions that overflows cannot pass as a small one).
    std::size_t bytes = 0;
    if (overflow || __builtin_mul_overflow(n, esize, &bytes))
        throw input_error("'" + path + "': its header dim claims " + shape + " voxels, more than any memory holds");
    if (!std::isfinite(h.vox_offset) || h.vox_offset < 0 || h.vox_offset > float(fileSize))
        throw input_error("'" + path + "': header vox_offset = " + std::to_string(h.vox_offset) +
                          " is not a position in the file (" + std::to_string(fileSize) + " bytes)");
    const std::streamoff offset = h.vox_offset < 348 ? 352 : static_cast<std::streamoff>(h.vox_offset);
    const std::size_t present = fileSize > offset ? static_cast<std::size_t>(fileSize - offset) : 0;
    if (bytes > present)
        throw input_error("'" + path + "' is truncated: its header (dim " + shape + ", datatype " +
                          std::to_string(h.datatype) + ") needs " + std::to_string(bytes) +
                          " bytes of voxels after offset " + std::to_string(offset) + " but the file has " +
                          std::to_string(present));
    if (check) check(dims);
    std::vector<char> raw(bytes);
    f.seekg(offset);
    f.read(raw.data(), static_cast<std::streamsize>(raw.size()));
    if (!f) throw input_error("'" + path + "' could not be read (" + std::to_string(n) + " voxels expected)");
    v.data.resize(n);
    switch (h.datatype) {
        case DT_UINT8: convert_real<uint8_t>(raw.data(), n, v.data); break;
        case DT_INT8: convert_real<int8_t>(raw.data(), n, v.data); break;
        case DT_INT16: convert_real<int16_t>(raw.data(), n, v.data); break;
        case DT_UINT16: convert_real<uint16_t>(raw.data(), n, v.data); break;
        case DT_INT32: convert_real<int32_t>(raw.data(), n, v.data); break;
        case DT_UINT32: convert_real<uint32_t>(raw.data(), n, v.data); break;
        case DT_FLOAT32: convert_real<float>(raw.data(), n, v.data); break;
        case DT_FLOAT64: convert_real<double>(raw.data(), n, v.data); break;
        case DT_COMPLEX64:
            convert_complex<float>(raw.data(), n, v.data);
            v.is_complex = true;
            break;
        case DT_COMPLEX128:
            convert_complex<double>(raw.data(), n, v.data);
            v.is_complex = true;
            break;
    }
    if (!v.is_complex && h.scl_slope != 0.0f && std::isfinite(h.scl_slope) &&
        (h.scl_slope != 1.0f || h.scl_inter != 0.0f)) {
        for (auto& x : v.data) x = std::complex<double>(x.real() * h.scl_slope + h.scl_inter, 0.0);
    }
    return v;
}

}  // namespace io
}  // namespace forge
