#pragma once
// Small file helpers for forge-recon's writers: every output is written under a temporary name in
// the destination folder and renamed into place only when complete, so a failure never leaves a
// partial output file behind. The temporaries are registered while they exist, so that SIGINT, SIGTERM
// or SIGHUP (a user's Ctrl-C, a batch system's time limit) and SIGPIPE (the reader of a pipe gone) remove them
// too; SIGXFSZ (a write past ulimit -f) is turned into the write's error (EFBIG), which the writer reports
// naming its file.
#include <cerrno>
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

// The name messages give 'path': the final name of a temporary_name(), else 'path'.
inline std::string final_name(const std::string& path) {
    const std::string suffix = ".part" + std::to_string(static_cast<long>(::getpid()));
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0)
        return path.substr(0, path.size() - suffix.size());
    return path;
}

// The registry of temporary files this process has on disk. A registered file is removed when SIGINT,
// SIGTERM, SIGHUP or SIGPIPE arrives, by a handler installed at each registration for those of the signals whose
// action is the default one (a signal the program ignores or handles itself is left alone);
// the handler then lets the signal end the process as it would have. Registration copies the path into
// a fixed table the handler reads without locks or allocation; it returns false (the file is then only
// removed by its owner) when the table is full or the path longer than 4095 bytes.
bool register_temporary(const std::string& path);
void unregister_temporary(const std::string& path);
// True when 'path' is registered: a writer handed such a name (by OutputSet::stage) writes it in place,
// since its owner renames it.
bool is_registered_temporary(const std::string& path);

// SIGXFSZ, which by default kills a process whose write passes the file-size limit (ulimit -f) without a
// word, is caught (where its action is the default one) by a handler that only notes it: the write then fails
// with EFBIG, its writer throws naming the file, and the unwinding removes the temporaries. Installed at each
// registration, and by a program that writes elsewhere too (a stream on stdout) at its start.
void catch_file_size_signal();
// True once SIGXFSZ arrived (a write passed the file-size limit, or the signal was sent): a set of outputs is
// then not committed, whatever its writers reported.
bool file_size_signal_arrived();

// The reason of a failed write or close for messages: strerror(err), with what to do for the usual ones
// ("File too large (over the file-size limit, ulimit -f)", "No space left on device (the disk is full)").
std::string write_error_text(int err);
// The reason of a failed write through a library (HDF5, DCMTK) that reports it in words of its own: the errno
// it left when that is a full disk, a quota, the file-size limit or an I/O error (or SIGXFSZ arrived), else the
// first line of the library's text. Callers clear errno before calling the library.
std::string library_write_error(const std::string& libraryText, int err);

// True when 'a' and 'b' name the same file: for two existing paths the same device and inode (hard links,
// symbolic links, "./x" and "x"); otherwise the same absolute path after resolving the symbolic links of
// the existing folders in it and removing "." and "..".
bool same_file(const std::string& a, const std::string& b);

// Test hook for the removal on signals: with FORGE_TEST_PAUSE_BEFORE_COMMIT=S in the environment,
// OutputSet::commit() prints one line on stderr and sleeps S seconds after every file is written and
// before the first is renamed into place (the window a signal hits when it arrives while writing).
void test_pause_before_commit();

// Where a writer puts 'path': a registered temporary next to it, renamed into place by commit() and
// removed if never committed; or 'path' itself when that is already a registered temporary (staged by an
// OutputSet, which renames it), so a file is staged once.
class TemporaryFile {
public:
    explicit TemporaryFile(const std::string& path)
        : path_(path), staged_(is_registered_temporary(path)), tmp_(staged_ ? path : temporary_name(path)) {
        if (!staged_) {
            std::remove(tmp_.c_str());
            register_temporary(tmp_);
        }
    }
    ~TemporaryFile() {
        if (done_) return;
        std::remove(tmp_.c_str());
        if (!staged_) unregister_temporary(tmp_);
    }
    TemporaryFile(const TemporaryFile&) = delete;
    TemporaryFile& operator=(const TemporaryFile&) = delete;
    const std::string& name() const { return tmp_; }
    // Renames the temporary into place (nothing to do for a staged one), or removes it and throws.
    void commit() {
        if (!staged_ && file_size_signal_arrived()) {
            std::remove(tmp_.c_str());
            unregister_temporary(tmp_);
            done_ = true;
            throw std::runtime_error("writing '" + path_ + "' failed: " + write_error_text(EFBIG));
        }
        if (!staged_ && std::rename(tmp_.c_str(), path_.c_str()) != 0) {
            std::remove(tmp_.c_str());
            unregister_temporary(tmp_);
            done_ = true;
            throw std::runtime_error("cannot rename into '" + path_ + "'");
        }
        if (!staged_) unregister_temporary(tmp_);
        done_ = true;
    }

private:
    std::string path_;
    bool staged_;
    std::string tmp_;
    bool done_ = false;
};

class AtomicFile {
public:
    explicit AtomicFile(const std::string& path) : path_(final_name(path)), tmp_(path) {
        f_.open(tmp_.name(), std::ios::binary | std::ios::trunc);
        if (!f_) throw std::runtime_error("cannot write '" + path_ + "' (is the folder there and writable?)");
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    std::ofstream& stream() { return f_; }
    void commit() {
        f_.flush();
        if (f_) f_.close();
        if (!f_) throw std::runtime_error("writing '" + path_ + "' failed: " + write_error_text(errno));
        tmp_.commit();
    }

private:
    std::string path_;
    TemporaryFile tmp_;
    std::ofstream f_;  // after tmp_: closed before ~TemporaryFile removes an uncommitted file
};

}  // namespace io
}  // namespace forge
