// forge-recon's MRD streams: --stream (stdin to stdout) and --server (TCP), with forge/IO's MrdStream.h.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "ReconApp.h"
#include "forge/IO/MrdStream.h"

namespace forge_recon {

bool prefix_outputs(const Settings& S) { return !S.stream || !S.output.empty(); }

void setup_stream(Settings& S) {
    if (bart_input(S)) throw UsageError("--stream reads an MRD stream on stdin; --bart-kspace gives other data");
    if (!S.input.empty()) throw UsageError("--stream reads stdin; drop the input file '" + S.input + "'");
    if (dist::distributed()) throw UsageError("--stream runs as one process (not under mpirun)");
    if (!S.fieldmapScan.empty()) throw UsageError("--fieldmap-scan with --stream: the stream carries one scan");
    S.input = "stdin";
    S.streamIn = STDIN_FILENO;
    // the images go to stdout's descriptor; every line forge-recon prints goes to stderr instead
    std::fflush(stdout);
    S.streamOut = ::dup(STDOUT_FILENO);
    if (S.streamOut < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        throw std::runtime_error("--stream: cannot set aside stdout for the images");
}

namespace {
// --server's compute turn, owned by one connection at a time (null: free); a connection's shares are counted in its
// ComputeTurn under the same mutex.
std::mutex g_turnMutex;
std::condition_variable g_turnFree;
const ComputeTurn* g_turnOwner = nullptr;
thread_local ComputeTurn* t_turn = nullptr;  // the connection the calling thread works for

void take_turn(ComputeTurn* c) {
    std::unique_lock<std::mutex> l(g_turnMutex);
    g_turnFree.wait(l, [c] { return g_turnOwner == nullptr || g_turnOwner == c; });
    g_turnOwner = c;
    ++c->shares;
}
void give_turn(ComputeTurn* c) {
    std::lock_guard<std::mutex> l(g_turnMutex);
    if (--c->shares == 0) {
        g_turnOwner = nullptr;
        g_turnFree.notify_all();
    }
}
}  // namespace

ComputeTurn* ComputeTurn::current() { return t_turn; }

ComputeShare::ComputeShare(ComputeTurn* c) : c_(c) {
    if (c_) take_turn(c_);
}
ComputeShare::~ComputeShare() {
    if (c_) give_turn(c_);
}

ConnectionThread::ConnectionThread(ComputeTurn* c) : before_(t_turn) { t_turn = c; }
ConnectionThread::~ConnectionThread() { t_turn = before_; }

ClientWait::ClientWait() : turn_(t_turn) {
    if (turn_) give_turn(turn_);
}
ClientWait::~ClientWait() {
    if (turn_) take_turn(turn_);
}

forge::io::MrdStreamOptions stream_options(const Settings& S) {
    forge::io::MrdStreamOptions o;
    std::size_t cap = S.maxStreamMemory;
    if (cap == 0) {
        const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
        cap = pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) / 4 : std::size_t(1) << 30;
    }
    if (S.connection) cap /= std::size_t(std::max(1, S.maxClients));  // each connection its share
    o.memory =
        std::make_shared<forge::io::MrdStreamMemory>(cap, "--max-stream-memory" +
                                                              std::string(S.connection ? " / --max-clients" : ""));
    o.timeout = S.readTimeout >= 0 ? S.readTimeout : S.connection ? 60 : 0;
    o.timeout_name = "--read-timeout";
    return o;
}

void write_stream_output(const forge::io::ImageGeometry& g, const std::vector<forge::io::MrdOutputImage>& images,
                         const Settings& S) {
    forge::io::MrdImageOptions o;
    o.complex = S.complexOut;
    ClientWait wait;
    forge::io::write_mrd_image_stream(S.streamOut, g, images, o);
    note("forge-recon: wrote " + std::to_string(images.size()) + " images to the MRD stream", S.quiet);
}

namespace {

// The error of a failed connection as a TEXT message, then CLOSE: the client learns why it gets no images.
void send_error(int fd, const std::string& msg) {
    try {
        const std::string text = "forge-recon: error: " + msg;
        const uint16_t id = forge::io::kMrdText, close = forge::io::kMrdClose;
        const uint32_t len = uint32_t(text.size());
        std::string m(reinterpret_cast<const char*>(&id), 2);
        m.append(reinterpret_cast<const char*>(&len), 4).append(text).append(reinterpret_cast<const char*>(&close), 2);
        for (std::size_t off = 0; off < m.size();) {
            const ssize_t w = ::send(fd, m.data() + off, m.size() - off, MSG_NOSIGNAL);
            if (w <= 0) return;  // the client is gone: nothing to tell
            off += std::size_t(w);
        }
    } catch (...) {}
}

// Ends a connection without losing the reply. A refused stream is not read to its end, and closing a socket with
// unread input makes TCP reset the connection, which can discard the TEXT message on the client's side. So: end
// our half, read and drop what still comes (at most 64 MiB or 5 s: a client that keeps sending is cut off), close.
void close_connection(int fd) {
    ::shutdown(fd, SHUT_WR);
    timeval wait{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[1 << 16];
    std::size_t dropped = 0;
    while (dropped < (std::size_t(64) << 20) && std::chrono::steady_clock::now() < deadline) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        dropped += std::size_t(n);
    }
    ::close(fd);
}

void check_server_settings(const Settings& S) {
    if (!S.input.empty() || bart_input(S) || S.demo || S.stream)
        throw UsageError("--server takes its data from its clients (no input file, --bart-kspace, --demo or --stream)");
    if (!S.output.empty() || !S.mrdOut.empty() || !S.dicomDir.empty() || !S.report.empty() || S.saveMaps)
        throw UsageError("--server sends each client its images; -o, --mrd-out, --dicom, --report and --save-maps "
                         "are for single runs");
    if (!S.fieldmapScan.empty()) throw UsageError("--fieldmap-scan with --server: each stream carries one scan");
    if (dist::distributed()) throw UsageError("--server runs as one process (not under mpirun)");
}

}  // namespace

int run_server(Settings& S) {
    check_server_settings(S);
    std::signal(SIGPIPE, SIG_IGN);  // a client that hangs up fails its connection, not the server
    const int ls = ::socket(AF_INET, SOCK_STREAM, 0);
    if (ls < 0) throw std::runtime_error(std::string("--server: cannot make a socket: ") + std::strerror(errno));
    const int one = 1;
    ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(uint16_t(S.port));
    if (::inet_pton(AF_INET, S.bind.c_str(), &addr.sin_addr) != 1) {
        ::close(ls);
        throw UsageError("--bind '" + S.bind + "' is not an IPv4 address");
    }
    if (::bind(ls, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(ls, 8) != 0) {
        const std::string why = std::strerror(errno);
        ::close(ls);
        throw UsageError("--server: cannot listen on " + S.bind + ":" + std::to_string(S.port) + ": " + why);
    }
    socklen_t len = sizeof addr;
    ::getsockname(ls, reinterpret_cast<sockaddr*>(&addr), &len);
    // The device (CUDA context, cuFFT, the kernel modules) made ready before the first client, not by its
    // connection: a scanner's first slice should not wait for it.
    DeviceWarmUp(S).wait();
    std::printf("forge-recon: listening on %s:%u\n", S.bind.c_str(), unsigned(ntohs(addr.sin_port)));
    // every connection on a thread of its own, at most --max-clients at once (the others wait to be accepted);
    // they take turns at reconstructing (ClientWait), so a client that sends or reads slowly holds only its own
    struct Slots {
        std::mutex m;
        std::condition_variable cv;
        int active = 0;
    };
    const auto slots = std::make_shared<Slots>();  // outlives run_server() in a thread that is finishing
    for (int served = 0; S.connections == 0 || served < S.connections; ++served) {
        {
            std::unique_lock<std::mutex> l(slots->m);
            slots->cv.wait(l, [&] { return slots->active < S.maxClients; });
        }
        sockaddr_in peer{};
        socklen_t plen = sizeof peer;
        const int fd = ::accept(ls, reinterpret_cast<sockaddr*>(&peer), &plen);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) {
                --served;
                continue;
            }
            const std::string why = std::strerror(errno);
            ::close(ls);
            throw std::runtime_error("--server: accept failed: " + why);
        }
        // a client that reads nothing of what is sent for --write-timeout seconds is cut off (its stream's
        // messages have --read-timeout seconds each to arrive: MrdStreamOptions)
        timeval sendTimeout{time_t(S.writeTimeout),
                            suseconds_t((S.writeTimeout - double(time_t(S.writeTimeout))) * 1e6)};
        if (S.writeTimeout > 0) ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, sizeof sendTimeout);
        char ip[INET_ADDRSTRLEN] = "?";
        ::inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof ip);
        Settings C = S;  // each connection resolves its own operator, device and outputs
        C.server = false;
        C.connection = true;
        C.stream = true;
        C.streamIn = C.streamOut = fd;
        C.input = "client " + std::to_string(served + 1) + " (" + ip + ":" + std::to_string(ntohs(peer.sin_port)) + ")";
        std::printf("forge-recon: %s connected\n", C.input.c_str());
        std::fflush(stdout);
        {
            std::lock_guard<std::mutex> l(slots->m);
            ++slots->active;
        }
        std::thread([C, fd, slots]() mutable {
            ComputeTurn turn;
            {
                ConnectionThread self(&turn);
                auto share = std::make_unique<ComputeShare>(&turn);  // this thread's, but while it waits (ClientWait)
                try {
                    run_file(C);
                } catch (const std::exception& e) {
                    share.reset();
                    std::fprintf(stderr, "forge-recon: error: %s: %s\n", C.input.c_str(), e.what());
                    send_error(fd, e.what());
                }
            }
            close_connection(fd);
            std::lock_guard<std::mutex> l(slots->m);
            --slots->active;
            slots->cv.notify_all();
        }).detach();
    }
    {
        std::unique_lock<std::mutex> l(slots->m);
        slots->cv.wait(l, [&] { return slots->active == 0; });
    }
    ::close(ls);
    return 0;
}

}  // namespace forge_recon
