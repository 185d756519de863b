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
  libre2-dev                       # training logs (ofu reconcile/correct --training-log)
  prometheus                       # promtool: format cross-checks and benchmarks
  victoria-metrics                 # the second fleet engine (and vmalert) in the fleet tests
  python3                          # scripts/make_synthetic_recording.py
  chromium                         # renders `ofu report --html` in its test (headless)
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc   # attribution: kubelet pod-resources client
  help2man                         # man pages generated from `ofu --help` at build time
  dpkg-dev fakeroot lintian        # make deb: dpkg-shlibdeps, dpkg-deb, and its check
)
# `scripts/install-deps.sh image` (make image) adds the container tools; the
# image is not part of `make test`, so they are not installed otherwise.
if [ "${1:-}" = image ]; then
  packages+=(mmdebstrap podman uidmap curl)
fi
# node and npm: the Kubernetes manifests' schema check (tests/deploy/k8s).
# Debian's nodejs and npm, unless a node with its npm is already installed.
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

sudo_cmd=()
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo_cmd=(sudo); else
    echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1
  fi
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Kubernetes API schemas (npm: kubernetes-models and the Prometheus
# Operator's) into tests/deploy/k8s/node_modules, at the versions its
# package-lock.json pins; again only when that lock file changed.
k8s_dir="$(dirname "$0")/../tests/deploy/k8s"
if ! cmp -s "$k8s_dir/package-lock.json" "$k8s_dir/node_modules/.ofu-installed-lock"; then
  echo "install-deps: npm ci in tests/deploy/k8s"
  npm ci --prefix "$k8s_dir" --no-audit --no-fund --loglevel=error
  cp "$k8s_dir/package-lock.json" "$k8s_dir/node_modules/.ofu-installed-lock"
fi

# The prometheus package also installs a server that systemd starts on :9090.
# We only want its binaries (promtool, and a server that tests start on their
# own loopback port), so stop the packaged service where systemd runs.
# victoria-metrics likewise on :8428.
for service in prometheus victoria-metrics; do
  if [ -d /run/systemd/system ] && systemctl is-enabled --quiet "$service" 2>/dev/null; then
    "${sudo_cmd[@]}" systemctl disable --now "$service" >/dev/null 2>&1 || true
  fi
done
