// `raypick validate --points N`: raypick's closest points against Embree's
// rtcPointQuery and a brute force in double (docs/validate.md).
#include "common.h"
#include "screen.h"

#include "../tools/embree_bench.h"
#include "../tools/embree_points.h"
#include "../tools/ray_io.h"
#include "../tools/scene_gen.h"
#include "../tools/validate.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <vector>

namespace raypick::cli {
namespace {

bool same(const PointHit& a, const PointHit& b) {
  return a.object == b.object && a.triangle == b.triangle && a.distance == b.distance &&
         a.point == b.point;
}

std::string describe(const PointHit& h) {
  if (!h.hit()) return "nothing";
  std::string s = "object " + std::to_string(h.object);
  if (h.triangle != kInvalidId) s += " triangle " + std::to_string(h.triangle);
  char d[64];
  std::snprintf(d, sizeof d, " at distance %.17g", h.distance);
  return s + d;
}

}  // namespace

int run_validate_points(const ValidateArgs& a) {
  const PickMode mode = a.mode;
  std::string label;
  int status = 0;
  std::optional<Loaded> generated_or_loaded = validation_scene(a, label, status);
  if (!generated_or_loaded) return status;
  Loaded& loaded = *generated_or_loaded;
  if (!a.offset.empty()) {
    const glm::dvec3 offset{a.offset[0], a.offset[1], a.offset[2]};
    tools::shift_scene(loaded.scene, offset);
    label += " shifted by (" + tools::format_float(float(offset.x)) + ", " +
             tools::format_float(float(offset.y)) + ", " + tools::format_float(float(offset.z)) +
             ")";
  }
  const Scene& scene = loaded.scene;
  auto start = Clock::now();
  const Picker picker(scene, picker_config(mode));
  const double build_ms = ms_since(start);
  start = Clock::now();
  const tools::EmbreeDevice device(1);
  const tools::EmbreePointScene embree(device.get(), scene, mode);
  const double embree_ms = ms_since(start);

  const std::vector<glm::dvec3> points = tools::make_validation_points(scene, a.points, a.seed, mode);
  const bool tty = isatty(fileno(stderr));
  start = Clock::now();
  const std::vector<PointHit> mine = picker.closest_points(points, QueryOptions{mode});
  const double raypick_ms = ms_since(start);
  std::size_t agree = 0, embree_differs = 0, mismatches = 0, hits = 0, on_surface = 0;
  std::vector<std::string> lines;
  start = Clock::now();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const PointHit theirs = embree.closest_point(points[i], INFINITY);
    const PointHit want = tools::brute_closest_point(scene, points[i], mode, INFINITY);
    hits += want.hit();
    on_surface += want.hit() && want.distance == 0.0;
    if (same(mine[i], want) && same(theirs, want)) {
      ++agree;
    } else if (same(mine[i], want)) {
      ++embree_differs;
    } else {
      ++mismatches;
      if (lines.size() < 20) {
        lines.push_back("mismatch: point " + std::to_string(i) + ": raypick " +
                        describe(mine[i]) + ", brute force " + describe(want) + "\n");
      }
    }
    if (tty && (i % 256 == 255 || i + 1 == points.size())) {
      std::fprintf(stderr, "\rvalidate: %zu / %zu points", i + 1, points.size());
      if (i + 1 == points.size()) std::fputc('\n', stderr);
    }
  }
  const double check_ms = ms_since(start);
  std::printf("scene:          %s\n", label.c_str());
  std::printf("objects:        %zu (%zu triangles)\n", scene.objects.size(),
              scene.triangle_count());
  std::printf("mode:           %s\n", mode_name(mode));
  std::printf("points:         %zu (seed %llu), %zu with a nearest object, %zu at distance 0\n",
              points.size(), static_cast<unsigned long long>(a.seed), hits, on_surface);
  std::printf("agree:          %zu (raypick, Embree's rtcPointQuery and brute force give the "
              "same object, triangle, distance and point, bit for bit)\n",
              agree);
  std::printf("embree differs: %zu (Embree's answer differs, raypick's is brute force's)\n",
              embree_differs);
  std::printf("real mismatches: %zu\n", mismatches);
  std::printf("time:           load %.1f ms, raypick build %.1f ms, embree build %.1f ms, "
              "raypick queries %.1f ms, checks %.1f ms\n",
              loaded.load_ms, build_ms, embree_ms, raypick_ms, check_ms);
  for (const std::string& line : lines) std::fputs(line.c_str(), stdout);
  return finish_output(mismatches == 0 ? 0 : kExitBadInput);
}

}  // namespace raypick::cli
