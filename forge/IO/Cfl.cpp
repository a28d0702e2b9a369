// BART .hdr/.cfl arrays: the header parsed as BART's read_cfl_header() does (lines starting with '#' name a
// section; the sizes follow "# Dimensions"), with every size and the file length checked before anything the
// header claims is allocated.
#include "forge/IO/Cfl.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include "forge/Core/Exceptions.h"

namespace forge {
namespace io {

namespace {

bool ends_with(const std::string& s, const std::string& e) {
    return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// A BART header is a few hundred bytes (sizes, the command, the files, the creator): anything far larger is
// not one, and is refused before it is read whole.
constexpr std::size_t kMaxHeaderBytes = 1 << 20;
constexpr std::size_t kMaxDimension = std::size_t(1) << 31;

std::string read_header_text(const std::string& hdr) {
    struct stat st;
    if (::stat(hdr.c_str(), &st) != 0) throw input_error("BART header '" + hdr + "' does not exist");
    if (!S_ISREG(st.st_mode)) throw input_error("BART header '" + hdr + "' is not a regular file");
    if (std::size_t(st.st_size) > kMaxHeaderBytes)
        throw input_error("'" + hdr + "' is " + std::to_string(st.st_size) +
                          " bytes, not a BART header (a few hundred bytes of text)");
    std::ifstream f(hdr, std::ios::binary);
    if (!f) throw input_error("cannot open BART header '" + hdr + "'");
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

// The sizes of "# Dimensions": every whitespace-separated word up to the next line starting with '#'.
CflDims parse_header(const std::string& text, const std::string& hdr) {
    CflDims dims;
    dims.fill(1);
    std::istringstream lines(text);
    std::string line;
    bool found = false, inDims = false;
    std::size_t n = 0;
    while (std::getline(lines, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty() && line[0] == '#') {
            std::istringstream w(line.substr(1));
            std::string keyword;
            w >> keyword;
            inDims = keyword == "Dimensions";
            if (inDims && found) throw input_error("'" + hdr + "' has two '# Dimensions' sections");
            found = found || inDims;
            continue;
        }
        if (!inDims) continue;
        std::istringstream words(line);
        for (std::string word; words >> word;) {
            const bool digits = word.find_first_not_of("0123456789") == std::string::npos;
            std::size_t v = 0;
            if (digits && word.size() <= 12) v = std::stoull(word);
            if (!digits || word.size() > 12 || v < 1 || v > kMaxDimension)
                throw input_error("'" + hdr + "': dimension " + std::to_string(n) + " is '" + word +
                                  "' (expected a whole number from 1 to 2^31)");
            if (n < kCflDims)
                dims[n] = v;
            else if (v != 1)
                throw input_error("'" + hdr + "': dimension " + std::to_string(n) + " is " + word + " (BART has " +
                                  std::to_string(kCflDims) + " dimensions; any further size must be 1)");
            ++n;
        }
    }
    if (!found) throw input_error("'" + hdr + "' is not a BART header (it has no '# Dimensions' line)");
    if (n == 0) throw input_error("'" + hdr + "': its '# Dimensions' section lists no sizes");
    return dims;
}

// Elements of 'dims', or 0 when 8 bytes each would overflow 64 bits.
uint64_t element_count(const CflDims& dims) {
    uint64_t n = 1;
    for (std::size_t d : dims)
        if (__builtin_mul_overflow(n, uint64_t(d), &n)) return 0;
    uint64_t bytes;
    if (__builtin_mul_overflow(n, uint64_t(8), &bytes)) return 0;
    return n;
}

}  // namespace

std::string cfl_base(const std::string& name) {
    if (ends_with(name, ".cfl") || ends_with(name, ".hdr")) return name.substr(0, name.size() - 4);
    return name;
}

std::string cfl_dims_string(const CflDims& dims) {
    std::size_t last = kCflDims;
    while (last > 1 && dims[last - 1] == 1) --last;
    std::string s;
    for (std::size_t i = 0; i < last; ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
    return s;
}

CflDims read_cfl_dims(const std::string& name) {
    const std::string base = cfl_base(name), hdr = base + ".hdr", cfl = base + ".cfl";
    const CflDims dims = parse_header(read_header_text(hdr), hdr);
    const uint64_t n = element_count(dims);
    if (n == 0)
        throw input_error("'" + hdr + "': the sizes " + cfl_dims_string(dims) +
                          " hold more elements than any file can (the product overflows 64 bits)");
    struct stat st;
    if (::stat(cfl.c_str(), &st) != 0)
        throw input_error("BART data file '" + cfl + "' does not exist (its header '" + hdr + "' does)");
    if (!S_ISREG(st.st_mode)) throw input_error("BART data file '" + cfl + "' is not a regular file");
    const uint64_t need = n * 8;
    if (uint64_t(st.st_size) != need)
        throw input_error("'" + cfl + "' holds " + std::to_string(st.st_size) + " bytes but its header's sizes " +
                          cfl_dims_string(dims) + " need " + std::to_string(need) + " (8 per complex value)" +
                          (uint64_t(st.st_size) < need ? ": the file is truncated" : ""));
    return dims;
}

CflArray read_cfl(const std::string& name, const DimsCheck& check) {
    const std::string cfl = cfl_base(name) + ".cfl";
    CflArray a;
    a.dims = read_cfl_dims(name);
    if (check) check(std::vector<std::size_t>(a.dims.begin(), a.dims.end()));
    std::size_t n = 1;
    for (std::size_t d : a.dims) n *= d;
    a.data.resize(n);
    std::ifstream f(cfl, std::ios::binary);
    if (!f) throw input_error("cannot open BART data file '" + cfl + "'");
    static_assert(sizeof(std::complex<float>) == 8, "complex float is two floats");
    f.read(reinterpret_cast<char*>(a.data.data()), std::streamsize(n * 8));
    if (!f || std::size_t(f.gcount()) != n * 8)
        throw input_error("'" + cfl + "' could not be read whole (it changed while being read?)");
    return a;
}

void write_cfl(const std::string& name, const std::vector<std::size_t>& dims,
               const std::vector<std::complex<float>>& data) {
    if (dims.size() > kCflDims)
        throw forge::invalid_argument("write_cfl: " + std::to_string(dims.size()) + " dimensions (BART has at most " +
                                      std::to_string(kCflDims) + ")");
    std::size_t n = 1;
    for (std::size_t d : dims) n *= d;
    if (n != data.size())
        throw forge::invalid_argument("write_cfl: data has " + std::to_string(data.size()) +
                                      " values but the dims hold " + std::to_string(n));
    const std::string base = cfl_base(name);
    AtomicFile values(base + ".cfl");
    values.stream().write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size() * 8));
    AtomicFile header(base + ".hdr");
    header.stream() << "# Dimensions\n";
    for (std::size_t i = 0; i < kCflDims; ++i) header.stream() << (i < dims.size() ? dims[i] : 1) << " ";
    header.stream() << "\n# Creator\nforge\n";
    values.commit();  // the values first: a reader opening the new header finds the new values
    header.commit();
}

}  // namespace io
}  // namespace forge
