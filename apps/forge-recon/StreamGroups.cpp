// forge-recon --stream, slice by slice: each slice x repetition x contrast group of acquisitions is reconstructed
// and its image sent as soon as the acquisition flags say the group is complete (docs/streaming.md). Every image
// equals the one the whole stream read as a file gives: same operator, maps, solver and indices. Where that cannot
// be known before the stream ends (the header gives no group counts, the run writes files, coil compression or
// a field map estimated from the echoes need all the data) the whole stream is read first, as before.
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <ismrmrd/ismrmrd.h>

#include "ReconApp.h"
#include "forge/IO/MrdStream.h"

namespace forge_recon {

namespace {

using forge::io::MrdAcquisition;
using forge::io::MrdStreamReader;
using Key = std::array<uint16_t, 3>;  // idx.slice, idx.repetition, idx.contrast

constexpr uint64_t flag(ISMRMRD::ISMRMRD_AcquisitionFlags f) { return uint64_t(1) << (int(f) - 1); }

using Counts = forge::io::MrdGroupCounts;

// Why this run reads the whole stream before reconstructing (empty: it can go group by group).
std::string whole_stream_reason(const Settings& S, const Counts& c) {
    if (!S.output.empty() || !S.mrdOut.empty() || !S.dicomDir.empty() || !S.report.empty() || S.saveMaps)
        return "the files it writes (-o, --mrd-out, --dicom, --report, --save-maps) hold every image";
    if (S.coilCompress > 0) return "coil compression is computed from all the data";
    if (S.field_map == "estimate") return "the field map is estimated from echoes spread over the stream";
    if (!S.reference.empty() && S.reference != "none") return "--reference is compared with every image";
    if (c.slice.count == 0 || c.repetition.count == 0 || c.contrast.count == 0)
        return "its header's encodingLimits do not give the slice count, or give a malformed limit";
    return {};
}

// A vector over v's memory (no copy): valid while v lives and keeps its size.
arma::fvec alias_of(const arma::fvec& v) {
    return v.is_empty() ? arma::fvec() : arma::fvec(const_cast<float*>(v.memptr()), v.n_elem, false, true);
}

// A problem of the stream's grid and 'slices' slices holding frames but no data: the operator choice and the
// maps' size checks of the whole stream without its values. With 'alias' its pixel positions are views of P's
// (Q must not outlive P).
ReconProblem skeleton(const ReconProblem& P, std::size_t slices, std::size_t frames, bool alias = false) {
    ReconProblem Q;
    Q.Nx = P.Nx, Q.Ny = P.Ny, Q.Nz = P.Nz, Q.nc = P.nc, Q.nslices = slices, Q.nframes = frames;
    Q.voxel_mm = P.voxel_mm, Q.affine = P.affine, Q.accel = P.accel, Q.source = P.source, Q.fov_ratio = P.fov_ratio;
    if (alias) {
        Q.ix = alias_of(P.ix), Q.iy = alias_of(P.iy), Q.iz = alias_of(P.iz);
    } else {
        Q.ix = P.ix, Q.iy = P.iy, Q.iz = P.iz;
    }
    return Q;
}

// Whether two frames have the same samples (positions and times).
bool same_samples(const forge::recon::ReconFrame& a, const forge::recon::ReconFrame& b) {
    auto same = [](const arma::fvec& u, const arma::fvec& v) {
        return u.n_elem == v.n_elem && std::equal(u.begin(), u.end(), v.begin());
    };
    return same(a.kx, b.kx) && same(a.ky, b.ky) && same(a.kz, b.kz) && same(a.t, b.t);
}

// fr's samples as frame (slice, frame) of Q: copies, or with 'alias' views of fr's (Q must not outlive fr).
void add_frame(ReconProblem& Q, const forge::recon::ReconFrame& fr, std::size_t slice, std::size_t frame,
               bool alias = false) {
    forge::recon::ReconFrame k;
    k.slice = slice, k.frame = frame, k.contrast = fr.contrast, k.echo_time = fr.echo_time;
    if (alias) {
        k.kx = alias_of(fr.kx), k.ky = alias_of(fr.ky), k.kz = alias_of(fr.kz), k.t = alias_of(fr.t);
    } else {
        k.kx = fr.kx, k.ky = fr.ky, k.kz = fr.kz, k.t = fr.t;
    }
    Q.n1total += fr.kx.n_elem;
    Q.n1max = std::max<std::size_t>(Q.n1max, fr.kx.n_elem);
    Q.frames.push_back(std::move(k));
}

// The stream read on a thread of its own while slices are reconstructed, so that a sender is never held up by a
// reconstruction (a pipe or a socket buffers a fraction of one slice); the messages wait here, in order, and an
// error of the stream comes out where it was met, after the messages before it. What waits here is bounded: the
// reader counts every acquisition against the stream's memory cap (released by the consumer once reconstructed)
// and stops reading while the queue holds over half the cap, so that a sender faster than the reconstructions is
// held back by its socket or pipe, and one that sends more than the cap allows fails.
class QueuedReader {
public:
    using Event = MrdStreamReader::Event;
    QueuedReader(int fd, const std::string& name, const forge::io::MrdStreamOptions& o)
        : state_(std::make_shared<State>(fd, name, o)) {
        std::shared_ptr<State> st = state_;
        thread_ = std::thread([st] { st->run(); });
    }
    ~QueuedReader() {
        bool done;
        {
            std::lock_guard<std::mutex> l(state_->m);
            done = state_->done;
            state_->stop = true;
            state_->cv.notify_all();
        }
        // a stream given up early: a socket's pending read returns once its reading side is shut; a pipe's
        // (stdin) cannot be woken, and the process ends with the error
        if (done || ::shutdown(state_->fd, SHUT_RD) == 0)
            thread_.join();
        else
            thread_.detach();
    }
    QueuedReader(const QueuedReader&) = delete;
    QueuedReader& operator=(const QueuedReader&) = delete;
    // The next event, its acquisition in 'a' and that acquisition's index in the stream.
    Event next(MrdAcquisition& a, std::size_t& index) {
        State& st = *state_;
        Item it;
        {
            ClientWait wait;  // a --server connection lets the others reconstruct meanwhile
            std::unique_lock<std::mutex> l(st.m);
            st.cv.wait(l, [&st] { return !st.items.empty() || st.done || st.interrupted; });
            if (st.interrupted) throw Interrupted{};
            if (st.items.empty()) {
                if (st.error) std::rethrow_exception(st.error);
                throw std::logic_error("the MRD stream was read past its CLOSE");
            }
            it = std::move(st.items.front());
            st.items.pop_front();
            st.queued -= it.bytes;
            st.cv.notify_all();
        }
        a = std::move(it.a);
        index = it.index;
        return it.event;
    }
    // Wakes next() where it waits for the client, to throw Interrupted: the solver thread failed, and a client
    // that waits for an image before sending more would otherwise wait for ever.
    struct Interrupted {};
    void interrupt() {
        std::lock_guard<std::mutex> l(state_->m);
        state_->interrupted = true;
        state_->cv.notify_all();
    }
    // Gives back the memory of acquisitions the consumer no longer holds.
    void release(const MrdAcquisition& a) {
        if (state_->memory) state_->memory->release(forge::io::mrd_stream_bytes(a));
    }
    // After the header event (the thread writes them once, before it)
    const std::string& xml() const { return state_->reader.xml(); }
    const forge::io::MrdHeader& header() const { return state_->reader.header(); }
    bool has_header() const { return state_->reader.has_header(); }

private:
    struct Item {
        Event event;
        MrdAcquisition a;
        std::size_t index = 0, bytes = 0;
    };
    struct State {
        State(int f, const std::string& name, const forge::io::MrdStreamOptions& o)
            : fd(f), reader(f, name, o), memory(o.memory) {}
        void run() {
            try {
                for (bool close = false; !close;) {
                    {
                        std::unique_lock<std::mutex> l(m);
                        cv.wait(l, [this] { return stop || !memory || queued <= memory->cap() / 2; });
                        if (stop) break;
                    }
                    Item it;
                    it.event = reader.next(it.a);
                    it.index = reader.acquisitions_read() - 1;
                    if (it.event == Event::kAcquisition || it.event == Event::kNoise)
                        it.bytes = forge::io::mrd_stream_bytes(it.a);
                    close = it.event == Event::kClose;
                    std::lock_guard<std::mutex> l(m);
                    queued += it.bytes;
                    items.push_back(std::move(it));
                    cv.notify_all();
                }
            } catch (...) {
                std::lock_guard<std::mutex> l(m);
                error = std::current_exception();
            }
            std::lock_guard<std::mutex> l(m);
            done = true;
            cv.notify_all();
        }
        int fd;
        MrdStreamReader reader;
        std::shared_ptr<forge::io::MrdStreamMemory> memory;
        std::mutex m;
        std::condition_variable cv;
        std::deque<Item> items;
        std::size_t queued = 0;  // bytes of the acquisitions in 'items'
        std::exception_ptr error;
        bool done = false, stop = false, interrupted = false;
    };
    std::shared_ptr<State> state_;
    std::thread thread_;
};

// A group's work on a solver lane, on the lane's thread: its solve, returning the write of its image and what the
// lane does once the image is written (nothing, or work for a later group; it must not throw).
struct SolveDone {
    std::function<void()> write, after;
};
using SolveJob = std::function<SolveDone(std::size_t lane)>;

// The groups' solves and image writes, on solver threads (lanes), while the stream's thread reads the next
// acquisitions and prepares the next groups (their problems, data checks and coil maps): on a GPU the host's share
// of one group runs while the device solves the one before. Each lane solves the groups pushed to it in order, at
// most one waiting; lanes solve at once, each on its device, and the images are written in the order the groups
// were pushed. Without lanes each group runs on the caller's thread. A failed group's error is kept, the groups
// after it write nothing, and the error is thrown by the next push() or drain() ('on_error' is called first, on
// the lane's thread). A group's 'after' runs once its image is written, before the lane takes its next group.
class SolveQueue {
public:
    struct Lane {
        int device = -1;  // the lane thread's GPU (-1: the default)
        int threads = 0;  // its OpenMP threads (0: the default)
    };
    SolveQueue(std::vector<Lane> lanes, std::function<void()> onError)
        : onError_(std::move(onError)), turn_(ComputeTurn::current()) {
        for (const Lane& l : lanes) {
            lanes_.emplace_back(new LaneState);
            lanes_.back()->lane = l;
        }
    }
    ~SolveQueue() {
        {
            std::lock_guard<std::mutex> l(m_);
            stop_ = true;
            for (auto& lane : lanes_) lane->jobs.clear();
            cv_.notify_all();
        }
        for (auto& lane : lanes_)
            if (lane->thread.joinable()) lane->thread.join();
    }
    SolveQueue(const SolveQueue&) = delete;
    SolveQueue& operator=(const SolveQueue&) = delete;

    std::size_t lanes() const { return std::max<std::size_t>(1, lanes_.size()); }
    bool threaded() const { return !lanes_.empty(); }

    void push(std::size_t lane, SolveJob job) {
        if (lanes_.empty()) {
            SolveDone d = job(0);
            d.write();
            if (d.after) d.after();
            return;
        }
        // the connection keeps the compute turn while the group waits or solves
        auto share = std::make_shared<ComputeShare>(turn_);
        std::unique_lock<std::mutex> l(m_);
        LaneState& s = *lanes_.at(lane);
        if (!s.thread.joinable()) s.thread = std::thread([this, lane] { run(lane); });
        cv_.wait(l, [&s, this] { return s.jobs.empty() || error_; });
        if (error_) std::rethrow_exception(error_);
        s.jobs.push_back(Queued{pushed_++, std::move(job), std::move(share)});
        cv_.notify_all();
    }
    // Waits until every group pushed is done.
    void drain() {
        std::unique_lock<std::mutex> l(m_);
        cv_.wait(l, [this] { return idle() || error_; });
        if (error_) std::rethrow_exception(error_);
    }
    // drain(), but a failure is dropped (the caller reports an error of its own).
    void finish() noexcept {
        try {
            drain();
        } catch (...) {}
    }

private:
    struct Queued {
        std::uint64_t seq = 0;  // the order of the writes
        SolveJob job;
        std::shared_ptr<ComputeShare> share;
    };
    struct LaneState {
        Lane lane;
        std::deque<Queued> jobs;
        bool busy = false;
        std::thread thread;
    };
    bool idle() const {
        for (const auto& lane : lanes_)
            if (lane->busy || !lane->jobs.empty()) return false;
        return true;
    }
    void run(std::size_t i) {
        LaneState& s = *lanes_[i];
        ConnectionThread self(turn_);
#ifdef _OPENMP
        if (s.lane.threads > 0) omp_set_num_threads(s.lane.threads);
#endif
        std::exception_ptr failed;
        try {
            if (s.lane.device >= 0) forge::device::set_device(s.lane.device);
        } catch (...) {
            failed = std::current_exception();  // reported by the lane's first group
        }
        std::unique_lock<std::mutex> l(m_);
        for (;;) {
            cv_.wait(l, [&s, this] { return stop_ || !s.jobs.empty(); });
            if (stop_) return;
            Queued q = std::move(s.jobs.front());
            s.jobs.pop_front();
            s.busy = true;
            cv_.notify_all();  // room for the next push
            l.unlock();
            SolveDone done;
            std::exception_ptr error = failed;
            if (!error) try {
                    done = q.job(i);
                } catch (...) {
                    error = std::current_exception();
                }
            q.job = nullptr;  // what the group holds is freed before its share of the turn
            l.lock();
            cv_.wait(l, [&q, this] { return stop_ || written_ == q.seq; });
            if (stop_) return;
            const bool writing = !error && !error_;
            l.unlock();
            if (writing) try {
                    done.write();
                } catch (...) {
                    error = std::current_exception();
                }
            done.write = nullptr;  // the group, freed before its share of the turn
            l.lock();
            const bool first = error && !error_;
            if (first) {
                error_ = error;
                for (auto& lane : lanes_) lane->jobs.clear();
            }
            ++written_;
            if (!error && !error_ && done.after) {  // the next group's write need not wait for it
                cv_.notify_all();
                l.unlock();
                done.after();
                l.lock();
            }
            done.after = nullptr;
            s.busy = false;
            q.share.reset();
            cv_.notify_all();
            if (first && onError_) {
                l.unlock();
                onError_();
                l.lock();
            }
        }
    }
    std::function<void()> onError_;
    ComputeTurn* turn_;
    std::mutex m_;
    std::condition_variable cv_;
    std::vector<std::unique_ptr<LaneState>> lanes_;
    std::uint64_t pushed_ = 0, written_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

// The calling thread's OpenMP threads for the scope (omp_set_num_threads() sets them for that thread alone).
class OmpThreads {
public:
    explicit OmpThreads(int n) {
#ifdef _OPENMP
        before_ = omp_get_max_threads();
        omp_set_num_threads(n);
#endif
        (void)n;
    }
    ~OmpThreads() {
#ifdef _OPENMP
        omp_set_num_threads(before_);
#endif
    }
    OmpThreads(const OmpThreads&) = delete;
    OmpThreads& operator=(const OmpThreads&) = delete;

private:
    int before_ = 1;
};

// The sample arrays of groups whose images were sent, for the next groups' problems (MrdProblemOptions::
// sample_array): their pages stay resident, where a new array of a 256x256 x 16-coil slice took 3072 page faults
// (8 to 10 ms of the stream thread's 21 ms a slice on an H200's host). Given back on the solver lanes, taken on the
// stream's thread; at most 'most' kept (the lanes' groups in flight hold the others).
class SampleArrays {
public:
    void keep_at_most(std::size_t most) {
        std::lock_guard<std::mutex> lock(mutex_);
        most_ = most;
        while (free_.size() > most_) free_.pop_front();
    }
    // An array of n values, or an empty one where none is kept.
    arma::cx_fvec take(std::size_t n) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = free_.begin(); it != free_.end(); ++it)
            if (it->n_elem == n) {
                arma::cx_fvec v = std::move(*it);
                free_.erase(it);
                return v;
            }
        return arma::cx_fvec();
    }
    void give(arma::cx_fvec&& v) {
        if (v.is_empty()) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (most_ == 0) return;
        if (free_.size() >= most_) free_.pop_front();  // the oldest: a length the stream may no longer have
        free_.push_back(std::move(v));
    }

private:
    std::mutex mutex_;
    std::deque<arma::cx_fvec> free_;
    std::size_t most_ = 2;
};

// Raised where the stream turns out to need the whole-stream path before any image was sent.
struct WholeStream {
    std::string reason;
};

class GroupStream {
public:
    GroupStream(Settings& S, DeviceWarmUp& warmUp)
        : S_(S), warmUp_(warmUp), reader_(S.streamIn, S.input, stream_options(S)) {}

    // true: every image was sent (and CLOSE); false: F holds the whole stream for the file mode's path.
    bool run(forge::io::MrdFile& F) {
        MrdAcquisition a;
        // the reader refuses acquisitions before the header: the first message read is the header or CLOSE
        std::size_t index = 0;
        if (reader_.next(a, index) == MrdStreamReader::Event::kClose) {
            closed_ = true;
            return rest(F);
        }
        counts_ = forge::io::mrd_group_counts(reader_.xml());
        std::string why = whole_stream_reason(S_, counts_);
        if (why.empty()) why = claimed_counts_reason();
        const Settings before = S_;
        try {
            if (why.empty()) return by_group();
        } catch (const WholeStream& w) {
            why = w.reason;
            // the file mode's path chooses the operator from the whole stream, not the first group's proxy
            S_.op = before.op;
            S_.opReason = before.opReason;
            S_.opRequested = before.opRequested;
        }
        note("forge-recon: " + S_.input + ": reconstructing once the stream is complete (" + why + ")", S_.quiet);
        for (auto& kv : open_)
            for (auto& q : kv.second) buffered_.push_back(std::move(q));
        std::sort(buffered_.begin(), buffered_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto& q : buffered_) F.acquisitions.push_back(std::move(q.second));
        for (auto& n : noise_) F.noise.push_back(std::move(n));
        return rest(F);
    }

    std::size_t sent() const { return sent_; }
    // Waits for the groups handed to the solver (their images sent before an error is reported); their own failure
    // is dropped.
    void settle() noexcept {
        if (solver_) solver_->finish();
    }

private:
    // The stream after what was buffered, read to CLOSE as read_mrd_stream() does.
    bool rest(forge::io::MrdFile& F) {
        MrdAcquisition a;
        std::size_t index = 0;
        if (!closed_)
            for (MrdStreamReader::Event e; (e = reader_.next(a, index)) != MrdStreamReader::Event::kClose;)
                (e == MrdStreamReader::Event::kNoise ? F.noise : F.acquisitions).push_back(std::move(a));
        if (!reader_.has_header()) throw UsageError("the MRD stream '" + S_.input + "' has no XML header");
        F.xml = reader_.xml();
        F.header = reader_.header();
        F.noise_scans = F.noise.size();
        if (F.acquisitions.empty())
            throw UsageError("the MRD stream '" + S_.input + "' has no acquisitions" +
                             (F.noise_scans ? std::string(" (only noise scans)") : std::string()));
        return false;
    }

    // Every acquisition has the first one's channels and trajectory dimensions, as problem_from_mrd() requires of
    // a file: groups reconstructed one by one would otherwise each pass on their own.
    void check_like_first(const MrdAcquisition& a, std::size_t index) {
        if (!first_acq_) {
            first_acq_ = true;
            firstIndex_ = index, firstChannels_ = a.channels, firstTrajDims_ = a.traj_dims;
            return;
        }
        const std::string first = "acquisition " + std::to_string(firstIndex_) + " has ";
        if (a.channels != firstChannels_)
            throw UsageError("the MRD stream '" + S_.input + "': acquisition " + std::to_string(index) + " has " +
                             std::to_string(a.channels) + " channels but " + first + std::to_string(firstChannels_));
        if (a.traj_dims != firstTrajDims_)
            throw UsageError("the MRD stream '" + S_.input + "': acquisition " + std::to_string(index) + " has " +
                             std::to_string(a.traj_dims) + " trajectory dimensions but " + first +
                             std::to_string(firstTrajDims_));
    }

    // The group counts the header claims, against what the images can be (the file mode's 32767 planes and frames
    // of a NIfTI-1 image, image_index's 65535 images), before anything is sized from them: beyond, the stream is
    // read whole and its groups counted from the acquisitions, as a file's are.
    std::string claimed_counts_reason() const {
        const std::size_t slices = counts_.slice.count, frames = counts_.frames();
        const std::size_t kPlanes = 32767, kImages = 65535;
        if (slices <= kPlanes && frames <= kPlanes && slices * frames <= kImages) return {};
        return "its header's encodingLimits claim " + std::to_string(slices) + " slice(s) x " +
               std::to_string(counts_.repetition.count) + " repetition(s) x " + std::to_string(counts_.contrast.count) +
               " contrast(s), over 32767 slices, 32767 frames or 65535 " + "images";
    }

    std::size_t slice_rank(uint16_t s) const { return std::size_t(s - counts_.slice.first); }
    std::size_t frame_rank(const Key& k) const {
        return std::size_t(k[1] - counts_.repetition.first) * counts_.contrast.count +
               std::size_t(k[2] - counts_.contrast.first);
    }

    // Stops the group path: before any image is sent the whole stream is reconstructed instead; after, the
    // images sent might not be the file's, and the stream fails.
    [[noreturn]] void cannot(const std::string& why) {
        if (prepared_ == 0) throw WholeStream{why};
        solver_->drain();  // the groups handed over are sent, or their error is the stream's
        throw UsageError("the MRD stream '" + S_.input + "': " + why + "; " + std::to_string(sent_.load()) +
                         " image(s) were sent before this was known");
    }

    bool by_group() {
        MrdAcquisition a;
        std::size_t index = 0;
        for (MrdStreamReader::Event e; (e = next(a, index)) != MrdStreamReader::Event::kClose;) {
            if (e == MrdStreamReader::Event::kNoise) {
                if (prepared_)
                    cannot("noise scan " + std::to_string(index) + " comes after images were made without it");
                noise_.push_back(std::move(a));
                continue;
            }
            check_like_first(a, index);
            const Key k{{a.slice, a.repetition, a.contrast}};
            const std::string which = "acquisition " + std::to_string(index) + " (slice " + std::to_string(k[0]) +
                                      ", repetition " + std::to_string(k[1]) + ", contrast " + std::to_string(k[2]) +
                                      ")";
            const bool outside =
                !counts_.slice.has(k[0]) || !counts_.repetition.has(k[1]) || !counts_.contrast.has(k[2]);
            const bool late = done_.count(k) > 0;
            if (outside || late) {
                open_[k].emplace_back(index, std::move(a));  // kept for the whole-stream path
                cannot(which + (outside ? " lies outside the header's encodingLimits"
                                        : " comes after its group was complete (ACQ_LAST_IN_SLICE)"));
            }
            if (!firstOfSlice_.count(k[0])) {
                MrdAcquisition h = a;  // its geometry, as image_geometry() takes each slice's first acquisition
                h.data.clear();
                h.traj.clear();
                firstOfSlice_.emplace(k[0], std::move(h));
            }
            const uint64_t f = a.flags;
            open_[k].emplace_back(index, std::move(a));
            // the flags close every open group they cover: the slice at this repetition (all its echoes), the
            // repetition, or the contrast at this repetition
            std::vector<Key> complete;
            for (const auto& kv : open_) {
                const Key& o = kv.first;
                if (((f & flag(ISMRMRD::ISMRMRD_ACQ_LAST_IN_SLICE)) && o[0] == k[0] && o[1] == k[1]) ||
                    ((f & flag(ISMRMRD::ISMRMRD_ACQ_LAST_IN_REPETITION)) && o[1] == k[1]) ||
                    ((f & flag(ISMRMRD::ISMRMRD_ACQ_LAST_IN_CONTRAST)) && o[1] == k[1] && o[2] == k[2]))
                    complete.push_back(o);
            }
            for (const Key& c : complete) {
                ready_.insert(c);
                done_.insert(c);
            }
            reconstruct_ready();
        }
        closed_ = true;
        // CLOSE: what remains, once the stream is known to hold every group the header counts
        for (const auto& kv : open_) done_.insert(kv.first);
        const std::size_t expected = counts_.slice.count * counts_.frames();
        if (done_.size() != expected)
            cannot("it holds " + std::to_string(done_.size()) + " of the " + std::to_string(expected) +
                   " slice x repetition x contrast groups its header's encodingLimits give");
        if (prepared_ == 0) throw WholeStream{"no acquisition flags a slice complete"};
        for (const auto& kv : open_) ready_.insert(kv.first);
        reconstruct_ready();
        check_operator();
        solver_->drain();
        {
            ClientWait wait;
            forge::io::write_mrd_close(S_.streamOut);
        }
        note("forge-recon: wrote " + std::to_string(sent_.load()) + " images to the MRD stream", S_.quiet);
        std::printf("forge-recon: %zu images sent as their slices completed, the first %.2f s after the stream began\n",
                    sent_.load(), first_);
        return true;
    }

    // Complete groups in the file's order (frame, then slice); one whose slice's coil maps come from an earlier
    // frame (as estimate_coil_maps() takes them from the first frame holding the slice) waits for that frame.
    void reconstruct_ready() {
        for (bool progress = true; progress;) {
            progress = false;
            for (auto it = ready_.begin(); it != ready_.end(); ++it) {
                const Key k = *it;
                if (frame_rank(k) > 0 && estimating_maps() &&
                    (!session_ || session_->maps.kept_maps(slice_rank(k[0])).is_empty()))
                    continue;
                ready_.erase(it);
                reconstruct(k);
                progress = true;
                break;
            }
        }
    }

    bool estimating_maps() const { return S_.smaps != "none" && (S_.smaps.empty() || S_.smaps == "estimate"); }

    // Prepares group k on this thread (its problem, data checks, coil preprocessing and maps) and hands it to the
    // solver, which solves it and sends its image.
    void reconstruct(const Key& k) {
        forge::io::MrdFile F;
        F.header = reader_.header();
        F.xml = reader_.xml();
        F.noise = noise_;
        F.noise_scans = noise_.size();
        // The group's acquisitions are lent to F (moved, not copied: 13 MB a slice of 256x256 x 16 coils) and go back
        // to open_, where they are kept for the whole-stream path (see cannot()) should this fail, and otherwise go
        // with the group to the solver, which keeps them until the image is sent.
        struct Lent {
            std::vector<std::pair<std::size_t, MrdAcquisition>>& held;
            std::vector<MrdAcquisition>& to;
            void give_back() {
                for (std::size_t i = 0; i < to.size(); ++i) held[i].second = std::move(to[i]);
                to.clear();
            }
            ~Lent() { give_back(); }
        };
        std::vector<std::pair<std::size_t, MrdAcquisition>>& held = open_.at(k);
        for (auto& q : held) F.acquisitions.push_back(std::move(q.second));
        Lent lent{held, F.acquisitions};
        auto g = std::make_shared<Group>();
        g->k = k;
        const std::size_t s = slice_rank(k[0]), f = frame_rank(k);
        ReconProblem& P = g->P;
        forge::io::MrdProblemOptions options = problem_options(S_);
        options.sample_array = [this](std::size_t n) { return samples_.take(n); };
        P = forge::io::problem_from_mrd(F, S_.input, options);
        forge::recon::GroupPlace& place = g->place;  // the stream's slice and frame, as the file mode names them
        place.first_slice = s, place.first_frame = f, place.name_frames = counts_.frames() > 1;
        forge::recon::check_data(P, place, warn);
        if (!session_) start(P);
        std::string origin;
        if (!whole_.smaps.empty()) {
            P.smaps = {whole_.smaps.at(s)};
            origin = maps_origin(whole_, S_);
        }
        if (!whole_.field_map.empty()) P.field_map = {whole_.field_map.at(s)};
        StageTimes times;
        Settings& S = g->S;
        S = S_;
        S.quiet = S_.quiet || prepared_ > 0;  // the first group says what is done; the others do the same
        preprocess_coils(P, F, S, S.input);
        // the session keeps each slice's estimated maps (from its first frame) for the slice's later frames
        const forge::recon::MapsReport maps = prepare_maps(session_->maps, P, S, place, origin, S.input, times);
        if (maps.fell_back) cannot("the coil maps of slice " + std::to_string(k[0]) + " cannot be estimated");
        resolve_operator(P, S);  // the FFT grid (the operator is the stream's, chosen by start())
        fftGrids_.insert(P.fft_grid);
        // A frame with the samples of the one before (a scan's slices) views that one's: a copy of a 256x256 spiral's
        // 1.6 MB took 384 page faults of its slice's latency on an H200's host. Only while the reserved room lasts
        // (this push must not move the frame it views); whole_'s frames are never removed, and a later reallocation
        // moves the vectors with their memory, or copies every frame, views included.
        const bool repeat = !whole_.frames.empty() && whole_.frames.size() < whole_.frames.capacity() &&
                            same_samples(whole_.frames.back(), P.frames.front());
        add_frame(whole_, repeat ? whole_.frames.back() : P.frames.front(), s, f, repeat);
        g->geometry = forge::io::image_geometry(F, P);
        forge::io::MrdFile first;
        first.acquisitions.push_back(firstOfSlice_.at(k[0]));
        g->geometry.slices.front() = forge::io::image_geometry(first, P).slices.front();
        lent.give_back();
        g->acquisitions = std::move(held);
        open_.erase(k);
        // a slice's frames on one lane, in order, where each starts from the one before (--warm-start)
        const std::size_t lane = (S_.warmStart ? s : prepared_) % solver_->lanes();
        g->ahead = operator_ahead(P, s, f, lane);
        ++prepared_;
        solver_->push(lane, [this, g](std::size_t on) { return solve(g, on); });
    }

    // A group prepared by reconstruct(), on its way to the solver.
    struct Group {
        Key k{};
        ReconProblem P;
        Settings S;  // the stream's, as when the group was prepared
        forge::recon::GroupPlace place;
        forge::io::ImageGeometry geometry;
        std::vector<std::pair<std::size_t, MrdAcquisition>> acquisitions;  // (stream index, acquisition)
        std::shared_ptr<const ReconProblem> ahead;  // operator_ahead(): the lane's next group, guessed (null: none)
    };

    // The operator problem of the group that lane 'lane' is likely to solve after this one (slice s, frame f): the
    // slice lanes() on, in order, with this group's trajectory and that slice's field map. Where each slice has a
    // field map of its own (given for the stream), that group's operator (its right-hand side's operator, a
    // Toeplitz operator's phase maps, the kernels of a new field-map band) is built once this group's image is
    // written, before its samples arrive; otherwise it is this group's, already cached. A wrong guess is not taken
    // (the cache compares all an operator depends on). Null where there is nothing to guess.
    std::shared_ptr<const ReconProblem> operator_ahead(const ReconProblem& P, std::size_t s, std::size_t f,
                                                       std::size_t lane) const {
        const std::size_t n = solver_->lanes(), slices = counts_.slice.count;
        if (!solver_->threaded() || whole_.field_map.empty() || S_.noFieldCorrection || P.frames.size() != 1)
            return nullptr;
        const std::size_t next = (s + n) % slices;
        if ((s + n >= slices && f + (s + n) / slices >= counts_.frames()) || (S_.warmStart && next % n != lane))
            return nullptr;  // past the stream's last group, or a slice of another lane
        // views of P's positions and samples: the group, which holds P, is kept until the operator is built
        auto Q = std::make_shared<ReconProblem>(skeleton(P, 1, 1, true));
        Q->fft_grid = P.fft_grid;
        add_frame(*Q, P.frames.front(), 0, 0, true);
        Q->field_map = {whole_.field_map.at(next)};
        return Q;
    }

    // On lane 'lane', once a group's image is written: the operator of operator_ahead()'s guess, built in the lane's
    // session. A failure is dropped: that group's own solve meets it again and reports it.
    void prepare_ahead(const ReconProblem& Q, forge::recon::EncodingOperator op, std::size_t lane) noexcept {
        try {
            forge::recon::ReconSession& r = *session_->solves.at(lane);
            r.request().field_correction = true;  // operator_ahead() guesses only where the stream corrects
            r.prepare_operators(Q, op);
        } catch (...) {}
    }

    // On solver lane 'lane': the group's solve (the operator from the lane's session's cache, or built); returns the
    // write of its image, and the build of operator_ahead()'s guess after it.
    SolveDone solve(const std::shared_ptr<Group>& group, std::size_t lane) {
        Group& g = *group;
        const ReconProblem& P = g.P;
        const Settings& S = g.S;
        const bool correct = !P.field_map.empty() && !S.noFieldCorrection;
        const std::vector<std::size_t> mine = my_share(P);
        Progress prog(solves_per_recon(P, S, mine.size()), S.quiet);
        std::vector<double> costs;
        const std::string tag = "recon slice " + std::to_string(g.k[0]);
        // the session reuses the operator of an earlier group with the same trajectory and settings, and with
        // --warm-start starts from the slice's previous image, as the file mode's reconstruct() carries it
        forge::recon::ReconResult R =
            reconstruct_share(*session_->solves.at(lane), P, correct, S, prog, mine, tag, &costs, g.place);
        const ReportedReconstruction rec =
            gather_reconstruction(P, mine, R, std::move(costs), tag, correct && S.op != "nufft");
        auto images =
            std::make_shared<const std::vector<forge::io::MrdOutputImage>>(output_images(P, g.geometry, R, rec, S));
        SolveDone done;
        if (g.ahead)
            // 'group' holds the problem that the guess's samples view
            done.after = [this, group, ahead = g.ahead, op = encoding_operator(S.op), lane] {
                prepare_ahead(*ahead, op, lane);
            };
        done.write = [this, group, images] {
            Group& g = *group;
            forge::io::MrdImageOptions o;
            o.complex = g.S.complexOut;
            {
                ClientWait wait;
                forge::io::write_mrd_image_stream(g.S.streamOut, g.geometry, *images, o, false,
                                                  uint16_t(g.place.first_frame * counts_.slice.count +
                                                           g.place.first_slice + 1));
            }
            for (const auto& q : g.acquisitions) reader_.release(q.second);
            g.acquisitions.clear();
            for (auto& fr : g.P.frames) samples_.give(std::move(fr.y));
            if (sent_++ == 0) first_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
        };
        return done;
    }

    // The stream's next message; the solver's error where it failed while this waited for the client.
    MrdStreamReader::Event next(MrdAcquisition& a, std::size_t& index) {
        try {
            return reader_.next(a, index);
        } catch (const QueuedReader::Interrupted&) {
            solver_->drain();
            throw std::logic_error("the MRD stream's reading was interrupted, but no group failed");
        }
    }

    // The first group: the device, the maps given as files (for every slice), the operator for the whole stream.
    void start(const ReconProblem& P) {
        warmUp_.wait();
        resolve_device(S_);
        const bool overlap = S_.overlap == "on" || (S_.overlap == "auto" && S_.gpu);
        if (!overlap && S_.solvers > 1)
            throw UsageError("--solvers " + std::to_string(S_.solvers) +
                             ": groups solve on solver threads only with --overlap on (or auto, with a GPU)");
        const std::size_t lanes = overlap ? std::size_t(std::max(1, S_.solvers)) : 1;
        session_.reset(new Sessions(recon_request(S_), lanes));
        session_->maps.request().keep_maps = counts_.frames() > 1;  // a slice's later frames take its maps
        // The two threads split the cores between their OpenMP teams (the data checks and coil maps here; the
        // operator's host work, such as the Toeplitz kernels' pair data, there): two teams of every core each spin
        // against each other (on an H200's 16-core host a field-corrected 256x256 kernel build took 0.23 to 0.38 s
        // beside this thread's work with 16 threads each, 0.08 to 0.10 s with 8 each).
        // With several lanes they take the GPUs in turn and share the solvers' half of the cores.
        std::vector<SolveQueue::Lane> solvers;
        if (overlap) {
            int solverThreads = 0;
#ifdef _OPENMP
            const int n = omp_get_max_threads(), mine = std::max(1, n / 2);
            solverThreads = std::max(1, (n - mine) / int(lanes));
            threads_.emplace(mine);
#endif
            const int gpus = S_.gpu ? forge::device::device_count() : 0;
            for (std::size_t i = 0; i < lanes; ++i)
                solvers.push_back({gpus > 0 ? (forge::device::current_device() + int(i)) % gpus : -1, solverThreads});
        }
        solver_.reset(new SolveQueue(std::move(solvers), [this] { reader_.interrupt(); }));
        samples_.keep_at_most(lanes + 1);  // a lane's group solving and one waiting hold theirs
        // the whole stream's sizes, claimed by its header, against the memory there is, as the file mode checks a
        // file's (every group holding as many samples as the first), before the skeletons below are sized
        ReconProblem sizes = skeleton(P, counts_.slice.count, counts_.frames());
        sizes.n1max = P.n1max;
        sizes.n1total = P.n1total * counts_.slice.count * counts_.frames();
        try {
            check_memory(sizes, S_, !S_.smaps.empty() && S_.smaps != "none" && S_.smaps != "estimate",
                         estimating_maps());
        } catch (const UsageError& e) {
            cannot(std::string("its header's encodingLimits claim more than the memory holds: ") + e.what());
        }
        whole_ = skeleton(P, counts_.slice.count, counts_.frames());
        // reserved: growing it copies every group's samples so far (ReconFrame's vectors are copied, not moved),
        // 50 MB at the 128th frame of a 128x128 series, in series with that frame's reconstruction
        whole_.frames.reserve(counts_.frames() * counts_.slice.count);
        attach_maps(whole_, S_, std::string());
        ReconProblem proxy = skeleton(P, counts_.slice.count, counts_.frames());
        proxy.field_map = whole_.field_map;
        proxy.smaps = whole_.smaps;
        // every frame a view of the first one's samples: a copy each took 0.13 s for 200 frames of 24,600 samples
        // (reserved: a reallocation would copy the views into vectors of their own)
        proxy.frames.reserve(counts_.frames() * counts_.slice.count);
        for (std::size_t f = 0; f < counts_.frames(); ++f)
            for (std::size_t s = 0; s < counts_.slice.count; ++s) add_frame(proxy, P.frames.front(), s, f, true);
        resolve_operator(proxy, S_);
        notice_long_run(proxy, S_, 1);
        note("forge-recon: " + S_.input + ": " + std::to_string(counts_.slice.count) + " slice(s) x " +
                 std::to_string(counts_.frames()) + " frame(s) (the header's encodingLimits), each reconstructed " +
                 "as its last acquisition arrives; operator " + S_.op +
                 (S_.opReason.empty() ? "" : " (auto: " + S_.opReason + ")") + " on " + device_description(S_),
             S_.quiet);
        autoOp_ = S_.opRequested == "auto";
    }

    // The whole stream's operator choice and FFT grid, now that every frame's samples are known, must be the ones
    // the groups were reconstructed with: otherwise the file would give other images.
    void check_operator() {
        if (!autoOp_ && S_.op != "fft") return;  // the FFT grid matters to the fft operator and to auto's choice
        whole_.fft_grid = forge::recon::fft_grid(whole_);
        if (fftGrids_.size() != 1 || *fftGrids_.begin() != whole_.fft_grid)
            cannot("its slices' samples do not share one FFT grid");
        if (!autoOp_) return;
        const bool correct = !whole_.field_map.empty() && !S_.noFieldCorrection;
        const forge::recon::OperatorChoice c =
            forge::recon::choose_operator(whole_, S_.iterations, S_.gpu, correct, S_.tolerance);
        if (forge::recon::operator_name(c.op) == S_.op) return;
        // The first slice priced the stream as if every slice shared its samples. Later slices whose samples differ
        // (spikes left out, another trajectory) build operators of their own, which can tip the estimates: within
        // kExactPreference of each other the two operators are a toss-up (the file mode would take the other one,
        // whose images differ from these by the operators' approximation errors), said in a note; beyond, an error.
        forge::recon::ReconSettings R;
        R.iterations = forge::recon::expected_iterations(S_.iterations, S_.tolerance);
        R.segments = S_.segments;
        R.gpu = S_.gpu;
        const double used = forge::recon::estimate_seconds(whole_, R, encoding_operator(S_.op), correct);
        const double best = forge::recon::estimate_seconds(whole_, R, c.op, correct);
        const std::string what = std::string("--operator auto chooses ") + forge::recon::operator_name(c.op) +
                                 " for the whole stream but " + S_.op + " from its first slice";
        if (used > forge::recon::kExactPreference * best) cannot(what + " (give --operator)");
        char buf[200];
        std::snprintf(buf, sizeof buf,
                      " (estimated %.2g s against %.2g s, within %.1fx: a file of it would be "
                      "reconstructed with %s)",
                      used, best, forge::recon::kExactPreference, forge::recon::operator_name(c.op));
        note("forge-recon: " + S_.input + ": " + what + buf, S_.quiet);
    }

    Settings& S_;
    DeviceWarmUp& warmUp_;
    QueuedReader reader_;
    Counts counts_;
    std::map<Key, std::vector<std::pair<std::size_t, MrdAcquisition>>> open_;  // (stream index, acquisition)
    std::vector<std::pair<std::size_t, MrdAcquisition>> buffered_;
    std::vector<MrdAcquisition> noise_;
    std::set<Key> done_, ready_;
    std::map<uint16_t, MrdAcquisition> firstOfSlice_;
    // The pipeline, in sessions of one request: each slice's estimated maps, kept by 'maps' on this thread; the
    // operators reused where the trajectory repeats and each slice's latest image, kept by a session of 'solves' on
    // each solver lane.
    struct Sessions {
        Sessions(const forge::recon::ReconRequest& r, std::size_t lanes) : maps(r) {
            for (std::size_t i = 0; i < lanes; ++i) solves.emplace_back(new forge::recon::ReconSession(r));
        }
        forge::recon::ReconSession maps;
        std::vector<std::unique_ptr<forge::recon::ReconSession>> solves;
    };
    std::unique_ptr<Sessions> session_;
    SampleArrays samples_;
    std::set<std::array<std::size_t, 3>> fftGrids_;
    ReconProblem whole_;  // every group's samples (no values) and the maps given as files
    bool autoOp_ = false, closed_ = false, first_acq_ = false;
    std::size_t firstIndex_ = 0, firstChannels_ = 0, firstTrajDims_ = 0;
    std::size_t prepared_ = 0;          // groups handed to the solver
    std::atomic<std::size_t> sent_{0};  // their images sent
    double first_ = -1;                 // seconds from the start to the first image (the solver's; read once drained)
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    std::optional<OmpThreads> threads_;   // this thread's share of the cores while a solver thread runs
    std::unique_ptr<SolveQueue> solver_;  // last: joined before what its groups use goes
};

}  // namespace

bool reconstruct_stream_by_group(Settings& S, DeviceWarmUp& warmUp, forge::io::MrdFile& F) {
    GroupStream G(S, warmUp);
    try {
        return G.run(F);
    } catch (const forge::io::input_error& e) {
        G.settle();
        if (G.sent() && !S.connection)
            forge::io::write_mrd_text(S.streamOut, std::string("forge-recon: error: ") + e.what());
        throw UsageError(e.what());
    } catch (const std::exception& e) {
        G.settle();
        if (G.sent() && !S.connection)
            forge::io::write_mrd_text(S.streamOut, std::string("forge-recon: error: ") + e.what());
        throw;
    }
}

}  // namespace forge_recon
