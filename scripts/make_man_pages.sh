#!/usr/bin/env bash
# Writes the man pages of `ofu` from its own --help, so they cannot drift from
# the program: ofu(1), and ofu-COMMAND(1) for every command that `ofu --help`
# lists under "Commands:". help2man (Debian package help2man) does the
# formatting; the pages are gzipped (-n: no name or time stamp in the header,
# so the same help gives the same bytes).
#
#   scripts/make_man_pages.sh OFU_BINARY OUT_DIR
#
# Run by the build (deploy/install.cmake) after `ofu` is linked.
set -euo pipefail

ofu=$1
out=$2
help2man=${HELP2MAN:-help2man}
version=$("$ofu" --version | sed -n 's/^ofu //p')
if [ -z "$version" ]; then
  echo "make_man_pages: '$ofu --version' printed no version" >&2
  exit 1
fi

mkdir -p "$out"
rm -f "$out"/*.1 "$out"/*.1.gz

# The commands and their one-line summaries, as `ofu --help` lists them.
commands=()
summaries=()
while IFS= read -r line; do
  name=$(sed -E 's/^  ([a-z-]+)  +.*/\1/' <<<"$line")
  summary=$(sed -E 's/^  [a-z-]+  +//' <<<"$line")
  commands+=("$name")
  summaries+=("$summary")
done < <("$ofu" --help | sed -n '/^Commands:$/,/^$/p' | grep -E '^  [a-z-]+  +')
if [ ${#commands[@]} -eq 0 ]; then
  echo "make_man_pages: found no commands in '$ofu --help'" >&2
  exit 1
fi

# SEE ALSO of every page: the other pages and the documentation.
see_also=$(mktemp)
trap 'rm -f "$see_also"' EXIT
{
  echo "[SEE ALSO]"
  printf '.BR ofu (1)'
  for name in "${commands[@]}"; do printf ',\n.BR ofu-%s (1)' "$name"; done
  echo
  echo ".PP"
  echo "The documentation in /usr/share/doc/ofu/ (docs/*.md in the source tree):"
  echo "cli.md, metrics.md, agent.md, deploy.md."
} >"$see_also"

common=(--no-info --no-discard-stderr --version-string="$version" --include="$see_also" --section=1)

"$help2man" "${common[@]}" --name="Overall FLOP Utilization (OFU) of NVIDIA GPUs" \
  --output="$out/ofu.1" "$ofu"
for i in "${!commands[@]}"; do
  name=${commands[$i]}
  "$help2man" "${common[@]}" --name="${summaries[$i]}" --output="$out/ofu-$name.1" "$ofu $name"
  # Title and NAME as the page's file name (ofu-agent, as git-commit(1)), so
  # that man -k and lexgrog find it under that name.
  upper=$(tr '[:lower:]' '[:upper:]' <<<"ofu-$name")
  sed -i -e 's/^\.TH OFU "1"/.TH '"$upper"' "1"/' \
    -e '/^\.SH NAME$/{n;s/^ofu '"$name"' \\-/ofu\\-'"$name"' \\-/}' "$out/ofu-$name.1"
done

for page in "$out"/*.1; do
  gzip -9n "$page"
done
