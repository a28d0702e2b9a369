// forge::io::write_mrd_images against libismrmrd's own reader (Dataset::readImage, MetaContainer): random geometry,
// indices, values and meta attributes come back exactly (magnitudes as |value| in float); sizes that do not fit
// the geometry are refused and leave no file.
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <ismrmrd/meta.h>
#include <sys/stat.h>

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/IO/MrdImages.h"

namespace {

bool exists(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("write_mrd_images: geometry, indices, values and meta round-trip through libismrmrd", "[io][mrd][images]") {
    FORGE_INFO_SEED();
    std::mt19937 rng(static_cast<unsigned>(forge_test::test_seed()));
    std::normal_distribution<double> g(0.0, 1.0);
    std::uniform_int_distribution<int> idx(0, 300);
    forge::io::ImageGeometry geom;
    geom.matrix = {{6, 4, 2}};
    geom.fov_mm = {{180 + g(rng), 120 + g(rng), 8 + g(rng)}};
    for (int s = 0; s < 2; ++s) {
        forge::io::SliceGeometry sl;
        sl.index = uint16_t(idx(rng));
        for (int k = 0; k < 3; ++k) {
            sl.position[k] = 50 * g(rng);
            sl.read_dir[k] = g(rng);
            sl.phase_dir[k] = g(rng);
            sl.slice_dir[k] = g(rng);
        }
        geom.slices.push_back(sl);
    }
    std::vector<forge::io::MrdOutputImage> images(3);
    for (std::size_t i = 0; i < images.size(); ++i) {
        images[i].slice = i % 2;
        images[i].repetition = uint16_t(idx(rng));
        images[i].contrast = uint16_t(idx(rng));
        for (int v = 0; v < 6 * 4 * 2; ++v) images[i].values.emplace_back(float(g(rng)), float(g(rng)));
        images[i].meta = {{"operator", {"nufft"}}, {"iterations", {std::to_string(i + 3), "7"}}};
    }
    for (bool complex : {false, true}) {
        INFO("complex " << complex);
        const std::string path = "mrd_images_" + std::to_string(forge_test::test_seed()) + ".h5";
        std::remove(path.c_str());
        forge::io::MrdImageOptions opt;
        opt.complex = complex;
        opt.series_index = 3;
        forge::io::write_mrd_images(path, "", geom, images, opt);
        const auto back = forge::io::read_mrd_images(path, 3);
        REQUIRE(back.size() == images.size());
        std::size_t wrong = 0;
        for (std::size_t i = 0; i < images.size(); ++i) {
            const auto& r = back[i];
            const auto& s = geom.slices[images[i].slice];
            CHECK(r.matrix == std::array<uint16_t, 3>{{6, 4, 2}});
            for (int k = 0; k < 3; ++k) {
                CHECK(r.fov[k] == float(geom.fov_mm[k]));
                CHECK(r.position[k] == float(s.position[k]));
                CHECK(r.read_dir[k] == float(s.read_dir[k]));
                CHECK(r.phase_dir[k] == float(s.phase_dir[k]));
                CHECK(r.slice_dir[k] == float(s.slice_dir[k]));
            }
            CHECK(r.slice == s.index);
            CHECK(r.repetition == images[i].repetition);
            CHECK(r.contrast == images[i].contrast);
            CHECK(r.image_index == i + 1);
            CHECK(r.image_series_index == 3);
            CHECK(r.image_type == (complex ? 5 : 1));  // ISMRMRD_IMTYPE_COMPLEX, ISMRMRD_IMTYPE_MAGNITUDE
            REQUIRE(r.values.size() == images[i].values.size());
            for (std::size_t v = 0; v < r.values.size(); ++v) {
                const std::complex<float> e =
                    complex ? images[i].values[v] : std::complex<float>(std::abs(images[i].values[v]), 0.0f);
                wrong += r.values[v] != e;
            }
            ISMRMRD::MetaContainer meta;
            ISMRMRD::deserialize(r.attributes.c_str(), meta);
            CHECK(std::string(meta.as_str("operator")) == "nufft");
            CHECK(meta.length("iterations") == 2);
            CHECK(meta.as_long("iterations", 0) == long(i + 3));
            CHECK(meta.as_long("iterations", 1) == 7);
        }
        CHECK(wrong == 0);
        std::remove(path.c_str());
    }
    // an image of the wrong size, or of a slice the geometry lacks: refused, nothing written
    const std::string bad = "mrd_images_bad_" + std::to_string(forge_test::test_seed()) + ".h5";
    auto wrongSize = images;
    wrongSize[1].values.pop_back();
    CHECK_THROWS_AS(forge::io::write_mrd_images(bad, "", geom, wrongSize), forge::invalid_argument);
    auto wrongSlice = images;
    wrongSlice[2].slice = 2;
    CHECK_THROWS_AS(forge::io::write_mrd_images(bad, "", geom, wrongSlice), forge::invalid_argument);
    CHECK(!exists(bad));
    CHECK_THROWS_AS(forge::io::read_mrd_images(bad), forge::io::input_error);
}
