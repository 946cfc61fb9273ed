#!/usr/bin/env bash
# The checks replay_main.cpp adds around a fuzz target, in the builds
# that replay instead of fuzzing (the ASan + UBSan build):
#   tests/fuzz/replay_limits.sh FUZZ_BINARY SEED_FILE
# - a peak resident memory over -rss_limit_mb fails the run (exit 1),
#   naming the input after which it was over;
# - a path that is not a regular file (here a folder) fails it, named;
# - the same input within the limits runs (exit 0).
# (-timeout's alarm is not exercised: no seed runs long enough.)
set -uo pipefail
bin=$1
seed=$2
fail() {
  echo "replay_limits: $1" >&2
  exit 1
}
out=$("$bin" -rss_limit_mb=1 "$seed" 2>&1)
status=$?
[ "$status" -eq 1 ] || fail "-rss_limit_mb=1 exited with $status, not 1: $out"
[[ $out == *"fuzz replay: $seed: peak RSS "*" MB over the limit of 1 MB"* ]] ||
  fail "-rss_limit_mb=1 did not name the input and the limit: $out"
folder=$(dirname "$seed")
out=$("$bin" "$folder" 2>&1)
status=$?
[ "$status" -eq 1 ] || fail "a folder exited with $status, not 1: $out"
[[ $out == *"fuzz replay: cannot read $folder (not a regular file)"* ]] ||
  fail "a folder was not refused by name: $out"
"$bin" -rss_limit_mb=100000 -timeout=0 "$seed" >/dev/null 2>&1 || fail "the seed did not run within the limits"
echo "replay_limits: $(basename "$bin"): the memory limit and unreadable paths are enforced"
