// forge::io::OutputSet and the writers: a process ended by SIGTERM, SIGINT or SIGHUP while its outputs are
// staged leaves none of them behind (and is still ended by that signal); a writer handed a staged name
// writes it in place, so no second temporary appears.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "TestHelpers.h"
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
