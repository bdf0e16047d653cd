#!/usr/bin/env bash
# Packs what a device run needs that the working tree does not carry: the meshplan executable,
# its CUDA backend module (libmeshplan_cuda.so, loaded from beside the executable) and the
# shared libraries they need that are not CUDA's or the C library's (yaml-cpp, fmt, ... from
# this machine's Debian packages; the GPU machine's image has CUDA, cuBLAS and NCCL but not
# these; Open MPI's libraries when the module was built with MPI: a one-process run never
# calls MPI_Init, so their plugins are not needed). Writes .devcarry/ (ignored by git: add `/.devcarry/` to .git/info/exclude); name it
# in the run's carry and start the command with
#   export LD_LIBRARY_PATH=$PWD/.devcarry/lib MESHPLAN=.devcarry/meshplan
set -euo pipefail
BUILD=${BUILD:-build}
dest=.devcarry
rm -rf "$dest" && mkdir -p "$dest/lib"
cp "$BUILD/meshplan" "$dest/"
module=$(find "$BUILD" -name libmeshplan_cuda.so | head -1)
[ -n "$module" ] || { echo "no libmeshplan_cuda.so under $BUILD: configure with CUDA" >&2; exit 2; }
cp "$module" "$dest/"
ldd "$dest/meshplan" "$module" | awk '$3 ~ /^\// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libgcc_s|libstdc\+\+)\.so|libcuda|libcublas|libcudart|libnccl' |
  while read -r lib; do cp -L "$lib" "$dest/lib/"; done
du -sh "$dest"; ls "$dest/lib"
