#!/usr/bin/env bash
# Checks that every C++ source of the project is formatted with the
# repository's .clang-format: runs `clang-format --dry-run --Werror` over each
# tracked *.cc and *.h outside third_party/ (generated code is not tracked:
# Bazel writes it under bazel-out/). Prints each file that would change, with
# its number of offending places, and how to fix it.
#
# Usage: tests/style/check_format.sh [-v] [FILE ...]
#   -v     also print clang-format's diagnostics (file:line:col of each place)
#   FILE   check these files instead of the whole tree
# Environment: CLANG_FORMAT (default: clang-format).
# Exit 0 when every file is formatted, 1 when some are not, 2 when
# clang-format is missing.
set -uo pipefail
cd "$(dirname "$0")/../.."

verbose=0
if [[ ${1:-} == -v ]]; then
  verbose=1
  shift
fi
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "format: $clang_format not found (Debian package clang-format)" >&2
  exit 2
fi

files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files -- '*.cc' '*.h' ':!:third_party/*')
  else
    # A tree without .git (an exported copy): the same selection by name.
    mapfile -t files < <(find . -path ./third_party -prune -o -path './bazel-*' -prune \
      -o -type f \( -name '*.cc' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
  fi
fi

start=$(date +%s)
bad=0
for f in "${files[@]}"; do
  # --Werror: each place that would change is an error on stderr.
  out=$("$clang_format" --style=file --dry-run --Werror "$f" 2>&1)
  rc=$?
  if [[ $rc -ne 0 ]]; then
    places=$(grep -c -e '-Wclang-format-violations' <<<"$out")
    if [[ $places -eq 0 ]]; then
      echo "format: $f: clang-format failed: $out"
    else
      verb="places differ"
      [[ $places -eq 1 ]] && verb="place differs"
      echo "format: $f: $places $verb from .clang-format"
      [[ $verbose -eq 1 ]] && grep -e '-Wclang-format-violations' <<<"$out"
    fi
    bad=$((bad + 1))
  fi
done
echo "format: ${#files[@]} files checked, ${bad} not formatted," \
  "$(( $(date +%s) - start )) s ($("$clang_format" --version | head -n 1))"
if [[ $bad -gt 0 ]]; then
  echo "format: fix with: clang-format -i FILE (the repository's .clang-format)"
  exit 1
fi
exit 0
