#!/usr/bin/env bash
# Runs a fuzz target once over every file in the given folders (the seed
# corpus and the saved reproducers): no fuzzing, only the regression check.
#   tests/fuzz/run_regressions.sh FUZZ_BINARY DIR...
# Exit status: the target's (non-zero when any file crashes or fails a
# check). Folders that do not exist are skipped.
set -euo pipefail
bin=$1
shift
files=()
for dir in "$@"; do
  [ -d "$dir" ] || continue
  while IFS= read -r -d '' f; do files+=("$f"); done \
    < <(find "$dir" -type f ! -name '.*' ! -name '*.md' -print0 | sort -z)
done
if [ ${#files[@]} -eq 0 ]; then
  echo "$(basename "$bin"): no files to run"
  exit 0
fi
# Given files (not folders), libFuzzer runs each once and exits.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  "$bin" -rss_limit_mb=2048 -timeout=10 "${files[@]}" 2>"${TMPDIR:-/tmp}/run_regressions.$$.log" || {
  status=$?
  tail -n 40 "${TMPDIR:-/tmp}/run_regressions.$$.log" >&2
  rm -f "${TMPDIR:-/tmp}/run_regressions.$$.log"
  exit $status
}
rm -f "${TMPDIR:-/tmp}/run_regressions.$$.log"
echo "$(basename "$bin"): ${#files[@]} files ran cleanly"
