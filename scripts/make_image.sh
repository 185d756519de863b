#!/usr/bin/env bash
# `make image`: the ofu container image, built with Debian's own tools and no
# registry: mmdebstrap makes a Debian 12 root file system holding the ofu
# package (make deb) and the libraries it depends on, and podman imports it as
# the image ofu:<version> (docs/deploy.md, "Container image").
#
#   scripts/make_image.sh BUILD_DIR            # → image ofu:<version>, BUILD_DIR/ofu-image.tar
#   scripts/image_smoke_test.sh ofu:<version>  # runs it on the bundled recording
#
# Needs root (or podman's rootless setup), mmdebstrap and podman (Debian
# packages; scripts/install-deps.sh does not install them: the image is not
# part of `make test`), and apt sources that reach a Debian mirror.
set -euo pipefail

build=${1:-build}
deb=$(ls "$build"/ofu_*_amd64.deb 2>/dev/null | sort -V | tail -n 1)
if [ -z "$deb" ]; then
  echo "make_image: no $build/ofu_*_amd64.deb; run make deb first" >&2
  exit 1
fi
version=$(dpkg-deb --field "$deb" Version)
for tool in mmdebstrap podman; do
  if ! command -v "$tool" >/dev/null; then
    echo "make_image: $tool is not installed (apt-get install mmdebstrap podman)" >&2
    exit 1
  fi
done

rootfs="$build/ofu-rootfs.tar"
# Debian 12, the essential set plus the package and its Depends (apt resolves
# them from the .deb). No documentation or man pages in the image, no apt
# lists; the agent's state directory as the postinst made it.
# The hook mounts the .deb's directory where apt, running in the chroot, finds it.
mmdebstrap --variant=essential --mode=auto \
  --hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
  --include="$(realpath "$deb")" \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm "$rootfs"

# The agent in a container listens on every address (the pod's or the port
# podman publishes); everything else as in /etc/ofu/agent.toml. It runs as
# root inside the container so that it can reach the kubelet's socket; the
# Kubernetes manifests drop every capability (deploy/kubernetes/).
podman import \
  --change 'ENTRYPOINT ["/usr/bin/ofu"]' \
  --change 'CMD ["agent", "--config", "/etc/ofu/agent.toml", "--listen", "0.0.0.0:9477"]' \
  --change 'EXPOSE 9477/tcp' \
  --change "LABEL org.opencontainers.image.title=ofu org.opencontainers.image.version=$version" \
  --change 'LABEL org.opencontainers.image.description="ofu agent: GPU OFU as Prometheus metrics"' \
  "$rootfs" "ofu:$version"
podman save --format oci-archive -o "$build/ofu-image.tar" "ofu:$version"
rm -f "$rootfs"
echo "make_image: ofu:$version (also $build/ofu-image.tar, an OCI archive: podman load -i, or ctr import)"
