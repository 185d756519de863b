#!/usr/bin/env bash
# Smoke test of the container image (docs/deploy.md, "Container image"): the
# image's `ofu agent` on the bundled SYNTHETIC recording (a replay source, no
# GPU needed), then /metrics must carry ofu's counters and /healthz must
# answer 200.
#
#   scripts/image_smoke_test.sh ofu:0.1.0
set -euo pipefail

image=${1:?usage: image_smoke_test.sh IMAGE}
port=${PORT:-19477}
name=ofu-smoke-$$
recording=/usr/share/ofu/recordings/synthetic-2xh100-bf16-matmul.om

cleanup() { podman rm -f "$name" >/dev/null 2>&1 || true; }
trap cleanup EXIT

podman run -d ${PODMAN_RUN_ARGS:-} --name "$name" -p "127.0.0.1:$port:9477" "$image" \
  agent --source "replay:$recording" --listen 0.0.0.0:9477 --no-store --window 1 >/dev/null

metrics=""
for _ in $(seq 1 60); do
  metrics=$(curl -fsS "http://127.0.0.1:$port/metrics" 2>/dev/null || true)
  if grep -q '^ofu_observed_seconds_total{' <<<"$metrics"; then break; fi
  sleep 1
done
echo "--- /metrics (ofu counters)"
grep -E '^ofu_(observed|utilized)_seconds_total\{|^ofu_build_info' <<<"$metrics" || {
  echo "image_smoke_test: no ofu counters on /metrics"; podman logs "$name"; exit 1; }
echo "--- /healthz"
health=$(curl -sS -o /dev/stderr -w '%{http_code}' "http://127.0.0.1:$port/healthz")
echo
echo "HTTP $health"
[ "$health" = 200 ] || { echo "image_smoke_test: /healthz answered $health"; podman logs "$name"; exit 1; }
echo "image_smoke_test: ok ($image)"
