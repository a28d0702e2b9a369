# Sourced by the scripts in scripts/gpu/ on the GPU machine (no package registry): unpacks the Debian packages
# that scripts/gpu/fetch-deps.sh carried in .gpu-deps/ into DEPS (default /opt/deps, never into /) and points
# the library path at them. Run from the project root.
DEPS=${DEPS:-/opt/deps}
# the multiarch library folder (a name of its own: the scripts that source this keep their variables)
FORGE_GPU_LIBDIR=$DEPS/usr/lib/x86_64-linux-gnu

forge_gpu_unpack_deps() {
  local d=$FORGE_GPU_LIBDIR
  mkdir -p "$DEPS"
  for f in .gpu-deps/*.deb; do dpkg -x "$f" "$DEPS"; done
  # dpkg -x makes no alternatives links: point the generic BLAS/LAPACK names at OpenBLAS.
  for lib in libblas.so.3 liblapack.so.3; do
    [ -e "$d/$lib" ] || ln -sf "$d/openblas-pthread/$lib" "$d/$lib"
  done
  export LD_LIBRARY_PATH=$DEPS/usr/lib:$d:$d/openblas-pthread:$d/blas:$d/lapack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
}

# forge-recon's libraries (.gpu-deps/apps, FORGE_GPU_BUILD_APPS=ON) into DEPS; of .gpu-deps/apps/runtime (what
# HDF5 links: libcurl and its own dependencies) only the libraries the machine lacks are linked into
# DEPS/fallback-lib, so that the machine's own TLS and Kerberos libraries stay the ones every program loads.
forge_gpu_unpack_app_deps() {
  ls .gpu-deps/apps/*.deb >/dev/null 2>&1 || { echo "no .gpu-deps/apps: run scripts/gpu/fetch-deps.sh"; return 1; }
  for f in .gpu-deps/apps/*.deb; do dpkg -x "$f" "$DEPS"; done
  mkdir -p "$DEPS/runtime-root" "$DEPS/fallback-lib"
  for f in .gpu-deps/apps/runtime/*.deb; do dpkg -x "$f" "$DEPS/runtime-root"; done
  local so name
  for so in "$DEPS"/runtime-root/usr/lib/x86_64-linux-gnu/*.so.*; do
    name=$(basename "$so")
    case "$name" in *.so.[0-9]*) ;; *) continue ;; esac
    ldconfig -p | grep -qE "^[[:space:]]+${name//./\\.} " || ln -sf "$so" "$DEPS/fallback-lib/$name"
  done
  # The packages' CMake files name their dependencies by absolute /usr paths: point them into DEPS, and give
  # every library they name that DEPS lacks (development links such as libcurl.so, glibc's archives) a link to
  # the machine's copy, else to the carried runtime one.
  local cmakefiles
  cmakefiles=$(grep -rl '/usr/' "$FORGE_GPU_LIBDIR/cmake/ISMRMRD" "$FORGE_GPU_LIBDIR/cmake/pugixml" 2>/dev/null)
  [ -n "$cmakefiles" ] && sed -i -E "s#([\" ;])/usr/#\1$DEPS/usr/#g" $cmakefiles
  local f base target
  for f in $(grep -ohE "$DEPS/usr/lib/x86_64-linux-gnu/[^;\" ]+\.(so|a)" $cmakefiles | sort -u); do
    [ -e "$f" ] && continue
    base=$(basename "$f")
    target=""
    for d in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu; do [ -e "$d/$base" ] && { target=$d/$base; break; }; done
    [ -z "$target" ] && target=$(ldconfig -p | awk -v n="$base." 'index($1, n) == 1 {print $NF; exit}')
    [ -z "$target" ] && target=$(ls "$DEPS"/runtime-root/usr/lib/x86_64-linux-gnu/"$base".* 2>/dev/null | head -1)
    if [ -n "$target" ]; then ln -sf "$target" "$f"; else echo "forge_gpu_unpack_app_deps: no $base here"; fi
  done
  export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$FORGE_GPU_LIBDIR/hdf5/serial:$DEPS/fallback-lib
}

# A g++ that finds no shared libstdc++ links the static one into every shared library it makes (the GPU image's
# /opt/gcc does): libForgeCommon and the Python module then export a second C++ runtime, and a Python process that
# loaded the shared one first (NumPy does) crashes in it. Exports the system g++ (CXX, CC, CUDAHOSTCXX) then.
forge_gpu_pick_cxx() {
  local cxx=${CXX:-g++} probe
  probe=$(mktemp -d)
  printf '#include <sstream>\nstd::string f(double x) { std::ostringstream s; s << x; return s.str(); }\n' > "$probe/t.cpp"
  # (grep -c reads all of nm's output: grep -q would end the pipe early and pipefail would fail it)
  if $cxx -shared -fPIC "$probe/t.cpp" -o "$probe/t.so" 2>/dev/null && [ -x /usr/bin/g++ ] &&
     [ "$(nm -D --defined-only "$probe/t.so" | grep -c _ZNSo9_M_insertIdEERSoT_)" != 0 ]; then
    echo "$cxx links libstdc++ statically into shared libraries: building with /usr/bin/g++"
    export CXX=/usr/bin/g++ CC=/usr/bin/gcc CUDAHOSTCXX=/usr/bin/g++
  fi
  rm -rf "$probe"
}
