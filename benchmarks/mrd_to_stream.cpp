// An ISMRMRD (MRD) HDF5 file's XML header and acquisitions written as an MRD stream (the messages forge-recon
// --stream reads, ending with CLOSE), read and written by forge::io (read_mrd, write_mrd_stream): noise scans
// first, then the imaging acquisitions in file order, each with the header fields forge::io keeps (flags,
// counters, geometry, dwell, centre sample). bench_stream_latency.py replays such files at a scanner's pace.
//
//   mrd_to_stream IN.h5 OUT.mrd [group]
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "forge/IO/Mrd.h"
#include "forge/IO/MrdStream.h"

int main(int argc, char** argv) {
    if (argc < 3 || argc > 4) {
        std::fprintf(stderr, "usage: mrd_to_stream IN.h5 OUT.mrd [group]\n");
        return 2;
    }
    try {
        forge::io::MrdFile f = forge::io::read_mrd(argv[1], argc > 3 ? argv[3] : "dataset");
        std::vector<forge::io::MrdAcquisition> all = std::move(f.noise);
        for (auto& a : f.acquisitions) all.push_back(std::move(a));
        const int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            std::perror(argv[2]);
            return 1;
        }
        forge::io::write_mrd_stream(fd, f.xml, all);
        if (::close(fd) != 0) {
            std::perror(argv[2]);
            return 1;
        }
        std::fprintf(stderr, "mrd_to_stream: %zu acquisitions (%zu noise scans) -> %s\n", all.size(), f.noise_scans,
                     argv[2]);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "mrd_to_stream: %s\n", e.what());
        return 1;
    }
    return 0;
}
