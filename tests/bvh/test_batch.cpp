// intersect_batch() against intersect(), ray by ray, on the batch paths:
// coherent packets of rays (camera-like bundles) walking the top level
// together, single rays, and interleaved rays.
#include "test_util.h"

#include "raypick/bvh/picker.h"
#include "scene_gen.h"
#include "wide_bvh.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <utility>
#include <vector>

using namespace raypick;

namespace {

// A pinhole camera's rays, row-major (as a renderer or the bench passes
// them): width x height pixels from `eye` towards `target`.
std::vector<Ray> camera_rays(const glm::vec3& eye, const glm::vec3& target, int width,
                             int height, float tan_half_fov = 0.6f) {
  const glm::vec3 forward = glm::normalize(target - eye);
  const glm::vec3 right = glm::normalize(glm::cross(forward, glm::vec3{0.0f, 1.0f, 0.0f}));
  const glm::vec3 up = glm::cross(right, forward);
  std::vector<Ray> rays;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const float sx = (2.0f * (static_cast<float>(x) + 0.5f) / static_cast<float>(width) - 1.0f) *
                       tan_half_fov;
      const float sy = (1.0f - 2.0f * (static_cast<float>(y) + 0.5f) / static_cast<float>(height)) *
                       tan_half_fov;
      Ray r;
      r.org = eye;
      r.dir = forward + sx * right + sy * up;
      rays.push_back(r);
    }
  }
  return rays;
}

// The box of the scene's object translations.
Aabb translations_box(const Scene& scene) {
  Aabb b;
  for (const Object& o : scene.objects) b.extend(glm::vec3(o.matrix[3]));
  return b;
}

// A camera's width x height rays (looking at the scene's translations from
// off a corner of their box) in runs of `run`, alternating with runs of as
// many random rays (seed `seed`).
std::vector<Ray> mixed_rays(const Scene& scene, int width, int height, std::size_t run,
                            std::uint64_t seed) {
  const Aabb box = translations_box(scene);
  const glm::vec3 center = 0.5f * (box.min + box.max);
  const std::vector<Ray> camera =
      camera_rays(center + 0.8f * (box.max - box.min), center, width, height);
  const std::vector<Ray> random = test::random_scene_rays(scene, camera.size(), seed);
  std::vector<Ray> rays;
  for (std::size_t i = 0; i + run <= camera.size(); i += run) {
    rays.insert(rays.end(), camera.begin() + i, camera.begin() + i + run);
    rays.insert(rays.end(), random.begin() + i, random.begin() + i + run);
  }
  return rays;
}

// Every answer of a batch (`batch`, one per ray) equals the single
// query's, field by field; returns the number of hits.
template <class R>
std::size_t require_equals_single(const Picker& picker, std::span<const R> rays,
                                  const QueryOptions& options, const std::vector<Hit>& batch) {
  REQUIRE(batch.size() == rays.size());
  std::size_t hits = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    CAPTURE(i);
    const Hit single = picker.intersect(rays[i], options);
    REQUIRE(batch[i].object == single.object);
    REQUIRE(batch[i].t == single.t);
    REQUIRE(batch[i].triangle == single.triangle);
    REQUIRE(batch[i].u == single.u);
    REQUIRE(batch[i].v == single.v);
    hits += single.hit();
  }
  return hits;
}

template <class R>
std::size_t require_batch_equals_single(const Picker& picker, std::span<const R> rays,
                                        const QueryOptions& options) {
  return require_equals_single(picker, rays, options, picker.intersect_batch(rays, options));
}

// How many of the rays' groups of `size` (WideBvh::kPacket, or half of it:
// a group that is not coherent walks its halves as packets when they are)
// are coherent.
std::size_t coherent_groups(std::span<const Ray> rays, const Scene& scene,
                            std::size_t size = WideBvh::kPacket) {
  const Aabb box = translations_box(scene);
  const glm::vec3 extents = box.max - box.min;
  const float extent = std::max(extents.x, std::max(extents.y, extents.z));
  std::size_t n = 0;
  for (std::size_t i = 0; i + size <= rays.size(); i += size) {
    n += WideBvh::packet_coherent(rays.subspan(i, size), extent);
  }
  return n;
}

// Pickers that run batches as for a small tree (packets, the other rays
// one at a time) and as for a large one (packets and interleaved rays),
// each on every instruction set: packets of 4, 8 and 16 rays per
// operation, and the 16-wide tree, where the CPU has them; and the 8-wide
// tree with 16 rays per operation (kAvx512, top_width 8). A picker without
// mesh trees answers obb queries only.
std::vector<Picker> both_batch_paths(const Scene& scene, PickMode mode = PickMode::kMesh) {
  std::vector<Picker> pickers;
  for (const std::size_t bytes : {SIZE_MAX, std::size_t{0}}) {
    const std::pair<Isa, int> choices[] = {
        {Isa::kSse2, 0}, {Isa::kAvx2, 0}, {Isa::kAvx512, 8}, {Isa::kAvx512, 0}};
    for (const auto& [isa, width] : choices) {
      PickerConfig config;
      config.batch_interleave_bytes = bytes;
      config.isa = isa;
      config.top_width = width;
      pickers.emplace_back(scene, config);
    }
    if (mode == PickMode::kObb) {
      PickerConfig config;
      config.batch_interleave_bytes = bytes;
      config.mesh_mode = false;
      pickers.emplace_back(scene, config);
    }
  }
  return pickers;
}

// Rays lying in the plane x = `plane`, then y = `plane`, then z = `plane`,
// with a zero direction on that axis (+0.0 for 64 rays, then -0.0 for 64),
// so that the slab test meets 0 * inf = NaN on the boxes' faces in that
// plane. Of the other two axes, the rays go along the one after (direction
// `sign`, from `along`) and drift slowly on the other (origin `across` +
// `spread` k, direction sign * (`dir_across` + `dir_step` k), k = 0..7):
// coherent packets, of one origin when `spread` is 0.
std::vector<Ray> in_plane_rays(float plane, float across, float along, float dir_across,
                               float dir_step, float sign = 1.0f, float spread = 0.01f) {
  std::vector<Ray> rays;
  for (int axis = 0; axis < 3; ++axis) {
    const int on = (axis + 2) % 3, off = (axis + 1) % 3;
    for (const float zero : {0.0f, -0.0f}) {
      for (int k = 0; k < 64; ++k) {
        Ray r;
        r.org[axis] = plane;
        r.org[off] = across + spread * static_cast<float>(k % 8);
        r.org[on] = along;
        r.dir[axis] = zero;
        r.dir[off] = sign * (dir_across + dir_step * static_cast<float>(k / 8));
        r.dir[on] = sign;
        REQUIRE(std::isinf(RayInv(r).inv_dir[axis]));
        rays.push_back(r);
      }
    }
  }
  return rays;
}

// Walks `rays` through `tree` as single rays, and as packets at every lane
// width this CPU has (4, 8 and 16 rays per operation, on either node
// width), with no tmax updates: then each ray must be offered the
// very same leaf entries either way, since its box tests are the same
// arithmetic; and some leaves must reach several rays at once (the rays
// are coherent: the packets ran). Returns how many entries the rays were
// offered.
template <class Tree>
std::size_t require_packets_offer_single_leaves(Tree tree, std::span<const Ray> rays) {
  std::vector<std::vector<std::uint32_t>> single(rays.size());
  std::size_t offered = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    tree.traverse(rays[i], [&](std::uint32_t e, float&) {
      single[i].push_back(e);
      return false;
    });
    std::sort(single[i].begin(), single[i].end());
    offered += single[i].size();
  }
  for (const int lanes : {4, 8, 16}) {
    tree.set_packet_lanes(lanes);
    if (tree.packet_lanes() != lanes) {
      MESSAGE("packets of " << lanes << " rays per operation not run: this CPU lacks them");
      continue;
    }
    CAPTURE(lanes);
    std::vector<std::vector<std::uint32_t>> packed(rays.size());
    // Leaves offered to several rays at once: the packets did run.
    std::size_t shared = 0;
    tree.traverse_packets(
        rays, [&](std::size_t i, std::uint32_t e, float&) { packed[i].push_back(e); },
        [&](std::size_t base, std::uint32_t e, std::uint32_t mask, wide_detail::PacketRays&) {
          shared += std::popcount(mask) > 1 ? 1 : 0;
          for (; mask != 0; mask &= mask - 1) packed[base + std::countr_zero(mask)].push_back(e);
        });
    CHECK(shared > 0);
    for (std::size_t i = 0; i < rays.size(); ++i) {
      CAPTURE(i);
      std::sort(packed[i].begin(), packed[i].end());
      REQUIRE(packed[i] == single[i]);
    }
  }
  return offered;
}

// tools::make_mesh_scene(n, seed) with object i in layer i % 3 (its mask
// 1 << (i % 3)).
Scene layered_mesh_scene(std::size_t n, std::uint64_t seed) {
  Scene scene = tools::make_mesh_scene(n, seed);
  for (std::size_t i = 0; i < scene.objects.size(); ++i) {
    scene.objects[i].mask = 1u << (i % 3);
  }
  return scene;
}

}  // namespace

TEST_CASE("camera batches equal single queries in obb and mesh mode, with masks and a filter, as Ray and RayD") {
  const Scene scene = layered_mesh_scene(2000, 81);
  const Aabb box = translations_box(scene);
  const glm::vec3 center = 0.5f * (box.min + box.max);
  const glm::vec3 eye = center + glm::vec3{0.3f, 0.4f, 1.2f} * (box.max - box.min);
  // 157 columns: packets straddle rows, and the last one is partial.
  std::vector<Ray> rays = camera_rays(eye, center, 157, 45);
  CHECK(coherent_groups(rays, scene) > rays.size() / WideBvh::kPacket / 2);
  // Bad rays inside packets that would otherwise be coherent, each a miss
  // in its place: the packet's own check (not NaN) must catch them.
  const std::vector<Ray> good = rays;
  const float inf = std::numeric_limits<float>::infinity();
  rays[3].tmin = 5.0f;
  rays[3].tmax = 1.0f;
  rays[70].dir = glm::vec3{0.0f};
  rays[100].tmin = inf;
  rays[130].org.y = inf;
  rays[170].tmax = std::nanf("");
  // And rays that hit as they are, made bad by a negative tmin (walked, they
  // would hit).
  std::vector<std::size_t> bad = {3, 70, 100, 130, 170};
  {
    const Picker picker(scene);
    for (std::size_t i = 400; i < rays.size() && bad.size() < 12; i += 1) {
      if (picker.intersect(rays[i], QueryOptions{PickMode::kObb}).hit()) {
        rays[i].tmin = -1.0f;
        bad.push_back(i);
        i += 500;
      }
    }
  }
  REQUIRE(bad.size() == 12);
  std::size_t in_packets = 0;
  for (const std::size_t i : bad) {
    REQUIRE_FALSE(is_valid(rays[i]));
    // The half group around it walks as a packet with the ray made good.
    const std::size_t half = WideBvh::kPacket / 2, first = i / half * half;
    in_packets += coherent_groups(std::span<const Ray>(good).subspan(first, half), scene, half);
  }
  CHECK(in_packets >= 10);
  std::vector<RayD> rays_d;
  for (const Ray& r : rays) rays_d.push_back(to_double(r));
  for (const Picker& picker : both_batch_paths(scene)) {
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      CAPTURE(static_cast<int>(mode));
      QueryOptions all{mode};
      QueryOptions masked{mode, 0b110};
      masked.filter = [](std::uint32_t id) { return id % 7 != 3; };
      const std::vector<Hit> batch = picker.intersect_batch(std::span<const Ray>(rays), all);
      const std::size_t hits = require_equals_single<Ray>(picker, rays, all, batch);
      CHECK(hits > rays.size() / 4);
      for (const std::size_t i : bad) CHECK_FALSE(batch[i].hit());
      CHECK(hits < rays.size());
      require_batch_equals_single<Ray>(picker, rays, masked);
      require_batch_equals_single<RayD>(picker, rays_d, masked);
    }
  }
}

TEST_CASE("image batches (4x4 tiles on a large tree) equal single queries, rows and tiles of every shape") {
  const Scene scene = layered_mesh_scene(600, 82);
  const Aabb box = translations_box(scene);
  const glm::vec3 center = 0.5f * (box.min + box.max);
  const glm::vec3 eye = center + glm::vec3{-0.4f, 0.5f, 1.1f} * (box.max - box.min);
  // Every ray of the image against intersect(), field by field.
  auto require_image_equals_single = [](const Picker& picker, auto rays, std::size_t width,
                                        const QueryOptions& options) {
    return require_equals_single(picker, rays, options,
                                 picker.intersect_image(rays, width, options));
  };
  // Widths with and without a partial last tile, a band of fewer than 4
  // rows at the bottom, a last row cut short, widths under a tile, one row.
  struct Shape {
    int width, height;
    std::size_t cut;  // rays dropped from the end
  };
  for (const Shape shape : {Shape{64, 32, 0}, Shape{157, 45, 0}, Shape{61, 23, 37},
                            Shape{4, 50, 0}, Shape{3, 40, 1}, Shape{1, 30, 0},
                            Shape{200, 1, 0}}) {
    CAPTURE(shape.width);
    CAPTURE(shape.height);
    std::vector<Ray> rays = camera_rays(eye, center, shape.width, shape.height);
    rays.resize(rays.size() - shape.cut);
    // A bad ray inside: a miss in its place.
    if (rays.size() > 40) rays[37].dir = glm::vec3{std::nanf(""), 0.0f, 1.0f};
    std::vector<RayD> rays_d;
    for (const Ray& r : rays) rays_d.push_back(to_double(r));
    const auto width = static_cast<std::size_t>(shape.width);
    // batch_interleave_bytes 0: the tiles' path, as for a large tree.
    for (const Picker& picker : both_batch_paths(scene)) {
      for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
        CAPTURE(static_cast<int>(mode));
        QueryOptions all{mode};
        QueryOptions masked{mode, 0b011};
        masked.filter = [](std::uint32_t id) { return id % 5 != 2; };
        const std::size_t hits =
            require_image_equals_single(picker, std::span<const Ray>(rays), width, all);
        CHECK(hits > rays.size() / 8);
        require_image_equals_single(picker, std::span<const Ray>(rays), width, masked);
        require_image_equals_single(picker, std::span<const RayD>(rays_d), width, masked);
      }
    }
  }
}

TEST_CASE("batches of rays lying in the objects' face planes (0 * inf in the OBB test) equal single queries") {
  // Unit cubes [-0.5, 0.5]^3, unrotated, at integer places: in each cube's
  // frame a ray's origin is org - place, exactly. Each packet's rays start
  // on a plane x, y or z = 3.5 (the faces of the cubes at 3 and 4) with a
  // zero direction there, +0.0 or -0.0: that slab's distance is 0 * inf =
  // NaN in the OBB test, which must leave the interval as the single
  // ray's test does (a grazing ray hits). Every axis: the test's steps go
  // axis by axis, and a NaN on the last axis survives a wrong order.
  Scene scene;
  scene.meshes.push_back(tools::unit_cube_mesh());
  for (int x = 0; x < 7; ++x) {
    for (int y = 0; y < 7; ++y) {
      for (int z = 0; z < 7; ++z) {
        Object o;
        o.matrix = glm::translate(glm::mat4{1.0f}, glm::vec3{static_cast<float>(x),
                                                             static_cast<float>(y),
                                                             static_cast<float>(z)});
        scene.objects.push_back(o);
      }
    }
  }
  // Forwards, and backwards with every direction component -0.0 or
  // negative: there an unrotated frame carries a -0.0 to -0.0 (1 * -0 +
  // 0 * -a + 0 * -1), so the OBB test's near plane is the box's max.
  std::vector<Ray> rays = in_plane_rays(3.5f, 3.0f, -2.0f, 0.0f, 0.01f);
  const std::vector<Ray> back = in_plane_rays(3.5f, 3.0f, 9.0f, 0.0f, 0.01f, -1.0f);
  rays.insert(rays.end(), back.begin(), back.end());
  CHECK(coherent_groups(rays, scene) == rays.size() / WideBvh::kPacket);
  for (const Picker& picker : both_batch_paths(scene, PickMode::kObb)) {
    const std::size_t hits =
        require_batch_equals_single<Ray>(picker, rays, QueryOptions{PickMode::kObb});
    CHECK(hits == rays.size());
  }
}

TEST_CASE("camera batches from inside the scene with tmin and tmax set equal single queries") {
  const Scene scene = tools::make_mesh_scene(3000, 82);
  const Aabb box = translations_box(scene);
  const glm::vec3 center = 0.5f * (box.min + box.max);
  // The eye among the objects: rays start inside boxes of the top level
  // (and some inside objects).
  std::vector<Ray> rays = camera_rays(center, center + glm::vec3{1.0f, 0.2f, 0.1f}, 160, 40, 1.0f);
  const std::vector<Ray> back = camera_rays(center + glm::vec3{0.5f}, center - glm::vec3{3.0f}, 96, 32, 0.5f);
  rays.insert(rays.end(), back.begin(), back.end());
  // A wide view at few pixels: a group of kPacket rays spans more of it
  // than the coherence test allows in most rows, and the halves walk as
  // packets.
  CHECK(coherent_groups(rays, scene) > rays.size() / WideBvh::kPacket / 5);
  CHECK(coherent_groups(rays, scene) < rays.size() / WideBvh::kPacket / 2);
  CHECK(coherent_groups(rays, scene, WideBvh::kPacket / 2) > rays.size() / WideBvh::kPacket);
  for (std::size_t i = 0; i < rays.size(); ++i) {
    // Whole packets and single rays within packets with their own ranges.
    if ((i / WideBvh::kPacket) % 3 == 1) rays[i].tmin = 2.0f;
    if ((i / WideBvh::kPacket) % 5 == 2) rays[i].tmax = 6.0f;
    if (i % 11 == 4 && rays[i].tmin < 1.5f) rays[i].tmax = 1.5f;
    if (i % 13 == 6) rays[i].tmin = 0.75f;
  }
  for (const Picker& picker : both_batch_paths(scene)) {
    for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
      CAPTURE(static_cast<int>(mode));
      const std::size_t hits = require_batch_equals_single<Ray>(picker, rays, QueryOptions{mode});
      CHECK(hits > rays.size() / 4);
    }
  }
}

TEST_CASE("mesh-mode camera batches with tmax at each ray's own hit, or an ulp short of it, equal single queries") {
  // The batch's packets test a leaf's object first against its mesh tree's
  // box with the walk's tmax (mesh_walk_reach); a ray whose tmax is its own
  // hit's t (a triangle's t can round a few ulps below its box's entry) or
  // just short of it must find what the single query finds.
  const Scene scene = layered_mesh_scene(1500, 83);
  const Aabb box = translations_box(scene);
  const glm::vec3 center = 0.5f * (box.min + box.max);
  const glm::vec3 eye = center + glm::vec3{0.6f, 0.5f, 1.0f} * (box.max - box.min);
  std::vector<Ray> rays = camera_rays(eye, center, 128, 96);
  const Picker plain(scene);
  std::size_t at_hit = 0;
  for (std::size_t i = 0; i < rays.size(); ++i) {
    const Hit h = plain.intersect(rays[i], QueryOptions{PickMode::kMesh});
    if (!h.hit()) continue;
    const bool short_of_it = i % 3 == 2;
    rays[i].tmax = short_of_it ? std::nextafter(h.t, 0.0f) : h.t;
    at_hit += short_of_it ? 0 : 1;
  }
  CHECK(at_hit > rays.size() / 4);
  for (const Picker& picker : both_batch_paths(scene)) {
    const std::size_t hits =
        require_batch_equals_single<Ray>(picker, rays, QueryOptions{PickMode::kMesh});
    // Every ray whose tmax is its hit's t still hits.
    CHECK(hits >= at_hit);
  }
}

TEST_CASE("coherent batches of axis-parallel rays with zero direction components of both signs equal single queries") {
  const Scene scene = tools::make_boxes_scene(1500, 83);
  const Aabb box = translations_box(scene);
  const glm::vec3 size = box.max - box.min;
  std::mt19937_64 rng(84);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<Ray> rays;
  for (int bundle = 0; bundle < 120; ++bundle) {
    // A packet's rays from one origin (or origins a hair apart), along +z
    // or -z, with x and y components that are zeros of either sign or
    // tiny.
    const glm::vec3 org = box.min + glm::vec3{u(rng), u(rng), bundle % 2 ? -0.1f : 1.1f} * size;
    const float dz = bundle % 2 ? 1.0f : -1.0f;
    const bool shared_origin = bundle % 3 != 0;
    for (int k = 0; k < WideBvh::kPacket; ++k) {
      Ray r;
      r.org = shared_origin ? org : org + glm::vec3{1e-3f * float(k), 0.0f, 0.0f};
      const float zx = (k & 1) ? -0.0f : 0.0f;
      const float zy = (k & 2) ? -0.0f : 0.0f;
      switch (bundle % 4) {
        case 0: r.dir = {zx, zy, dz}; break;                       // axis-parallel
        case 1: r.dir = {zx, 1e-3f * float(k), dz}; break;         // one zero component
        case 2: r.dir = {1e-3f * float(k), zy, dz}; break;
        default: r.dir = {zx, zy, dz * (1.0f + float(k))}; break;  // lengths differ
      }
      // Signs of zero must agree within a packet for it to run as one: both
      // kinds of packets occur here (k & 1 alternates the sign).
      rays.push_back(r);
    }
  }
  // Bundles whose zeros all have one sign, so that they run as packets.
  for (Ray r : std::vector<Ray>(rays.begin(), rays.begin() + WideBvh::kPacket * 40)) {
    r.dir.x = std::abs(r.dir.x);
    r.dir.y = std::abs(r.dir.y);
    rays.push_back(r);
  }
  CHECK(coherent_groups(std::span<const Ray>(rays).last(WideBvh::kPacket * 40), scene) > 30);
  for (const Picker& picker : both_batch_paths(scene, PickMode::kObb)) {
    const std::size_t hits = require_batch_equals_single<Ray>(picker, rays, QueryOptions{PickMode::kObb});
    CHECK(hits > rays.size() / 10);
  }
}

TEST_CASE("batches mixing coherent bundles and random rays, of every size, equal single queries") {
  const Scene scene = tools::make_mesh_scene(1200, 85);
  // Runs of 50 camera rays and 50 random ones: packets that are
  // coherent, incoherent and part and part.
  const std::vector<Ray> rays = mixed_rays(scene, 200, 30, 50, 86);
  // Interleaved (bytes 0), a task's coherent packets and its other rays are
  // gathered apart.
  for (const Picker& picker : both_batch_paths(scene)) {
    for (const std::size_t n : {1u, 2u, 15u, 16u, 17u, 31u, 32u, 33u, 1024u, 1025u, 2000u}) {
      CAPTURE(n);
      const std::span<const Ray> part = std::span<const Ray>(rays).first(n);
      for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
        require_batch_equals_single<Ray>(picker, part, QueryOptions{mode});
      }
    }
  }
}

TEST_CASE("batches of runs of 20 camera and 20 random rays (groups that walk their first half as a packet), of sizes ending in every part of a group, equal single queries") {
  const Scene scene = tools::make_mesh_scene(1200, 87);
  const std::vector<Ray> rays = mixed_rays(scene, 160, 20, 20, 88);
  // A group of 32 from a run's start: 20 camera rays and 12 random ones, so
  // its first 16 walk as a packet; the next group starts at the run's
  // 17th ray.
  const std::size_t half = WideBvh::kPacket / 2;
  CHECK_FALSE(coherent_groups(std::span<const Ray>(rays).first(WideBvh::kPacket), scene));
  CHECK(coherent_groups(std::span<const Ray>(rays).first(half), scene, half) == 1);
  for (const Picker& picker : both_batch_paths(scene)) {
    for (const std::size_t n : {17u, 20u, 25u, 31u, 36u, 40u, 52u, 57u, 63u, 97u, 100u, 2000u}) {
      CAPTURE(n);
      const std::span<const Ray> part = std::span<const Ray>(rays).first(n);
      for (PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
        require_batch_equals_single<Ray>(picker, part, QueryOptions{mode});
      }
    }
  }
}

TEST_CASE("a batch of 300,000 mixed rays as for a large tree equals single queries (TBB's tasks then span thousands of rays)") {
  // TBB's default partitioner stops splitting a range above its grain:
  // here tasks get thousands of rays, and each task's packets and other
  // rays must still be sorted apart for all of them.
  const Scene scene = tools::make_boxes_scene(2000, 88);
  const std::vector<Ray> rays = mixed_rays(scene, 400, 375, 250, 89);
  PickerConfig config;
  config.batch_interleave_bytes = 0;
  const Picker picker(scene, config);
  CHECK(require_batch_equals_single<Ray>(picker, rays, QueryOptions{PickMode::kObb}) > rays.size() / 20);
  CHECK(coherent_groups(rays, scene) > rays.size() / WideBvh::kPacket / 4);
}

TEST_CASE_TEMPLATE("a packet offers each ray exactly the leaf entries a single traversal offers it",
                   Tree, WideBvh, WideBvh16) {
  // Both node widths.
  const Scene scene = tools::make_boxes_scene(800, 87);
  const Aabb box = translations_box(scene);
  const glm::vec3 center = 0.5f * (box.min + box.max);
  const std::vector<Ray> rays = camera_rays(center + glm::vec3{0.2f, 0.3f, 1.0f} * (box.max - box.min),
                                            center, 128, 24);
  // A wide tree over the objects' translations as unit boxes.
  std::vector<Aabb> boxes;
  for (const Object& o : scene.objects) {
    const glm::vec3 p = glm::vec3(o.matrix[3]);
    boxes.push_back(Aabb{p - 0.5f, p + 0.5f});
  }
  const Tree tree = Tree::collapse(build_bvh(boxes));
  const std::size_t offered = require_packets_offer_single_leaves(tree, rays);
  CHECK(offered > rays.size() / 2);
  CHECK(coherent_groups(rays, scene) > rays.size() / Tree::kPacket / 2);
}

TEST_CASE_TEMPLATE("packets of rays lying in the boxes' face planes (0 * inf in the slab test) meet the boxes single rays meet",
                   Tree, WideBvh, WideBvh16) {
  // Unit boxes on an integer grid. Each packet's rays start exactly on a
  // plane x = 3, y = 3 or z = 3 (a face of many boxes) with a zero
  // direction on that axis, +0.0 or -0.0, so that plane's slab distance is
  // 0 * inf = NaN: a slab test that lets the NaN through misses the boxes
  // the ray grazes, which single rays hit (inclusive bounds). Every axis,
  // since the test's steps go axis by axis.
  std::vector<Aabb> boxes;
  for (int x = 0; x < 6; ++x) {
    for (int y = 0; y < 6; ++y) {
      for (int z = 0; z < 6; ++z) {
        const glm::vec3 p{static_cast<float>(x), static_cast<float>(y), static_cast<float>(z)};
        boxes.push_back(Aabb{p, p + 1.0f});
      }
    }
  }
  const Tree tree = Tree::collapse(build_bvh(boxes));
  // Packets of several origins, and of one (the packets' interval test).
  std::vector<Ray> rays = in_plane_rays(3.0f, -1.0f, -1.0f, 0.5f, 0.02f);
  const std::vector<Ray> one_origin = in_plane_rays(3.0f, -1.0f, -1.0f, 0.5f, 0.02f, 1.0f, 0.0f);
  rays.insert(rays.end(), one_origin.begin(), one_origin.end());
  const Aabb bounds = tree.bounds();
  const glm::vec3 size = bounds.max - bounds.min;
  const float extent = std::max(size.x, std::max(size.y, size.z));
  for (std::size_t i = 0; i < rays.size(); i += Tree::kPacket) {
    REQUIRE(Tree::packet_coherent(std::span<const Ray>(rays).subspan(i, Tree::kPacket), extent));
  }
  // Each ray grazes boxes on both sides of the plane: at least 2 per ray.
  CHECK(require_packets_offer_single_leaves(tree, rays) >= 2 * rays.size());
}

TEST_CASE("packet_coherent on hand-computed groups: signs and -0.0, NaN, bad rays, the angle and origin limits, short groups") {
  // extent 64: origins may lie 1.0 from the first one's.
  constexpr float kExtent = 64.0f;
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Ray first{glm::vec3{0.0f}, glm::vec3{1.0f, 0.0f, 0.0f}, 0.0f, inf};
  // A full group of copies of `first` whose last ray is `last` (the last
  // lane: a live mask one short would miss it).
  auto coherent_with = [&](const Ray& last) {
    std::vector<Ray> group(WideBvh::kPacket, first);
    group.back() = last;
    return WideBvh::packet_coherent(group, kExtent);
  };
  CHECK(coherent_with(first));
  Ray r = first;
  // sin^2 of the angle between (1, t, 0) and (1, 0, 0) is t^2 / (1 + t^2):
  // at most 1/16 for t up to sqrt(1/15) = 0.258.
  r.dir = {1.0f, 0.25f, 0.0f};
  CHECK(coherent_with(r));
  r.dir = {1.0f, 0.27f, 0.0f};
  CHECK_FALSE(coherent_with(r));
  // Length does not matter, only the angle.
  r.dir = {40.0f, 10.0f, 0.0f};
  CHECK(coherent_with(r));
  // A sign that differs, including -0.0 against +0.0 (the packet's near
  // and far planes per axis come from the first ray's signs).
  r.dir = {-1.0f, 0.0f, 0.0f};
  CHECK_FALSE(coherent_with(r));
  r.dir = {1.0f, -0.0f, 0.0f};
  CHECK_FALSE(coherent_with(r));
  r.dir = {1.0f, 0.0f, -0.0f};
  CHECK_FALSE(coherent_with(r));
  // NaN anywhere fails.
  r.dir = {1.0f, nan, 0.0f};
  CHECK_FALSE(coherent_with(r));
  r = first;
  r.org = {0.0f, nan, 0.0f};
  CHECK_FALSE(coherent_with(r));
  // Origins: 1.0 away passes on each axis and sign, the next float fails.
  for (int a = 0; a < 3; ++a) {
    for (const float sign : {1.0f, -1.0f}) {
      CAPTURE(a);
      CAPTURE(sign);
      r = first;
      r.org[a] = sign * 1.0f;
      CHECK(coherent_with(r));
      r.org[a] = sign * std::nextafter(1.0f, 2.0f);
      CHECK_FALSE(coherent_with(r));
    }
  }
  // A ray that is not is_valid() fails, finite or not.
  r = first;
  r.tmin = 2.0f;
  r.tmax = 1.0f;
  CHECK_FALSE(coherent_with(r));
  r = first;
  r.tmin = -0.5f;
  CHECK_FALSE(coherent_with(r));
  r = first;
  r.tmin = inf;
  CHECK_FALSE(coherent_with(r));
  r = first;
  r.tmax = nan;
  CHECK_FALSE(coherent_with(r));
  r = first;
  r.dir = glm::vec3{0.0f};
  CHECK_FALSE(coherent_with(r));
  r = first;
  r.org.z = -inf;
  CHECK_FALSE(coherent_with(r));
  // -0.0 as tmin is valid.
  r = first;
  r.tmin = -0.0f;
  CHECK(coherent_with(r));
  // A short group: its lanes past the end are not looked at, and the rays
  // it has are.
  std::vector<Ray> three(3, first);
  CHECK(WideBvh::packet_coherent(three, kExtent));
  three[2].dir = {0.0f, 1.0f, 0.0f};
  CHECK_FALSE(WideBvh::packet_coherent(three, kExtent));
  CHECK(WideBvh::packet_coherent(std::span<const Ray>(three).first(2), kExtent));
}
