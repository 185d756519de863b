#!/usr/bin/env bash
# The GPU validation's scripts parse: `bash -n` on every shell script of
# scripts/gpu-validate (and gpu/package.sh, which build.sh runs), and
# `python3 -m py_compile` on every Python file there and in this folder.
# Usage: check_syntax.sh SOURCE_DIR PYTHON PYCACHE_DIR (bytecode goes to
# PYCACHE_DIR, not beside the sources).
set -uo pipefail
src=$1
python=${2:-python3}
export PYTHONPYCACHEPREFIX=${3:-$(mktemp -d)}
fail=0
count=0
for f in "$src"/scripts/gpu-validate/*.sh "$src"/gpu/package.sh "$src"/tests/gpu_validate/*.sh; do
  count=$((count + 1))
  bash -n "$f" || { echo "FAIL bash -n $f"; fail=1; }
done
for f in "$src"/scripts/gpu-validate/*.py "$src"/tests/gpu_validate/*.py; do
  count=$((count + 1))
  "$python" -m py_compile "$f" || { echo "FAIL py_compile $f"; fail=1; }
done
# Every stage the driver accepts has its script.
for s in a b c k; do
  [ -f "$src/scripts/gpu-validate/stage-$s.sh" ] || { echo "FAIL missing stage-$s.sh"; fail=1; }
done
echo "$count files checked"
exit $fail
