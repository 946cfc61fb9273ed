// `raypick validate --points N`: raypick's closest points against Embree's
// rtcPointQuery and a brute force in double (docs/validate.md).
#include "common.h"
#include "screen.h"

#include "../tools/embree_bench.h"
#include "../tools/embree_points.h"
#include "../tools/ray_io.h"
#include "../tools/scene_gen.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/text.h"

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace raypick::cli {
namespace {

// Random points over the scene, deterministic for (scene, n, seed, mode):
// - 40% near a random object's surface: a random point of one of its
//   triangles (mesh mode) or of its box's faces (obb mode), moved along a
//   random direction by up to 5% of the object's size, and a quarter of them
//   not moved at all (exactly on the surface, up to the rounding of the
//   placement);
// - 20% on a random triangle's corner or edge midpoint (ties between the
//   triangles that share them);
// - 40% uniform in the scene's world box grown by 10% on each side.
std::vector<glm::dvec3> make_points(const Scene& scene, std::size_t n, std::uint64_t seed,
                                    PickMode mode) {
  std::mt19937_64 rng(seed * 7919 + 3);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 1.0);
  const Aabb bounds = world_bounds(scene);
  std::vector<std::uint32_t> usable;
  for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
    if (!scene.meshes[scene.objects[id].mesh].triangles.empty()) usable.push_back(id);
  }
  std::vector<glm::dvec3> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double kind = u(rng);
    if (kind >= 0.6 || usable.empty()) {
      glm::dvec3 p;
      for (int a = 0; a < 3; ++a) {
        const double lo = bounds.min[a], hi = bounds.max[a], pad = 0.1 * (hi - lo);
        p[a] = lo - pad + u(rng) * (hi - lo + 2.0 * pad);
      }
      out.push_back(p);
      continue;
    }
    const Object& o = scene.objects[usable[std::size_t(u(rng) * double(usable.size())) %
                                           usable.size()]];
    const glm::dmat4 m(o.matrix);
    const Mesh box = box_mesh(scene.meshes[o.mesh].triangle_bounds());
    const Mesh& mesh = mode == PickMode::kMesh ? scene.meshes[o.mesh] : box;
    const glm::uvec3 t = mesh.triangles[std::size_t(u(rng) * double(mesh.triangles.size())) %
                                        mesh.triangles.size()];
    const glm::dvec3 a(mesh.positions[t.x]), b(mesh.positions[t.y]), c(mesh.positions[t.z]);
    glm::dvec3 local;
    if (kind < 0.2) {
      local = u(rng) < 0.5 ? a : 0.5 * (a + b);
    } else {
      double s = u(rng), r = u(rng);
      if (s + r > 1.0) {
        s = 1.0 - s;
        r = 1.0 - r;
      }
      local = a + s * (b - a) + r * (c - a);
    }
    glm::dvec3 p = glm::dvec3(m * glm::dvec4(local, 1.0));
    if (kind >= 0.3) {
      const glm::dvec3 lo(box.positions[0]), hi(box.positions[7]);
      const double size = glm::length(glm::dmat3(m) * (hi - lo));
      const glm::dvec3 dir = glm::normalize(glm::dvec3{g(rng), g(rng), g(rng)});
      p += dir * (0.05 * size * u(rng));
    }
    out.push_back(p);
  }
  return out;
}

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

  const std::vector<glm::dvec3> points = make_points(scene, a.points, a.seed, mode);
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
