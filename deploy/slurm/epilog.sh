#!/bin/sh
# ofu Slurm epilog: removes the job from the GPU-to-job mapping directory
# that prolog.sh maintains (see there for the format).
#
# Run as the node Epilog. It removes the job's line from every mapping file,
# not only those of SLURM_JOB_GPUS: the epilog also runs for jobs whose
# prolog never ran or whose GPU list it cannot see, and a finished job must
# not stay attributed. A file left empty is deleted (no job on that GPU).
# Files are replaced atomically (temp file + mv) under the prolog's lock.
# Always exits 0: a failing Epilog drains the node.
#
# Environment: OFU_JOB_MAP_DIR (default /run/ofu/job-map).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
dir=${OFU_JOB_MAP_DIR:-/run/ofu/job-map}
job=${SLURM_JOB_ID:-}

case $job in '' | *[!0-9]*) exit 0 ;; esac
[ -d "$dir" ] || exit 0

if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.lock" && flock -w 10 9
fi

for file in "$dir"/*; do
  gpu=${file##*/}
  case $gpu in '' | *[!0-9]*) continue ;; esac
  [ -f "$file" ] || continue
  grep -q -x -e "$job" "$file" 2>/dev/null || continue
  tmp=$dir/.$gpu.$job.$$
  grep -v -x -e "$job" "$file" >"$tmp" 2>/dev/null
  if [ -s "$tmp" ]; then
    chmod 0644 "$tmp" 2>/dev/null
    mv -f "$tmp" "$file" 2>/dev/null || echo "ofu epilog: cannot rewrite $file" >&2
  else
    rm -f "$tmp" "$file"
  fi
done
exit 0
