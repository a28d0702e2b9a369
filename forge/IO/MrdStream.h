#pragma once
// The MRD streaming protocol (ISMRMRD's ProtocolSerializer/ProtocolDeserializer, as Gadgetron and the python
// ismrmrd package's ismrmrd.serialization frame it): a sequence of messages, each a little-endian uint16 id and
// its payload. Debian's libismrmrd 1.8 has no serialisation, so the framing is written here; the structs inside
// the messages (acquisition and image headers) are libismrmrd's own.
//
//   1 CONFIG_FILE   1024 bytes (a name, zero-padded)            (read and ignored)
//   2 CONFIG_TEXT   uint32 length, text                          (read and ignored)
//   3 HEADER        uint32 length, the XML header
//   4 CLOSE         nothing: the end of the stream
//   5 TEXT          uint32 length, text                          (read and ignored)
//   1008 ACQUISITION  AcquisitionHeader (340 bytes), trajectory (samples x dims floats), data (channels x
//                   samples complex floats)
//   1022 IMAGE      ImageHeader (198 bytes), uint64 attribute length, attributes, data
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "forge/Core/DeprecatedFields.h"
#include "forge/IO/MrdImages.h"

namespace forge {
namespace io {

enum MrdMessageId : uint16_t {
    kMrdConfigFile = 1,
    kMrdConfigText = 2,
    kMrdHeader = 3,
    kMrdClose = 4,
    kMrdText = 5,
    kMrdAcquisition = 1008,
    kMrdImage = 1022,
    kMrdWaveform = 1026,
    kMrdNdArray = 1030,
};

// The bytes a stream's reader may hold: every acquisition read counts (mrd_stream_bytes()) from its header on,
// before its values are allocated, until its consumer releases it. take() refuses (input_error naming
// 'limitName' and the sizes) an acquisition that would bring the total over the cap. Shared by the reader's
// thread and the consumer's.
class MrdStreamMemory {
public:
    MrdStreamMemory(std::size_t cap, std::string limitName) : cap_(cap), limit_(std::move(limitName)) {}
    void take(std::size_t bytes, const std::string& source, const std::string& what);
    void release(std::size_t bytes) { held_ -= bytes; }
    std::size_t held() const { return held_; }
    std::size_t cap() const { return cap_; }

private:
    std::size_t cap_;
    std::string limit_;
    std::atomic<std::size_t> held_{0};
};
// What an acquisition of 'samples' x 'channels' (and 'traj_dims' trajectory values per sample) holds in memory.
std::size_t mrd_stream_bytes(std::size_t samples, std::size_t channels, std::size_t traj_dims);
inline std::size_t mrd_stream_bytes(const MrdAcquisition& a) {
    return mrd_stream_bytes(a.samples, a.channels, a.traj_dims);
}

struct MrdStreamOptionsFields {
    std::shared_ptr<MrdStreamMemory> memory;  // null: no cap
    // Each message must arrive in full within this many seconds of the end of the one before (of the start, for
    // the first): a sender that stops, or trickles, is cut off with input_error naming 'timeout_name'. 0: none.
    double timeout = 0;
    std::string timeout_name;
};
// MrdStreamOptions's fields under their names before snake_case, deprecated until forge 0.3.0.
FORGE_FIELD_ALIASES_BEGIN
struct MrdStreamOptions : MrdStreamOptionsFields {
    FORGE_FIELD_ALIAS(timeoutName, timeout_name)
    FORGE_FIELD_ALIAS_COPIES(MrdStreamOptions, MrdStreamOptionsFields)
};
FORGE_FIELD_ALIASES_END

// Reads an MRD stream from file descriptor 'fd' (stdin, a socket) up to its CLOSE: the XML header (which must
// come before the first acquisition) and the acquisitions (noise scans apart, as read_mrd() sorts them). Throws
// input_error with one line naming 'source' and the message for a stream that ends early (no CLOSE: a cut
// stream would give a wrong image), an unknown or unsupported message (images, waveforms, arrays), text longer
// than 16 MiB, an acquisition before the header, or none at all. An acquisition's values are read as they
// arrive: a header claiming more than the stream holds costs no more memory than the stream's bytes.
MrdFile read_mrd_stream(int fd, const std::string& source);

// The same stream read one message at a time, so that a reader can act on each acquisition as it arrives
// (forge-recon reconstructs a slice once its last acquisition is in). next() returns kHeader, kAcquisition,
// kNoise (a noise scan) or kClose, and throws input_error as read_mrd_stream() does for a cut, garbled or
// hostile stream; the header, acquisitions before it and a second header are refused the same way.
class MrdStreamReader {
public:
    enum class Event { kHeader, kAcquisition, kNoise, kClose };
    MrdStreamReader(int fd, const std::string& source, const MrdStreamOptions& options = {});
    ~MrdStreamReader();
    MrdStreamReader(const MrdStreamReader&) = delete;
    MrdStreamReader& operator=(const MrdStreamReader&) = delete;
    // The next header, acquisition (into 'a') or CLOSE; configuration and text messages are skipped.
    Event next(MrdAcquisition& a);
    const std::string& xml() const { return xml_; }
    const MrdHeader& header() const { return header_; }
    bool has_header() const { return hasHeader_; }
    std::size_t acquisitions_read() const { return index_; }

private:
    struct Input;
    std::unique_ptr<Input> in_;
    std::string name_, xml_;
    MrdHeader header_;
    bool hasHeader_ = false;
    std::size_t index_ = 0;
};

// The header's encodingLimits for the slice, repetition and contrast indices: the groups a stream reconstructed
// slice by slice will hold. 'count' 0: the limit is missing (the slice's) or malformed; a missing repetition or
// contrast limit means one, from 0.
struct MrdIndexRange {
    uint16_t first = 0;
    std::size_t count = 0;
    bool has(uint16_t v) const { return v >= first && std::size_t(v - first) < count; }
};
struct MrdGroupCounts {
    MrdIndexRange slice, repetition, contrast;
    std::size_t frames() const { return repetition.count * contrast.count; }
};
MrdGroupCounts mrd_group_counts(const std::string& xmlHeader);

// Writes images as IMAGE messages (the headers, attributes and values write_mrd_images() gives a file) and, when
// 'close' is set, a CLOSE message to 'fd'; the images' image_index counts from 'firstIndex' (a stream sent in
// parts numbers each part as the whole would be). Throws std::runtime_error when the other end is gone, or takes
// nothing within the socket's send timeout (SO_SNDTIMEO: a client that does not read).
void write_mrd_image_stream(int fd, const ImageGeometry& geometry, const std::vector<MrdOutputImage>& images,
                            const MrdImageOptions& options = {}, bool close = true, uint16_t firstIndex = 1);
// A TEXT message (ISMRMRD's MRD_MESSAGE_TEXT) and, when 'close' is set, CLOSE.
void write_mrd_text(int fd, const std::string& text, bool close = true);
void write_mrd_close(int fd);

// Writes an MRD stream of the XML header and the acquisitions, then CLOSE (a client's half; tests and tools).
void write_mrd_stream(int fd, const std::string& xmlHeader, const std::vector<MrdAcquisition>& acquisitions);

}  // namespace io
}  // namespace forge
