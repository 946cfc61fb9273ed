// OBBs: the abs-matrix world box against the 8-corner method, and the
// ray/OBB test (ray carried into local space) on hand-computed cases.
#include "test_util.h"
#include "support/box_oracle.h"
#include "support/frame_oracle.h"

#include "raypick/core/obb.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include <glm/ext/matrix_transform.hpp>

using namespace raypick;

namespace {

float hit_t(const Obb& obb, const glm::vec3& o, const glm::vec3& d) {
  Ray r;
  r.org = o;
  r.dir = d;
  return obb_entry(r, obb, kInfinity);
}

}  // namespace

TEST_CASE("abs-matrix world box equals the min/max of the 8 transformed corners for random matrices") {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (int i = 0; i < 5000; ++i) {
    const glm::mat4 m = test::random_affine(rng, /*shear=*/i % 2 == 0);
    Aabb local;
    local.extend(glm::vec3{u(rng), u(rng), u(rng)});
    local.extend(glm::vec3{u(rng), u(rng), u(rng)});
    if (i % 10 == 0) local.max.z = local.min.z;  // flat boxes too
    const Aabb fast = transform_aabb(m, local);
    const Aabb slow = test::transform_aabb_corners(m, local);
    const float tol = 1e-4f * (1.0f + glm::length(slow.max - slow.min) +
                               glm::length(slow.center()));
    CHECK_VEC_NEAR(fast.min, slow.min, tol);
    CHECK_VEC_NEAR(fast.max, slow.max, tol);
  }
}

TEST_CASE("world box of an empty local box is empty") {
  CHECK(transform_aabb(glm::mat4{2.0f}, Aabb{}).empty());
}

TEST_CASE("world box under a 90 degree rotation swaps extents exactly") {
  const glm::mat4 m = glm::rotate(glm::mat4{1.0f}, glm::radians(90.0f),
                                  glm::vec3{0, 0, 1});
  const Aabb b = transform_aabb(m, Aabb{{-2, -1, -3}, {2, 1, 3}});
  CHECK_VEC_NEAR(b.min, glm::vec3(-1, -2, -3), 1e-6f);
  CHECK_VEC_NEAR(b.max, glm::vec3(1, 2, 3), 1e-6f);
}

TEST_CASE("ray/OBB: translated and non-uniformly scaled box") {
  // Local unit box scaled by (2, 1, 0.5) and moved to x = 10: world box
  // [8, 12] x [-1, 1] x [-0.5, 0.5].
  const glm::mat4 m = glm::scale(glm::translate(glm::mat4{1.0f}, {10, 0, 0}),
                                 {2, 1, 0.5f});
  const Obb obb = Obb::make(test::kUnitBox, m);
  CHECK(hit_t(obb, {0, 0, 0}, {1, 0, 0}) == doctest::Approx(8.0f));
  CHECK(hit_t(obb, {0, 0, 0}, {2, 0, 0}) == doctest::Approx(4.0f));
  CHECK(hit_t(obb, {10, 0, 5}, {0, 0, -1}) == doctest::Approx(4.5f));
  CHECK(hit_t(obb, {10, 0, 0.6f}, {1, 0, 0}) == kInfinity);
  CHECK(hit_t(obb, {10, 0.2f, 0.1f}, {1, 0, 0}) == 0.0f);  // inside
}

TEST_CASE("ray/OBB: rotated box is hit where the rotated faces are") {
  // The unit box rotated 45 degrees about z: a diamond whose corner on the
  // x axis is at x = sqrt(2).
  const glm::mat4 m = glm::rotate(glm::mat4{1.0f}, glm::radians(45.0f),
                                  glm::vec3{0, 0, 1});
  const Obb obb = Obb::make(test::kUnitBox, m);
  CHECK(hit_t(obb, {-5, 0, 0}, {1, 0, 0}) ==
        doctest::Approx(5.0f - std::sqrt(2.0f)).epsilon(1e-5));
  // Near the top corner the diamond is thin but still there...
  CHECK(hit_t(obb, {-5, 1.3f, 0}, {1, 0, 0}) != kInfinity);
  // ...and (1.2, 1.2) is inside its world AABB but outside the diamond.
  CHECK(hit_t(obb, {1.2f, 1.2f, -5}, {0, 0, 1}) == kInfinity);
  CHECK(transform_aabb(m, test::kUnitBox).contains({1.2f, 1.2f, 0}));
}

TEST_CASE("ray/OBB: mirrored box (negative determinant) is hit like its mirror image") {
  const glm::mat4 m = glm::scale(glm::translate(glm::mat4{1.0f}, {0, 5, 0}),
                                 {-1, 2, 1});  // det < 0
  const Obb obb = Obb::make(Aabb{{0, 0, 0}, {1, 1, 1}}, m);
  REQUIRE(obb.invertible);
  // World box: x in [-1, 0], y in [5, 7], z in [0, 1].
  CHECK(hit_t(obb, {-0.5f, 0, 0.5f}, {0, 1, 0}) == doctest::Approx(5.0f));
  CHECK(hit_t(obb, {0.5f, 0, 0.5f}, {0, 1, 0}) == kInfinity);
  CHECK(hit_t(obb, {-3, 6, 0.5f}, {1, 0, 0}) == doctest::Approx(2.0f));
}

TEST_CASE("ray/OBB: sheared box follows the shear") {
  glm::mat4 m{1.0f};
  m[1][0] = 1.0f;  // x += y
  const Obb obb = Obb::make(Aabb{{0, 0, 0}, {1, 1, 1}}, m);
  // At height y = 0.9 the sheared box spans x in [0.9, 1.9].
  CHECK(hit_t(obb, {-5, 0.9f, 0.5f}, {1, 0, 0}) ==
        doctest::Approx(5.9f).epsilon(1e-5));
  CHECK(hit_t(obb, {0.5f, 0.9f, -5}, {0, 0, 1}) == kInfinity);
  CHECK(hit_t(obb, {1.5f, 0.9f, -5}, {0, 0, 1}) == doctest::Approx(5.0f));
}

TEST_CASE("ray/OBB: a singular matrix can never be hit") {
  const glm::mat4 hidden = glm::scale(glm::mat4{1.0f}, {0, 0, 0});
  const Obb obb = Obb::make(test::kUnitBox, hidden);
  CHECK_FALSE(obb.invertible);
  CHECK(obb.world_bounds().empty());
  CHECK(hit_t(obb, {-5, 0, 0}, {1, 0, 0}) == kInfinity);
  CHECK(hit_t(obb, {0, 0, 0}, {1, 0, 0}) == kInfinity);
  const Obb flat = Obb::make(test::kUnitBox, glm::scale(glm::mat4{1.0f}, {1, 0, 1}));
  CHECK_FALSE(flat.invertible);
}

TEST_CASE("ray/OBB: t is the same whether computed in world or local space") {
  // Random OBBs, rays aimed at a point inside: the hit point o + t d must be
  // on the world box's surface (or t = 0 for an inside origin).
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int i = 0; i < 2000; ++i) {
    const glm::mat4 m = test::random_affine(rng);
    const Obb obb = Obb::make(test::kUnitBox, m);
    const glm::vec3 target{m * glm::vec4(u(rng), u(rng), u(rng), 1.0f)};
    const glm::vec3 o{30.0f * u(rng), 30.0f * u(rng), 30.0f * u(rng)};
    const glm::vec3 d = (target - o) * (0.1f + std::abs(u(rng)));
    const float t = hit_t(obb, o, d);
    REQUIRE(t != kInfinity);
    const glm::vec3 p_local{obb.to_local * glm::vec4(o + t * d, 1.0f)};
    const float m_abs = std::max({std::abs(p_local.x), std::abs(p_local.y),
                                  std::abs(p_local.z)});
    if (t > 0.0f) {
      CHECK(m_abs == doctest::Approx(1.0f).epsilon(1e-3));  // on a face
    } else {
      CHECK(m_abs <= 1.0f + 1e-5f);  // origin inside
    }
  }
}

TEST_CASE("is_invertible is false exactly when the 3x3 determinant is zero or not finite") {
  SUBCASE("identity, mirror, shear and tiny or huge scales are invertible") {
    CHECK(is_invertible(glm::mat4x3{1.0f}));
    CHECK(is_invertible(glm::mat4x3{glm::scale(glm::mat4{1.0f}, {-1, 1, 1})}));
    glm::mat4 shear{1.0f};
    shear[1][0] = 3.0f;
    CHECK(is_invertible(glm::mat4x3{shear}));
    // det 1e-90 and 1e90: zero and infinite in float, not in double.
    CHECK(is_invertible(glm::mat4x3{glm::scale(glm::mat4{1.0f}, glm::vec3{1e-30f})}));
    CHECK(is_invertible(glm::mat4x3{glm::scale(glm::mat4{1.0f}, glm::vec3{1e30f})}));
  }
  SUBCASE("a zero scale, parallel columns and non-finite entries are not") {
    CHECK_FALSE(is_invertible(glm::mat4x3{glm::scale(glm::mat4{1.0f}, {1, 0, 1})}));
    glm::mat4x3 parallel{1.0f};
    parallel[2] = 2.0f * parallel[0] - 0.5f * parallel[1];
    CHECK_FALSE(is_invertible(parallel));
    glm::mat4x3 inf{1.0f};
    inf[0].y = kInfinity;
    CHECK_FALSE(is_invertible(inf));
    glm::mat4x3 nan{1.0f};
    nan[1].z = std::nanf("");
    CHECK_FALSE(is_invertible(nan));
  }
  SUBCASE("it decides which OBBs can be hit") {
    std::mt19937_64 rng(9);
    for (int i = 0; i < 200; ++i) {
      glm::mat4 m = test::random_affine(rng);
      if (i % 4 == 0) m[i % 3] = glm::vec4{0.0f};
      CHECK(Obb::make(test::kUnitBox, m).invertible == is_invertible(glm::mat4x3{m}));
    }
  }
}

TEST_CASE("box_mesh is the box's closed surface: 12 outward triangles on its 6 faces") {
  const Aabb box{{-1.0f, 2.0f, 0.5f}, {3.0f, 2.5f, 4.0f}};
  const Mesh m = box_mesh(box);
  REQUIRE(m.positions.size() == 8);
  REQUIRE(m.triangles.size() == 12);
  CHECK(m.triangle_bounds() == box);
  const glm::vec3 size = box.max - box.min;
  double area = 0.0;
  for (std::size_t t = 0; t < 12; ++t) {
    CAPTURE(t);
    const glm::vec3 a = m.positions[m.triangles[t].x], b = m.positions[m.triangles[t].y],
                    c = m.positions[m.triangles[t].z];
    const glm::vec3 n = glm::cross(b - a, c - a);
    area += 0.5 * glm::length(n);
    // Triangles 2k and 2k + 1 lie on face k, in the order -x, +x, -y, +y,
    // -z, +z: axis k / 2, min side first.
    const int axis = static_cast<int>(t / 4);
    const bool max_side = (t / 2) % 2 == 1;
    const float plane = max_side ? box.max[axis] : box.min[axis];
    CHECK(a[axis] == plane);
    CHECK(b[axis] == plane);
    CHECK(c[axis] == plane);
    // Outward: the normal points away from the box on that axis.
    CHECK((max_side ? n[axis] > 0.0f : n[axis] < 0.0f));
  }
  CHECK(area == doctest::Approx(2.0 * (size.x * size.y + size.y * size.z + size.z * size.x)));
}

TEST_CASE("make_local_frame equals the scalar double-precision frame bit for bit, extreme matrices included") {
  // core/src/obb.cpp computes the frame in SSE2 lanes; it must give the
  // element-by-element scalar result exactly, and fail exactly when it does.
  std::mt19937_64 rng(1107);
  for (int kind = 0; kind < 6; ++kind) {
    int ok_count = 0, fail_count = 0;
    for (int i = 0; i < 20000; ++i) {
      const glm::mat4x3 m = test::stress_matrix(rng, kind);
      LocalFrame got, want;
      // Garbage first: a failed frame must be zeroed, whatever was there.
      std::memset(static_cast<void*>(&got), 0x5A, sizeof got);
      std::memset(static_cast<void*>(&want), 0xA5, sizeof want);
      const bool got_ok = make_local_frame(m, got);
      const bool want_ok = test::make_local_frame_scalar(m, want);
      REQUIRE(got_ok == want_ok);
      REQUIRE(std::memcmp(&got, &want, sizeof got) == 0);
      (got_ok ? ok_count : fail_count)++;
    }
    CAPTURE(kind);
    CHECK(ok_count > 0);
    // Near-singular, huge/tiny, random bits and zero columns also fail.
    if (kind == 2 || kind == 4 || kind == 5) CHECK(fail_count > 0);
  }
  SUBCASE("a non-finite translation fails, a finite one far away does not") {
    glm::mat4x3 m{1.0f};
    LocalFrame f;
    m[3] = glm::vec3{3e38f, -3e38f, 1e-45f};
    CHECK(make_local_frame(m, f));
    CHECK(f.origin == m[3]);
    m[3].z = kInfinity;
    CHECK_FALSE(make_local_frame(m, f));
    CHECK(f.linear == glm::mat3{0.0f});
    m[3].z = 0.0f;
    m[3].x = std::nanf("");
    CHECK_FALSE(make_local_frame(m, f));
  }
  SUBCASE("an inverse that overflows float fails although the determinant is fine") {
    // det = 1e-40 (a denormal float, a normal double); the inverse's 1e40
    // is not a float.
    glm::mat4x3 m{1.0f};
    m[0].x = 1e-40f;
    LocalFrame f;
    CHECK(is_invertible(m));
    CHECK_FALSE(make_local_frame(m, f));
  }
}

TEST_CASE("significant_low keeps a low part only beyond 2^-22 of the object's world extent") {
  // test::kUnitBox has size 2; scaled by 4 on x its largest world extent is 8, so
  // the bound is 8 * 2^-22 = 2^-19, whichever axis the low part is on.
  const glm::mat4 m = glm::scale(glm::translate(glm::mat4{1.0f}, glm::vec3{3e5f, 0.0f, -2e5f}),
                                 glm::vec3{4.0f, 1.0f, 0.5f});
  const float bound = 0x1p-19f;
  const float above = std::nextafter(bound, 1.0f);
  for (int a = 0; a < 3; ++a) {
    CAPTURE(a);
    glm::vec3 low{0.0f};
    low[a] = bound;  // at the bound: a move the tolerance allows
    CHECK(significant_low(glm::mat4x3(m), test::kUnitBox, low) == glm::vec3{0.0f});
    low[a] = -bound;
    CHECK(significant_low(glm::mat4x3(m), test::kUnitBox, low) == glm::vec3{0.0f});
    low[a] = above;  // an ulp beyond: kept, whole
    CHECK(significant_low(glm::mat4x3(m), test::kUnitBox, low) == low);
    low[a] = -above;
    CHECK(significant_low(glm::mat4x3(m), test::kUnitBox, low) == low);
  }
  // One significant coordinate keeps all three, the small ones with it.
  const glm::vec3 mixed{above, 1e-9f, -1e-9f};
  CHECK(significant_low(glm::mat4x3(m), test::kUnitBox, mixed) == mixed);
  // Obb::make takes its origin_low through the same rule.
  CHECK(Obb::make(test::kUnitBox, m, glm::vec3{bound, 0.0f, 0.0f}).origin_low == glm::vec3{0.0f});
  CHECK(Obb::make(test::kUnitBox, m, glm::vec3{above, 0.0f, 0.0f}).origin_low == glm::vec3{above, 0.0f, 0.0f});
  // No low part for a box that can never be hit.
  const glm::vec3 big{1.0f, 1.0f, 1.0f};
  CHECK(significant_low(glm::mat4x3(glm::scale(glm::mat4{1.0f}, glm::vec3{1.0f, 0.0f, 1.0f})), test::kUnitBox,
                        big) == glm::vec3{0.0f});
  CHECK(significant_low(glm::mat4x3(m), Aabb{}, big) == glm::vec3{0.0f});
}
