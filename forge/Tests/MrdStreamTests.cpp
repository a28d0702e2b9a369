// forge::io's MRD stream framing (MrdStream.h): random acquisitions written by write_mrd_stream come back from
// read_mrd_stream exactly (every header field forge uses, trajectories, data, noise scans apart), through a real
// file descriptor; images written by write_mrd_image_stream have the protocol's byte layout (message ids, the
// 198-byte header with libismrmrd's fields, the attribute length, the values); streams cut at every message
// boundary and inside every message are refused by name.
#include <complex>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "TestHelpers.h"
#include "forge/IO/MrdStream.h"

namespace {

// The bytes 'write' puts on a descriptor, through a temporary file.
template <typename Write>
std::string captured(const Write& write) {
    const std::string path = "mrd_stream_" + std::to_string(forge_test::test_seed()) + ".bin";
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0600);
    REQUIRE(fd >= 0);
    write(fd);
    std::string bytes(std::size_t(::lseek(fd, 0, SEEK_END)), '\0');
    ::pread(fd, &bytes[0], bytes.size(), 0);
    ::close(fd);
    std::remove(path.c_str());
    return bytes;
}

// read_mrd_stream of 'bytes', through a temporary file.
forge::io::MrdFile read_bytes(const std::string& bytes) {
    const std::string path = "mrd_stream_in_" + std::to_string(forge_test::test_seed()) + ".bin";
    {
        const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
        REQUIRE(fd >= 0);
        REQUIRE(::write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
        ::close(fd);
    }
    const int fd = ::open(path.c_str(), O_RDONLY);
    struct Close {
        int fd;
        std::string path;
        ~Close() {
            ::close(fd);
            std::remove(path.c_str());
        }
    } guard{fd, path};
    return forge::io::read_mrd_stream(fd, "test");
}

}  // namespace

TEST_CASE("MRD stream: acquisitions round-trip exactly through write_mrd_stream and read_mrd_stream",
          "[io][mrd][stream]") {
    FORGE_INFO_SEED();
    std::mt19937 rng(static_cast<unsigned>(forge_test::test_seed()));
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::uniform_int_distribution<int> u(0, 400);
    forge::io::MrdHeader H;
    H.encoded_matrix = H.recon_matrix = {{16, 16, 1}};
    H.encoded_fov_mm = H.recon_fov_mm = {{200, 200, 5}};
    H.trajectory = "spiral";
    H.receiver_channels = 3;
    const std::string xml = forge::io::make_mrd_header_xml(H, "stream-test");
    std::vector<forge::io::MrdAcquisition> acqs(7);
    for (std::size_t i = 0; i < acqs.size(); ++i) {
        auto& a = acqs[i];
        a.samples = uint16_t(5 + u(rng) % 20);
        a.channels = 3;
        a.traj_dims = 2;
        a.center_sample = uint16_t(u(rng) % 5);
        a.dwell_us = 1 + g(rng) * g(rng);
        a.e1 = uint16_t(u(rng));
        a.e2 = uint16_t(u(rng));
        a.slice = uint16_t(u(rng) % 3);
        a.repetition = uint16_t(u(rng));
        a.contrast = uint16_t(u(rng) % 2);
        a.flags = i == 2 ? (uint64_t(1) << 18) : 0;  // ACQ_IS_NOISE_MEASUREMENT (bit 19)
        for (int k = 0; k < 3; ++k) {
            a.position[k] = 100 * g(rng);
            a.read_dir[k] = g(rng);
            a.phase_dir[k] = g(rng);
            a.slice_dir[k] = g(rng);
        }
        for (std::size_t j = 0; j < std::size_t(a.samples) * a.channels; ++j) a.data.emplace_back(g(rng), g(rng));
        for (std::size_t j = 0; j < std::size_t(a.samples) * a.traj_dims; ++j) a.traj.push_back(0.4f * g(rng));
    }
    const std::string bytes = captured([&](int fd) { forge::io::write_mrd_stream(fd, xml, acqs); });
    const forge::io::MrdFile F = read_bytes(bytes);
    CHECK(F.xml == xml);
    CHECK(F.header.receiver_channels == 3);
    REQUIRE(F.noise.size() == 1);
    REQUIRE(F.acquisitions.size() == acqs.size() - 1);
    std::size_t wrong = 0;
    for (std::size_t i = 0, r = 0; i < acqs.size(); ++i) {
        const auto& a = acqs[i];
        const auto& b = i == 2 ? F.noise[0] : F.acquisitions[r++];
        wrong += a.samples != b.samples || a.channels != b.channels || a.traj_dims != b.traj_dims ||
                 a.center_sample != b.center_sample || a.dwell_us != b.dwell_us || a.e1 != b.e1 || a.e2 != b.e2 ||
                 a.slice != b.slice || a.repetition != b.repetition || a.contrast != b.contrast || a.flags != b.flags ||
                 a.position != b.position || a.read_dir != b.read_dir || a.phase_dir != b.phase_dir ||
                 a.slice_dir != b.slice_dir || a.data != b.data || a.traj != b.traj;
    }
    CHECK(wrong == 0);

    // cut anywhere: refused with the stream's name, never read as a shorter scan
    std::size_t refused = 0, cuts = 0;
    for (std::size_t n = 0; n < bytes.size(); n += 1 + bytes.size() / 97) {
        ++cuts;
        try {
            read_bytes(bytes.substr(0, n));
        } catch (const forge::io::input_error& e) {
            refused += std::string(e.what()).find("the MRD stream 'test'") != std::string::npos;
        }
    }
    CHECK(refused == cuts);
}

TEST_CASE("MRD stream: images have the protocol's byte layout", "[io][mrd][stream]") {
    forge::io::ImageGeometry g;
    g.matrix = {{4, 2, 1}};
    g.fov_mm = {{40, 20, 5}};
    g.slices.resize(1);
    g.slices[0].index = 7;
    g.slices[0].position = {{1, 2, 3}};
    std::vector<forge::io::MrdOutputImage> images(2);
    for (std::size_t i = 0; i < images.size(); ++i) {
        images[i].repetition = uint16_t(i);
        for (int v = 0; v < 8; ++v) images[i].values.emplace_back(float(v + 10 * i), -1.0f);
        images[i].meta = {{"operator", {"dft"}}};
    }
    for (bool complex : {false, true}) {
        forge::io::MrdImageOptions o;
        o.complex = complex;
        const std::string b = captured([&](int fd) { forge::io::write_mrd_image_stream(fd, g, images, o); });
        std::size_t off = 0;
        for (std::size_t i = 0; i < images.size(); ++i) {
            uint16_t id;
            std::memcpy(&id, b.data() + off, 2);
            REQUIRE(id == 1022);
            const char* h = b.data() + off + 2;  // ISMRMRD_ImageHeader, packed: the offsets of ismrmrd.ImageHeader
            uint16_t matrix[3], slice, repetition, imageType;
            float position[3];
            std::memcpy(matrix, h + 16, 6);
            std::memcpy(position, h + 36, 12);
            std::memcpy(&slice, h + 98, 2);
            std::memcpy(&repetition, h + 104, 2);
            std::memcpy(&imageType, h + 124, 2);
            CHECK(matrix[0] == 4);
            CHECK(matrix[1] == 2);
            CHECK(position[2] == 3.0f);
            CHECK(slice == 7);
            CHECK(repetition == i);
            CHECK(imageType == (complex ? 5 : 1));
            uint64_t attrLen;
            std::memcpy(&attrLen, h + 198, 8);
            const std::string attrs(h + 206, std::size_t(attrLen));
            CHECK(attrs.find("<name>operator</name>") != std::string::npos);
            const char* data = h + 206 + attrLen;
            for (int v = 0; v < 8; ++v) {
                float re;
                std::memcpy(&re, data + (complex ? 8 : 4) * v, 4);
                CHECK(re == (complex ? float(v + 10 * i) : std::abs(std::complex<float>(float(v + 10 * i), -1.0f))));
            }
            off += 2 + 198 + 8 + std::size_t(attrLen) + 8 * (complex ? 8 : 4);
        }
        REQUIRE(b.size() == off + 2);
        uint16_t close;
        std::memcpy(&close, b.data() + off, 2);
        CHECK(close == 4);
    }
}
