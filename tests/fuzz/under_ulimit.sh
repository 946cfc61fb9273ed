#!/usr/bin/env bash
# Every scene file of the fuzz corpora and regression sets, loaded and built
# by `raypick info` with address space limited to the memory budget plus
# the process's own base: each must load or be refused cleanly (exit 0, 1
# or 2: an unsupported extension), never abort or crash.
#   tests/fuzz/under_ulimit.sh RAYPICK_BINARY [BUDGET_MIB]
set -euo pipefail
cd "$(dirname "$0")/../.."
raypick=$1
budget_mib=${2:-256}
# The base: what `raypick --version` needs (its libraries and heap), with
# room for the thread stacks TBB reserves.
base_mib=512
limit_kib=$(( (budget_mib + base_mib) * 1024 ))
checked=0
failed=0
while IFS= read -r -d '' f; do
  status=0
  ( ulimit -v "$limit_kib"; exec "$raypick" info "$f" --max-memory $((budget_mib << 20)) ) \
    >/dev/null 2>/tmp/under_ulimit.$$.err || status=$?
  if [ "$status" -gt 2 ]; then
    echo "under_ulimit: $f: exit $status: $(head -c 300 /tmp/under_ulimit.$$.err)" >&2
    failed=1
  fi
  checked=$((checked + 1))
done < <(find tests/fuzz/corpus/obj tests/fuzz/corpus/gltf tests/fuzz/corpus/glb \
              tests/fuzz/corpus/json_scene tests/fuzz/regressions -type f \
              \( -name '*.obj' -o -name '*.gltf' -o -name '*.glb' -o -name '*.json' -o -name '*' \) \
              ! -name '*.md' -print0 | sort -z)
rm -f /tmp/under_ulimit.$$.err
echo "under_ulimit: $checked files under ulimit -v $((budget_mib + base_mib)) MiB, $([ $failed = 0 ] && echo 'every one loaded or refused cleanly' || echo 'FAILURES above')"
exit $failed
