#!/usr/bin/env python3
"""Checks forge's source distribution: every file git tracks (less pyproject.toml's sdist.exclude) is in it,
and nothing else but PKG-INFO is (no build folders, wheels, caches or untracked files).

  check-sdist.py SDIST.tar.gz     check that archive
  check-sdist.py --build          make one first with scikit-build-core's build_sdist (what `python -m build
                                  --sdist` calls) in a temporary folder; exits 77 (skipped) without scikit-build-core
                                  or outside the top of a git checkout"""

import fnmatch
import os
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SKIP = 77


def tracked():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True).stdout
    return {p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))}


def excluded_patterns():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        return []
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f).get("tool", {}).get("scikit-build", {}).get("sdist", {}).get("exclude", [])


def excluder(patterns):
    """pyproject's sdist.exclude as scikit-build-core reads it (gitignore patterns, through pathspec)."""
    try:
        import pathspec
    except ImportError:
        return lambda path: any(fnmatch.fnmatch(path, p.lstrip("/")) or fnmatch.fnmatch(path.split("/")[0],
                                                                                      p.lstrip("/"))
                                for p in patterns)
    spec = pathspec.PathSpec.from_lines("gitwildmatch", patterns)
    return spec.match_file


def members(sdist):
    with tarfile.open(sdist) as tar:
        names = [m.name for m in tar.getmembers() if m.isfile()]
    top = {n.split("/")[0] for n in names}
    if len(top) != 1:
        sys.exit(f"check-sdist: {sdist} has {len(top)} top folders, expected one")
    return {n.split("/", 1)[1] for n in names}


def build(out):
    try:
        from scikit_build_core.build import build_sdist
    except ImportError:
        print("check-sdist: scikit-build-core is not installed (pip install scikit-build-core): skipped")
        sys.exit(SKIP)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        name = build_sdist(out)
    finally:
        os.chdir(cwd)
    return os.path.join(out, name)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    # The source tree must be a checkout's top level: a copy inside another checkout (an exported snapshot in a
    # parent repository's ignored folder) has no tracked files of its own to compare with.
    top = subprocess.run(["git", "-C", ROOT, "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0 or os.path.realpath(top.stdout.strip()) != os.path.realpath(ROOT):
        print(f"check-sdist: {ROOT} is not the top of a git checkout: skipped")
        sys.exit(SKIP)
    if sys.argv[1] != "--build":
        check(sys.argv[1])
        return
    with tempfile.TemporaryDirectory(prefix="forge-sdist-") as out:
        check(build(out))


def check(sdist):
    have = members(sdist)
    is_excluded = excluder(excluded_patterns())
    want = {p for p in tracked() if not is_excluded(p)}
    missing = sorted(want - have)
    extra = sorted(have - want - {"PKG-INFO"})
    needed = ["pyproject.toml", "CMakeLists.txt", "python/CMakeLists.txt", "python/forge/__init__.py",
              "python/src/module.cpp", "forge/Core/forgeCol.h", "cmake/ForgeCuda.cmake", "docs/python.md", "LICENSE"]
    absent = [p for p in needed if p not in have]
    size = os.path.getsize(sdist)
    print(f"check-sdist: {os.path.basename(sdist)}: {len(have)} files, {size / 2**20:.1f} MiB; "
          f"{len(want)} tracked files expected")
    for label, items in (("missing (tracked, needed to build)", missing + absent), ("not tracked", extra)):
        if items:
            print(f"check-sdist: {len(items)} {label}:\n  " + "\n  ".join(items[:40]))
    if missing or absent or extra:
        sys.exit(1)
    print("check-sdist: OK")


if __name__ == "__main__":
    main()
