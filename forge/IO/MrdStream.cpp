// The MRD streaming protocol over a file descriptor (MrdStream.h). The acquisition and image headers are
// libismrmrd's packed structs, so their bytes are the protocol's (340 and 198 bytes, as ismrmrd's Python and C++
// serialisers write them).
#include "forge/IO/MrdStream.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <ismrmrd/xml.h>

#include "forge/IO/Mrd.h"
#include "forge/IO/detail/MrdHdf5.h"
#include "forge/IO/detail/MrdImageHeader.h"

namespace forge {
namespace io {

namespace {

using detail::PackedHeader;

static_assert(sizeof(PackedHeader) == 340, "the MRD acquisition header is 340 bytes");
static_assert(sizeof(ISMRMRD::ISMRMRD_ImageHeader) == 198, "the MRD image header is 198 bytes");
constexpr std::size_t kMaxText = std::size_t(16) << 20;
constexpr std::size_t kChunk = std::size_t(16) << 20;  // values read (and allocated) at most this many bytes at a time

std::string mib(double bytes) {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f MiB", bytes / double(1 << 20));
    return t;
}

class Reader {
public:
    Reader(int fd, std::string source, const MrdStreamOptions& o) : fd_(fd), source_(std::move(source)), opt_(o) {}
    // Waits until 'fd' has bytes, or throws once the message's deadline has passed.
    void wait_readable(const std::string& what) {
        if (opt_.timeout <= 0) return;
        for (;;) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
            pollfd p{fd_, POLLIN, 0};
            const int r = left.count() > 0 ? ::poll(&p, 1, int(std::min<long long>(left.count(), 1 << 30))) : 0;
            if (r > 0) return;
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw input_error("reading the MRD stream " + source_ + " failed: " + std::strerror(errno));
            char t[64];
            std::snprintf(t, sizeof t, "%g s", opt_.timeout);
            throw input_error("the MRD stream " + source_ + " stalled: " + what + " did not arrive within " + t +
                              (afterFirst_ ? " of the previous message (" : " of the stream's start (") +
                              opt_.timeout_name + "); the sender is cut off");
        }
    }
    // Fills 'n' bytes, or throws naming what was being read when the stream ends first.
    void read(void* dst, std::size_t n, const std::string& what) {
        char* p = static_cast<char*>(dst);
        while (n > 0) {
            wait_readable(what);
            const ssize_t r = ::read(fd_, p, n);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw input_error("reading the MRD stream " + source_ + " failed: " + std::strerror(errno));
            if (r == 0)
                throw input_error("the MRD stream " + source_ + " ended inside " + what +
                                  " (no CLOSE message: a cut stream is refused rather than reconstructed)");
            p += r;
            n -= std::size_t(r);
            bytes_ += std::size_t(r);
        }
    }
    // false at the end of the stream before a message id
    bool message_id(uint16_t& id) {
        char b[2];
        std::size_t got = 0;
        afterFirst_ = bytes_ > 0;
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::microseconds(static_cast<long long>(std::min(opt_.timeout, 1e9) * 1e6));
        while (got < 2) {
            wait_readable("the next message");
            const ssize_t r = ::read(fd_, b + got, 2 - got);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) throw input_error("reading the MRD stream " + source_ + " failed: " + std::strerror(errno));
            if (r == 0) {
                if (got) throw input_error("the MRD stream " + source_ + " ended inside a message id");
                return false;
            }
            got += std::size_t(r);
        }
        bytes_ += 2;
        std::memcpy(&id, b, 2);
        return true;
    }
    // A vector of 'count' values read in chunks: memory grows only with the bytes that arrive.
    template <typename T>
    void read_values(std::vector<T>& v, std::size_t count, const std::string& what) {
        v.clear();
        std::size_t done = 0;
        while (done < count) {
            const std::size_t n = std::min(count - done, kChunk / sizeof(T));
            v.resize(done + n);
            read(v.data() + done, n * sizeof(T), what);
            done += n;
        }
    }
    std::string text(const std::string& what) {
        uint32_t len = 0;
        read(&len, 4, what + "'s length");
        if (len > kMaxText)
            throw input_error("the MRD stream " + source_ + ": " + what + " of " + std::to_string(len) +
                              " bytes (at most 16 MiB)");
        std::string s(len, '\0');
        read(&s[0], len, what);
        return s;
    }
    std::size_t bytes() const { return bytes_; }
    const std::string& source() const { return source_; }
    const MrdStreamOptions& options() const { return opt_; }

private:
    int fd_;
    std::string source_;
    MrdStreamOptions opt_;
    std::size_t bytes_ = 0;
    bool afterFirst_ = false;  // a message came before the one being read
    std::chrono::steady_clock::time_point deadline_;
};

MrdAcquisition read_acquisition(Reader& in, std::size_t index) {
    const std::string which = "acquisition " + std::to_string(index);
    PackedHeader h;
    in.read(&h, sizeof h, which + "'s header");
    MrdAcquisition a = detail::acquisition_header(h);
    // counted from its header on: a claim over the cap is refused before its values are allocated
    if (in.options().memory) in.options().memory->take(mrd_stream_bytes(a), in.source(), which);
    in.read_values(a.traj, std::size_t(a.samples) * a.traj_dims, which + "'s trajectory");
    in.read_values(a.data, std::size_t(a.samples) * a.channels, which + "'s data");
    return a;
}

void write_all(int fd, const void* src, std::size_t n) {
    const char* p = static_cast<const char*>(src);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            throw std::runtime_error("writing the MRD stream failed: the reader took nothing within the send "
                                     "timeout (it does not read what is sent)");
        if (w <= 0) throw std::runtime_error(std::string("writing the MRD stream failed: ") + std::strerror(errno));
        p += w;
        n -= std::size_t(w);
    }
}

void write_id(int fd, uint16_t id) { write_all(fd, &id, 2); }

template <typename T>
void write_image(int fd, const ISMRMRD::Image<T>& im) {
    write_id(fd, kMrdImage);
    const ISMRMRD::ISMRMRD_ImageHeader& h = im.getHead();
    write_all(fd, &h, sizeof h);
    const uint64_t len = im.getAttributeStringLength();
    write_all(fd, &len, 8);
    write_all(fd, im.getAttributeString(), std::size_t(len));
    write_all(fd, im.getDataPtr(), im.getDataSize());
}

}  // namespace

struct MrdStreamReader::Input : Reader {
    using Reader::Reader;
};

void MrdStreamMemory::take(std::size_t bytes, const std::string& source, const std::string& what) {
    const std::size_t before = held_.fetch_add(bytes);
    if (before + bytes <= cap_) return;
    held_ -= bytes;
    throw input_error("the MRD stream " + source + ": " + what + " (" + mib(double(bytes)) + ") would bring the " +
                      "acquisitions it holds to " + mib(double(before + bytes)) + ", over the cap of " +
                      mib(double(cap_)) + " (" + limit_ + ")");
}

std::size_t mrd_stream_bytes(std::size_t samples, std::size_t channels, std::size_t traj_dims) {
    return sizeof(MrdAcquisition) + samples * (channels * sizeof(std::complex<float>) + traj_dims * sizeof(float));
}

MrdStreamReader::MrdStreamReader(int fd, const std::string& name, const MrdStreamOptions& options)
    : in_(new Input(fd, "'" + name + "'", options)), name_(name) {}
MrdStreamReader::~MrdStreamReader() = default;

MrdStreamReader::Event MrdStreamReader::next(MrdAcquisition& a) {
    Reader& in = *in_;
    for (uint16_t id = 0;;) {
        if (!in.message_id(id))
            throw input_error("the MRD stream '" + name_ + "' ended after " + std::to_string(in.bytes()) +
                              " bytes without a CLOSE message (a cut stream is refused rather than reconstructed)");
        switch (id) {
            case kMrdClose: return Event::kClose;
            case kMrdConfigFile: {
                char b[1024];
                in.read(b, sizeof b, "a CONFIG_FILE message");
                break;
            }
            case kMrdConfigText: in.text("a CONFIG_TEXT message"); break;
            case kMrdText: in.text("a TEXT message"); break;
            case kMrdHeader:
                if (hasHeader_) throw input_error("the MRD stream '" + name_ + "' has a second XML header");
                xml_ = in.text("the XML header");
                header_ = parse_mrd_header(xml_, name_);
                hasHeader_ = true;
                return Event::kHeader;
            case kMrdAcquisition:
                if (!hasHeader_)
                    throw input_error("the MRD stream '" + name_ + "' sends acquisition " + std::to_string(index_) +
                                      " before its XML header");
                a = read_acquisition(in, index_++);
                return a.flags & (uint64_t(1) << (ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT - 1)) ? Event::kNoise
                                                                                                  : Event::kAcquisition;
            case kMrdImage:
            case kMrdWaveform:
            case kMrdNdArray:
                throw input_error("the MRD stream '" + name_ + "' sends a message of id " + std::to_string(id) + " (" +
                                  (id == kMrdImage      ? "an image"
                                   : id == kMrdWaveform ? "a waveform"
                                                        : "an array") +
                                  "); forge-recon reconstructs acquisitions only");
            default:
                throw input_error("the MRD stream '" + name_ + "' has an unknown message id " + std::to_string(id) +
                                  " after " + std::to_string(in.bytes() - 2) + " bytes (not an MRD stream?)");
        }
    }
}

MrdFile read_mrd_stream(int fd, const std::string& name) {
    MrdStreamReader reader(fd, name);
    MrdFile out;
    MrdAcquisition a;
    for (MrdStreamReader::Event e; (e = reader.next(a)) != MrdStreamReader::Event::kClose;) {
        if (e == MrdStreamReader::Event::kNoise) {
            ++out.noise_scans;
            out.noise.push_back(std::move(a));
        } else if (e == MrdStreamReader::Event::kAcquisition) {
            out.acquisitions.push_back(std::move(a));
        }
    }
    if (!reader.has_header()) throw input_error("the MRD stream '" + name + "' has no XML header");
    out.xml = reader.xml();
    out.header = reader.header();
    if (out.acquisitions.empty())
        throw input_error("the MRD stream '" + name + "' has no acquisitions" +
                          (out.noise_scans ? std::string(" (only noise scans)") : std::string()));
    return out;
}

void write_mrd_image_stream(int fd, const ImageGeometry& g, const std::vector<MrdOutputImage>& images,
                            const MrdImageOptions& opt, bool close, uint16_t firstIndex) {
    detail::check_output_images(g, images, "write_mrd_image_stream");
    const uint16_t nx = uint16_t(g.matrix[0]), ny = uint16_t(g.matrix[1]), nz = uint16_t(g.matrix[2]);
    for (std::size_t i = 0; i < images.size(); ++i) {
        const MrdOutputImage& o = images[i];
        if (opt.complex) {
            ISMRMRD::Image<std::complex<float>> im(nx, ny, nz, 1);
            detail::fill_image_header(im, g, o, uint16_t(firstIndex + i), opt);
            std::copy(o.values.begin(), o.values.end(), im.getDataPtr());
            write_image(fd, im);
        } else {
            ISMRMRD::Image<float> im(nx, ny, nz, 1);
            detail::fill_image_header(im, g, o, uint16_t(firstIndex + i), opt);
            std::transform(o.values.begin(), o.values.end(), im.getDataPtr(),
                           [](const std::complex<float>& v) { return std::abs(v); });
            write_image(fd, im);
        }
    }
    if (close) write_id(fd, kMrdClose);
}

MrdGroupCounts mrd_group_counts(const std::string& xml) {
    MrdGroupCounts c;
    ISMRMRD::IsmrmrdHeader h;
    try {
        ISMRMRD::deserialize(xml.c_str(), h);
    } catch (...) {
        return c;  // parse_mrd_header() names what is wrong with it
    }
    if (h.encoding.size() != 1) return c;
    const ISMRMRD::EncodingLimits& l = h.encoding[0].encodingLimits;
    auto range = [](const ISMRMRD::Optional<ISMRMRD::Limit>& o, bool required) {
        MrdIndexRange r;
        if (o && o->maximum >= o->minimum)
            r = {o->minimum, std::size_t(o->maximum - o->minimum) + 1};
        else if (!o && !required)
            r = {0, 1};
        return r;
    };
    c.slice = range(l.slice, true);
    c.repetition = range(l.repetition, false);
    c.contrast = range(l.contrast, false);
    return c;
}

void write_mrd_text(int fd, const std::string& text, bool close) {
    write_id(fd, kMrdText);
    const uint32_t len = uint32_t(std::min<std::size_t>(text.size(), kMaxText));
    write_all(fd, &len, 4);
    write_all(fd, text.data(), len);
    if (close) write_id(fd, kMrdClose);
}

void write_mrd_close(int fd) { write_id(fd, kMrdClose); }

void write_mrd_stream(int fd, const std::string& xml, const std::vector<MrdAcquisition>& acqs) {
    write_id(fd, kMrdHeader);
    const uint32_t len = uint32_t(xml.size());
    write_all(fd, &len, 4);
    write_all(fd, xml.data(), xml.size());
    for (std::size_t i = 0; i < acqs.size(); ++i)
        if (acqs[i].data.size() != std::size_t(acqs[i].samples) * acqs[i].channels ||
            acqs[i].traj.size() != std::size_t(acqs[i].samples) * acqs[i].traj_dims)
            throw forge::invalid_argument("write_mrd_stream: acquisition " + std::to_string(i) +
                                          "'s data or trajectory is not the size its header gives");
    for (const auto& a : acqs) {
        ISMRMRD::Acquisition acq(a.samples, a.channels, a.traj_dims);
        ISMRMRD::AcquisitionHeader h = acq.getHead();
        detail::set_field<uint64_t>(h, offsetof(PackedHeader, flags), a.flags);
        h.center_sample = a.center_sample;
        detail::set_field<float>(h, offsetof(PackedHeader, sample_time_us), a.dwell_us);
        h.idx.kspace_encode_step_1 = a.e1;
        h.idx.kspace_encode_step_2 = a.e2;
        h.idx.slice = a.slice;
        h.idx.repetition = a.repetition;
        h.idx.contrast = a.contrast;
        for (std::size_t k = 0; k < 3; ++k) {
            detail::set_field<float>(h, offsetof(PackedHeader, position), a.position[k], k);
            detail::set_field<float>(h, offsetof(PackedHeader, read_dir), a.read_dir[k], k);
            detail::set_field<float>(h, offsetof(PackedHeader, phase_dir), a.phase_dir[k], k);
            detail::set_field<float>(h, offsetof(PackedHeader, slice_dir), a.slice_dir[k], k);
        }
        write_id(fd, kMrdAcquisition);
        write_all(fd, &h, sizeof(PackedHeader));
        write_all(fd, a.traj.data(), a.traj.size() * sizeof(float));
        write_all(fd, a.data.data(), a.data.size() * sizeof(std::complex<float>));
    }
    write_id(fd, kMrdClose);
}

}  // namespace io
}  // namespace forge
