#!/usr/bin/env bash
# Formats every C++ file of ofu with clang-format and the committed .clang-format.
#
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; exit 1 naming each file that is
#                               not formatted (CTest's Format.ClangFormat runs this)
#
# The files: *.h, *.cc and *.cu under src apps gpu tests bench fuzz.
# CLANG_FORMAT names the program (default: clang-format on PATH). The layout
# is what clang-format 14 (Debian 12) writes; another major version may
# disagree on a few lines. Exits 77 (CTest: skipped) when there is no
# clang-format; scripts/install-deps.sh installs it.
set -euo pipefail

cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "format: $clang_format not found; scripts/install-deps.sh installs it (Debian package clang-format)" >&2
  exit 77
fi

mapfile -d '' files < <(find src apps gpu tests bench fuzz -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' \) \
                          -print0 | sort -z)

case "${1:-}" in
  --check)
    # --dry-run -Werror: a file that would change is an error, one per line
    # that would change. Shown: the files, then the first few of those.
    if ! report=$("$clang_format" --style=file --dry-run -Werror "${files[@]}" 2>&1); then
      bad=$(grep -oE '^[^ :]+:[0-9]+:[0-9]+: error' <<<"$report" | cut -d: -f1 | sort -u)
      echo "format: $(wc -l <<<"$bad") of ${#files[@]} files are not formatted (run scripts/format.sh):"
      sed 's/^/  /' <<<"$bad"
      head -n 60 <<<"$report"
      exit 1
    fi
    ;;
  "")
    "$clang_format" --style=file -i "${files[@]}"
    ;;
  *)
    echo "usage: $0 [--check]" >&2
    exit 2
    ;;
esac
