#!/usr/bin/env bash
# Builds ofu, ofu-gemm, ofu-gpm-probe and libofu-clock-probe.so (the SMs'
# own clock for the PyTorch workloads) into one self-contained folder for
# the GPU machine (docs/gpu-validation.md). Runs on the build machine
# (Debian 12 with nvcc and the project's -dev packages), not on the GPU one.
#
#   scripts/gpu-validate/build.sh [PKG_DIR]        (default: .gpuval)
#
# It configures a build folder of its own (build-gpuval, or $GPUVAL_BUILD)
# whose programs look in $ORIGIN first through an RPATH (not a RUNPATH, so
# that it covers the libraries' own dependencies too), builds the three
# programs, and packages them with gpu/package.sh --strip: the programs, the
# sweep files and the .so files they need, leaving out glibc, libstdc++,
# libgcc_s and CUDA's and the driver's libraries, which the GPU machine has.
# Then it checks that the folder runs here: `ofu --version`; `ofu sources`
# exits 0 (a GPU) or 5 (none, as here) as documented; every library loaded
# comes from the folder or is one the GPU machine has; ofu-gemm lists the
# Stage B sweeps. PKG_DIR is git-ignored (.gitignore): name it in the
# device tool's `carry`.
#
# Environment: GPUVAL_BUILD (build folder), JOBS (parallel jobs, default 2).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
pkg=${1:-$repo/.gpuval}
build=${GPUVAL_BUILD:-$repo/build-gpuval}
jobs=${JOBS:-2}
started=$(date +%s)

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
echo "== configure $build"
cmake -S "$repo" -B "$build" -G Ninja -DOFU_WERROR=ON -DOFU_TESTS=OFF -DOFU_BENCH=OFF \
  -DCMAKE_BUILD_RPATH='$ORIGIN' -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags "${launcher[@]}" >/dev/null
if [ ! -f "$build/build.ninja" ] || ! grep -q 'ofu-gemm' "$build/build.ninja"; then
  echo "build.sh: ofu-gemm is not configured in $build: nvcc (CUDA 13) must be on PATH or in /usr/local/cuda/bin" >&2
  exit 1
fi
echo "== build ofu ofu-gemm ofu-gpm-probe ofu-clock-probe ($jobs jobs)"
cmake --build "$build" -j "$jobs" --target ofu ofu-gemm ofu-gpm-probe ofu-clock-probe
built=$(date +%s)

echo "== package into $pkg"
rm -rf "$pkg"
"$repo/gpu/package.sh" --strip "$build" "$pkg" ofu ofu-gemm ofu-gpm-probe
# The probe library needs nothing but glibc and the compiler runtime (cudart
# and fmt are linked in): copied as it is, stripped like the programs.
cp "$build/gpu/libofu-clock-probe.so" "$pkg/"
strip --strip-debug "$pkg/libofu-clock-probe.so"

size_kib=$(du -sk "$pkg" | cut -f1)
{
  echo "ofu GPU validation package (scripts/gpu-validate/build.sh)"
  echo "commit: $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n), $(. /etc/os-release && echo "$PRETTY_NAME"), $(ldd --version | head -n 1)"
  echo "compilers: $(c++ --version | head -n 1); $(nvcc --version 2>/dev/null | tail -n 1 || /usr/local/cuda/bin/nvcc --version | tail -n 1)"
  echo "size: $((size_kib / 1024)) MiB ($size_kib KiB)"
  echo "files:"
  (cd "$pkg" && find . -type f | sort | xargs ls -l | awk '{ printf "  %10d  %s\n", $5, $9 }')
} >"$pkg/MANIFEST.txt"

echo "== check that the folder runs here"
fail=0
check() {  # DESCRIPTION EXPECTED_STATUSES CMD...
  local what=$1 expected=$2 rc=0
  shift 2
  "$@" >"$pkg/.check.out" 2>&1 || rc=$?
  case ",$expected," in
    *",$rc,"*) echo "ok   $what (exit $rc): $(head -n 1 "$pkg/.check.out")" ;;
    *) echo "FAIL $what (exit $rc, expected $expected):"; sed 's/^/     /' "$pkg/.check.out"; fail=1 ;;
  esac
}
check "ofu --version" 0 "$pkg/ofu" --version
check "ofu sources (0 with a GPU, 5 without)" 0,5 "$pkg/ofu" sources
check "ofu-gemm --version" 0 "$pkg/ofu-gemm" --version
check "ofu-gpm-probe --version" 0 "$pkg/ofu-gpm-probe" --version
check "ofu-gpm-probe info (0 with a GPU, 5 without)" 0,5 "$pkg/ofu-gpm-probe" info
check "libofu-clock-probe.so loads (interface version 1)" 0 \
  python3 -c 'import ctypes, sys; sys.exit(ctypes.CDLL(sys.argv[1]).ofu_clock_probe_version() != 1)' \
  "$pkg/libofu-clock-probe.so"
for sweep in "$here"/sweeps/*.toml; do
  check "ofu-gemm --list $(basename "$sweep")" 0 sh -c '"$1" --list --sweep "$2" 2>&1 >/dev/null' _ "$pkg/ofu-gemm" "$sweep"
done
# Every library a program loads must come from the folder, or be one the
# GPU machine has (glibc, the compiler runtime, CUDA's).
no_stray() {  # WHAT STRAY_LIBRARIES OK_TEXT
  if [ -n "$2" ]; then
    echo "FAIL $1 loads libraries from outside the folder:"
    echo "$2" | sed 's/^/     /'
    fail=1
  else
    echo "ok   $1 $3"
  fi
}
stray=$(ldd "$pkg/libofu-clock-probe.so" | awk '{ print $1 }' |
  grep -Ev '^(linux-vdso|/lib64/ld-linux|ld-linux|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s)[.-]' || true)
no_stray libofu-clock-probe.so "$stray" "needs only glibc and the compiler runtime"
for program in ofu ofu-gemm ofu-gpm-probe; do
  stray=$(LD_DEBUG=libs "$pkg/$program" --version 2>&1 >/dev/null |
    sed -n 's/.*calling init: //p' | grep -v "^$pkg/" |
    grep -Ev '/(ld-linux[^/]*|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libcublas[^/]*|libcudart[^/]*)\.so[^/]*$' || true)
  no_stray "$program" "$stray" "loads only the folder's libraries and the system's glibc/libstdc++/CUDA"
done
rm -f "$pkg/.check.out"

finished=$(date +%s)
echo "== $pkg: $((size_kib / 1024)) MiB ($size_kib KiB); build $((built - started)) s, package and checks $((finished - built)) s"
echo "   carry it to the GPU machine with the device tool: carry: [\"$(realpath --relative-to="$repo" "$pkg")\"]"
exit $fail
