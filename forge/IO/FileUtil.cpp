// The registry of temporary files and the signal handler that removes them (FileUtil.h).
#include "forge/IO/FileUtil.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace forge {
namespace io {

namespace {

// A fixed table: the handler may run at any instruction, so it reads no container and takes no lock.
// A slot's state says whether its path is complete; std::atomic<int> is lock-free on every target forge
// builds for, which makes its load async-signal-safe.
constexpr std::size_t kSlots = 64, kPathBytes = 4096;
enum : int { kFree = 0, kBusy = 1, kHeld = 2 };
struct Slot {
    std::atomic<int> state{kFree};
    char path[kPathBytes];
};
static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs lock-free atomics");
Slot g_slots[kSlots];

extern "C" void remove_temporaries(int sig) {
    for (auto& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kHeld) ::unlink(s.path);
    // SA_RESETHAND restored the default action, and the signal stays blocked until this handler returns:
    // then it ends the process as it would have without the handler (shells see 128 + sig).
    ::raise(sig);
}

volatile std::sig_atomic_t g_file_size_signal = 0;

// SIGXFSZ: noted, and the write that raised it returns EFBIG to its writer.
extern "C" void note_file_size_signal(int) { g_file_size_signal = 1; }

// 'handler' for 'sig' where the signal's action is the default; one that is ours already, ignored (nohup) or
// handled by the program is left as it is.
void handle_if_default(int sig, void (*handler)(int), int flags) {
    struct sigaction old;
    if (::sigaction(sig, nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) return;
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    ::sigaction(sig, &sa, nullptr);
}

// At every registration (a few per run): a signal whose action became the default again gets the handler.
void install_handlers() {
    catch_file_size_signal();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) handle_if_default(sig, remove_temporaries, SA_RESETHAND);
}

}  // namespace

void catch_file_size_signal() { handle_if_default(SIGXFSZ, note_file_size_signal, SA_RESTART); }

bool file_size_signal_arrived() { return g_file_size_signal != 0; }

std::string write_error_text(int err) {
    std::string text = err ? std::strerror(err) : "unknown error";
    if (err == EFBIG) text += " (over the file-size limit, ulimit -f)";
    if (err == ENOSPC) text += " (the disk is full)";
    if (err == EDQUOT) text += " (the disk quota is used up)";
    return text;
}

std::string library_write_error(const std::string& libraryText, int err) {
    if (file_size_signal_arrived()) return write_error_text(EFBIG);
    if (err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO) return write_error_text(err);
    return libraryText.substr(0, libraryText.find('\n'));
}

bool same_file(const std::string& a, const std::string& b) {
    namespace fs = std::filesystem;
    if (a.empty() || b.empty()) return false;
    std::error_code ea, eb;
    const bool hasA = fs::exists(a, ea), hasB = fs::exists(b, eb);
    if (hasA && hasB) {
        std::error_code e;
        return fs::equivalent(a, b, e);
    }
    auto normal = [](const std::string& p) {  // absolute, the existing folders' symbolic links resolved
        std::error_code e;
        const fs::path abs = fs::absolute(p, e);
        if (e) return fs::path(p).lexically_normal();
        const fs::path c = fs::weakly_canonical(abs, e);
        return (e ? abs : c).lexically_normal();
    };
    return normal(a) == normal(b);
}

bool register_temporary(const std::string& path) {
    install_handlers();
    if (path.empty() || path.size() >= kPathBytes) return false;
    for (auto& s : g_slots) {
        int expected = kFree;
        if (!s.state.compare_exchange_strong(expected, kBusy, std::memory_order_acq_rel)) continue;
        std::memcpy(s.path, path.c_str(), path.size() + 1);
        s.state.store(kHeld, std::memory_order_release);
        return true;
    }
    return false;
}

void unregister_temporary(const std::string& path) {
    for (auto& s : g_slots) {
        if (s.state.load(std::memory_order_acquire) != kHeld || path != s.path) continue;
        int expected = kHeld;
        if (s.state.compare_exchange_strong(expected, kBusy, std::memory_order_acq_rel))
            s.state.store(kFree, std::memory_order_release);
        return;
    }
}

bool is_registered_temporary(const std::string& path) {
    for (const auto& s : g_slots)
        if (s.state.load(std::memory_order_acquire) == kHeld && path == s.path) return true;
    return false;
}

void test_pause_before_commit() {
    const char* v = std::getenv("FORGE_TEST_PAUSE_BEFORE_COMMIT");
    if (!v || !*v) return;
    const unsigned seconds = static_cast<unsigned>(std::strtoul(v, nullptr, 10));
    std::fprintf(stderr, "forge: test hook: pausing %u s before renaming the outputs into place\n", seconds);
    std::fflush(stderr);
    ::sleep(seconds);
}

}  // namespace io
}  // namespace forge
