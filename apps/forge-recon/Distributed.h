#pragma once
// forge-recon across the processes of an MPI run (mpirun -np N forge-recon ...). The problem's frames (one
// per slice, repetition and contrast) are divided among the ranks in contiguous blocks; each rank
// reconstructs its block on its own GPU (its rank among the processes of its node, modulo the node's
// device count) or on the CPU; the images are gathered on rank 0 (MPI_Gatherv), which alone writes the
// outputs. Whatever is computed once for the whole problem (coil maps, field map) is computed on rank 0
// and broadcast. Built without MPI (FORGE_MPI=OFF), or started without mpirun, there is one rank and
// every function here is a no-op.
//
// Failures: the ranks meet at checkpoints (an MPI_Allreduce) before every collective and at the end. A
// rank whose work throws joins the next checkpoint from its error handler with its exit code instead, so
// the others learn of the failure there and stop too (no rank waits forever on a collective the failed one
// never enters); the lowest failing rank prints its message, naming itself, and no output is written.
#include <cstddef>
#include <string>
#include <vector>

#include "forge/Recon/ReconProblem.h"
#include "forge/Recon/Reconstruct.h"

namespace forge_recon {
namespace dist {

bool built_with_mpi();
// MPI_Init (when built with MPI) and MPI_Finalize.
void init(int& argc, char**& argv);
void finalize();

int rank();
int size();
inline bool root() { return rank() == 0; }
inline bool distributed() { return size() > 1; }
// Rank among the processes on this node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED), and their number.
int node_rank();
int node_size();
// "rank 2/4" (1-based) in a distributed run, else "".
std::string rank_name();

// Thrown by checkpoint() on the ranks that did not fail; they exit with 'code' without a message.
struct PeerFailure {
    int code;
};
// Every rank: returns when no rank failed since the last checkpoint, else throws PeerFailure.
void checkpoint();
// The error handler of a rank whose work threw: takes the place of the checkpoint the others wait at.
// Returns the exit code all ranks agree on (the highest) and sets 'print' on the one rank that should
// print its message (the lowest rank with that code). Single process: returns code, print = true.
int report_failure(int code, bool& print);
// After report_failure or a PeerFailure no further checkpoint may be joined (the others have left).
bool failed();

// This rank's block of P.frames (indices), contiguous, sizes differing by at most one.
std::vector<std::size_t> my_frames(std::size_t nframes);

// Rank 0 receives every rank's block of images (R.complex_image at the frames' image slots; the other ranks
// keep theirs) and recomputes R.magnitude. 'frames' is this rank's block (my_frames(P.frames.size())).
void gather_images(const forge::recon::ReconProblem& P, const std::vector<std::size_t>& frames,
                   forge::recon::ReconResult& R);

// Rank 0 receives every rank's solve records and the costs beside them (one per record; the blocks in rank
// order, so in the order of the problem's frames); the other ranks keep theirs.
void gather_solves(std::vector<forge::recon::SolveRecord>& solves, std::vector<double>& costs);

// Rank 0's coil count, coil maps and field map (per slice) to every rank, and with 'data' (rank 0's value
// counts) every frame's k-space data too: what rank 0 alone computed (coil transforms, estimated maps)
// reaches the others as rank 0 has it.
void broadcast_maps(forge::recon::ReconProblem& P, bool data);

// The largest of every rank's 'value' (MPI_Allreduce); 'value' itself in a run of one process.
double max_over_ranks(double value);

// Per-rank work, gathered on rank 0 (empty on the others): frames reconstructed, seconds, host and device.
struct RankReport {
    int rank = 0;
    std::size_t frames = 0;
    double seconds = 0;
    std::string where;
};
std::vector<RankReport> gather_reports(std::size_t frames, double seconds, const std::string& where);

}  // namespace dist
}  // namespace forge_recon
