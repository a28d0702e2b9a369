// Links Forge::IO from an installed forge: writes a 4x4x2 NIfTI volume and reads it back.
#include <cmath>
#include <cstdio>
#include <vector>

#include "forge/IO/Nifti.h"

int main() {
    std::vector<float> v(4 * 4 * 2);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i);
    const forge::io::Affine A = forge::io::centred_affine({{4, 4, 2}}, {{1.0, 1.0, 2.0}});
    forge::io::write_nifti("io_example.nii", v, {{4, 4, 2, 1}}, A, "package test");
    const forge::io::NiftiVolume r = forge::io::read_nifti("io_example.nii");
    std::remove("io_example.nii");
    double err = 0;
    for (std::size_t i = 0; i < v.size(); ++i) err += std::abs(r.data[i].real() - v[i]);
    std::printf("Forge::IO: read back %zu values, total error %g\n", r.data.size(), err);
    return r.data.size() == v.size() && err == 0 ? 0 : 1;
}
