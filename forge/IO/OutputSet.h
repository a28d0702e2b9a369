#pragma once
// A set of output files written together: each is written under a temporary name next to its final one,
// and only when all are complete does commit() rename them into place.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "forge/Core/Exceptions.h"
#include "forge/IO/FileUtil.h"

namespace forge {
namespace io {

// The files a run writes. Each is written under a temporary name next to its final one; only when all
// are complete does commit() rename them into place, so a run that fails leaves every file that was
// there before it as it was. An existing file of the same name is replaced (and reported as such).
class OutputSet {
public:
    // Refuses output names that exist as something other than a file (a folder named mine.png).
    static void check_paths(const std::vector<std::string>& paths) {
        for (const auto& p : paths) {
            struct stat st;
            if (::stat(p.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
                throw forge::invalid_argument("output '" + p + "' exists and is " +
                                              (S_ISDIR(st.st_mode) ? "a folder" : "not a regular file") +
                                              "; remove it or choose another -o prefix");
        }
    }
    // A file named on the command line, for messages: 'option' says how ("--mrd-out", "the input").
    struct Named {
        std::string option, path;
    };
    // Refuses, before anything runs, an output that is one of the inputs (an input would be replaced by the
    // images) or that another output names too (same_file(): by device and inode, or by normalized path for
    // files not there yet), and an output whose folder is missing or not writable; one line names both options.
    static void check_named(const std::vector<Named>& inputs, const std::vector<Named>& outputs) {
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            const Named& o = outputs[i];
            for (const Named& in : inputs)
                if (same_file(o.path, in.path))
                    throw forge::invalid_argument(o.option + " '" + o.path + "' is the same file as " + in.option +
                                                  " '" + in.path +
                                                  "': an output never replaces an input; choose "
                                                  "another name");
            for (std::size_t j = 0; j < i; ++j)
                if (same_file(o.path, outputs[j].path))
                    throw forge::invalid_argument(o.option + " '" + o.path + "' and " + outputs[j].option + " '" +
                                                  outputs[j].path + "' name the same file; choose another name");
            check_folder(o);
        }
    }
    // Refuses an output whose folder does not exist or cannot be written into.
    static void check_folder(const Named& o) {
        const auto slash = o.path.rfind('/');
        std::string dir = slash == std::string::npos ? "." : o.path.substr(0, slash);
        if (dir.empty()) dir = "/";
        struct stat st;
        if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            throw forge::invalid_argument(o.option + " '" + o.path + "': folder '" + dir + "' does not exist");
        if (::access(dir.c_str(), W_OK | X_OK) != 0)
            throw forge::invalid_argument(o.option + " '" + o.path + "': folder '" + dir +
                                          "' is not writable: " + std::strerror(errno));
    }
    OutputSet() = default;
    OutputSet(const OutputSet&) = delete;
    OutputSet& operator=(const OutputSet&) = delete;
    ~OutputSet() {
        if (committed_) return;
        for (const auto& o : outs_) {
            std::remove(o.tmp.c_str());
            unregister_temporary(o.tmp);
        }
    }
    // Registers 'path' and returns the temporary name to write it under. forge's writers (write_nifti,
    // write_png_*, write_mrd) write such a name in place; the temporary is removed on SIGINT, SIGTERM and
    // SIGHUP (FileUtil.h) as well as when the set is destroyed uncommitted.
    std::string stage(const std::string& path) {
        check_paths({path});
        outs_.push_back({path, temporary_name(path), std::string(), false});
        std::remove(outs_.back().tmp.c_str());
        register_temporary(outs_.back().tmp);
        return outs_.back().tmp;
    }
    // Renames every staged file into place. Earlier files are kept under a second name (a hard link,
    // no copy) until all renames have succeeded, so a failure part-way puts them back.
    void commit() {
        test_pause_before_commit();
        if (file_size_signal_arrived()) throw std::runtime_error(file_size_failure());
        std::vector<std::string> finals;
        for (const auto& o : outs_) finals.push_back(o.path);
        check_paths(finals);
        for (auto& o : outs_) {
            struct stat st;
            o.existed = ::stat(o.path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
            if (!o.existed) continue;
            o.backup = o.path + ".old" + std::to_string(static_cast<long>(::getpid()));
            std::remove(o.backup.c_str());
            register_temporary(o.backup);  // a second name of a file in place: removing it loses nothing
            if (::link(o.path.c_str(), o.backup.c_str()) != 0) {
                unregister_temporary(o.backup);
                o.backup.clear();
            }
        }
        for (std::size_t i = 0; i < outs_.size(); ++i) {
            if (std::rename(outs_[i].tmp.c_str(), outs_[i].path.c_str()) == 0) {
                unregister_temporary(outs_[i].tmp);
                continue;
            }
            const std::string why = std::strerror(errno);
            for (std::size_t j = 0; j < outs_.size(); ++j) {
                const Output& o = outs_[j];
                if (j < i && !o.backup.empty())
                    std::rename(o.backup.c_str(), o.path.c_str());
                else if (j < i && !o.existed)
                    std::remove(o.path.c_str());
                else if (!o.backup.empty())
                    std::remove(o.backup.c_str());
                if (!o.backup.empty()) unregister_temporary(o.backup);
            }
            throw std::runtime_error("cannot rename '" + outs_[i].tmp + "' into '" + outs_[i].path + "': " + why);
        }
        for (const auto& o : outs_) {
            if (o.backup.empty()) continue;
            std::remove(o.backup.c_str());
            unregister_temporary(o.backup);
        }
        committed_ = true;
    }
    // The final names in the order staged, each marked when it replaced an earlier file.
    std::vector<std::string> report() const {
        std::vector<std::string> r;
        for (const auto& o : outs_) r.push_back(o.path + (o.existed ? " (replaced an existing file)" : ""));
        return r;
    }

private:
    // A write passed the file-size limit (SIGXFSZ): the kernel stopped the file at the limit, which names it.
    std::string file_size_failure() const {
        struct rlimit rl;
        const bool limited = ::getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
        for (const auto& o : outs_) {
            struct stat st;
            if (limited && ::stat(o.tmp.c_str(), &st) == 0 && rlim_t(st.st_size) >= rl.rlim_cur)
                return "writing '" + o.path + "' failed: " + write_error_text(EFBIG);
        }
        return "writing the outputs failed: SIGXFSZ arrived (a write passed the file-size limit, ulimit -f)";
    }
    struct Output {
        std::string path, tmp, backup;
        bool existed = false;
    };
    std::vector<Output> outs_;
    bool committed_ = false;
};

}  // namespace io
}  // namespace forge
