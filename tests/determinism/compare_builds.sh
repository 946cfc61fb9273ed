#!/usr/bin/env bash
# Same answers from two raypick binaries built with different compile flags
# (./setup.sh test compares the default GCC build with a clang -march=native
# one).
#
#   tests/determinism/compare_builds.sh RAYPICK_A RAYPICK_B [WORK_DIR]
#
# Picks 20,000 random rays in obb and mesh mode from a generated JSON scene
# of 3,000 rotated, scaled, sheared and mirrored instances of boxes and of
# apps/examples/room.obj's meshes, and compares the outputs byte for byte
# (t is printed with 9 digits, enough to tell any two floats apart). Then
# compares the hit counts of `raypick bench --scene boxes --n 10000 --mode
# obb`. Exit status 1 on any difference, naming the first differing line.
set -euo pipefail
a=$1 b=$2
work=${3:-$(mktemp -d)}
mkdir -p "$work"
here=$(cd "$(dirname "$0")/../.." && pwd)
cp "$here/apps/examples/room.obj" "$work/room.obj"

# The scene and the rays, from awk's generator with a fixed seed: the same
# files for both binaries.
awk 'BEGIN {
  srand(7);
  print "{\"raypick_scene\": 1, \"meshes\": [";
  print "  {\"name\": \"room\", \"file\": \"room.obj\"},";
  print "  {\"name\": \"lamp\", \"file\": \"room.obj\", \"object\": \"lamp\"},";
  print "  {\"name\": \"box\", \"box\": {\"min\": [-0.5, -0.25, -0.5], \"max\": [0.5, 0.25, 0.5]}}";
  print "], \"objects\": [";
  n = 3000;
  for (i = 0; i < n; i++) {
    m = i % 3 == 0 ? "room" : (i % 3 == 1 ? "lamp" : "box");
    sep = i + 1 < n ? "," : "";
    if (i % 5 == 4) {  # a general affine matrix: shear, mirror
      printf "{\"mesh\": \"%s\", \"matrix\": [%.6f, %.6f, %.6f, 0, %.6f, %.6f, %.6f, 0, %.6f, %.6f, %.6f, 0, %.5f, %.5f, %.5f, 1]}%s\n",
        m, 0.3 + rand(), rand() - 0.5, rand() - 0.5, rand() - 0.5, -0.3 - rand(), rand() - 0.5,
        rand() - 0.5, rand() - 0.5, 0.3 + rand(), 60 * rand(), 60 * rand(), 60 * rand(), sep;
    } else {
      printf "{\"mesh\": \"%s\", \"translate\": [%.5f, %.5f, %.5f], \"rotate\": {\"euler_deg\": [%.3f, %.3f, %.3f]}, \"scale\": [%.4f, %.4f, %.4f]}%s\n",
        m, 60 * rand(), 60 * rand(), 60 * rand(), 360 * rand(), 360 * rand(), 360 * rand(),
        0.2 + rand(), 0.2 + rand(), 0.2 + rand(), sep;
    }
  }
  print "]}";
}' > "$work/scene.json"
awk 'BEGIN {
  srand(8);
  for (i = 0; i < 20000; i++) {
    printf "%.6f %.6f %.6f %.7f %.7f %.7f\n", 60 * rand(), 60 * rand(), 60 * rand(),
      rand() - 0.5, rand() - 0.5, rand() - 0.5;
  }
}' > "$work/rays.txt"

status=0
compare() {  # compare NAME: diffs $work/NAME.a and $work/NAME.b
  if cmp -s "$work/$1.a" "$work/$1.b"; then
    echo "identical: $1 ($(wc -l < "$work/$1.a") lines)"
  else
    echo "DIFFERENT: $1; first difference:" >&2
    diff "$work/$1.a" "$work/$1.b" | head -n 4 >&2 || true
    status=1
  fi
}
for mode in obb mesh; do
  "$a" pick "$work/scene.json" --rays "$work/rays.txt" --mode "$mode" > "$work/pick-$mode.a"
  "$b" pick "$work/scene.json" --rays "$work/rays.txt" --mode "$mode" > "$work/pick-$mode.b"
  compare "pick-$mode"
done
# The issue's case: the hit counts of the bench's boxes scene (its rows
# minus the timings: scene, n, mode, rays, system and hits).
for x in a b; do
  bin=$a
  [ "$x" = a ] || bin=$b
  "$bin" bench --scene boxes --n 10000 --mode obb --ray-kind incoherent \
      --runs 1 2>/dev/null |
    awk '$6 == "raypick" { print $1, $2, $3, $4, $(NF - 1) }' > "$work/bench.$x"
done
[ -s "$work/bench.a" ] || { echo "no bench rows read" >&2; exit 1; }
compare bench
exit $status
