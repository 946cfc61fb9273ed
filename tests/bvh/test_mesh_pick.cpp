// Mesh mode: the two-level BVH against brute force over every triangle of
// every object, on scenes with mirrored and sheared instances.
#include "test_util.h"

#include "bench_scenes.h"
#include "raypick/bvh/picker.h"
#include "raypick/core/camera.h"
#include "raypick/core/ray_triangle.h"
#include "raypick/loaders/load.h"
#include "scene_gen.h"

#include <glm/geometric.hpp>
#include <glm/gtc/matrix_transform.hpp>

#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <vector>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

using namespace raypick;

namespace {

// Rays as these tests draw them: most aimed near an object's centre.
constexpr test::SceneRayMix kMeshMix{3.0f, 0.6f, 0.4f, 0.0f};

tools::BoxesOptions mesh_box_kinds() { return tools::mixed_options(2.0); }

// One object's triangles against the ray, carried into its frame: the
// nearest t, the lowest id at that t (with its u, v), and how many
// triangles share that t. No hit: triangle kInvalidId.
struct ObjectBrute {
  float t = std::numeric_limits<float>::infinity();
  std::uint32_t triangle = kInvalidId;
  float u = 0.0f, v = 0.0f;
  int tied = 0;
};
ObjectBrute brute_object(const Mesh& mesh, const Obb& obb, const Ray& ray) {
  const Ray local = transform_ray(obb.frame, ray);
  const TriangleRay tr(local.org, local.dir);
  ObjectBrute b;
  for (std::uint32_t t = 0; t < mesh.triangles.size(); ++t) {
    const glm::uvec3& idx = mesh.triangles[t];
    const TriangleHit h = intersect_triangle(tr, mesh.positions[idx.x], mesh.positions[idx.y],
                                             mesh.positions[idx.z], ray.tmin, ray.tmax);
    if (!h.hit || h.t > b.t) continue;
    b.tied = h.t == b.t ? b.tied + 1 : 1;
    if (h.t < b.t) {
      b.triangle = t;
      b.u = h.u;
      b.v = h.v;
    }
    b.t = h.t;
  }
  return b;
}

// Every object's nearest triangle hit, computed the way the contract says
// (ray carried into the object's frame, every triangle tested, ties to the
// lower triangle id), with no BVH at all. The objects' frames are made
// once, when the scene is given, not for every ray.
class BruteAll {
 public:
  explicit BruteAll(const Scene& scene) : scene_(scene) {
    obbs_.reserve(scene.objects.size());
    for (const Object& obj : scene.objects) {
      obbs_.push_back(Obb::make(scene.meshes[obj.mesh].triangle_bounds(), obj.matrix));
    }
  }
  std::vector<Hit> operator()(const Ray& ray) const {
    std::vector<Hit> hits;
    for (std::uint32_t i = 0; i < scene_.objects.size(); ++i) {
      const Obb& obb = obbs_[i];
      if (!obb.invertible) continue;
      const ObjectBrute b = brute_object(scene_.meshes[scene_.objects[i].mesh], obb, ray);
      if (b.triangle != kInvalidId) hits.push_back(Hit{i, b.t, b.triangle, b.u, b.v});
    }
    std::sort(hits.begin(), hits.end(), closer);
    return hits;
  }

 private:
  const Scene& scene_;
  std::vector<Obb> obbs_;
};

void check_same(const Hit& got, const Hit& expected) {
  CAPTURE(got.t);
  CAPTURE(expected.t);
  CAPTURE(got.triangle);
  CAPTURE(expected.triangle);
  REQUIRE(got.object == expected.object);
  REQUIRE(got.triangle == expected.triangle);
  REQUIRE(got.t == expected.t);
  CHECK(got.u == expected.u);
  CHECK(got.v == expected.v);
}

}  // namespace

TEST_CASE("mesh mode closest hit equals brute force over every triangle of every object") {
  // 2,500 rays per scene; 800 under ASan, where the brute force over every
  // triangle made this the suite's slowest test (49 s).
#if defined(__SANITIZE_ADDRESS__)
  constexpr std::size_t kRays = 800;
#else
  constexpr std::size_t kRays = 2500;
#endif
  for (std::size_t n : {0, 1, 2, 30, 1500}) {
    CAPTURE(n);
    const Scene scene = tools::make_mesh_scene(n, 70 + n, mesh_box_kinds());
    const Picker picker(scene);
    // Mesh trees whose leaves the SAH costs per triangle (leaf_block 1,
    // not the default block of four): other trees, the same answers.
    PickerConfig singles;
    singles.mesh.leaf_block = 1;
    const Picker picker1(scene, singles);
    const BruteAll brute_all(scene);
    std::size_t hits = 0, obb_only = 0;
    for (const Ray& ray : test::random_scene_rays(scene, kRays, n + 1, kMeshMix)) {
      const std::vector<Hit> all = brute_all(ray);
      const Hit expected = all.empty() ? Hit{} : all.front();
      check_same(picker.intersect(ray, PickMode::kMesh), expected);
      check_same(picker1.intersect(ray, PickMode::kMesh), expected);
      hits += expected.hit();
      obb_only += !expected.hit() && picker.intersect(ray, PickMode::kObb).hit();
    }
    if (n >= 30) {
      CHECK(hits > kRays / 5);
      CHECK(obb_only > kRays / 125);  // the modes really differ on these scenes
    }
  }
}

TEST_CASE("mesh mode any-hit and all-hits equal brute force") {
  const Scene scene = tools::make_mesh_scene(400, 5, mesh_box_kinds());
  const Picker picker(scene);
  const BruteAll brute_all(scene);
  for (const Ray& ray : test::random_scene_rays(scene, 1500, 6, kMeshMix)) {
    const std::vector<Hit> expected = brute_all(ray);
    CHECK(picker.occluded(ray, PickMode::kMesh) == !expected.empty());
    const std::vector<Hit> all = picker.intersect_all(ray, PickMode::kMesh);
    REQUIRE(all.size() == expected.size());
    for (std::size_t k = 0; k < all.size(); ++k) check_same(all[k], expected[k]);
    const auto capped = picker.intersect_all(ray, PickMode::kMesh, 1);
    CHECK(capped.size() == std::min<std::size_t>(1, expected.size()));
  }
}

TEST_CASE("mesh mode respects the t range of the ray") {
  const Scene scene = tools::make_mesh_scene(300, 8, mesh_box_kinds());
  const Picker picker(scene);
  int checked = 0;
  for (Ray ray : test::random_scene_rays(scene, 1000, 9, kMeshMix)) {
    const Hit full = picker.intersect(ray, PickMode::kMesh);
    if (!full.hit() || full.t == 0.0f) continue;
    ++checked;
    Ray shorter = ray;
    shorter.tmax = std::nextafter(full.t, 0.0f);
    const Hit cut = picker.intersect(shorter, PickMode::kMesh);
    CHECK((!cut.hit() || cut.t < full.t));
    CHECK_FALSE(picker.occluded(shorter, PickMode::kMesh) != cut.hit());
    Ray later = ray;
    later.tmin = std::nextafter(full.t, kInfinity);
    const Hit after = picker.intersect(later, PickMode::kMesh);
    CHECK((!after.hit() || after.t > full.t));
  }
  CHECK(checked > 100);
}

TEST_CASE("world normal is the hit triangle's world-space normal, mirrored and sheared instances included") {
  const Scene scene = tools::make_mesh_scene(300, 12, mesh_box_kinds());
  const Picker picker(scene);
  int mirrored = 0;
  for (const Ray& ray : test::random_scene_rays(scene, 800, 13, kMeshMix)) {
    const Hit h = picker.intersect(ray, PickMode::kMesh);
    if (!h.hit()) continue;
    const Object& obj = scene.objects[h.object];
    const Mesh& mesh = scene.meshes[obj.mesh];
    const glm::uvec3 idx = mesh.triangles[h.triangle];
    glm::vec3 w[3];
    for (int k = 0; k < 3; ++k) {
      w[k] = glm::vec3(obj.matrix * glm::vec4(mesh.positions[idx[k]], 1.0f));
    }
    const glm::vec3 expected = glm::normalize(glm::cross(w[1] - w[0], w[2] - w[0]));
    CHECK_VEC_NEAR(picker.world_normal(h), expected, 1e-3f);
    mirrored += glm::determinant(glm::mat3(obj.matrix)) < 0.0f;
    // The world hit point o + t d lies on the world triangle (barycentrics).
    const glm::vec3 p = ray.org + h.t * ray.dir;
    const glm::vec3 q = (1.0f - h.u - h.v) * w[0] + h.u * w[1] + h.v * w[2];
    CHECK_VEC_NEAR(p, q, 1e-3f * (1.0f + glm::length(p)));
  }
  CHECK(mirrored > 10);
  CHECK(picker.world_normal(Hit{}) == glm::vec3{0.0f});
}

TEST_CASE("a hit is found again with tmax set to its own t, flat meshes included") {
  // Coincident flat quads under random matrices: the triangle test may put
  // the hit an ulp past the plane a node's slab test computes, so boxes
  // flat on an axis must be padded on that axis too; and the tie between
  // the coincident copies must still go to the lower id.
  tools::BoxesOptions opt = tools::mixed_options();
  opt.flat_fraction = 0.8;
  opt.coincident_fraction = 0.3;
  const Scene scene = tools::make_mesh_scene(400, 19, opt);
  const Picker picker(scene);
  int checked = 0;
  for (const Ray& ray : test::random_scene_rays(scene, 4000, 20, kMeshMix)) {
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      const Hit h = picker.intersect(ray, mode);
      if (!h.hit()) continue;
      ++checked;
      Ray again = ray;
      again.tmax = h.t;
      const Hit g = picker.intersect(again, mode);
      REQUIRE(g.object == h.object);
      REQUIRE(g.t == h.t);
      CHECK(picker.occluded(again, mode));
    }
  }
  CHECK(checked > 1000);
}

namespace {

// The bench's crowd model (Wuson), merged into one mesh.
Mesh wuson() {
  LoadResult model = load_scene(test::assimp_model("OBJ/WusonOBJ.obj").string());
  REQUIRE(model.ok());
  return merge_into_one_mesh(model.scene());
}

// Object `object` of `scene` as BruteAll tests it.
ObjectBrute brute_object(const Scene& scene, std::uint32_t object, const Ray& ray) {
  const Mesh& mesh = scene.meshes[scene.objects[object].mesh];
  return brute_object(mesh, Obb::make(mesh.triangle_bounds(), scene.objects[object].matrix), ray);
}

}  // namespace

TEST_CASE("a tie between near-duplicate faces in different leaves of a mesh's tree goes to the lower id") {
  // The Wuson model has near-duplicate faces (pairs such as 2224 and 3316,
  // mirrored across x = 0 within about 1e-5) that the watertight test hits
  // at the same float t. In crowd-10k these five rays of the bench's
  // 512x512 camera meet such a pair whose triangles lie in different
  // leaves. The walk had culled the lower id's leaf at the first hit's t
  // (its box's float entry above the watertight t, which can round a few
  // ulps below the exact hit) and returned the higher id. Asked again with
  // tmax at that t, the walk starts at that bound: the same answer.
  const Scene scene = tools::make_crowd_scene(wuson(), 10000, 1);
  const std::vector<Ray> rays =
      tools::make_camera_rays(tools::make_camera(world_bounds(scene)), 512, 512);
  // Both trees: the default (leaves costed per four triangles), whose
  // walk had missed three of the five ties, and leaf_block 1, whose walk
  // had missed all five. (Which pairs share a leaf depends on the tree:
  // the brute force below checks each answer, wherever they lie.)
  PickerConfig singles;
  singles.mesh.leaf_block = 1;
  const Picker picker4(scene), picker1(scene, singles);
  for (const Picker* picker : {&picker4, &picker1}) {
    for (const std::size_t i : {69340u, 115074u, 136368u, 157926u, 202545u}) {
      CAPTURE(picker == &picker1);
      CAPTURE(i);
      Ray ray = rays.at(i);
      const Hit hit = picker->intersect(ray, PickMode::kMesh);
      REQUIRE(hit.hit());
      const ObjectBrute brute = brute_object(scene, hit.object, ray);
      REQUIRE(brute.tied >= 2);  // the scene still holds the tie this test is about
      CHECK(hit.t == brute.t);
      CHECK(hit.triangle == brute.triangle);
      ray.tmax = hit.t;
      const Hit again = picker->intersect(ray, PickMode::kMesh);
      CHECK(again.object == hit.object);
      CHECK(again.triangle == brute.triangle);
    }
  }
}

TEST_CASE("two coincident instances of a mesh: every hit goes to the lower object id") {
  // Objects 0 and 1 share the mesh and the matrix: every ray that hits
  // meets both at the same t and triangle, and the contract gives the tie
  // to object 0. (Here the walk reaches object 0 first; the culling that
  // the test above catches does not arise.)
  const Mesh model = wuson();
  Scene scene;
  scene.meshes = {model};
  glm::mat4 m(1.0f);
  m = glm::rotate(m, 0.7f, glm::normalize(glm::vec3{1.0f, 2.0f, 3.0f}));
  m = glm::scale(m, glm::vec3{1.3f});
  for (int k = 0; k < 2; ++k) {
    Object o;
    o.mesh = 0;
    o.matrix = m;
    o.name = "copy" + std::to_string(k);
    scene.objects.push_back(o);
  }
  const Picker picker(scene);
  const std::vector<Ray> rays =
      tools::make_camera_rays(tools::make_camera(world_bounds(scene)), 192, 192);
  std::size_t hits = 0;
  for (const Ray& ray : rays) {
    const Hit hit = picker.intersect(ray, PickMode::kMesh);
    if (!hit.hit()) continue;
    ++hits;
    CHECK(hit.object == 0);
  }
  CHECK(hits > 1000);
}

TEST_CASE("a direction that overflows float in the objects' frames is a miss in mesh mode, single, any-hit, all-hits and batch, with no read past a tree") {
  // Objects scaled by 1/100: a world direction of length 3e38 is 3e40,
  // infinite, in their frames. Before the rule, the mesh trees' walks
  // followed their unused slots (0 * inf = NaN planes) past the nodes.
  Scene scene = tools::make_mesh_scene(60, 91);
  for (Object& o : scene.objects) o.matrix = glm::scale(o.matrix, glm::vec3{0.01f});
  PickerConfig config;
  config.mesh_mode = true;
  const Picker picker(scene, config);
  const Aabb box = picker.world_bounds();
  std::vector<Ray> rays;
  // Aimed at each object's box centre, from two corners of the scene.
  std::size_t ordinary_hits = 0;
  for (std::uint32_t id = 0; id < scene.objects.size(); ++id) {
    const Aabb b = picker.world_box(id);
    for (const glm::vec3& org : {box.min - glm::vec3{1.0f}, box.max + glm::vec3{1.0f}}) {
      Ray r{org, glm::normalize(0.5f * (b.min + b.max) - org)};
      ordinary_hits += picker.intersect(r, PickMode::kMesh).hit();
      r.dir *= 3e38f;
      REQUIRE(is_valid(r));
      rays.push_back(r);
    }
  }
  // The same rays at an ordinary length meet many of the objects.
  CHECK(ordinary_hits > rays.size() / 4);
  for (const Ray& r : rays) {
    CHECK_FALSE(picker.intersect(r, PickMode::kMesh).hit());
    CHECK_FALSE(picker.occluded(r, PickMode::kMesh));
    CHECK(picker.intersect_all(r, QueryOptions{PickMode::kMesh}).empty());
  }
  for (const Hit& h : picker.intersect_batch(rays, QueryOptions{PickMode::kMesh})) {
    CHECK_FALSE(h.hit());
  }
#if defined(__SSE2__)
  // Queries called with every thread in flush-to-zero and
  // denormals-are-zero mode (as Embree leaves TBB's workers, and as hosts
  // set their own threads): every query, and every batch task, runs in the
  // default mode (compiler::DefaultFpMode), and answers as in it.
  auto every_thread = [](unsigned csr) {
    _mm_setcsr(csr);
    tbb::parallel_for(0, 4096, [csr](int) { _mm_setcsr(csr); });
  };
  const unsigned saved = _mm_getcsr();
  std::vector<Hit> default_obb;
  for (const Ray& r : rays) default_obb.push_back(picker.intersect(r, PickMode::kObb));
  every_thread(0x1F80u | 0x8040u);  // FTZ | DAZ
  std::vector<Hit> batch_mesh = picker.intersect_batch(rays, QueryOptions{PickMode::kMesh});
  std::vector<Hit> batch_obb = picker.intersect_batch(rays, QueryOptions{PickMode::kObb});
  // Single queries on a caller's thread in that mode (a host's own):
  // before every query ran in the default mode, the top level's walk
  // flushed the directions' denormal inverses to 0 and followed unused
  // slots past its nodes (SIGSEGV, found by a driver under ASan).
  std::vector<Hit> ftz_obb, ftz_mesh;
  std::size_t ftz_occluded = 0, ftz_all = 0;
  for (const Ray& r : rays) {
    ftz_obb.push_back(picker.intersect(r, PickMode::kObb));
    ftz_mesh.push_back(picker.intersect(r, PickMode::kMesh));
    ftz_occluded += picker.occluded(r, PickMode::kMesh);
    ftz_all += picker.intersect_all(r, QueryOptions{PickMode::kMesh}).size();
  }
  every_thread(0x1F80u);
  _mm_setcsr(saved);
  CHECK(ftz_occluded == 0);
  CHECK(ftz_all == 0);
  for (std::size_t i = 0; i < rays.size(); ++i) {
    CHECK_FALSE(ftz_mesh[i].hit());
    CHECK(ftz_obb[i].object == default_obb[i].object);
    CHECK(ftz_obb[i].t == default_obb[i].t);
  }
  REQUIRE(batch_obb.size() == rays.size());
  for (std::size_t i = 0; i < rays.size(); ++i) {
    CHECK_FALSE(batch_mesh[i].hit());
    const Hit single = picker.intersect(rays[i], PickMode::kObb);
    CHECK(batch_obb[i].object == single.object);
    CHECK(batch_obb[i].t == single.t);
  }
#endif
}

#if defined(__SSE2__)
TEST_CASE("every query runs in the default floating-point mode, its filter too, and gives the caller's mode back") {
  // The caller's thread in flush-to-zero and denormals-are-zero mode (as a
  // host may set it): each query switches to the default mode for its
  // length (its filter sees MXCSR's control bits at 0x1F80) and restores
  // the caller's mode after it.
  const Scene scene = tools::make_mesh_scene(40, 95);
  PickerConfig config;
  config.mesh_mode = true;
  const Picker picker(scene, config);
  std::atomic<std::size_t> calls{0}, wrong_mode{0};
  QueryOptions options{PickMode::kMesh};
  options.filter = [&](std::uint32_t) {
    ++calls;
    if ((_mm_getcsr() & 0xFFC0u) != 0x1F80u) ++wrong_mode;
    return true;
  };
  CameraSpec spec;
  const Aabb box = picker.world_bounds();
  spec.target = glm::dvec3(0.5f * (box.min + box.max));
  spec.eye = spec.target + glm::dvec3(box.max - box.min) * 0.8;
  spec.width = 48;
  spec.height = 32;
  const Camera camera(spec);
  std::vector<Ray> rays;
  for (int y = 0; y < spec.height; ++y) {
    for (int x = 0; x < spec.width; ++x) rays.push_back(camera.ray(x + 0.5, y + 0.5));
  }
  std::vector<glm::dvec3> points;
  for (std::size_t i = 0; i < rays.size(); i += 37) points.push_back(glm::dvec3(rays[i].org));
  const Frustum region = camera.frustum(8, 6, 40, 26);
  const unsigned saved = _mm_getcsr();
  const unsigned caller = 0x1F80u | 0x8040u;  // FTZ | DAZ
  std::size_t kept = 0, asked = 0;
  auto check_kept = [&] {
    ++asked;
    kept += (_mm_getcsr() & 0xFFC0u) == caller;
  };
  _mm_setcsr(caller);
  std::size_t hits = 0;
  for (const Ray& r : rays) {
    hits += picker.intersect(r, options).hit();
    check_kept();
    (void)picker.occluded(r, options);
    check_kept();
    (void)picker.intersect_all(r, options);
    check_kept();
  }
  (void)picker.intersect_batch(rays, options);
  check_kept();
  (void)picker.intersect_image(rays, std::size_t(spec.width), options);
  check_kept();
  (void)picker.select(region, SelectRule::kTouch, options);
  check_kept();
  for (const glm::dvec3& p : points) {
    (void)picker.closest_point(p, options);
    check_kept();
    (void)picker.distance(p, options);
    check_kept();
    (void)picker.contains(p, options);
    check_kept();
    (void)picker.signed_distance(p, options);
    check_kept();
  }
  (void)picker.closest_points(points, options);
  check_kept();
  _mm_setcsr(saved);
  CHECK(hits > rays.size() / 20);
  CHECK(calls.load() > rays.size());
  CHECK(wrong_mode.load() == 0);
  CHECK(kept == asked);
}
#endif
