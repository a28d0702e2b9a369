// forge::io's BART arrays (Cfl.h) and their conversion to a reconstruction problem (BartProblem.h): values come back
// bit for bit, hostile headers and data files are refused with one line naming the file before anything is
// allocated, and problem_from_mrd() of the converted arrays puts every BART sample at its trajectory point
// (cycles/FOV, unchanged) with its coil, time point and slice, found here by BART's own index arithmetic.
#include <complex>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/IO/BartProblem.h"
#include "forge/IO/Cfl.h"
#include "forge/IO/MrdProblem.h"

namespace {

using cxf = std::complex<float>;

std::string scratch(const std::string& what) {
    return "cfl_test_" + what + "_" + std::to_string(forge_test::test_seed());
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void write_bytes(const std::string& path, std::size_t n) {
    std::ofstream f(path, std::ios::binary);
    const std::vector<char> zeros(n, 0);
    f.write(zeros.data(), std::streamsize(n));
}

void remove_cfl(const std::string& base) {
    std::remove((base + ".hdr").c_str());
    std::remove((base + ".cfl").c_str());
}

// The message of the input_error read_cfl throws, or "" when it does not throw.
std::string read_error(const std::string& base) {
    try {
        forge::io::read_cfl(base);
    } catch (const forge::io::input_error& e) {
        return e.what();
    }
    return "";
}

std::vector<cxf> random_values(std::size_t n, std::mt19937& rng) {
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<cxf> v(n);
    for (auto& x : v) x = {g(rng), g(rng)};
    return v;
}

}  // namespace

TEST_CASE("write_cfl and read_cfl: dims and values round-trip exactly", "[io][cfl]") {
    FORGE_INFO_SEED();
    std::mt19937 rng(static_cast<unsigned>(forge_test::test_seed()));
    const std::string base = scratch("roundtrip");
    const std::vector<std::size_t> dims{1, 7, 5, 3, 1, 1, 1, 1, 1, 1, 2};
    auto v = random_values(7 * 5 * 3 * 2, rng);
    v[3] = {1e-45f, -3.4e38f};  // the ends of float's range
    forge::io::write_cfl(base, dims, v);
    std::vector<std::size_t> seen;
    const forge::io::CflArray a =
        forge::io::read_cfl(base + ".cfl", [&](const std::vector<std::size_t>& d) { seen = d; });
    REQUIRE(seen.size() == forge::io::kCflDims);
    for (std::size_t d = 0; d < forge::io::kCflDims; ++d) CHECK(a.dims[d] == (d < dims.size() ? dims[d] : 1));
    CHECK(seen[10] == 2);
    REQUIRE(a.data.size() == v.size());
    std::size_t same = 0;
    for (std::size_t i = 0; i < v.size(); ++i) same += a.data[i] == v[i];
    CHECK(same == v.size());
    CHECK(forge::io::cfl_dims_string(a.dims) == "1x7x5x3x1x1x1x1x1x1x2");
    // BART's own header: extra sections before and after, one size per word
    write_text(base + ".hdr",
               "# Command\ntraj -x 7\n# Dimensions\n1 7 5 3 1 1 1 1 1 1 2 1 1 1 1 1 \n# Creator\nBART v0.8.00\n");
    CHECK(forge::io::read_cfl(base + ".hdr").data == v);
    CHECK_THROWS_AS(forge::io::write_cfl(base, {2, 2}, v), forge::invalid_argument);
    remove_cfl(base);
}

TEST_CASE("read_cfl refuses hostile headers and data files by name", "[io][cfl]") {
    const std::string base = scratch("hostile");
    struct Case {
        std::string header;
        std::size_t cflBytes;
        std::string expected;
    };
    const std::vector<Case> cases = {
        {"# Dimensions\n2 3\n", 48, ""},  // the valid file each case breaks
        {"no header here\n", 48, "no '# Dimensions' line"},
        {"# Dimensions\n", 48, "lists no sizes"},
        {"# Dimensions\n2 3\n# Dimensions\n2 3\n", 48, "two '# Dimensions'"},
        {"# Dimensions\n2 -3\n", 48, "dimension 1 is '-3'"},
        {"# Dimensions\n2 0\n", 0, "dimension 1 is '0'"},
        {"# Dimensions\n2 3.5\n", 48, "dimension 1 is '3.5'"},
        {"# Dimensions\n2 x3\n", 48, "dimension 1 is 'x3'"},
        {"# Dimensions\n99999999999999999999 1\n", 48, "dimension 0 is '99999999999999999999'"},
        {"# Dimensions\n2 3 1 1 1 1 1 1 1 1 1 1 1 1 1 1 2\n", 48, "dimension 16 is 2"},
        {"# Dimensions\n2147483648 2147483648 2147483648\n", 48, "overflows 64 bits"},
        {"# Dimensions\n2147483648 1024\n", 48, "holds 48 bytes but its header's sizes"},
        {"# Dimensions\n2 3\n", 47, "the file is truncated"},
        {"# Dimensions\n2 3\n", 0, "the file is truncated"},
        {"# Dimensions\n2 3\n", 56, "holds 56 bytes"},
    };
    for (const auto& c : cases) {
        INFO(c.header);
        write_text(base + ".hdr", c.header);
        write_bytes(base + ".cfl", c.cflBytes);
        const std::string msg = read_error(base);
        if (c.expected.empty()) {
            CHECK(msg.empty());
            continue;
        }
        CHECK(msg.find(c.expected) != std::string::npos);
        CHECK(msg.find(base) != std::string::npos);  // names the file
    }
    std::remove((base + ".cfl").c_str());
    CHECK(read_error(base).find(base + ".cfl' does not exist") != std::string::npos);
    std::remove((base + ".hdr").c_str());
    CHECK(read_error(base).find(base + ".hdr' does not exist") != std::string::npos);
    // a large file that is not a header is not read whole
    write_bytes(base + ".hdr", (1 << 20) + 1);
    CHECK(read_error(base).find("not a BART header") != std::string::npos);
    // the caller's check sees the dims before the values are allocated, and may refuse them
    write_text(base + ".hdr", "# Dimensions\n2 3\n");
    write_bytes(base + ".cfl", 48);
    CHECK_THROWS_WITH(forge::io::read_cfl(base,
                                          [](const std::vector<std::size_t>&) { throw std::runtime_error("no"); }),
                      "no");
    remove_cfl(base);
}

TEST_CASE("bart_image_matrix is BART's estimate_im_dims", "[io][cfl][bart]") {
    forge::io::CflArray t;
    t.dims.fill(1);
    t.dims[0] = 3;
    t.dims[1] = 2;
    // kx up to 63.75 (a 256-sample radial spoke scaled by 0.5): 128; ky 3.5: 8; kz all 0: 1
    t.data = {{-63.75f, 0}, {3.5f, 0}, {0, 0}, {10, 0}, {-1, 0}, {0, 0}};
    CHECK(forge::io::bart_image_matrix(t, "t") == std::array<std::size_t, 3>{{128, 8, 1}});
    t.data[1] = {4.3f, 0};  // 2 * floor((8.6 + 1.5) / 2) = 10
    CHECK(forge::io::bart_image_matrix(t, "t") == std::array<std::size_t, 3>{{128, 10, 1}});
    t.data[2] = {0.2f, 0};  // 2 * floor((0.4 + 1.5) / 2) = 0 pixels by BART's rule: refused
    CHECK_THROWS_WITH(forge::io::bart_image_matrix(t, "t"), Catch::Contains("0 pixels along z"));
    t.data[2] = {0, 0};
    t.data[4] = {1, 0.5f};
    CHECK_THROWS_AS(forge::io::bart_image_matrix(t, "t"), forge::io::input_error);
    t.data[4] = {NAN, 0};
    CHECK_THROWS_AS(forge::io::bart_image_matrix(t, "t"), forge::io::input_error);
}

TEST_CASE("BART arrays to a problem: every sample at its trajectory point, coil, time point and slice",
          "[io][cfl][bart]") {
    FORGE_INFO_SEED();
    std::mt19937 rng(static_cast<unsigned>(forge_test::test_seed()));
    const std::size_t ns = 6, readouts = 5, nc = 3, times = 2, slices = 2, N = 16;
    forge::io::CflArray k, t;
    k.dims.fill(1);
    t.dims.fill(1);
    k.dims[1] = t.dims[1] = ns;
    k.dims[2] = t.dims[2] = readouts;
    k.dims[3] = nc;
    k.dims[10] = t.dims[10] = times;  // a trajectory per time point, shared by the slices
    k.dims[13] = slices;
    t.dims[0] = 3;
    k.data = random_values(ns * readouts * nc * times * slices, rng);
    std::uniform_real_distribution<float> u(-8.0f, 8.0f);
    t.data.resize(3 * ns * readouts * times);
    for (std::size_t i = 0; i < t.data.size(); ++i) t.data[i] = {i % 3 == 2 ? 0.0f : u(rng), 0.0f};
    t.data[0] = {8.0f, 0.0f};  // the band's edge, +N/2: the same sample as -N/2
    const forge::io::MrdFile F = forge::io::mrd_from_bart(k, "k", t, "t", {{N, N, 1}}, {{2, 2, 3}});
    const forge::recon::ReconProblem P = forge::io::problem_from_mrd(F, "k.cfl");
    REQUIRE(P.Nx == N);
    REQUIRE(P.Ny == N);
    REQUIRE(P.Nz == 1);
    REQUIRE(P.nc == nc);
    REQUIRE(P.nslices == slices);
    REQUIRE(P.nframes == times);
    CHECK(P.voxel_mm[0] == 2.0);
    CHECK(P.voxel_mm[2] == 3.0);
    REQUIRE(P.frames.size() == times * slices);
    std::size_t wrong = 0, checked = 0;
    for (const auto& fr : P.frames) {
        REQUIRE(fr.kx.n_elem == ns * readouts);
        for (std::size_t r = 0; r < readouts; ++r)
            for (std::size_t j = 0; j < ns; ++j) {
                const std::size_t n = r * ns + j;
                // BART's layout: trajectory [3, ns, readouts, ..., time at 10]; k-space [1, ns, readouts, coils,
                // ..., time at 10, ..., slice at 13], first dimension fastest
                const std::size_t tOff = 3 * (j + ns * (r + readouts * fr.frame));
                float kx = t.data[tOff].real(), ky = t.data[tOff + 1].real();
                if (kx == 8.0f) kx = -8.0f;
                wrong += fr.kx[n] != kx || fr.ky[n] != ky || fr.kz[n] != 0.0f || fr.t[n] != 0.0f;
                for (std::size_t c = 0; c < nc; ++c) {
                    const std::size_t kOff = j + ns * (r + readouts * (c + nc * (fr.frame + times * fr.slice)));
                    wrong += fr.y[c * ns * readouts + n] != k.data[kOff];
                    ++checked;
                }
            }
    }
    CHECK(checked == ns * readouts * nc * times * slices);
    CHECK(wrong == 0);

    // maps [x, y, 1, coils, ..., slices at 13] become attach_smaps()'s x, y, slice, coil
    forge::io::CflArray m;
    m.dims.fill(1);
    m.dims[0] = m.dims[1] = N;
    m.dims[3] = nc;
    m.dims[13] = slices;
    m.data = random_values(N * N * nc * slices, rng);
    CHECK(forge::io::check_bart_maps_dims(m.dims, "m", k.dims) == std::array<std::size_t, 3>{{N, N, 1}});
    forge::recon::ReconProblem Q = P;
    forge::io::attach_smaps(
        Q, [&](const forge::io::DimsCheck&) { return forge::io::bart_maps_array(m); }, "m");
    wrong = 0;
    for (std::size_t s = 0; s < slices; ++s)
        for (std::size_t c = 0; c < nc; ++c)
            for (std::size_t p = 0; p < N * N; ++p)
                wrong += Q.smaps[s][c * N * N + p] != m.data[p + N * N * (c + nc * s)];
    CHECK(wrong == 0);
    m.dims[4] = 2;  // two ESPIRiT sets
    CHECK_THROWS_WITH(forge::io::check_bart_maps_dims(m.dims, "m", k.dims), Catch::Contains("2 ESPIRiT sets"));
    m.dims[4] = 1;
    m.dims[3] = nc + 1;
    CHECK_THROWS_WITH(forge::io::check_bart_maps_dims(m.dims, "m", k.dims), Catch::Contains("4 coils"));
    m.dims[3] = nc;
    m.dims[0] = 15;
    CHECK_THROWS_WITH(forge::io::check_bart_maps_dims(m.dims, "m", k.dims), Catch::Contains("even sizes"));
}

TEST_CASE("BART arrays that do not fit together, or leave the band, are refused by name", "[io][cfl][bart]") {
    forge::io::CflDims k, t;
    k.fill(1);
    t.fill(1);
    k[1] = t[1] = 8;
    k[2] = t[2] = 4;
    k[3] = 2;
    t[0] = 3;
    CHECK_NOTHROW(forge::io::check_bart_dims(k, "k", t, "t"));
    auto refused = [&](const std::string& expected) {
        try {
            forge::io::check_bart_dims(k, "k", t, "t");
        } catch (const forge::io::input_error& e) {
            INFO(e.what());
            CHECK(std::string(e.what()).find(expected) != std::string::npos);
            return;
        }
        FAIL("not refused: " << expected);
    };
    k[0] = 8;  // Cartesian k-space
    refused("size 1 in dimension 0");
    k[0] = 1;
    t[0] = 2;
    refused("3 coordinates in dimension 0");
    t[0] = 3;
    t[1] = 7;
    refused("differ in dimension 1 (samples): 7 and 8");
    t[1] = 8;
    k[5] = 3;  // echoes
    refused("dimension 5 (echoes) is 3");
    k[5] = 1;
    t[10] = 2;  // a trajectory per time point, but one time point of data
    refused("differ in dimension 10 (time): 2 and 1");
    t[10] = 1;
    t[3] = 2;
    refused("dimension 3 (coils) must be 1");
    t[3] = 1;
    k[1] = t[1] = 70000;
    refused("at most 65535");

    // a coordinate beyond N/2, a non-finite value: named, nothing converted
    forge::io::CflArray ka, ta;
    ka.dims.fill(1);
    ta.dims.fill(1);
    ka.dims[1] = ta.dims[1] = 2;
    ta.dims[0] = 3;
    ka.data = {{1, 0}, {2, 0}};
    ta.data = {{-4, 0}, {0, 0}, {0, 0}, {4.5f, 0}, {0, 0}, {0, 0}};
    CHECK_THROWS_WITH(forge::io::mrd_from_bart(ka, "k", ta, "t", {{8, 8, 1}}),
                      Catch::Contains("kx = 4.5") && Catch::Contains("outside [-4, 4]"));
    ta.data[3] = {4, 0};
    CHECK_NOTHROW(forge::io::mrd_from_bart(ka, "k", ta, "t", {{8, 8, 1}}));
    ta.data[5] = {0.5f, 0};  // kz on a 2D image
    CHECK_THROWS_WITH(forge::io::mrd_from_bart(ka, "k", ta, "t", {{8, 8, 1}}), Catch::Contains("kz = 0.5"));
    ta.data[5] = {0, 0};
    ka.data[1] = {NAN, 0};
    CHECK_THROWS_WITH(forge::io::mrd_from_bart(ka, "k", ta, "t", {{8, 8, 1}}), Catch::Contains("non-finite"));
}
