#!/usr/bin/env bash
# raypick's one set-up script.
#
#   ./setup.sh demo    install what is missing, build, run the example job
#   ./setup.sh test    install what is missing, build, run the whole test suite
#                      (Release, with the Python module's pytest suite; every
#                      fuzz corpus scene under ulimit -v; then under ASan +
#                      UBSan (the test files under ASan alone) the doctest
#                      suite, the Python module's tests and the fuzz
#                      targets over their seeds and saved reproducers,
#                      and the concurrency tests under TSan; then the same
#                      answers from a clang -march=native build)
#   ./setup.sh deps    only install what is missing (Debian 12 packages)
#   ./setup.sh build   install what is missing and build (Release, ./build)
#   ./setup.sh fuzz [SECONDS]
#                      install clang if missing, build the libFuzzer targets
#                      (./build-fuzz) and run each for SECONDS (default 60),
#                      as many at a time as there are cores; see docs/fuzzing.md
#
# Idempotent: packages already installed are not touched, and the build is
# incremental. Needs root or sudo only when something is missing.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${RAYPICK_BUILD_DIR:-build}
JOBS=${RAYPICK_JOBS:-$(nproc)}

PACKAGES=(
  cmake g++ make ninja-build pkg-config
  libglm-dev doctest-dev libtinyobjloader-dev
  libembree-dev libtbb-dev libcli11-dev nlohmann-json3-dev libstb-dev
  python3             # apps/bench/bench_table.py (the README's bench table; tested)
  # The Python module (apps/python) and its tests, for Debian's /usr/bin/python3
  python3-dev pybind11-dev python3-numpy python3-pytest
  python3-dask python3-distributed   # apps/examples/dask_rays.py and its test
  assimp-testmodels   # real OBJ and glTF models the tests validate on
)
# Only for `test`: clang builds the -march=native raypick that must answer
# as the default build does, and clang's runtime package brings
# FuzzedDataProvider.h, which two fuzz targets read their input with
# (tests/fuzz/CMakeLists.txt).
TEST_PACKAGES=(clang-14 libclang-rt-14-dev)
# Only for `fuzz`: libFuzzer comes with clang's runtime.
FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev ninja-build)  # ninja: configure()
FUZZ_DIR=${RAYPICK_FUZZ_DIR:-$BUILD_DIR-fuzz}
# The sanitizer and clang builds are unity builds (four files to a
# translation unit where a target sets no batch of its own): each heavy
# header is compiled once per batch. Not the Release build users get.
UNITY=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=4)
read -r -a FUZZ_TARGETS <<<"${RAYPICK_FUZZ_TARGETS:-obj gltf glb json_scene saved rays picker trees}"

# Each line carries the minutes and seconds since the script started.
log() { printf '== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*" >&2; }

# install_deps [PACKAGE...]: PACKAGES, or the packages given.
install_deps() {
  local wanted=("${PACKAGES[@]}")
  [ $# -eq 0 ] || wanted=("$@")
  local missing=()
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "dependencies: all ${#wanted[@]} packages present"
    return
  fi
  log "installing: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
}

# configure DIR [CMAKE ARGS...]: configures the build folder DIR. A new
# folder gets Ninja, which starts any compile whose inputs are there (make
# waits for each target's libraries first, leaving a core idle at each
# target's last file); a folder configured before keeps its generator.
configure() {
  local dir=$1 generator=()
  shift
  [ -f "$dir/CMakeCache.txt" ] || generator=(-G Ninja)
  cmake -S . -B "$dir" "${generator[@]}" "$@" >/dev/null
}

build() {
  log "configuring and building in $BUILD_DIR ($JOBS jobs)"
  configure "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$BUILD_DIR" -j "$JOBS"
}

demo() {
  local rp="$BUILD_DIR/apps/raypick" scene=apps/examples/room.obj
  log "raypick info $scene"
  "$rp" info "$scene"
  log "raypick pick $scene --ray 0,1.6,3,0,-0.8,-3"
  "$rp" pick "$scene" --ray 0,1.6,3,0,-0.8,-3
  log "raypick pick $scene --rays apps/examples/rays.txt"
  "$rp" pick "$scene" --rays apps/examples/rays.txt
  log "raypick validate $scene (against Embree)"
  "$rp" validate "$scene"
  log "raypick validate --boxes 10000 (a generated scene, against Embree)"
  "$rp" validate --boxes 10000
}

run_tests() {
  log "running the test suite"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
  log "every corpus and regression scene under ulimit -v (memory budget + base)"
  tests/fuzz/under_ulimit.sh "$BUILD_DIR/apps/raypick"
  install_deps "${TEST_PACKAGES[@]}"
  sanitizer_tests
  determinism_test
}

# The doctest suite again under AddressSanitizer + UBSan (loaders fed
# truncated and random files, every query path), with the fuzz targets run
# once over their seeds and saved reproducers (tests/fuzz/replay_main.cpp:
# no libFuzzer needed, so no build of its own; `./setup.sh fuzz` fuzzes),
# the Python module's tests under them too (beside the ThreadSanitizer
# build, which leaves a core free), and the concurrent-query tests under
# ThreadSanitizer.
sanitizer_tests() {
  local san dir python=0 pid status=0
  if [ -f "$BUILD_DIR/python/raypick.py" ] || ls "$BUILD_DIR"/python/raypick*.so >/dev/null 2>&1; then
    python=1
  fi
  local -A targets=([address]="raypick_tests raypick raypick_fuzzers" [thread]="raypick_concurrency_tests")
  [ "$python" -eq 0 ] || targets[address]+=" raypick_python"
  for san in address thread; do
    dir="$BUILD_DIR-$san"
    # -O1 -g1 (line tables: file and line in every report) compiles in
    # half the time of -O2 -g, which was most of this suite's time.
    configure "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" "${UNITY[@]}" \
      -DRAYPICK_SANITIZE="$san"
  done
  log "building ${targets[address]} with RAYPICK_SANITIZE=address in $BUILD_DIR-address"
  # shellcheck disable=SC2086  # several target names
  cmake --build "$BUILD_DIR-address" -j "$JOBS" --target ${targets[address]}
  # Each doctest case as its own ctest test (label "doctest": not the
  # install, README, self-containment or pytest tests) and each fuzz
  # target's replay (label "fuzz"), $JOBS at a time.
  log "ASan + UBSan: the whole doctest suite, one process per test case, and the fuzz targets' seeds and reproducers"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$BUILD_DIR-address" --output-on-failure -j "$JOBS" -L 'doctest|fuzz'
  # The Python module under ASan + UBSan, in the background (its log is
  # printed below): the interpreter is not built with them, so their
  # runtimes are preloaded; Python's own allocations at exit are not leaks
  # of ours (detect_leaks=0).
  if [ "$python" -eq 1 ]; then
    log "ASan + UBSan: the Python module's pytest suite (beside the TSan build)"
    LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)" \
      ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      PYTHONPATH="$BUILD_DIR-address/python" RAYPICK_EXE="$BUILD_DIR-address/apps/raypick" \
      RAYPICK_SANITIZED=1 \
      /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python \
      >"$BUILD_DIR-address/pytest.log" 2>&1 &
    pid=$!
  fi
  log "building ${targets[thread]} with RAYPICK_SANITIZE=thread in $BUILD_DIR-thread"
  cmake --build "$BUILD_DIR-thread" -j "$JOBS" --target ${targets[thread]}
  log "TSan: concurrent and batch queries"
  TSAN_OPTIONS=halt_on_error=1 "$BUILD_DIR-thread/tests/raypick_concurrency_tests" \
    --no-version -tc='*concurrent*'
  if [ "$python" -eq 1 ]; then
    wait "$pid" || status=$?
    log "ASan + UBSan: the Python module's pytest suite (exit $status):"
    cat "$BUILD_DIR-address/pytest.log"
    return "$status"
  fi
}

# Answers must not depend on the compiler or its flags: raypick built by
# clang for this machine's CPU (-march=native, FMA where it has one) must
# give the default (GCC) build's hits and t bit for bit. Only the raypick
# binary is built again, as a unity build (another grouping of the code
# than the default build's, which must not change an answer either).
determinism_test() {
  local dir="$BUILD_DIR-clang-native"
  log "building raypick with clang-14 -march=native in $dir"
  CC=clang-14 CXX=clang++-14 configure "$dir" -DCMAKE_BUILD_TYPE=Release "${UNITY[@]}" \
    -DRAYPICK_NATIVE=ON -DRAYPICK_BUILD_TESTS=OFF
  cmake --build "$dir" -j "$JOBS" --target raypick
  log "the default and the clang -march=native build give the same answers"
  tests/determinism/compare_builds.sh "$BUILD_DIR/apps/raypick" \
    "$dir/apps/raypick" "$dir/determinism"
}

# ---- fuzzing (docs/fuzzing.md) --------------------------------------------

# The libFuzzer targets, built by clang with ASan + UBSan in their own folder.
fuzz_build() {
  log "building the fuzz targets in $FUZZ_DIR (clang-14, ASan + UBSan)"
  CC=clang-14 CXX=clang++-14 configure "$FUZZ_DIR" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAYPICK_FUZZ=ON \
    -DRAYPICK_BUILD_TESTS=OFF
  cmake --build "$FUZZ_DIR" -j "$JOBS" --target raypick_fuzzers
}

# fuzz_one TARGET SECONDS: fuzzes TARGET for SECONDS; its log goes to
# $FUZZ_DIR/fuzz_<target>.log and its exit status to fuzz_<target>.status.
fuzz_one() {
  local t=$1 seconds=$2 bin corpus artifacts dict status=0
  bin="$FUZZ_DIR/tests/fuzz/fuzz_$t"
  corpus="$FUZZ_DIR/corpus/$t"
  artifacts="$FUZZ_DIR/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  dict=()
  case $t in gltf | glb | json_scene) dict=(-dict=tests/fuzz/json.dict) ;; esac
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" \
    "$corpus" "tests/fuzz/corpus/$t" >"$FUZZ_DIR/fuzz_$t.log" 2>&1 || status=$?
  echo "$status" >"$FUZZ_DIR/fuzz_$t.status"
}

# fuzz_run SECONDS: fuzzes each target for SECONDS, $JOBS targets at a
# time, then prints one line per target. New inputs go to
# $FUZZ_DIR/corpus/<target> (the committed seeds are read, never
# written); a crash, timeout, out-of-memory or leak leaves its input in
# $FUZZ_DIR/artifacts/<target>/ and makes the exit status 1.
fuzz_run() {
  local seconds=$1 t i lane logf status failed=0 pids=() p
  local execs cov ft size result lanes=$((JOBS > 0 ? JOBS : 1))
  mkdir -p "$FUZZ_DIR"
  # No result of an earlier run may stand in for this one's.
  for t in "${FUZZ_TARGETS[@]}"; do rm -f "$FUZZ_DIR/fuzz_$t.status" "$FUZZ_DIR/fuzz_$t.log"; done
  for ((lane = 0; lane < lanes; lane++)); do
    (
      for ((i = lane; i < ${#FUZZ_TARGETS[@]}; i += lanes)); do
        fuzz_one "${FUZZ_TARGETS[i]}" "$seconds"
      done
    ) &
    pids+=($!)
  done
  # Ctrl-C or a kill stops every lane, not only the fuzzer in front.
  trap 'for p in "${pids[@]}"; do pkill -P "$p"; kill "$p"; done 2>/dev/null; exit 130' INT TERM
  for p in "${pids[@]}"; do wait "$p" || true; done  # the status files tell
  trap - INT TERM
  printf '%-11s %12s %8s %9s %8s  %s\n' target execs coverage features corpus result
  for t in "${FUZZ_TARGETS[@]}"; do
    logf="$FUZZ_DIR/fuzz_$t.log"
    status=$(cat "$FUZZ_DIR/fuzz_$t.status" 2>/dev/null || echo '?')
    # (|| true: a run that failed at once has no statistics to grep)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logf" | tail -n 1 || true)
    cov=$(grep -o 'cov: [0-9]*' "$logf" | tail -n 1 | cut -d' ' -f2 || true)
    ft=$(grep -o 'ft: [0-9]*' "$logf" | tail -n 1 | cut -d' ' -f2 || true)
    size=$(find "$FUZZ_DIR/corpus/$t" "tests/fuzz/corpus/$t" -type f 2>/dev/null | wc -l || true)
    if [ "$status" = 0 ]; then
      result=ok
    else
      failed=1
      result="FAILED (exit $status): $(grep -m1 -oE 'ERROR: [A-Za-z]+: [A-Za-z -]+|runtime error: .*|fuzz check failed: .*' "$logf" | head -c 120 || true)"
      result+="; input in $FUZZ_DIR/artifacts/$t/, log $logf"
    fi
    printf '%-11s %12s %8s %9s %8s  %s\n' "$t" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$size" "$result"
  done
  if [ "$failed" -ne 0 ]; then
    log "a fuzz target failed: save its input under tests/fuzz/regressions/<target>/ (docs/fuzzing.md)"
    return 1
  fi
}

case "${1:-}" in
  demo) install_deps; build; demo ;;
  test) install_deps; build; run_tests ;;
  deps) install_deps ;;
  build) install_deps; build ;;
  fuzz)
    seconds=${2:-60}
    [[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: ./setup.sh fuzz [SECONDS]" >&2; exit 2; }
    install_deps "${FUZZ_PACKAGES[@]}"; fuzz_build; fuzz_run "$seconds" ;;
  *) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
