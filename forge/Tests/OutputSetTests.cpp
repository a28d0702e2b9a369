// forge::io::OutputSet and the writers: a process ended by SIGTERM, SIGINT or SIGHUP while its outputs are
// staged leaves none of them behind (and is still ended by that signal); a writer handed a staged name
// writes it in place, so no second temporary appears.
#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "TestHelpers.h"
#include "forge/Core/Exceptions.h"
#include "forge/IO/Nifti.h"
#include "forge/IO/OutputSet.h"
#include "forge/IO/Png.h"

namespace {

std::string fresh_folder(const std::string& name) {
    const std::string dir = "forge_outputset_test_" + std::to_string(::getpid()) + "_" + name;
    std::system(("rm -rf '" + dir + "'").c_str());
    REQUIRE(::mkdir(dir.c_str(), 0777) == 0);
    return dir;
}

std::vector<std::string> listing(const std::string& dir) {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (dirent* e = ::readdir(d))
            if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
        ::closedir(d);
    }
    return names;
}

// Stages a NIfTI and a PNG in 'dir', writes both, then sends itself 'sig' (in a child process) and reports
// how the child ended and what it left.
int stage_write_and_signal(const std::string& dir, int sig) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // the action a plain program starts with (the test runner may have its own handlers)
        std::signal(sig, SIG_DFL);
        try {
            forge::io::OutputSet outs;
            const std::vector<float> v(16, 1.0f);
            forge::io::write_nifti(outs.stage(dir + "/image.nii"), v, {{4, 4, 1, 1}},
                                   forge::io::centred_affine({{4, 4, 1}}, {{1, 1, 1}}));
            forge::io::write_png_gray8(outs.stage(dir + "/image.png"), 4, 4, std::vector<uint8_t>(16, 9));
            if (listing(dir).size() != 2) ::_exit(3);  // one temporary per output
            ::raise(sig);
        } catch (...) {
            ::_exit(4);
        }
        ::_exit(5);  // not ended by the signal
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    return status;
}

}  // namespace

TEST_CASE("OutputSet: a signal while the outputs are staged removes them and still ends the process", "[io]") {
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
        CAPTURE(sig);
        const std::string dir = fresh_folder("signal" + std::to_string(sig));
        const int status = stage_write_and_signal(dir, sig);
        CHECK_FALSE(WIFEXITED(status));  // exit codes 3-5 above: staged twice, a throw, or no signal
        REQUIRE(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == sig);
        CHECK(listing(dir).empty());
        ::rmdir(dir.c_str());
    }
}

TEST_CASE("OutputSet: writers write a staged name in place; commit renames each output once", "[io]") {
    const std::string dir = fresh_folder("inplace");
    {
        forge::io::OutputSet outs;
        const std::string tmp = outs.stage(dir + "/a.png");
        CHECK(tmp == forge::io::temporary_name(dir + "/a.png"));
        forge::io::write_png_gray8(tmp, 3, 2, std::vector<uint8_t>(6, 200));
        CHECK(listing(dir) == std::vector<std::string>{"a.png.part" + std::to_string(::getpid())});
        outs.commit();
        CHECK(listing(dir) == std::vector<std::string>{"a.png"});
        CHECK_FALSE(forge::io::is_registered_temporary(tmp));
    }
    // a writer on its own stages (and registers) its own temporary, and nothing stays registered after it
    const std::vector<float> v(16, 2.0f);
    forge::io::write_nifti(dir + "/b.nii", v, {{4, 4, 1, 1}}, forge::io::centred_affine({{4, 4, 1}}, {{1, 1, 1}}));
    CHECK_FALSE(forge::io::is_registered_temporary(forge::io::temporary_name(dir + "/b.nii")));
    CHECK(listing(dir).size() == 2);
    std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("same_file: the same file by device and inode, or by normalized path when not there yet", "[io]") {
    const std::string dir = fresh_folder("same");
    const std::string a = dir + "/a.h5";
    { std::ofstream(a) << "raw data"; }
    REQUIRE(::mkdir((dir + "/sub").c_str(), 0777) == 0);
    REQUIRE(::link(a.c_str(), (dir + "/hard.h5").c_str()) == 0);
    REQUIRE(::symlink("a.h5", (dir + "/soft.h5").c_str()) == 0);
    REQUIRE(::symlink("sub", (dir + "/subdir").c_str()) == 0);
    using forge::io::same_file;
    CHECK(same_file(a, a));
    CHECK(same_file(a, "./" + dir + "/sub/../a.h5"));
    CHECK(same_file(a, dir + "/hard.h5"));
    CHECK(same_file(a, dir + "/soft.h5"));
    CHECK(same_file(dir + "/new.nii", dir + "/sub/../new.nii"));      // neither there yet
    CHECK(same_file(dir + "/sub/new.nii", dir + "/subdir/new.nii"));  // through a linked folder
    CHECK_FALSE(same_file(a, dir + "/new.nii"));
    CHECK_FALSE(same_file(dir + "/sub/a.h5", a));
    CHECK_FALSE(same_file(a, ""));
    std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("OutputSet::check_named: an output naming an input, another output or a missing folder is refused", "[io]") {
    const std::string dir = fresh_folder("named");
    const std::string in = dir + "/in.h5";
    { std::ofstream(in) << "raw data"; }
    using Named = forge::io::OutputSet::Named;
    auto refusal = [](const std::vector<Named>& inputs, const std::vector<Named>& outputs) -> std::string {
        try {
            forge::io::OutputSet::check_named(inputs, outputs);
        } catch (const forge::invalid_argument& e) {
            return e.what();
        }
        return "";
    };
    const std::vector<Named> inputs{{"the input", in}, {"--fieldmap", dir + "/b0.nii"}};
    CHECK(refusal(inputs, {{"-o", dir + "/out.nii"}, {"--mrd-out", dir + "/out.h5"}}).empty());
    std::string why = refusal(inputs, {{"-o", dir + "/out.nii"}, {"--mrd-out", dir + "/./in.h5"}});
    CHECK(why.find("--mrd-out '" + dir + "/./in.h5' is the same file as the input '" + in + "'") != std::string::npos);
    why = refusal(inputs, {{"-o", dir + "/b0.nii"}});  // an input not there (yet): by its path
    CHECK(why.find("-o '" + dir + "/b0.nii' is the same file as --fieldmap") != std::string::npos);
    why = refusal({}, {{"-o", dir + "/x.nii"}, {"--report", dir + "/sub/../x.nii"}});
    CHECK(why.find("--report '" + dir + "/sub/../x.nii' and -o '" + dir + "/x.nii' name the same file") !=
          std::string::npos);
    why = refusal({}, {{"--mrd-out", dir + "/missing/x.h5"}});
    CHECK(why == "--mrd-out '" + dir + "/missing/x.h5': folder '" + dir + "/missing' does not exist");
    std::system(("rm -rf '" + dir + "'").c_str());
}

TEST_CASE("OutputSet: a write past the file-size limit fails naming the file, and leaves nothing", "[io]") {
    const std::string dir = fresh_folder("fsize");
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        std::signal(SIGXFSZ, SIG_DFL);  // as a program starts: the default action would kill it without a word
        struct rlimit rl;
        rl.rlim_cur = rl.rlim_max = 1024;
        if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(6);
        int code = 5;
        try {
            forge::io::OutputSet outs;
            forge::io::write_png_gray8(outs.stage(dir + "/small.png"), 4, 4, std::vector<uint8_t>(16, 9));
            const std::vector<float> v(64 * 64, 1.0f);  // 16 KiB
            forge::io::write_nifti(outs.stage(dir + "/large.nii"), v, {{64, 64, 1, 1}},
                                   forge::io::centred_affine({{64, 64, 1}}, {{1, 1, 1}}));
            outs.commit();
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            code = what.find("'" + dir + "/large.nii'") != std::string::npos &&
                           what.find("File too large (over the file-size limit, ulimit -f)") != std::string::npos
                       ? 0
                       : 4;
            if (code) std::fprintf(stderr, "%s\n", what.c_str());
        }
        ::_exit(code);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK_FALSE(WIFSIGNALED(status));  // not killed by SIGXFSZ
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);  // 4: the message, 5: no failure, 6: no limit
    CHECK(listing(dir).empty());
    ::rmdir(dir.c_str());
}
