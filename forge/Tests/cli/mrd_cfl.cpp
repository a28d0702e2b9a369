// forge_mrd_cfl: the bridge scripts/compare-bart.sh uses between ISMRMRD files and BART's .cfl/.hdr arrays.
//
//   forge_mrd_cfl kspace IN.h5 OUT [REPETITION]   Cartesian k-space of one repetition (default 0), zero-filled,
//                                                 as OUT.cfl/.hdr of dims [encoded x, encoded y, 1, coils]
//   forge_mrd_cfl nrmse IN.h5 IMAGE               NRMSE and PSNR of |IMAGE.cfl| (Nx x Ny) against the file's
//                                                 /dataset/phantom, as forge-recon computes them
#include <complex>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <armadillo>

#include "forge/IO/Mrd.h"
#include "forge/Recon/Metrics.h"

namespace {

void write_cfl(const std::string& base, const std::vector<std::size_t>& dims,
               const std::vector<std::complex<float>>& v) {
    std::ofstream h(base + ".hdr");
    h << "# Dimensions\n";
    for (std::size_t i = 0; i < 16; ++i) h << (i < dims.size() ? dims[i] : 1) << (i + 1 < 16 ? " " : "\n");
    std::ofstream c(base + ".cfl", std::ios::binary);
    c.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(v[0])));
}

std::vector<std::complex<float>> read_cfl(const std::string& base, std::vector<std::size_t>& dims) {
    std::ifstream h(base + ".hdr");
    std::string line;
    std::getline(h, line);
    dims.clear();
    std::size_t d, n = 1;
    while (h >> d) {
        dims.push_back(d);
        n *= d;
    }
    std::vector<std::complex<float>> v(n);
    std::ifstream c(base + ".cfl", std::ios::binary);
    c.read(reinterpret_cast<char*>(v.data()), std::streamsize(n * sizeof(v[0])));
    if (!c) throw std::runtime_error("cannot read " + base + ".cfl");
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: forge_mrd_cfl kspace IN.h5 OUT [REPETITION] | nrmse IN.h5 IMAGE\n");
        return 2;
    }
    const std::string mode = argv[1], in = argv[2], out = argv[3];
    forge::io::quiet_hdf5_errors();
    if (mode == "kspace") {
        const unsigned rep = argc > 4 ? unsigned(std::stoul(argv[4])) : 0;
        const forge::io::MrdFile F = forge::io::read_mrd(in);
        const std::size_t nx = F.header.encodedMatrix[0], ny = F.header.encodedMatrix[1];
        const std::size_t nc = F.acquisitions.front().channels;
        std::vector<std::complex<float>> k(nx * ny * nc, {0, 0});
        for (const auto& a : F.acquisitions) {
            if (a.repetition != rep || a.samples != nx || a.e1 >= ny) continue;
            for (std::size_t c = 0; c < nc; ++c)
                for (std::size_t x = 0; x < nx; ++x) k[(c * ny + a.e1) * nx + x] = a.data[c * a.samples + x];
        }
        write_cfl(out, {nx, ny, 1, nc}, k);
        return 0;
    }
    if (mode == "nrmse") {
        std::vector<std::size_t> dims;
        const auto img = read_cfl(out, dims);
        const forge::io::Array ref = forge::io::read_hdf5_array(in, "/dataset/phantom");
        if (ref.size() != img.size()) {
            std::fprintf(stderr, "forge_mrd_cfl: image has %zu values, the phantom %zu\n", img.size(), ref.size());
            return 1;
        }
        arma::fvec a(img.size()), r(img.size());
        for (std::size_t i = 0; i < img.size(); ++i) {
            a[i] = std::abs(img[i]);
            r[i] = float(std::abs(ref.data[i]));
        }
        const forge::recon::Quality q = forge::recon::magnitude_quality({a}, {r});
        std::printf("NRMSE %.6f  PSNR %.2f dB\n", q.nrmse, q.psnr);
        return 0;
    }
    std::fprintf(stderr, "forge_mrd_cfl: unknown mode '%s'\n", mode.c_str());
    return 2;
}
