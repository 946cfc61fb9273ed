// The OBB picker against brute force over every object, on generated scenes
// with rotated, mirrored, sheared, flat and coincident boxes.
#include "test_util.h"

#include "support/obb_brute_force.h"
#include "raypick/bvh/picker.h"
#include "raypick/core/assert.h"
#include "scene_gen.h"

#include <algorithm>
#include <limits>
#include <type_traits>

using namespace raypick;

namespace {

// Rays as these tests draw them: some with a zero x component.
constexpr test::SceneRayMix kPickerMix{3.0f, 0.5f, 0.0f, 0.2f};

tools::BoxesOptions all_box_kinds() { return tools::mixed_options(2.0); }

}  // namespace

TEST_CASE("picker closest hit equals brute force on random scenes of many sizes") {
  for (std::size_t n : {0, 1, 2, 3, 50, 1000, 4000}) {
    CAPTURE(n);
    const Scene scene = tools::make_boxes_scene(n, 1000 + n, all_box_kinds());
    const Picker picker(scene);
    const test::ObbBruteForce brute_force(scene);
    std::size_t hits = 0;
    for (const Ray& ray : test::random_scene_rays(scene, 3000, n, kPickerMix)) {
      const Hit expected = brute_force.nearest(ray);
      const Hit got = picker.intersect(ray);
      REQUIRE(got.object == expected.object);
      REQUIRE(got.t == expected.t);
      hits += got.hit();
    }
    if (n > 0) CHECK(hits > 300);
  }
}

TEST_CASE("equal t goes to the lower object id") {
  // Three identical boxes, then one identical box again at the end.
  Scene scene = tools::make_boxes_scene(1, 5);
  scene.objects.push_back(scene.objects[0]);
  scene.objects.push_back(scene.objects[0]);
  scene.objects[0].matrix = glm::translate(glm::mat4{1.0f}, {50, 0, 0});
  const Picker picker(scene);
  const glm::vec3 c{scene.objects[1].matrix[3]};
  Ray ray{c + glm::vec3{0, 0, -20}, {0, 0, 1}};
  const Hit hit = picker.intersect(ray);
  CHECK(hit.object == 1);
  const auto all = picker.intersect_all(ray);
  REQUIRE(all.size() == 2);
  CHECK(all[0].object == 1);
  CHECK(all[1].object == 2);
  CHECK(all[0].t == all[1].t);
}

TEST_CASE("objects with an empty mesh or a singular matrix are never hit") {
  Scene scene = tools::make_boxes_scene(3, 2);
  scene.meshes.push_back(Mesh{});  // no triangles
  for (Object& o : scene.objects) o.matrix = glm::mat4{1.0f};
  scene.objects[0].mesh = 2;
  scene.objects[1].matrix = glm::scale(glm::mat4{1.0f}, {1, 0, 1});
  const Picker picker(scene);
  const Hit hit = picker.intersect(Ray{{0, 0, -5}, {0, 0, 1}});
  CHECK(hit.object == 2);
  CHECK(hit.t == 4.5f);
  CHECK(picker.world_box(0).empty());
  CHECK(picker.world_box(1).empty());
}

TEST_CASE("occluded and all-hits agree with brute force") {
  const Scene scene = tools::make_boxes_scene(600, 77, all_box_kinds());
  const Picker picker(scene);
  for (const Ray& ray : test::random_scene_rays(scene, 1500, 78, kPickerMix)) {
    std::vector<Hit> expected;
    for (std::uint32_t i = 0; i < scene.objects.size(); ++i) {
      const Object& obj = scene.objects[i];
      const Obb obb = Obb::make(scene.meshes[obj.mesh].triangle_bounds(), obj.matrix);
      const float t = obb_entry(ray, obb, ray.tmax);
      if (t != kInfinity) {
        const Hit h{i, t};
        expected.push_back(h);
      }
    }
    std::sort(expected.begin(), expected.end(), closer);
    CHECK(picker.occluded(ray) == !expected.empty());
    const std::vector<Hit> all = picker.intersect_all(ray);
    REQUIRE(all.size() == expected.size());
    for (std::size_t k = 0; k < all.size(); ++k) {
      CHECK(all[k].object == expected[k].object);
      CHECK(all[k].t == expected[k].t);
    }
    const std::vector<Hit> two = picker.intersect_all(ray, PickMode::kObb, 2);
    CHECK(two.size() == std::min<std::size_t>(2, expected.size()));
  }
}

TEST_CASE("segment rays: tmax cuts off farther objects") {
  const Scene scene = tools::make_boxes_scene(300, 8, all_box_kinds());
  const Picker picker(scene);
  for (Ray ray : test::random_scene_rays(scene, 1000, 9, kPickerMix)) {
    const Hit full = picker.intersect(ray);
    if (!full.hit() || full.t == 0.0f) continue;
    ray.tmax = full.t * 0.999f;
    CHECK_FALSE(picker.intersect(ray).hit());
    ray.tmax = full.t;
    CHECK(picker.intersect(ray).object == full.object);
  }
}

TEST_CASE("after moving objects and refitting, picks equal brute force on the moved scene") {
  Scene scene = tools::make_boxes_scene(1000, 21, all_box_kinds());
  Picker picker(scene);
  std::mt19937_64 rng(22);
  std::uniform_real_distribution<float> u(-8.0f, 8.0f);
  for (std::uint32_t i = 0; i < scene.objects.size(); i += 3) {
    scene.objects[i].matrix =
        glm::translate(glm::mat4{1.0f}, {u(rng), u(rng), u(rng)}) *
        scene.objects[i].matrix;
    picker.set_matrix(i, scene.objects[i].matrix);
  }
  picker.refit();
  const test::ObbBruteForce brute_force(scene);
  for (const Ray& ray : test::random_scene_rays(scene, 3000, 23, kPickerMix)) {
    const Hit expected = brute_force.nearest(ray);
    const Hit got = picker.intersect(ray);
    REQUIRE(got.object == expected.object);
    REQUIRE(got.t == expected.t);
  }
}

// The embedding API's ownership: move-only, moves never throw.
static_assert(!std::is_copy_constructible_v<Picker> && !std::is_copy_assignable_v<Picker>);
static_assert(std::is_nothrow_move_constructible_v<Picker> &&
              std::is_nothrow_move_assignable_v<Picker>);

TEST_CASE("a moved picker answers as the original did, and takes moves and commits") {
  const Scene scene = tools::make_boxes_scene(300, 61, all_box_kinds());
  Picker original(scene);
  const std::vector<Ray> rays = test::random_scene_rays(scene, 500, 62, kPickerMix);
  const std::vector<Hit> before = original.intersect_batch(rays);
  Picker moved(std::move(original));
  Picker assigned;
  assigned = std::move(moved);
  REQUIRE(assigned.object_count() == scene.objects.size());
  const test::ObbBruteForce brute_force(scene);
  int hits = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const Hit h = assigned.intersect(rays[i]);
    REQUIRE(h.object == before[i].object);
    REQUIRE(h.t == before[i].t);
    REQUIRE(h.object == brute_force.nearest(rays[i]).object);
    hits += h.hit();
  }
  CHECK(hits > 50);
  // Still a working picker: move object 0 onto the first ray's path.
  const Ray& ray = rays[0];
  assigned.set_matrix(0, glm::translate(glm::mat4{1.0f}, ray.org + 0.5f * ray.dir));
  CHECK(assigned.commit().refitted);
  const Hit h = assigned.intersect(ray);
  CHECK(h.hit());
  CHECK(h.t <= 0.5f);
}

TEST_CASE("a bad ray (zero, NaN or infinite direction, non-finite origin) is a miss, never an abort") {
  Picker picker;
  const auto cube = picker.add_mesh(box_mesh(Aabb{glm::vec3{-1.0f}, glm::vec3{1.0f}}).positions,
                                    box_mesh(Aabb{glm::vec3{-1.0f}, glm::vec3{1.0f}}).triangles);
  picker.add_object(cube, glm::mat4{1.0f});
  picker.commit();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Ray good{{0.0f, 0.0f, -5.0f}, {0.0f, 0.0f, 1.0f}};
  const std::vector<Ray> bad = {
      Ray{{0.0f, 0.0f, -5.0f}, {0.0f, 0.0f, 0.0f}},   // zero direction
      Ray{{0.0f, 0.0f, -5.0f}, {0.0f, nan, 1.0f}},    // NaN direction
      Ray{{0.0f, 0.0f, -5.0f}, {inf, 0.0f, 1.0f}},    // infinite direction
      Ray{{nan, 0.0f, -5.0f}, {0.0f, 0.0f, 1.0f}},    // NaN origin
      Ray{{0.0f, 0.0f, -5.0f}, {0.0f, 0.0f, 1.0f}, 2.0f, 1.0f},  // tmin > tmax
  };
  for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    CAPTURE(int(mode));
    REQUIRE(picker.intersect(good, mode).hit());
    for (const Ray& r : bad) {
      CHECK_FALSE(picker.intersect(r, mode).hit());
      CHECK_FALSE(picker.occluded(r, mode));
      CHECK(picker.intersect_all(r, mode).empty());
      CHECK_FALSE(picker.intersect(to_double(r), mode).hit());
      CHECK_FALSE(picker.occluded(to_double(r), mode));
    }
    // A batch of good and bad rays: the bad ones miss, the good ones are
    // the single answers.
    std::vector<Ray> batch;
    for (int k = 0; k < 40; ++k) batch.push_back(k % 3 == 0 ? bad[k % bad.size()] : good);
    const std::vector<Hit> hits = picker.intersect_batch(batch, QueryOptions{mode});
    std::vector<RayD> batch_d;
    for (const Ray& r : batch) batch_d.push_back(to_double(r));
    const std::vector<Hit> hits_d = picker.intersect_batch(batch_d, QueryOptions{mode});
    for (std::size_t k = 0; k < batch.size(); ++k) {
      CAPTURE(k);
      const Hit want = picker.intersect(batch[k], mode);
      CHECK(hits[k].hit() == (k % 3 != 0));
      CHECK(hits[k].object == want.object);
      CHECK(hits[k].t == want.t);
      CHECK(hits_d[k].object == want.object);
    }
  }
}

TEST_CASE("a picker refuses an invalid scene, its objects checked in parallel") {
  // The Picker's precondition (validate_scene), checked by RAYPICK_ASSERT:
  // here a handler that throws instead of aborting. 10,000 objects make
  // several chunks of the parallel check; the bad object sits in a late one.
  struct Refused {};
  struct Restore {
    AssertHandler previous;
    ~Restore() { set_assert_handler(previous); }
  } restore{set_assert_handler([](const char*, const char*, const char*, int) { throw Refused{}; })};
  Scene scene = tools::make_boxes_scene(10000, 3);
  CHECK_NOTHROW(Picker{scene});
  scene.objects[9321].matrix[2][1] = std::numeric_limits<float>::quiet_NaN();
  CHECK(!validate_scene(scene).empty());
  CHECK_THROWS_AS(Picker{scene}, Refused);
  scene.objects[9321].matrix[2][1] = 0.0f;
  scene.objects[7777].mesh = 2;  // the scene's meshes are 0 and 1 (cube, quad)
  CHECK_THROWS_AS(Picker{scene}, Refused);
}
