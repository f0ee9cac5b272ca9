#!/usr/bin/env bash
# Precompiles deploy/pch/system_headers.h for `bazel build --config=pch`, with
# exactly the flags Bazel compiles the project's C++ with (read from `bazel
# aquery`, so a change of the toolchain or of .bazelrc is followed), into
# /usr/local/include/tracehealth-pch/ (a directory the toolchain already
# searches, so Bazel accepts the file as a system header). Made again on every
# run (about 5 s with the aquery): clang refuses a precompiled header whose
# headers changed since, and Bazel does not know it is an input.
#
#   deploy/pch/build_pch.sh      exit 0: `--config=pch` may be used;
#                                otherwise the reason on stderr (build
#                                without it)
#
# Needs write access to /usr/local/include (root, as deploy/quickstart.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=/usr/local/include/tracehealth-pch
pch=$dir/system.pch

# The compile command of one of the project's C++ sources, as Bazel runs it.
probe=//common:status
cmd=$(bazel aquery "mnemonic(\"CppCompile\", $probe)" --output=text 2>/dev/null |
  sed -n '/Command Line: (exec /,/)$/p')
if [[ -z $cmd ]]; then
  echo "build_pch: bazel aquery gave no compile command for $probe" >&2
  exit 1
fi
# The shell-quoted words of "(exec CC ARGS... )", backslash line breaks
# removed, as an array.
cmd=${cmd#*exec }
cmd=${cmd%)}
eval "words=( ${cmd//$'\\\n'/ } )"
compiler=${words[0]}
flags=()
skip=0
for ((i = 1; i < ${#words[@]}; i++)); do
  w=${words[i]}
  if ((skip)); then skip=0; continue; fi
  case "$w" in
    # The source, object and dependency file of that one compile, and its
    # include paths (the project's headers are not precompiled).
    -c | -o | -MF | -iquote | -I | -isystem) skip=1 ;;
    -MD | -frandom-seed=*) ;;
    *) flags+=("$w") ;;
  esac
done

mkdir -p "$dir"
tmp=$(mktemp "$dir/.system.pch.XXXXXX")
trap 'rm -f "$tmp"' EXIT
cp deploy/pch/system_headers.h "$dir/system_headers.h"
if ! "$compiler" -x c++-header "${flags[@]}" "$dir/system_headers.h" -o "$tmp"; then
  echo "build_pch: $compiler could not precompile $dir/system_headers.h" >&2
  exit 1
fi
# Read back as every compile will read it.
if ! echo 'int tracehealth_pch_probe;' |
  "$compiler" -x c++ "${flags[@]}" -include-pch "$tmp" -c -o /dev/null -; then
  echo "build_pch: the precompiled header does not load with Bazel's flags" >&2
  exit 1
fi
mv -f "$tmp" "$pch"
trap - EXIT
echo "build_pch: $pch ($(du -m "$pch" | cut -f1) MB)"
