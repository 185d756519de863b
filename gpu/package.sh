#!/bin/sh
# Packages ofu's programs to run on a GPU machine that has the NVIDIA driver
# and the CUDA 13 toolkit (cuBLASLt, CUPTI) but none of this build machine's
# Debian -dev libraries.
#
#   gpu/package.sh [--strip] BUILD_DIR OUT_DIR [PROGRAM...]
#
# PROGRAM is ofu-gemm (the default), ofu or ofu-gpm-probe. Copies each
# program from BUILD_DIR, the sweep files, and every shared library ldd
# resolves for them except those the GPU machine has anyway: glibc's (libc,
# libm, libdl, librt, libpthread, the loader), the compiler runtime
# (libstdc++, libgcc_s: a newer system has newer, compatible ones) and the
# CUDA toolkit's and driver's (libcublasLt, cudart; CUPTI and NVML are
# opened with dlopen). --strip drops the copies' debug information.
#
# Each program must look in $ORIGIN (its RPATH or RUNPATH), so that the
# copies beside it are the ones loaded. With a RUNPATH (the linker's
# default) that covers only the program's own NEEDED libraries, not theirs;
# a library needed only by another library is then an error here: link with
# -Wl,--disable-new-dtags (an RPATH covers the whole tree), as
# scripts/gpu-validate/build.sh does. ofu-gemm links cudart statically.
set -eu
strip=no
if [ "${1:-}" = --strip ]; then
  strip=yes
  shift
fi
if [ $# -lt 2 ]; then
  echo "usage: $0 [--strip] BUILD_DIR OUT_DIR [ofu-gemm|ofu|ofu-gpm-probe ...]" >&2
  exit 1
fi
build=$1
out=$2
shift 2
[ $# -gt 0 ] || set -- ofu-gemm
here=$(dirname "$0")

binary_of() {
  case $1 in
    ofu) echo "$build/apps/ofu/ofu" ;;
    ofu-gemm) echo "$build/gpu/ofu-gemm" ;;
    ofu-gpm-probe) echo "$build/gpu/ofu-gpm-probe" ;;
    *) echo "$0: unknown program '$1' (ofu, ofu-gemm, ofu-gpm-probe)" >&2; return 1 ;;
  esac
}

# The dynamic section's search path: "RPATH <paths>" or "RUNPATH <paths>".
search_path() {
  readelf -d "$1" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\]/\1 \2/p'
}

mkdir -p "$out/sweeps"
cp "$here"/sweeps/*.toml "$out/sweeps/"
libs=$(mktemp)
trap 'rm -f "$libs"' EXIT
for program in "$@"; do
  binary=$(binary_of "$program")
  if [ ! -x "$binary" ]; then
    echo "$0: $binary not found: build it first (cmake --build $build --target $program)" >&2
    exit 1
  fi
  path=$(search_path "$binary")
  case " ${path#* }:" in
    *' $ORIGIN:'*|*':$ORIGIN:'*) ;;
    *)
      echo "$0: $binary does not look in \$ORIGIN (${path:-no RPATH or RUNPATH}): the copied libraries" \
        "would not be used; configure with -DCMAKE_BUILD_RPATH='\$ORIGIN' (see scripts/gpu-validate/build.sh)" >&2
      exit 1
      ;;
  esac
  cp "$binary" "$out/$program"
  if [ "$strip" = yes ]; then strip --strip-debug "$out/$program"; fi
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | while read -r name lib; do
    case $name in
      libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|libstdc++.so.*|libgcc_s.so.*) ;;
      libcublas*|libcudart*|libcupti*|libnvidia-ml*|libcuda.so.*) ;;
      *)
        case "${path%% *}" in
          RUNPATH)
            if ! printf '%s\n' "$needed" | grep -qxF "$name"; then
              echo "$0: $program needs $name only through another library, which its RUNPATH does not" \
                "cover: link it with -Wl,--disable-new-dtags (see the top of this script)" >&2
              exit 1
            fi
            ;;
        esac
        echo "$name $lib" >>"$libs"
        ;;
    esac
  done
  echo "packaged $program ($(search_path "$binary"))"
done
sort -u "$libs" | while read -r name lib; do
  cp -L "$lib" "$out/$name"
  echo "carried $name ($lib)"
done
echo "packaged in $out: e.g. $out/$1 --help"
