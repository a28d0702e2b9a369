// forge-recon's MPI layer (Distributed.h). Without FORGE_HAS_MPI there is one rank and nothing to exchange.
#include "Distributed.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#ifdef FORGE_HAS_MPI
#include <mpi.h>
#endif

#include <unistd.h>

#include "forge/Core/Exceptions.h"

namespace forge_recon {
namespace dist {

using forge::recon::ReconProblem;
using forge::recon::ReconResult;

namespace {
int g_rank = 0, g_size = 1, g_nodeRank = 0, g_nodeSize = 1;
bool g_failed = false;
#ifdef FORGE_HAS_MPI
bool g_initialised = false;

// Sends an arma vector's length and values from rank 0 to every rank (the others resize to it).
template <typename Vec>
void bcast_vector(Vec& v, MPI_Datatype scalar, int scalarsPerElem) {
    std::uint64_t n = v.n_elem;
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (g_rank != 0) v.set_size(n);
    // In chunks of at most INT_MAX scalars: MPI counts are ints.
    auto* p = reinterpret_cast<unsigned char*>(v.memptr());
    const std::uint64_t scalarBytes = sizeof(typename Vec::elem_type) / std::uint64_t(scalarsPerElem);
    std::uint64_t left = n * std::uint64_t(scalarsPerElem);
    while (left > 0) {
        const int chunk = int(std::min<std::uint64_t>(left, INT_MAX));
        MPI_Bcast(p, chunk, scalar, 0, MPI_COMM_WORLD);
        p += std::uint64_t(chunk) * scalarBytes;
        left -= std::uint64_t(chunk);
    }
}

template <typename Vec>
void bcast_vectors(std::vector<Vec>& vs, MPI_Datatype scalar, int scalarsPerElem) {
    std::uint64_t n = vs.size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (g_rank != 0) vs.resize(n);
    for (auto& v : vs) bcast_vector(v, scalar, scalarsPerElem);
}
#endif
}  // namespace

bool built_with_mpi() {
#ifdef FORGE_HAS_MPI
    return true;
#else
    return false;
#endif
}

#ifdef FORGE_HAS_MPI
namespace {
// Whether an MPI launcher (mpirun/mpiexec of Open MPI or MPICH, srun with PMI/PMIx) started this process. A
// plain start runs as one process without initialising MPI: MPI's singleton start-up (Open MPI forks a
// daemon for it) would cost most of a second per run and needs nothing it gives.
bool started_by_launcher() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
        if (std::getenv(v)) return true;
    return false;
}
}  // namespace
#endif

void init(int& argc, char**& argv) {
#ifdef FORGE_HAS_MPI
    if (!started_by_launcher()) return;
    MPI_Init(&argc, &argv);
    g_initialised = true;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    // Every rank reads the input at once. libismrmrd opens it read-write, and HDF5's file locking would then
    // refuse the other ranks' opens; forge-recon only reads its inputs, so the ranks read without locks
    // (unless the user set the variable). Before any HDF5 call: the library reads it when it opens a file.
    if (g_size > 1) ::setenv("HDF5_USE_FILE_LOCKING", "FALSE", 0);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &g_nodeRank);
    MPI_Comm_size(node, &g_nodeSize);
    MPI_Comm_free(&node);
#else
    (void)argc, (void)argv;
#endif
}

void finalize() {
#ifdef FORGE_HAS_MPI
    if (g_initialised) MPI_Finalize();
    g_initialised = false;
#endif
}

int rank() { return g_rank; }
int size() { return g_size; }
int node_rank() { return g_nodeRank; }
int node_size() { return g_nodeSize; }

std::string rank_name() {
    if (g_size < 2) return "";
    return "rank " + std::to_string(g_rank + 1) + "/" + std::to_string(g_size);
}

bool failed() { return g_failed; }

void checkpoint() {
#ifdef FORGE_HAS_MPI
    if (g_size < 2) return;
    int mine[2] = {0, g_rank}, worst[2] = {0, 0};
    MPI_Allreduce(mine, worst, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    if (worst[0] != 0) {
        g_failed = true;
        throw PeerFailure{worst[0]};
    }
#endif
}

int report_failure(int code, bool& print) {
    print = true;
    if (code == 0) code = 1;
#ifdef FORGE_HAS_MPI
    if (g_size < 2 || g_failed) return code;
    g_failed = true;
    // MAXLOC: the highest code, and of the ranks with it the lowest.
    int mine[2] = {code, g_rank}, worst[2] = {0, 0};
    MPI_Allreduce(mine, worst, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
    print = worst[1] == g_rank;
    return worst[0];
#else
    return code;
#endif
}

std::vector<std::size_t> my_frames(std::size_t nframes) {
    const std::size_t r = std::size_t(g_rank), n = std::size_t(g_size);
    const std::size_t first = nframes * r / n, last = nframes * (r + 1) / n;
    std::vector<std::size_t> f;
    for (std::size_t i = first; i < last; ++i) f.push_back(i);
    return f;
}

void gather_images(const ReconProblem& P, const std::vector<std::size_t>& frames, ReconResult& R) {
#ifdef FORGE_HAS_MPI
    if (g_size < 2) return;
    const std::size_t n2 = P.n2();
    auto slot = [&P](std::size_t i) { return P.frames[i].frame * P.nslices + P.frames[i].slice; };
    // One image as one MPI element: counts and displacements are in images, far below INT_MAX.
    MPI_Datatype image;
    MPI_Type_contiguous(int(2 * n2), MPI_FLOAT, &image);
    MPI_Type_commit(&image);
    std::vector<float> mine(2 * n2 * frames.size());
    for (std::size_t j = 0; j < frames.size(); ++j)
        std::memcpy(mine.data() + 2 * n2 * j, R.complex_image[slot(frames[j])].memptr(), 2 * n2 * sizeof(float));
    std::vector<int> counts(static_cast<std::size_t>(g_size)), displs(static_cast<std::size_t>(g_size));
    const int myCount = int(frames.size());
    MPI_Gather(&myCount, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<float> all;
    if (g_rank == 0) {
        int total = 0;
        for (int r = 0; r < g_size; ++r) {
            displs[std::size_t(r)] = total;
            total += counts[std::size_t(r)];
        }
        all.resize(2 * n2 * std::size_t(total));
    }
    MPI_Gatherv(mine.data(), myCount, image, all.data(), counts.data(), displs.data(), image, 0, MPI_COMM_WORLD);
    MPI_Type_free(&image);
    if (g_rank != 0) return;
    // The blocks are contiguous and in rank order: the gathered images are P.frames in order.
    for (std::size_t i = 0; i < P.frames.size() && 2 * n2 * (i + 1) <= all.size(); ++i)
        std::memcpy(static_cast<void*>(R.complex_image[slot(i)].memptr()), all.data() + 2 * n2 * i,
                    2 * n2 * sizeof(float));
    R.magnitude.clear();
    for (const auto& c : R.complex_image) R.magnitude.push_back(arma::abs(c));
#else
    (void)P, (void)frames, (void)R;
#endif
}

void gather_solves(std::vector<forge::recon::SolveRecord>& solves, std::vector<double>& costs) {
#ifdef FORGE_HAS_MPI
    if (g_size < 2) return;
    // One record as kFields doubles (its numbers; the label stays with its rank).
    constexpr int kFields = 15;
    costs.resize(solves.size(), NAN);
    std::vector<double> mine;
    for (std::size_t i = 0; i < solves.size(); ++i) {
        const auto& s = solves[i];
        const forge::SolverReport& r = s.report;
        const double v[kFields] = {double(s.frame_index),
                                   double(s.slice),
                                   double(s.frame),
                                   double(s.coil),
                                   double(s.segments),
                                   double(r.iterations),
                                   double(int(r.stop_reason)),
                                   r.converged ? 1.0 : 0.0,
                                   r.initial_gradient_norm,
                                   r.final_gradient_norm,
                                   s.seconds,
                                   costs[i],
                                   s.rhs_seconds,
                                   s.iteration_seconds,
                                   s.setup_seconds};
        mine.insert(mine.end(), v, v + kFields);
    }
    const int myCount = int(mine.size());
    std::vector<int> counts(static_cast<std::size_t>(g_size)), displs(static_cast<std::size_t>(g_size));
    MPI_Gather(&myCount, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::vector<double> all;
    if (g_rank == 0) {
        int total = 0;
        for (int r = 0; r < g_size; ++r) {
            displs[std::size_t(r)] = total;
            total += counts[std::size_t(r)];
        }
        all.resize(std::size_t(total));
    }
    MPI_Gatherv(mine.data(), myCount, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    if (g_rank != 0) return;
    solves.clear();
    costs.clear();
    for (std::size_t k = 0; k + kFields <= all.size(); k += kFields) {
        const double* v = all.data() + k;
        forge::recon::SolveRecord s;
        s.frame_index = std::size_t(v[0]);
        s.slice = std::size_t(v[1]);
        s.frame = std::size_t(v[2]);
        s.coil = long(v[3]);
        s.segments = std::size_t(v[4]);
        s.report.iterations = forge::uword(v[5]);
        s.report.stop_reason = forge::StopReason(int(v[6]));
        s.report.converged = v[7] != 0;
        s.report.initial_gradient_norm = v[8];
        s.report.final_gradient_norm = v[9];
        s.seconds = v[10];
        s.rhs_seconds = v[12];
        s.iteration_seconds = v[13];
        s.setup_seconds = v[14];
        solves.push_back(s);
        costs.push_back(v[11]);
    }
#else
    (void)solves, (void)costs;
#endif
}

void broadcast_maps(ReconProblem& P, bool data) {
#ifdef FORGE_HAS_MPI
    if (g_size < 2) return;
    std::uint64_t head[2] = {P.nc, data ? 1u : 0u};
    MPI_Bcast(head, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    P.nc = std::size_t(head[0]);
    bcast_vectors(P.smaps, MPI_FLOAT, 2);
    bcast_vectors(P.field_map, MPI_FLOAT, 1);
    if (head[1])
        for (auto& fr : P.frames) bcast_vector(fr.y, MPI_FLOAT, 2);
#else
    (void)P, (void)data;
#endif
}

double max_over_ranks(double value) {
#ifdef FORGE_HAS_MPI
    if (g_size < 2) return value;
    double m = value;
    MPI_Allreduce(&value, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
#else
    return value;
#endif
}

std::vector<RankReport> gather_reports(std::size_t frames, double seconds, const std::string& where) {
    std::vector<RankReport> out;
#ifdef FORGE_HAS_MPI
    if (g_size >= 2) {
        char host[64] = {0};
        ::gethostname(host, sizeof host - 1);
        std::string text = std::string(host) + ", " + where;
        text.resize(128, '\0');
        double mine[2] = {double(frames), seconds};
        std::vector<double> nums(2 * std::size_t(g_size));
        std::vector<char> texts(128 * std::size_t(g_size));
        MPI_Gather(mine, 2, MPI_DOUBLE, nums.data(), 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Gather(text.data(), 128, MPI_CHAR, texts.data(), 128, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (g_rank == 0)
            for (int r = 0; r < g_size; ++r) {
                RankReport rep;
                rep.rank = r;
                rep.frames = std::size_t(nums[2 * std::size_t(r)]);
                rep.seconds = nums[2 * std::size_t(r) + 1];
                rep.where = std::string(texts.data() + 128 * std::size_t(r));
                out.push_back(rep);
            }
        return out;
    }
#endif
    out.push_back({0, frames, seconds, where});
    return out;
}

}  // namespace dist
}  // namespace forge_recon
