#!/usr/bin/env bash
# Installs the Debian packages that ofu's build, tests, benchmarks and fuzzers need.
# Idempotent: packages already present are left alone and apt is not touched at all.
# Run as root on Debian 12 (bookworm); as another user it uses sudo when available.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  clang libclang-rt-dev            # libFuzzer and the sanitizer runtimes
  clang-format clang-tidy          # scripts/format.sh (checked in CTest), scripts/tidy.sh
  libfmt-dev nlohmann-json3-dev libcli11-dev
  libcpp-httplib-dev               # HTTP: dcgm-exporter scrape source
  libyaml-cpp-dev                  # the agent's web config (TLS, basic auth)
  libncurses-dev                   # ofu top
  tmux                             # drives ofu top in its interactive test
  libgtest-dev libgmock-dev libbenchmark-dev
  libsimdjson-dev zlib1g-dev libsqlite3-dev   # kernel traces (Kineto JSON, gzip, Nsight SQLite)
  libtomlplusplus-dev libsystemd-dev          # ofu agent: config file, systemd notify
  prometheus                       # promtool: format cross-checks and benchmarks
  python3                          # scripts/make_synthetic_recording.py
  chromium                         # renders `ofu report --html` in its test (headless)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc   # attribution: kubelet pod-resources client
  help2man                         # man pages generated from `ofu --help` at build time
  dpkg-dev fakeroot lintian        # make deb: dpkg-shlibdeps, dpkg-deb, and its check
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"

# The prometheus package also installs a server that systemd starts on :9090.
# We only want its binaries (promtool, and a server that tests start on their
# own loopback port), so stop the packaged service where systemd runs.
if [ -d /run/systemd/system ] && systemctl is-enabled --quiet prometheus 2>/dev/null; then
  "${sudo_cmd[@]}" systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
