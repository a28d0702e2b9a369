#include "forge/IO/ImageGeometry.h"

#include <cmath>
#include <map>

namespace forge {
namespace io {

namespace {

using Vec3 = std::array<double, 3>;

double norm(const Vec3& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }
Vec3 to_vec(const std::array<float, 3>& v) { return {{double(v[0]), double(v[1]), double(v[2])}}; }
Vec3 unit(const Vec3& v) {
    const double n = norm(v);
    return {{v[0] / n, v[1] / n, v[2] / n}};
}
Vec3 cross(const Vec3& a, const Vec3& b) {
    return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}

SliceGeometry slice_geometry(const MrdAcquisition& a) {
    SliceGeometry s;
    s.position = to_vec(a.position);
    const Vec3 rd = to_vec(a.read_dir), pd = to_vec(a.phase_dir), sd = to_vec(a.slice_dir);
    if (norm(rd) > 0.5 && norm(pd) > 0.5) {  // else the axis-aligned default
        s.read_dir = unit(rd);
        s.phase_dir = unit(pd);
        s.slice_dir = norm(sd) > 0.5 ? unit(sd) : unit(cross(rd, pd));
    }
    return s;
}

}  // namespace

double ImageGeometry::slice_spacing_mm() const {
    if (slices.size() > 1) {
        double d = 0;
        for (int k = 0; k < 3; ++k) d += (slices[1].position[k] - slices[0].position[k]) * slices[0].slice_dir[k];
        if (std::fabs(d) > 1e-6) return d;
    }
    return voxel_mm()[2];
}

std::array<double, 3> ImageGeometry::pixel_position(std::size_t s, double x, double y, double z) const {
    const SliceGeometry& g = slices.at(s);
    const Vec3 v = voxel_mm();
    const double u[3] = {(x - double(matrix[0] / 2)) * v[0], (y - double(matrix[1] / 2)) * v[1],
                         matrix[2] > 1 ? (z - double(matrix[2] / 2)) * v[2] : z * v[2]};
    Vec3 p;
    for (int k = 0; k < 3; ++k)
        p[k] = g.position[k] + u[0] * g.read_dir[k] + u[1] * g.phase_dir[k] + u[2] * g.slice_dir[k];
    return p;
}

ImageGeometry image_geometry(const MrdFile& F, const recon::ReconProblem& P) {
    ImageGeometry g;
    g.matrix = {{P.Nx, P.Ny, P.Nz}};
    for (int k = 0; k < 3; ++k) g.fov_mm[k] = P.voxel_mm[k] * double(g.matrix[k]);
    // problem_from_mrd's slice order: idx.slice sorted, each slice's first acquisition in file order
    std::map<uint16_t, const MrdAcquisition*> first;
    for (const auto& a : F.acquisitions) first.emplace(a.slice, &a);
    for (const auto& kv : first) {
        g.slices.push_back(slice_geometry(*kv.second));
        g.slices.back().index = kv.first;
    }
    std::map<std::array<uint16_t, 2>, int> frames;  // problem_from_mrd's frame order: (repetition, contrast) sorted
    for (const auto& a : F.acquisitions) frames.emplace(std::array<uint16_t, 2>{{a.repetition, a.contrast}}, 0);
    for (const auto& kv : frames) g.frames.push_back(kv.first);
    return g;
}

recon::Affine nifti_affine(const ImageGeometry& g) {
    const Vec3 v = g.voxel_mm();
    const SliceGeometry& s0 = g.slices.front();
    const double dz = g.matrix[2] > 1 ? v[2] : g.slice_spacing_mm();
    const Vec3 o = g.pixel_position(0, 0, 0, 0);
    recon::Affine A{};
    const double flip[3] = {-1, -1, 1};  // LPS -> RAS
    for (int r = 0; r < 3; ++r) {
        A[r][0] = flip[r] * s0.read_dir[r] * v[0];
        A[r][1] = flip[r] * s0.phase_dir[r] * v[1];
        A[r][2] = flip[r] * s0.slice_dir[r] * dz;
        A[r][3] = flip[r] * o[r];
    }
    A[3][3] = 1;
    return A;
}

}  // namespace io
}  // namespace forge
