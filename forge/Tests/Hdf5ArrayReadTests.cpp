// forge::io::read_hdf5_array on ISMRMRD NDArrays of complex floats (what forge-recon --demo writes for its csm,
// fieldmap and phantom): the values written come back exactly (float -> double widening), dims fastest first.
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "TestHelpers.h"
#include "forge/IO/Mrd.h"

TEST_CASE("read_hdf5_array reads complex float NDArrays exactly", "[io][hdf5]") {
    FORGE_INFO_SEED();
    std::mt19937 rng(static_cast<unsigned>(forge_test::test_seed()));
    std::normal_distribution<float> g(0.0f, 1e3f);
    forge::io::MrdFile F;
    F.header.encoded_matrix = F.header.recon_matrix = {8, 8, 1};
    F.header.encoded_fov_mm = F.header.recon_fov_mm = {200, 200, 5};
    F.header.trajectory = "cartesian";
    forge::io::MrdAcquisition a;
    a.samples = 8;
    a.channels = 1;
    a.data.assign(8, {1.0f, 0.0f});
    std::vector<forge::io::MrdNamedArray> arrays(2);
    arrays[0] = {"csm", {8, 8, 3, 5}, std::vector<std::complex<float>>(8 * 8 * 3 * 5)};
    arrays[1] = {"tiny", {2, 3}, std::vector<std::complex<float>>(6)};
    for (auto& arr : arrays)
        for (auto& v : arr.data) v = {g(rng), g(rng)};
    arrays[1].data[0] = {1e-38f, -3.4e38f};  // the range of float, subnormal included
    const std::string path = "hdf5_array_read_" + std::to_string(forge_test::test_seed()) + ".h5";
    forge::io::write_mrd(path, forge::io::make_mrd_header_xml(F.header), {a}, arrays);
    for (const auto& arr : arrays) {
        std::vector<std::size_t> seen;
        const forge::io::Array r = forge::io::read_hdf5_array(path, "/dataset/" + arr.name,
                                                              [&](const std::vector<std::size_t>& d) { seen = d; });
        INFO(arr.name);
        CHECK(r.is_complex);
        REQUIRE(r.data.size() == arr.data.size());
        CHECK(std::vector<std::size_t>(seen.begin(), seen.begin() + std::ptrdiff_t(arr.dims.size())) == arr.dims);
        std::size_t same = 0;
        for (std::size_t i = 0; i < arr.data.size(); ++i)
            same += r.data[i] == std::complex<double>(arr.data[i].real(), arr.data[i].imag());
        CHECK(same == arr.data.size());
    }
    std::remove(path.c_str());
}
