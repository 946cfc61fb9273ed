// Picker::select against a brute-force reference in double precision that
// works another way: an object touches the region when one of its corners
// (vertices) projects into the rectangle in front of the camera, one of its
// edges crosses the region, or one of the region's edges crosses it
// (clipped in the object's own frame); it is contained when every corner
// (vertex) projects into the rectangle.
#include "support/random_camera.h"
#include "test_util.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/camera.h"
#include "raypick/core/obb.h"

#include <glm/geometric.hpp>
#include <glm/matrix.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace {

using namespace raypick;

struct Rect {
  double x0, y0, x1, y1;  // ordered: x0 <= x1, y0 <= y1
};

// A point's place per the contract's words: in front of the camera (the eye
// itself for a perspective camera) and projecting into the rectangle.
bool ref_inside(const Camera& cam, const Rect& r, const glm::dvec3& p) {
  const double depth = cam.depth(p);
  if (depth < 0.0) return false;
  if (cam.projection() == Projection::kPerspective && depth == 0.0) return p == cam.eye();
  const glm::dvec2 w = cam.project(p);
  return w.x >= r.x0 && w.x <= r.x1 && w.y >= r.y0 && w.y <= r.y1;
}

// Clips a + s*d, s in [0, smax] (smax may be +inf), against half-spaces
// n.p + c >= 0; true when something is left.
bool clip(const glm::dvec3& a, const glm::dvec3& d, double smax,
          std::span<const Plane> planes) {
  double lo = 0.0, hi = smax;
  for (const Plane& pl : planes) {
    const double v0 = pl.eval(a), dv = glm::dot(pl.n, d);
    if (dv == 0.0) {
      if (v0 < 0.0) return false;
      continue;
    }
    const double s = -v0 / dv;
    if (dv > 0.0) lo = std::max(lo, s);
    else hi = std::min(hi, s);
  }
  return lo <= hi;
}

// The region's edges: rays (from the eye, or from the rectangle's corners on
// the eye's plane) and, orthographic, the rectangle's four sides.
struct Edge {
  glm::dvec3 a, d;
  double smax;
};
std::vector<Edge> region_edges(const Frustum& fr) {
  std::vector<Edge> out;
  for (int k = 0; k < 4; ++k) out.push_back({fr.vertex[k], fr.edge_dir[k], INFINITY});
  if (!fr.perspective) {
    const int next[4] = {1, 3, 0, 2};
    for (int k = 0; k < 4; ++k) out.push_back({fr.vertex[k], fr.vertex[next[k]] - fr.vertex[k], 1.0});
  }
  return out;
}

// The slab clip of a + s*d in the frame of an affine map (inverted in double).
bool clip_box(const glm::dmat3& inv, const glm::dvec3& t, const Aabb& box, const Edge& e) {
  const glm::dvec3 a = inv * (e.a - t), d = inv * e.d;
  double lo = 0.0, hi = e.smax;
  for (int k = 0; k < 3; ++k) {
    if (d[k] == 0.0) {
      if (a[k] < box.min[k] || a[k] > box.max[k]) return false;
      continue;
    }
    double s0 = (box.min[k] - a[k]) / d[k], s1 = (box.max[k] - a[k]) / d[k];
    if (s0 > s1) std::swap(s0, s1);
    lo = std::max(lo, s0);
    hi = std::min(hi, s1);
  }
  return lo <= hi;
}

// Whether a + s*d (s in [0, smax]) meets triangle p0 p1 p2, by solving for
// the barycentrics (not when the edge lies in the triangle's plane).
bool edge_hits_triangle(const Edge& e, const glm::dvec3& p0, const glm::dvec3& p1,
                        const glm::dvec3& p2) {
  const glm::dmat3 m(p1 - p0, p2 - p0, -e.d);
  const double det = glm::determinant(m);
  if (det == 0.0) return false;
  const glm::dvec3 x = glm::inverse(m) * (e.a - p0);
  return x.x >= 0.0 && x.y >= 0.0 && x.x + x.y <= 1.0 && x.z >= 0.0 && x.z <= e.smax;
}

struct Reference {
  const Scene& scene;
  const Camera& cam;
  Rect rect;
  Frustum fr;
  std::vector<Edge> edges;

  Reference(const Scene& s, const Camera& c, const Rect& r)
      : scene(s), cam(c), rect(r), fr(c.frustum(r.x0, r.y0, r.x1, r.y1)), edges(region_edges(fr)) {}

  bool select(std::size_t id, SelectRule rule, PickMode mode) const {
    const Object& o = scene.objects[id];
    const Mesh& mesh = scene.meshes[o.mesh];
    const Aabb bounds = mesh.triangle_bounds();
    const glm::dmat4 m(o.matrix);
    const glm::dmat3 a(m);
    const glm::dvec3 t(m[3]);
    if (bounds.empty() || glm::determinant(glm::dmat3(glm::mat3(o.matrix))) == 0.0) return false;
    auto world = [&](const glm::vec3& q) { return a * glm::dvec3(q) + t; };
    if (mode == PickMode::kObb) {
      glm::dvec3 c[8];
      for (int k = 0; k < 8; ++k) {
        c[k] = world({(k & 1) ? bounds.max.x : bounds.min.x, (k & 2) ? bounds.max.y : bounds.min.y,
                      (k & 4) ? bounds.max.z : bounds.min.z});
      }
      if (rule == SelectRule::kContain) {
        return std::all_of(c, c + 8, [&](const glm::dvec3& p) { return ref_inside(cam, rect, p); });
      }
      if (std::any_of(c, c + 8, [&](const glm::dvec3& p) { return ref_inside(cam, rect, p); })) return true;
      for (int k = 0; k < 8; ++k) {
        for (int ax = 0; ax < 3; ++ax) {
          if (k & (1 << ax)) continue;
          if (clip(c[k], c[k | (1 << ax)] - c[k], 1.0, fr.planes)) return true;
        }
      }
      const glm::dmat3 inv = glm::inverse(a);
      for (const Edge& e : edges) {
        if (clip_box(inv, t, bounds, e)) return true;
      }
      return false;
    }
    // Zero-area triangles are never hit: they never touch, and an object
    // made of them only is never selected.
    auto flat = [&](const glm::uvec3& tri) {
      const glm::dvec3 p0(mesh.positions[tri.x]), p1(mesh.positions[tri.y]), p2(mesh.positions[tri.z]);
      return glm::cross(p1 - p0, p2 - p0) == glm::dvec3(0.0);
    };
    if (std::all_of(mesh.triangles.begin(), mesh.triangles.end(), flat)) return false;
    if (rule == SelectRule::kContain) {
      for (const glm::uvec3& tri : mesh.triangles) {
        for (int k = 0; k < 3; ++k) {
          if (!ref_inside(cam, rect, world(mesh.positions[tri[k]]))) return false;
        }
      }
      return true;
    }
    for (const glm::uvec3& tri : mesh.triangles) {
      if (flat(tri)) continue;
      const glm::dvec3 p[3] = {world(mesh.positions[tri.x]), world(mesh.positions[tri.y]),
                               world(mesh.positions[tri.z])};
      for (int k = 0; k < 3; ++k) {
        if (ref_inside(cam, rect, p[k])) return true;
        if (clip(p[k], p[(k + 1) % 3] - p[k], 1.0, fr.planes)) return true;
      }
      for (const Edge& e : edges) {
        if (edge_hits_triangle(e, p[0], p[1], p[2])) return true;
      }
    }
    return false;
  }
};

// Random objects over four meshes: a unit box, a sparse triangle soup (whose
// OBB is mostly empty, so obb and mesh answers differ), a flat quad, and an
// empty mesh; a few singular matrices.
Scene random_scene(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Scene s;
  s.meshes.push_back(box_mesh(Aabb{glm::vec3{-0.5f}, glm::vec3{0.5f}}));
  Mesh soup;
  for (unsigned k = 0; k < 4; ++k) {
    const glm::vec3 c{u(rng), u(rng), u(rng)};
    for (int j = 0; j < 3; ++j) soup.positions.push_back(c + 0.2f * glm::vec3{u(rng), u(rng), u(rng)});
    soup.triangles.push_back({3 * k, 3 * k + 1, 3 * k + 2});
  }
  s.meshes.push_back(soup);
  Mesh quad;
  quad.positions = {{-1, -1, 0}, {1, -1, 0}, {1, 1, 0}, {-1, 1, 0}};
  quad.triangles = {{0, 1, 2}, {0, 2, 3}};
  s.meshes.push_back(quad);
  s.meshes.push_back(Mesh{});
  test::add_random_objects(s, n, rng, [](std::size_t) { return true; });
  for (std::size_t i = 5; i < n; i += 37) s.objects[i].matrix[1] = glm::vec4(0.0f);  // singular
  return s;
}

const char* rule_name(SelectRule r) { return r == SelectRule::kTouch ? "touch" : "contain"; }

}  // namespace

TEST_CASE("select matches a brute-force double-precision reference on random scenes and rectangles") {
  const Scene scene = random_scene(21, 400);
  const Picker picker(scene);
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::size_t selected = 0, borderline = 0, checked = 0;
  for (int c = 0; c < 60; ++c) {
    CameraSpec s;
    s.projection = c % 3 == 2 ? Projection::kOrthographic : Projection::kPerspective;
    s.eye = {30.0 * (u(rng) - 0.5), 30.0 * (u(rng) - 0.5), 30.0 * (u(rng) - 0.5)};
    if (c % 4 == 0) s.eye *= 0.2;  // among the objects
    s.target = {4.0 * u(rng), 4.0 * u(rng), 4.0 * u(rng)};
    s.fov_deg = 30.0 + 90.0 * u(rng);
    s.ortho_height = 5.0 + 20.0 * u(rng);
    s.width = 320;
    s.height = 240;
    REQUIRE(check_camera(s).empty());
    const Camera cam(s);
    double xs[2] = {(1.4 * u(rng) - 0.2) * s.width, (1.4 * u(rng) - 0.2) * s.width};
    double ys[2] = {(1.4 * u(rng) - 0.2) * s.height, (1.4 * u(rng) - 0.2) * s.height};
    if (c % 10 == 3) xs[1] = xs[0];  // a zero-width rectangle
    const Rect rect{std::min(xs[0], xs[1]), std::min(ys[0], ys[1]), std::max(xs[0], xs[1]),
                    std::max(ys[0], ys[1])};
    // Rounding can only matter for objects whose answer changes when the
    // rectangle grows or shrinks by a millionth of a pixel.
    const double eps = 1e-6;
    const Reference ref(scene, cam, rect);
    const Reference grown(scene, cam, {rect.x0 - eps, rect.y0 - eps, rect.x1 + eps, rect.y1 + eps});
    const Rect sr{rect.x0 + eps, rect.y0 + eps, std::max(rect.x0 + eps, rect.x1 - eps),
                  std::max(rect.y0 + eps, rect.y1 - eps)};
    const Reference shrunk(scene, cam, sr);
    // Corners given in the other order: the same region.
    const Frustum fr = cam.frustum(xs[1], ys[1], xs[0], ys[0]);
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      for (SelectRule rule : {SelectRule::kTouch, SelectRule::kContain}) {
        const std::vector<std::uint32_t> got = picker.select(fr, rule, QueryOptions(mode));
        CHECK(std::is_sorted(got.begin(), got.end()));
        for (std::size_t id = 0; id < scene.objects.size(); ++id) {
          const bool want = ref.select(id, rule, mode);
          const bool have = std::binary_search(got.begin(), got.end(), std::uint32_t(id));
          ++checked;
          selected += have;
          if (want == have) continue;
          if (grown.select(id, rule, mode) != shrunk.select(id, rule, mode)) {
            ++borderline;
            continue;
          }
          FAIL_CHECK("camera " << c << " object " << id << " " << std::string(rule_name(rule))
                               << std::string(mode == PickMode::kObb ? " obb" : " mesh")
                               << ": select " << have << ", reference " << want);
        }
      }
    }
  }
  MESSAGE("checked " << checked << ", selected " << selected << ", borderline " << borderline);
  CHECK(selected > checked / 20);  // the cases are not all empty...
  CHECK(selected < checked / 2);   // ...nor all full
  CHECK(borderline < 5);
}

TEST_CASE("select includes boxes exactly on the region's boundary and excludes those an ulp beyond") {
  // Orthographic, axis-aligned: 10 pixels per unit, so the rectangle
  // (100, 150)-(300, 250) is x in [-10, 10], y in [-5, 5], exactly.
  const Camera cam(test::ortho_down_z(50.0, 40.0, 400));
  const float up = std::nextafter(-10.0f, -11.0f);  // an ulp beyond x = -10
  struct Case {
    glm::vec3 lo, hi;
    bool touch, contain;
  };
  const Case cases[] = {
      {{-12, -1, -1}, {-10, 1, 1}, true, false},   // right face on x = -10
      {{-12, -1, -1}, {up, 1, 1}, false, false},   // an ulp outside
      {{-10, -5, -3}, {10, 5, 3}, true, true},     // exactly the region's section
      {{-10, -5, 49}, {10, 5, 50}, true, true},    // back face on the eye's plane
      {{-1, -1, 50}, {1, 1, 52}, true, false},     // only its face on the eye's plane
      {{-1, -1, std::nextafter(50.0f, 51.0f)}, {1, 1, 52}, false, false},  // behind it
      {{10, 5, -1}, {11, 6, 1}, true, false},      // an edge along the corner's ray
      {{10, 5, 0}, {10, 5, 0}, true, true},        // a point box on the corner ray (obb)
      {{-3, 5, -2}, {3, 5, 2}, true, true},        // flat, in the top plane
      {{-3, std::nextafter(5.0f, 6.0f), -2}, {3, 6, 2}, false, false},
  };
  Scene scene;
  for (const Case& c : cases) {
    scene.meshes.push_back(box_mesh(Aabb{c.lo, c.hi}));
    Object o;
    o.mesh = static_cast<std::uint32_t>(scene.meshes.size() - 1);
    scene.objects.push_back(o);
  }
  const Picker picker(scene);
  const Rect rect{100, 150, 300, 250};
  const Reference ref(scene, cam, rect);
  const Frustum fr = cam.frustum(300, 250, 100, 150);
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    for (SelectRule rule : {SelectRule::kTouch, SelectRule::kContain}) {
      const std::vector<std::uint32_t> got = picker.select(fr, rule, QueryOptions(mode));
      for (std::size_t i = 0; i < std::size(cases); ++i) {
        bool want = rule == SelectRule::kTouch ? cases[i].touch : cases[i].contain;
        // The point box's triangles all have zero area: never hit by mesh.
        if (mode == PickMode::kMesh && i == 7) want = false;
        const bool have = std::binary_search(got.begin(), got.end(), std::uint32_t(i));
        CHECK_MESSAGE(have == want, "case " << i << " " << std::string(rule_name(rule)));
        CHECK_MESSAGE(ref.select(i, rule, mode) == want, "reference, case " << i);
      }
    }
  }
}

TEST_CASE("a perspective region holds the eye but nothing else of the eye's plane") {
  const CameraSpec s = test::camera_down_z(10.0, 100);
  const Camera cam(s);
  Scene scene;
  scene.meshes.push_back(box_mesh(Aabb{{-1, -1, 9}, {1, 1, 10}}));  // the eye on its face
  scene.meshes.push_back(box_mesh(Aabb{{1, -1, 9}, {2, 1, 10}}));   // beside the eye
  scene.meshes.push_back(box_mesh(Aabb{{-1, -1, 10}, {1, 1, 11}})); // behind, touching the eye
  for (std::uint32_t m = 0; m < 3; ++m) scene.objects.push_back(Object{m, glm::mat4(1.0f), "b", ~0u});
  const Picker picker(scene);
  const std::vector<std::uint32_t> got = picker.select(cam.frustum(0, 0, 100, 100), SelectRule::kTouch);
  CHECK(got == std::vector<std::uint32_t>{0, 2});
}

TEST_CASE("select honours the mask and the filter, and skips objects that can never be hit") {
  const Scene scene = random_scene(23, 200);
  Picker picker(scene);
  for (std::uint32_t id = 0; id < picker.object_count(); ++id) picker.set_mask(id, 1u << (id % 3));
  const CameraSpec s = test::camera_down_z(40.0, 100);
  const Frustum fr = Camera(s).frustum(0, 0, 100, 100);
  const std::vector<std::uint32_t> all = picker.select(fr, SelectRule::kTouch);
  REQUIRE(all.size() > 50);
  QueryOptions opt(PickMode::kObb, 2u);
  opt.filter = [](std::uint32_t id) { return id % 2 == 0; };
  const std::vector<std::uint32_t> some = picker.select(fr, SelectRule::kTouch, opt);
  std::vector<std::uint32_t> want;
  for (std::uint32_t id : all) {
    if (id % 3 == 1 && id % 2 == 0) want.push_back(id);
  }
  CHECK(some == want);
  for (std::uint32_t id : all) {
    CHECK(scene.objects[id].mesh != 3);  // the empty mesh
    CHECK(glm::determinant(scene.objects[id].matrix) != 0.0f);
  }
}

TEST_CASE("in mesh mode zero-area triangles never touch, and objects made of them only are never selected") {
  const CameraSpec s = test::camera_down_z(10.0, 100);
  const Camera cam(s);
  Scene scene;
  Mesh line;  // a zero-area triangle along x, inside the view
  line.positions = {{-1, 0, 0}, {0, 0, 0}, {1, 0, 0}};
  line.triangles = {{0, 1, 2}};
  scene.meshes.push_back(line);
  Mesh mixed = line;  // plus a real triangle far to the side, out of view
  mixed.positions.push_back({50, 0, 0});
  mixed.positions.push_back({51, 0, 0});
  mixed.positions.push_back({50, 1, 0});
  mixed.triangles.push_back({3, 4, 5});
  scene.meshes.push_back(mixed);
  for (std::uint32_t m = 0; m < 2; ++m) scene.objects.push_back(Object{m, glm::mat4(1.0f), "o", ~0u});
  const Picker picker(scene);
  const Frustum fr = cam.frustum(0, 0, 100, 100);
  for (SelectRule rule : {SelectRule::kTouch, SelectRule::kContain}) {
    CHECK(picker.select(fr, rule, QueryOptions(PickMode::kMesh)).empty());
  }
  // By boxes the line is an object like any other (a flat OBB is hit).
  CHECK(picker.select(fr, SelectRule::kTouch) == std::vector<std::uint32_t>{0, 1});
  CHECK(picker.select(fr, SelectRule::kContain) == std::vector<std::uint32_t>{0});
  const Reference ref(scene, cam, Rect{0, 0, 100, 100});
  CHECK_FALSE(ref.select(0, SelectRule::kTouch, PickMode::kMesh));
  CHECK_FALSE(ref.select(1, SelectRule::kTouch, PickMode::kMesh));
}
