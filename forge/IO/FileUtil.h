#pragma once
// Small file helpers for forge-recon's writers: every output is written under a temporary name in
// the destination folder and renamed into place only when complete, so a failure never leaves a
// partial output file behind.
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace forge {
namespace io {

// An input file whose content is wrong (sizes, values, format): the readers throw it with one line
// naming the file and the field; forge-recon turns it into exit code 2. Failures of the machine
// (disk full, permissions) stay plain std::runtime_error.
struct input_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Called by a reader with an array's dims (fastest first) once its header is read and before its
// values are allocated, so a caller that knows the size it needs can refuse a wrong one cheaply.
using DimsCheck = std::function<void(const std::vector<std::size_t>& dims)>;

// Temporary sibling name for 'path' (same folder, so the final rename is atomic).
inline std::string temporary_name(const std::string& path) {
    return path + ".part" + std::to_string(static_cast<long>(::getpid()));
}

class AtomicFile {
public:
    explicit AtomicFile(const std::string& path) : path_(path), tmp_(temporary_name(path)) {
        f_.open(tmp_, std::ios::binary | std::ios::trunc);
        if (!f_) throw std::runtime_error("cannot write '" + path_ + "' (is the folder there and writable?)");
    }
    ~AtomicFile() {
        if (!done_) {
            f_.close();
            std::remove(tmp_.c_str());
        }
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    std::ofstream& stream() { return f_; }
    void commit() {
        f_.flush();
        if (!f_) throw std::runtime_error("writing '" + path_ + "' failed (disk full?)");
        f_.close();
        if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
            throw std::runtime_error("cannot rename into '" + path_ + "'");
        done_ = true;
    }

private:
    std::string path_, tmp_;
    std::ofstream f_;
    bool done_ = false;
};

// Renames 'tmp' into 'path' or removes it and throws.
inline void commit_temporary(const std::string& tmp, const std::string& path) {
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw std::runtime_error("cannot rename into '" + path + "'");
    }
}

}  // namespace io
}  // namespace forge
