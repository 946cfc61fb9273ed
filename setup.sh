#!/usr/bin/env bash
# raypick's one set-up script.
#
#   ./setup.sh demo    install what is missing, build, run the example job
#   ./setup.sh test    install what is missing, build, run the whole test suite
#                      (Release, then again under ASan + UBSan, and the
#                      concurrency tests under TSan)
#   ./setup.sh deps    only install what is missing (Debian 12 packages)
#   ./setup.sh build   install what is missing and build (Release, ./build)
#
# Idempotent: packages already installed are not touched, and the build is
# incremental. Needs root or sudo only when something is missing.
set -euo pipefail
cd "$(dirname "$0")"

BUILD_DIR=${RAYPICK_BUILD_DIR:-build}
JOBS=${RAYPICK_JOBS:-$(nproc)}

PACKAGES=(
  cmake g++ make pkg-config
  libglm-dev doctest-dev libtinyobjloader-dev libtinygltf-dev
  libembree-dev libtbb-dev libcli11-dev nlohmann-json3-dev libstb-dev
  libbenchmark-dev
  assimp-testmodels   # real OBJ and glTF models the tests validate on
)

log() { printf '== %s\n' "$*" >&2; }

install_deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "dependencies: all ${#PACKAGES[@]} packages present"
    return
  fi
  log "installing: ${missing[*]}"
  local sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get update -q
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q \
    --no-install-recommends "${missing[@]}"
}

build() {
  log "configuring and building in $BUILD_DIR ($JOBS jobs)"
  cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >/dev/null
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
  sanitizer_tests
}

# The doctest suite again under AddressSanitizer + UBSan (loaders fed
# truncated and random files, every query path), and the concurrent-query
# tests under ThreadSanitizer.
sanitizer_tests() {
  local dir
  for san in address thread; do
    dir="$BUILD_DIR-$san"
    log "building the tests with RAYPICK_SANITIZE=$san in $dir"
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DRAYPICK_SANITIZE="$san" >/dev/null
    cmake --build "$dir" -j "$JOBS" --target raypick_tests raypick
  done
  log "ASan + UBSan: the whole doctest suite"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$BUILD_DIR-address/tests/raypick_tests" --no-version
  log "TSan: concurrent and batch queries"
  TSAN_OPTIONS=halt_on_error=1 "$BUILD_DIR-thread/tests/raypick_tests" \
    --no-version -tc='*concurrent*'
}

case "${1:-}" in
  demo) install_deps; build; demo ;;
  test) install_deps; build; run_tests ;;
  deps) install_deps ;;
  build) install_deps; build ;;
  *) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
