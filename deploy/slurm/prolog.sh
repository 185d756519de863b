#!/bin/sh
# ofu Slurm prolog: records the job on each of its GPUs in the GPU-to-job
# mapping directory the ofu agent reads (the dcgm-exporter convention of
# --hpc-job-mapping-dir, so one directory serves both):
#
#   $OFU_JOB_MAP_DIR/<gpu index>   one job id per line; the last line is the
#                                  job that started last on that GPU
#
# Run as the node Prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/ofu.sh, or
# call it from your prolog). It runs as root on the compute node, outside
# the job's cgroup, where Slurm sets SLURM_JOB_ID and, for jobs with GPUs,
# SLURM_JOB_GPUS (host GPU indices, "0,2"). CUDA_VISIBLE_DEVICES is the
# fallback; from Slurm 25.11 it may hold UUIDs, which are skipped.
#
# Every file is replaced atomically (write a temp file, then mv) under a
# lock, so the agent never reads half a file and two prologs on one shared
# GPU do not lose each other's line. Telemetry must never fail a job: the
# script always exits 0 and reports trouble on stderr (slurmd's log).
#
# Environment: OFU_JOB_MAP_DIR (default /run/ofu/job-map).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
dir=${OFU_JOB_MAP_DIR:-/run/ofu/job-map}
job=${SLURM_JOB_ID:-}
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}

case $job in '' | *[!0-9]*) exit 0 ;; esac
[ -n "$gpus" ] || exit 0

if ! mkdir -p "$dir" 2>/dev/null; then
  echo "ofu prolog: cannot create $dir; job $job not recorded" >&2
  exit 0
fi
chmod 0755 "$dir" 2>/dev/null

# One writer at a time (flock is util-linux; without it, races are only
# possible between jobs sharing a GPU).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.lock" && flock -w 10 9
fi

# "0,2" or "0-3,6" -> one index per line; anything not an index is dropped.
expand() {
  echo "$1" | tr ',' '\n' | while read -r item; do
    case $item in
      *[!0-9-]* | '' | -* | *-) ;;
      *-*) seq "${item%-*}" "${item#*-}" ;;
      *) echo "$item" ;;
    esac
  done
}

for gpu in $(expand "$gpus"); do
  file=$dir/$gpu
  tmp=$dir/.$gpu.$job.$$
  {
    [ -f "$file" ] && grep -v -x -e "$job" "$file"
    echo "$job"
  } >"$tmp" 2>/dev/null
  chmod 0644 "$tmp" 2>/dev/null
  if ! mv -f "$tmp" "$file" 2>/dev/null; then
    echo "ofu prolog: cannot write $file; job $job not recorded on GPU $gpu" >&2
    rm -f "$tmp"
  fi
done
exit 0
