# Sourced by the scripts in scripts/gpu/ on the GPU machine (no package registry): unpacks the Debian packages
# that scripts/gpu/fetch-deps.sh carried in .gpu-deps/ into DEPS (default /opt/deps, never into /) and points
# the library path at them. Run from the project root.
DEPS=${DEPS:-/opt/deps}
L=$DEPS/usr/lib/x86_64-linux-gnu

forge_gpu_unpack_deps() {
  mkdir -p "$DEPS"
  for f in .gpu-deps/*.deb; do dpkg -x "$f" "$DEPS"; done
  # dpkg -x makes no alternatives links: point the generic BLAS/LAPACK names at OpenBLAS.
  for lib in libblas.so.3 liblapack.so.3; do
    [ -e "$L/$lib" ] || ln -sf "$L/openblas-pthread/$lib" "$L/$lib"
  done
  export LD_LIBRARY_PATH=$DEPS/usr/lib:$L:$L/openblas-pthread:$L/blas:$L/lapack:${LD_LIBRARY_PATH:-}
}
