// forge::io's MRD stream read one message at a time (MrdStreamReader), the header's group counts
// (mrd_group_counts) and the pieces a stream sent in parts needs (write_mrd_text, write_mrd_image_stream's
// firstIndex): the reader's events and acquisitions are those written, in order, with their stream indices; the
// counts are the encodingLimits of an XML header made here; TEXT and image indices have the protocol's bytes.
#include <cstddef>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include "TestHelpers.h"
#include "forge/IO/Mrd.h"
#include "forge/IO/MrdStream.h"

namespace {

using Event = forge::io::MrdStreamReader::Event;

// A descriptor reading 'bytes' (a temporary file), closed and removed at the end of the scope.
struct BytesFd {
    explicit BytesFd(const std::string& bytes, const std::string& tag) : path("mrd_reader_" + tag + ".bin") {
        const int w = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
        REQUIRE(w >= 0);
        REQUIRE(::write(w, bytes.data(), bytes.size()) == ssize_t(bytes.size()));
        ::close(w);
        fd = ::open(path.c_str(), O_RDONLY);
        REQUIRE(fd >= 0);
    }
    ~BytesFd() {
        ::close(fd);
        std::remove(path.c_str());
    }
    std::string path;
    int fd = -1;
};

template <typename Write>
std::string captured(const Write& write) {
    const std::string path = "mrd_reader_out_" + std::to_string(forge_test::test_seed()) + ".bin";
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_RDWR, 0600);
    REQUIRE(fd >= 0);
    write(fd);
    std::string bytes(std::size_t(::lseek(fd, 0, SEEK_END)), '\0');
    REQUIRE(::pread(fd, &bytes[0], bytes.size(), 0) == ssize_t(bytes.size()));
    ::close(fd);
    std::remove(path.c_str());
    return bytes;
}

// The test header with 'limits' (slice, repetition ranges; absent where hi < 0) set through libismrmrd's own XML
std::string header_xml(int s0 = 0, int s1 = -1, int r0 = 0, int r1 = -1) {
    forge::io::MrdHeader H;
    H.encoded_matrix = H.recon_matrix = {{16, 16, 1}};
    H.encoded_fov_mm = H.recon_fov_mm = {{200, 200, 5}};
    H.trajectory = "spiral";
    H.receiver_channels = 2;
    ISMRMRD::IsmrmrdHeader h;
    ISMRMRD::deserialize(forge::io::make_mrd_header_xml(H, "reader-test").c_str(), h);
    if (s1 >= 0) h.encoding[0].encodingLimits.slice = ISMRMRD::Limit(uint16_t(s0), uint16_t(s1), 0);
    if (r1 >= 0) h.encoding[0].encodingLimits.repetition = ISMRMRD::Limit(uint16_t(r0), uint16_t(r1), 0);
    std::ostringstream out;
    ISMRMRD::serialize(h, out);
    return out.str();
}

}  // namespace

TEST_CASE("MRD stream reader: one message at a time, the acquisitions written, in order", "[io][mrd][stream]") {
    FORGE_INFO_SEED();
    std::mt19937 rng(static_cast<unsigned>(forge_test::test_seed()));
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::uniform_int_distribution<int> u(0, 400);
    const std::string xml = header_xml();
    std::vector<forge::io::MrdAcquisition> acqs(9);
    for (std::size_t i = 0; i < acqs.size(); ++i) {
        auto& a = acqs[i];
        a.samples = uint16_t(3 + u(rng) % 20);
        a.channels = 2;
        a.traj_dims = 2;
        a.slice = uint16_t(u(rng) % 4);
        a.repetition = uint16_t(u(rng) % 3);
        const bool noise = u(rng) % 3 == 0;
        a.flags = (noise ? uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT - 1) : 0) |
                  (u(rng) % 2 ? uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_LAST_IN_SLICE - 1) : 0);
        for (std::size_t j = 0; j < std::size_t(a.samples) * a.channels; ++j) a.data.emplace_back(g(rng), g(rng));
        for (std::size_t j = 0; j < std::size_t(a.samples) * a.traj_dims; ++j) a.traj.push_back(0.4f * g(rng));
    }
    const std::string bytes = captured([&](int fd) { forge::io::write_mrd_stream(fd, xml, acqs); });
    BytesFd in(bytes, std::to_string(forge_test::test_seed()));
    forge::io::MrdStreamReader r(in.fd, "test");
    forge::io::MrdAcquisition a;
    REQUIRE(r.next(a) == Event::kHeader);
    CHECK(r.xml() == xml);
    CHECK(r.has_header());
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < acqs.size(); ++i) {
        const bool noise = acqs[i].flags & (uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT - 1));
        const Event e = r.next(a);
        wrong += e != (noise ? Event::kNoise : Event::kAcquisition) || r.acquisitions_read() != i + 1 ||
                 a.flags != acqs[i].flags || a.slice != acqs[i].slice || a.repetition != acqs[i].repetition ||
                 a.data != acqs[i].data || a.traj != acqs[i].traj;
    }
    CHECK(wrong == 0);
    CHECK(r.next(a) == Event::kClose);
    // nothing after CLOSE: reading on is the end of the stream without one
    CHECK_THROWS_AS(r.next(a), forge::io::input_error);
}

TEST_CASE("MRD stream: the header's slice, repetition and contrast counts", "[io][mrd][stream]") {
    std::uniform_int_distribution<int> u(0, 30);
    std::mt19937 rng(static_cast<unsigned>(forge_test::test_seed()));
    FORGE_INFO_SEED();
    const int s0 = u(rng), s1 = s0 + u(rng), r0 = u(rng), r1 = r0 + u(rng);
    const forge::io::MrdGroupCounts c = forge::io::mrd_group_counts(header_xml(s0, s1, r0, r1));
    CHECK(c.slice.first == s0);
    CHECK(c.slice.count == std::size_t(s1 - s0 + 1));
    CHECK(c.repetition.first == r0);
    CHECK(c.repetition.count == std::size_t(r1 - r0 + 1));
    CHECK(c.contrast.count == 1);  // not given: one
    CHECK(c.frames() == c.repetition.count);
    CHECK(c.slice.has(uint16_t(s1)));
    CHECK_FALSE(c.slice.has(uint16_t(s1 + 1)));
    CHECK(forge::io::mrd_group_counts(header_xml()).slice.count == 0);      // no slice limit: unknown
    CHECK(forge::io::mrd_group_counts(header_xml(5, 2)).slice.count == 0);  // maximum below minimum
    CHECK(forge::io::mrd_group_counts("<not an ismrmrd header").slice.count == 0);
}

TEST_CASE("MRD stream: TEXT, CLOSE and image indices counted from firstIndex", "[io][mrd][stream]") {
    const std::string text = "forge-recon: error: " + std::to_string(forge_test::test_seed());
    const std::string b = captured([&](int fd) { forge::io::write_mrd_text(fd, text); });
    REQUIRE(b.size() == 2 + 4 + text.size() + 2);
    uint16_t id = 0, close = 0;
    uint32_t len = 0;
    std::memcpy(&id, b.data(), 2);
    std::memcpy(&len, b.data() + 2, 4);
    std::memcpy(&close, b.data() + 6 + text.size(), 2);
    CHECK(id == forge::io::kMrdText);
    CHECK(len == text.size());
    CHECK(b.substr(6, text.size()) == text);
    CHECK(close == forge::io::kMrdClose);

    forge::io::ImageGeometry geo;
    geo.matrix = {{4, 3, 1}};
    geo.fov_mm = {{40, 30, 5}};
    geo.slices.resize(2);
    geo.frames = {{{0, 0}}};
    std::vector<forge::io::MrdOutputImage> images(2);
    for (std::size_t i = 0; i < images.size(); ++i) {
        images[i].slice = i;
        images[i].values.assign(12, {float(i), 0});
    }
    const uint16_t first = uint16_t(2 + forge_test::test_seed() % 100);
    const std::string im =
        captured([&](int fd) { forge::io::write_mrd_image_stream(fd, geo, images, {}, false, first); });
    const std::size_t one = 2 + sizeof(ISMRMRD::ISMRMRD_ImageHeader) + 8 + 0;  // before the attributes
    std::size_t off = 0;
    for (std::size_t i = 0; i < images.size(); ++i) {
        ISMRMRD::ISMRMRD_ImageHeader h;
        std::memcpy(&h, im.data() + off + 2, sizeof h);
        uint64_t attrs = 0;
        std::memcpy(&attrs, im.data() + off + 2 + sizeof h, 8);
        CHECK(h.image_index == first + i);
        off += one + attrs + 12 * sizeof(float);
    }
    CHECK(off == im.size());  // no CLOSE when not asked
}
