#!/bin/sh
# Packages ofu-gemm to run on a GPU machine that has the NVIDIA driver and
# the CUDA 13 toolkit (cuBLASLt, CUPTI) but none of this build machine's
# Debian -dev libraries.
#
#   gpu/package.sh BUILD_DIR OUT_DIR
#
# Copies BUILD_DIR/gpu/ofu-gemm, the sweep files, and every shared library
# ldd resolves for it except those the GPU machine has anyway: glibc's
# (libc, libm, libdl, librt, libpthread, the loader), the compiler runtime
# (libstdc++, libgcc_s: a newer system has newer, compatible ones) and the
# CUDA toolkit's (libcublasLt; CUPTI and NVML are opened with dlopen). The
# binary's RUNPATH is $ORIGIN first, so the copies beside it are used.
# cudart is linked statically.
set -eu
if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 1
fi
build=$1
out=$2
binary=$build/gpu/ofu-gemm
here=$(dirname "$0")
if [ ! -x "$binary" ]; then
  echo "$0: $binary not found: build it first (ninja -C $build ofu-gemm)" >&2
  exit 1
fi
mkdir -p "$out/sweeps"
cp "$binary" "$out/"
cp "$here"/sweeps/*.toml "$out/sweeps/"
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name path; do
  case $name in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*) ;;
    libcublas*|libcudart*|libcupti*|libnvidia-ml*|libcuda.so.*) ;;
    *)
      cp -L "$path" "$out/$name"
      echo "carried $name ($path)"
      ;;
  esac
done
echo "packaged in $out: run $out/ofu-gemm --sweep $out/sweeps/square.toml --out square.csv"
