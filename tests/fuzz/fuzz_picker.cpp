// libFuzzer target: the embedding API. The input is read as a program of
// add_mesh / add_object / remove_object / set_matrix / set_mask / commit
// calls and queries; after each query the Picker's answers (intersect,
// occluded, intersect_all, intersect_batch, intersect_image, closest_point
// and, in obb mode, containing_object, in both modes, with masks and
// filters) must equal a brute force over every live object and triangle,
// bit for bit. A mismatch prints both answers and aborts.
//
// Numbers come from small grids (coordinates in steps of 1/8, scales that
// may be 0 or negative, direction components that may be +-0), scaled now
// and then by a power of two, so that ties, flat boxes, singular matrices
// and zero direction components are common rather than never drawn.
#include "raypick/bvh/picker.h"
#include "raypick/core/closest_point.h"
#include "raypick/core/obb.h"
#include "raypick/core/ray_triangle.h"

#include <fuzzer/FuzzedDataProvider.h>
#include <glm/ext/matrix_transform.hpp>
#include <glm/mat3x3.hpp>
#include <glm/matrix.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

using namespace raypick;

namespace {

constexpr std::size_t kMaxMeshes = 6;
constexpr std::size_t kMaxObjects = 64;
constexpr int kMaxOps = 96;

struct MeshData {
  std::vector<glm::vec3> positions;
  std::vector<glm::uvec3> triangles;
  Aabb bounds;  // of the vertices the triangles use
};

// What the Picker should hold, kept by the fuzzer: object ids index it.
struct ObjectData {
  std::uint32_t mesh;
  glm::mat4 matrix;
  std::uint32_t mask;
  bool alive;
};

struct Model {
  std::deque<MeshData> meshes;  // deque: borrowed meshes never move
  std::vector<ObjectData> objects;
};

[[noreturn]] void fail(const std::string& what, const Hit& got, const Hit& expected) {
  std::fprintf(stderr,
               "raypick fuzz check failed: %s\n"
               "  picker: object %u t %.9g (bits %08x) triangle %u\n"
               "  brute:  object %u t %.9g (bits %08x) triangle %u\n",
               what.c_str(), got.object, double(got.t), std::bit_cast<std::uint32_t>(got.t),
               got.triangle, expected.object, double(expected.t),
               std::bit_cast<std::uint32_t>(expected.t), expected.triangle);
  std::abort();
}

// A coordinate on a grid of 1/8 in [-16, 16).
float grid(FuzzedDataProvider& in) {
  return float(in.ConsumeIntegralInRange<int>(-128, 127)) / 8.0f;
}

glm::vec3 grid3(FuzzedDataProvider& in) { return {grid(in), grid(in), grid(in)}; }

MeshData make_mesh(FuzzedDataProvider& in) {
  MeshData m;
  const int nv = in.ConsumeIntegralInRange<int>(1, 9);
  for (int i = 0; i < nv; ++i) m.positions.push_back(grid3(in));
  const int nt = in.ConsumeIntegralInRange<int>(0, 8);  // 0: never hit
  for (int i = 0; i < nt; ++i) {
    glm::uvec3 t;
    for (int k = 0; k < 3; ++k) t[k] = in.ConsumeIntegralInRange<std::uint32_t>(0, nv - 1);
    m.triangles.push_back(t);
  }
  Mesh mesh{m.positions, m.triangles};
  m.bounds = mesh.triangle_bounds();
  return m;
}

glm::mat4 make_matrix(FuzzedDataProvider& in) {
  glm::mat4 m{1.0f};
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:  // a translation
      m = glm::translate(glm::mat4{1.0f}, grid3(in));
      break;
    case 1: {  // T * R * S with an axis-angle rotation and any scale (0: singular)
      const glm::vec3 axis = grid3(in);
      const float angle = float(in.ConsumeIntegralInRange<int>(0, 23)) * 0.2617994f;  // 15 deg
      glm::vec3 s{float(in.ConsumeIntegralInRange<int>(-8, 8)) / 4.0f,
                  float(in.ConsumeIntegralInRange<int>(-8, 8)) / 4.0f,
                  float(in.ConsumeIntegralInRange<int>(-8, 8)) / 4.0f};
      m = glm::translate(glm::mat4{1.0f}, grid3(in));
      if (axis != glm::vec3{0.0f}) m = glm::rotate(m, angle, axis);
      m = glm::scale(m, s);
      break;
    }
    case 2:  // any affine matrix on the grid: shear, mirror, singular
      for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 3; ++r) m[c][r] = grid(in) / 2.0f;
      }
      break;
    default:
      break;  // identity
  }
  // Now and then far away or tiny: a power of two in [2^-12, 2^12].
  if (in.ConsumeBool()) {
    const int e = in.ConsumeIntegralInRange<int>(-12, 12);
    for (int c = 0; c < 4; ++c) m[c] = glm::vec4(glm::vec3(m[c]) * std::ldexp(1.0f, e), m[c][3]);
  }
  return m;
}

Ray make_ray(FuzzedDataProvider& in) {
  Ray ray;
  ray.org = grid3(in);
  for (int k = 0; k < 3; ++k) {
    const int d = in.ConsumeIntegralInRange<int>(-4, 4);
    ray.dir[k] = d == 0 && in.ConsumeBool() ? -0.0f : float(d);
  }
  if (ray.dir == glm::vec3{0.0f}) ray.dir.z = 1.0f;
  if (in.ConsumeBool()) {
    const float a = float(in.ConsumeIntegralInRange<int>(0, 64)) / 8.0f;
    const float b = float(in.ConsumeIntegralInRange<int>(0, 64)) / 8.0f;
    ray.tmin = std::min(a, b);
    ray.tmax = in.ConsumeBool() ? kInfinity : std::max(a, b);
  }
  return ray;
}

// The nearest hit of one object, or no hit: the contract computed with the
// core predicates and no tree.
Hit brute_object(const Model& model, std::uint32_t id, const Ray& ray, PickMode mode) {
  const ObjectData& o = model.objects[id];
  const MeshData& mesh = model.meshes[o.mesh];
  const Obb obb = Obb::make(mesh.bounds, o.matrix);
  if (!obb.invertible) return Hit{};
  if (mode == PickMode::kObb) {
    const float t = obb_entry(ray, obb, ray.tmax);
    return t == kInfinity ? Hit{} : Hit{id, t};
  }
  const Ray local = transform_ray(obb.frame, ray);
  const TriangleRay tr(local.org, local.dir);
  Hit best;
  for (std::uint32_t t = 0; t < mesh.triangles.size(); ++t) {
    const glm::uvec3& v = mesh.triangles[t];
    const TriangleHit h = intersect_triangle(tr, mesh.positions[v.x], mesh.positions[v.y],
                                             mesh.positions[v.z], ray.tmin, ray.tmax);
    if (h.hit && h.t < best.t) best = Hit{id, h.t, t, h.u, h.v};
  }
  return best;
}

std::vector<Hit> brute_all(const Model& model, const Ray& ray, const QueryOptions& options) {
  std::vector<Hit> hits;
  for (std::uint32_t id = 0; id < model.objects.size(); ++id) {
    const ObjectData& o = model.objects[id];
    if (!o.alive || (o.mask & options.mask) == 0) continue;
    if (options.filter && !options.filter(id)) continue;
    const Hit h = brute_object(model, id, ray, options.mode);
    if (h.hit()) hits.push_back(h);
  }
  std::sort(hits.begin(), hits.end(), closer);
  return hits;
}

// The object nearest to p as the contract measures it, every live object
// that passes the options (brute force in double; ties to the lower object,
// then triangle); and in `inside` the lowest id whose OBB holds p.
PointHit brute_point(const Model& model, const glm::dvec3& p, const QueryOptions& options,
                     std::uint32_t& inside) {
  PointHit best;
  double best_d2 = std::numeric_limits<double>::infinity();
  inside = kInvalidId;
  auto offer = [&](double d2, std::uint32_t id, std::uint32_t tri, const glm::dvec3& q) {
    if (!(std::tuple(d2, id, tri) < std::tuple(best_d2, best.object, best.triangle))) return;
    best_d2 = d2;
    best.object = id;
    best.triangle = tri;
    best.point = q;
  };
  for (std::uint32_t id = 0; id < model.objects.size(); ++id) {
    const ObjectData& o = model.objects[id];
    if (!o.alive || (o.mask & options.mask) == 0) continue;
    if (options.filter && !options.filter(id)) continue;
    const MeshData& mesh = model.meshes[o.mesh];
    if (mesh.triangles.empty() || !Obb::make(mesh.bounds, o.matrix).invertible) continue;
    const glm::dmat3 lin{glm::dvec3(o.matrix[0]), glm::dvec3(o.matrix[1]), glm::dvec3(o.matrix[2])};
    const glm::dvec3 origin{o.matrix[3]};
    auto place = [&](const glm::vec3& v) { return lin * glm::dvec3(v) + origin; };
    if (options.mode == PickMode::kMesh) {
      for (std::uint32_t k = 0; k < mesh.triangles.size(); ++k) {
        const glm::uvec3& t = mesh.triangles[k];
        const TrianglePoint tp = closest_point_on_triangle(
            p, place(mesh.positions[t.x]), place(mesh.positions[t.y]), place(mesh.positions[t.z]));
        offer(tp.distance2, id, k, tp.point);
      }
      continue;
    }
    const glm::dvec3 x = glm::inverse(lin) * (p - origin);
    bool in = true;
    for (int a = 0; a < 3; ++a) in = in && x[a] >= mesh.bounds.min[a] && x[a] <= mesh.bounds.max[a];
    if (in) {
      inside = std::min(inside, id);
      offer(0.0, id, kInvalidId, p);
      continue;
    }
    glm::dvec3 corner[8];
    for (int i = 0; i < 8; ++i) corner[i] = place(box_corner(mesh.bounds, i));
    for (const glm::uvec3& t : box_triangles()) {
      const TrianglePoint tp = closest_point_on_triangle(p, corner[t.x], corner[t.y], corner[t.z]);
      offer(tp.distance2, id, kInvalidId, tp.point);
    }
  }
  if (best.hit()) best.distance = std::sqrt(best_d2);
  return best;
}

[[noreturn]] void fail_point(const std::string& what, const PointHit& got, const PointHit& expected) {
  std::fprintf(stderr,
               "raypick fuzz check failed: %s\n"
               "  picker: object %u triangle %u distance %.17g point %.17g %.17g %.17g\n"
               "  brute:  object %u triangle %u distance %.17g point %.17g %.17g %.17g\n",
               what.c_str(), got.object, got.triangle, got.distance, got.point.x, got.point.y,
               got.point.z, expected.object, expected.triangle, expected.distance,
               expected.point.x, expected.point.y, expected.point.z);
  std::abort();
}

bool same(const Hit& a, const Hit& b) {
  return a.object == b.object && a.triangle == b.triangle &&
         std::bit_cast<std::uint32_t>(a.t) == std::bit_cast<std::uint32_t>(b.t);
}

void check_queries(const Picker& picker, const Model& model, const std::vector<Ray>& rays,
                   const QueryOptions& options) {
  for (const Ray& ray : rays) {
    const std::vector<Hit> expected = brute_all(model, ray, options);
    const Hit nearest = expected.empty() ? Hit{} : expected.front();
    const Hit got = picker.intersect(ray, options);
    if (!same(got, nearest)) fail("intersect", got, nearest);
    if (picker.occluded(ray, options) != nearest.hit()) fail("occluded", got, nearest);
    const std::size_t limit = ray.tmin == 0.0f ? SIZE_MAX : 2;
    const std::vector<Hit> all = picker.intersect_all(ray, options, limit);
    const std::size_t want = std::min(limit, expected.size());
    if (all.size() != want) {
      fail("intersect_all returned " + std::to_string(all.size()) + " hits, not " +
               std::to_string(want),
           all.empty() ? Hit{} : all.front(), nearest);
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!same(all[i], expected[i])) fail("intersect_all[" + std::to_string(i) + "]", all[i], expected[i]);
    }
  }
  const std::vector<Hit> batch = picker.intersect_batch(rays, options);
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const std::vector<Hit> expected = brute_all(model, rays[i], options);
    const Hit nearest = expected.empty() ? Hit{} : expected.front();
    if (!same(batch[i], nearest)) fail("intersect_batch", batch[i], nearest);
  }
  // The same rays as an image 4 or 5 wide (tiles of 4x4, a last narrower
  // one): the tiles' path where the batch interleaves, else a batch.
  const std::vector<Hit> image = picker.intersect_image(rays, 4 + rays.size() % 2, options);
  for (std::size_t i = 0; i < rays.size(); ++i) {
    if (!same(image[i], batch[i])) fail("intersect_image", image[i], batch[i]);
  }
  // The rays' origins, and one step along each ray, as points (on the
  // grid: on faces, edges and corners as often as not).
  for (const Ray& ray : rays) {
    for (const glm::dvec3 p : {glm::dvec3(ray.org), glm::dvec3(ray.org) + glm::dvec3(ray.dir)}) {
      std::uint32_t inside = kInvalidId;
      const PointHit want = brute_point(model, p, options, inside);
      const PointHit got = picker.closest_point(p, options);
      if (got.object != want.object || got.triangle != want.triangle ||
          !(got.distance == want.distance || (!got.hit() && !want.hit())) || got.point != want.point) {
        fail_point("closest_point", got, want);
      }
      if (options.mode == PickMode::kObb && picker.containing_object(p, options) != inside) {
        fail_point("containing_object", PointHit{picker.containing_object(p, options)},
                   PointHit{inside});
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  PickerConfig config;
  if (in.ConsumeBool()) config.batch_interleave_bytes = 0;  // interleaved batches
  config.rebuild_factor = in.ConsumeBool() ? 1.5f : 1e30f;  // refits only
  // The 16-wide top level, under the AVX-512 node test (two AVX2 halves
  // per node on a CPU without it), else the 8-wide one under the default
  // node test (AVX-512VL's walk where the CPU has AVX-512).
  config.top_width = in.ConsumeBool() ? 16 : 8;
  if (config.top_width == 16) config.isa = Isa::kAvx512;
  Picker picker(config);
  Model model;
  bool structure_dirty = false;  // adds or removals since the last commit
  bool dirty = false;            // anything since the last commit
  auto add_mesh = [&] {
    MeshData& m = model.meshes.emplace_back(make_mesh(in));
    const bool borrow = in.ConsumeBool();
    picker.add_mesh(m.positions, m.triangles,
                    borrow ? Picker::Storage::kBorrow : Picker::Storage::kCopy);
  };
  add_mesh();
  for (int op = 0; op < kMaxOps && in.remaining_bytes() > 0; ++op) {
    const int what = in.ConsumeIntegralInRange<int>(0, 7);
    const std::size_t n = model.objects.size();
    // An object id, and the first live one from it on (n when none is).
    const std::uint32_t pick = n == 0 ? 0 : in.ConsumeIntegralInRange<std::uint32_t>(0, n - 1);
    std::uint32_t live = pick;
    for (std::size_t k = 0; k < n && !model.objects[(pick + k) % n].alive; ++k) {
      live = static_cast<std::uint32_t>((pick + k + 1) % n);
    }
    const bool has_live = n > 0 && model.objects[live].alive;
    switch (what) {
      case 0:
        if (model.meshes.size() < kMaxMeshes) add_mesh();
        break;
      case 1:
      case 2:
        if (n < kMaxObjects) {
          const auto mesh = in.ConsumeIntegralInRange<std::uint32_t>(
              0, static_cast<std::uint32_t>(model.meshes.size() - 1));
          const glm::mat4 m = make_matrix(in);
          const std::uint32_t mask = 1u << in.ConsumeIntegralInRange<int>(0, 3);
          const std::uint32_t id = picker.add_object(mesh, m, mask);
          if (id != n) fail("ids must be handed out in order", Hit{id}, Hit{std::uint32_t(n)});
          model.objects.push_back({mesh, m, mask, true});
          structure_dirty = dirty = true;
        }
        break;
      case 3:
        if (has_live) {
          picker.remove_object(live);
          model.objects[live].alive = false;
          structure_dirty = dirty = true;
        }
        break;
      case 4:
        if (has_live) {
          const glm::mat4 m = make_matrix(in);
          picker.set_matrix(live, m);
          model.objects[live].matrix = m;
          dirty = true;
        }
        break;
      case 5:
        if (n > 0) {
          const std::uint32_t mask = in.ConsumeIntegral<std::uint32_t>() & 0xFu;
          picker.set_mask(pick, mask);
          model.objects[pick].mask = mask;
        }
        break;
      case 6: {
        const int mode = in.ConsumeIntegralInRange<int>(0, 2);
        if (mode == 1 && !structure_dirty) {
          picker.commit(CommitMode::kRefit);
        } else {
          picker.commit(mode == 2 ? CommitMode::kRebuild : CommitMode::kAuto);
        }
        structure_dirty = dirty = false;
        break;
      }
      default: {
        if (dirty) {
          picker.commit();
          structure_dirty = dirty = false;
        }
        std::vector<Ray> rays(in.ConsumeIntegralInRange<std::size_t>(1, 16));
        for (Ray& r : rays) r = make_ray(in);
        QueryOptions options(in.ConsumeBool() ? PickMode::kMesh : PickMode::kObb,
                             in.ConsumeBool() ? 0xFu : 1u + in.ConsumeIntegralInRange<std::uint32_t>(0, 14));
        if (in.ConsumeBool()) {
          const std::uint32_t skip = in.ConsumeIntegralInRange<std::uint32_t>(0, 7);
          options.filter = [skip](std::uint32_t id) { return id % 8 != skip; };
        }
        check_queries(picker, model, rays, options);
        break;
      }
    }
  }
  return 0;
}
