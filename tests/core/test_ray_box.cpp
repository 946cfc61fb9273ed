// The slab test on hand-computed cases, including every robustness case:
// zero and negative-zero direction components, origin on a slab plane,
// flat boxes, origin inside, grazing rays, t limits.
#include "test_util.h"

#include "raypick/core/hit.h"
#include "raypick/core/ray_box.h"

#include <limits>

using namespace raypick;

namespace {

float entry(const glm::vec3& o, const glm::vec3& d, const Aabb& box,
            float tmax = kInfinity) {
  Ray r;
  r.org = o;
  r.dir = d;
  r.tmax = tmax;
  return slab_entry(RayInv(r), box);
}

}  // namespace

TEST_CASE("ray hitting a box head-on enters at the near face") {
  for (int axis = 0; axis < 3; ++axis) {
    for (float sign : {1.0f, -1.0f}) {
      CAPTURE(axis);
      CAPTURE(sign);
      glm::vec3 o{0.0f}, d{0.0f};
      o[axis] = -5.0f * sign;
      d[axis] = sign;
      CHECK(entry(o, d, test::kUnitBox) == 4.0f);
    }
  }
}

TEST_CASE("t is in units of the given direction, which is never normalized") {
  CHECK(entry({-5, 0, 0}, {2, 0, 0}, test::kUnitBox) == 2.0f);
  CHECK(entry({-5, 0, 0}, {0.5f, 0, 0}, test::kUnitBox) == 8.0f);
  // Diagonal direction (1,1,0) from (-3,-2,0): x enters at 2, y at 1 -> 2.
  CHECK(entry({-3, -2, 0}, {1, 1, 0}, test::kUnitBox) == 2.0f);
}

TEST_CASE("ray starting inside a box hits at t = 0") {
  CHECK(entry({0, 0, 0}, {1, 0, 0}, test::kUnitBox) == 0.0f);
  CHECK(entry({0.9f, -0.9f, 0.5f}, {-3, 7, 1}, test::kUnitBox) == 0.0f);
  // On the surface counts as inside the closed box.
  CHECK(entry({1, 0, 0}, {1, 0, 0}, test::kUnitBox) == 0.0f);
  CHECK(entry({1, 1, 1}, {1, 1, 1}, test::kUnitBox) == 0.0f);
}

TEST_CASE("ray pointing away from a box misses it") {
  CHECK(entry({2, 0, 0}, {1, 0, 0}, test::kUnitBox) == kInfinity);
  CHECK(entry({-2, 0, 0}, {-1, 0, 0}, test::kUnitBox) == kInfinity);
  CHECK(entry({0, 5, 0}, {1, 1, 0}, test::kUnitBox) == kInfinity);
}

TEST_CASE("zero direction components: parallel rays hit inside the slab and miss outside") {
  for (float zero : {0.0f, -0.0f}) {
    CAPTURE(zero);
    SUBCASE("inside the slab") {
      CHECK(entry({-5, 0.5f, -0.5f}, {1, zero, zero}, test::kUnitBox) == 4.0f);
      CHECK(entry({5, 0.5f, -0.5f}, {-1, zero, zero}, test::kUnitBox) == 4.0f);
    }
    SUBCASE("outside the slab, either side") {
      CHECK(entry({-5, 1.5f, 0}, {1, zero, zero}, test::kUnitBox) == kInfinity);
      CHECK(entry({-5, -1.5f, 0}, {1, zero, zero}, test::kUnitBox) == kInfinity);
      CHECK(entry({-5, 0, 1.5f}, {1, zero, zero}, test::kUnitBox) == kInfinity);
      CHECK(entry({-5, 0, -1.5f}, {1, zero, zero}, test::kUnitBox) == kInfinity);
    }
  }
}

TEST_CASE("origin exactly on a slab plane with a zero direction component still hits (0 * inf = NaN case)") {
  // The ray runs in the plane of a face: the box is closed, so it is hit.
  for (float zero : {0.0f, -0.0f}) {
    for (float plane : {-1.0f, 1.0f}) {
      CAPTURE(zero);
      CAPTURE(plane);
      SUBCASE("y plane") {
        CHECK(entry({-5, plane, 0}, {1, zero, 0}, test::kUnitBox) == 4.0f);
        CHECK(entry({5, plane, 0}, {-1, zero, 0}, test::kUnitBox) == 4.0f);
      }
      SUBCASE("z plane, both other components zero") {
        CHECK(entry({0, -5, plane}, {zero, 1, zero}, test::kUnitBox) == 4.0f);
      }
      SUBCASE("on two planes at once: along an edge") {
        CHECK(entry({-5, plane, plane}, {1, zero, zero}, test::kUnitBox) == 4.0f);
      }
    }
  }
  // ... and on the plane but beyond the box along the ray: a miss, not a
  // NaN-made hit.
  CHECK(entry({5, 1, 0}, {1, 0.0f, 0}, test::kUnitBox) == kInfinity);
  CHECK(entry({5, 1, 0}, {1, -0.0f, 0}, test::kUnitBox) == kInfinity);
  CHECK(entry({0, 1, 5}, {-0.0f, 0.0f, 1}, test::kUnitBox) == kInfinity);
}

TEST_CASE("a flat box (zero extent on an axis) is hit when crossed") {
  const Aabb quad{{-1, -1, 2}, {1, 1, 2}};
  CHECK(entry({0, 0, 0}, {0, 0, 1}, quad) == 2.0f);
  CHECK(entry({0, 0, 5}, {0, 0, -1}, quad) == 3.0f);
  CHECK(entry({0.5f, 0.5f, 0}, {0.25f, 0.25f, 1}, quad) == 2.0f);
  CHECK(entry({0, 0, 0}, {0, 0, -1}, quad) == kInfinity);
  SUBCASE("a ray lying in the flat box's plane hits it") {
    CHECK(entry({-5, 0, 2}, {1, 0, 0}, quad) == 4.0f);
    CHECK(entry({-5, 0, 2}, {1, 0, -0.0f}, quad) == 4.0f);
  }
  SUBCASE("a box flat on all axes (a point) is hit by a ray through it") {
    const Aabb point{{1, 2, 3}, {1, 2, 3}};
    CHECK(entry({1, 2, 0}, {0, 0, 1}, point) == 3.0f);
    CHECK(entry({1, 2, 0}, {-0.0f, 0, 1}, point) == 3.0f);
    CHECK(entry({1, 2.5f, 0}, {0, 0, 1}, point) == kInfinity);
  }
}

TEST_CASE("grazing rays touching an edge or a corner hit (closed box)") {
  // Passes through the corner (1,1,0) exactly.
  CHECK(entry({0, 2, 0}, {1, -1, 0}, test::kUnitBox) == 1.0f);
  // Slides along the top face's edge line y = 1, z = 1.
  CHECK(entry({-3, 1, 1}, {1, 0, 0}, test::kUnitBox) == 2.0f);
}

TEST_CASE("an empty box is never hit") {
  const Aabb empty;
  CHECK(entry({0, 0, 0}, {1, 0, 0}, empty) == kInfinity);
  CHECK(entry({0, 0, 0}, {0, -0.0f, 1}, empty) == kInfinity);
  CHECK(entry({0, 0, 0}, {-1, -1, -1}, empty) == kInfinity);
}

TEST_CASE("the t range limits hits: tmax, tmin and the traversal limit") {
  CHECK(entry({-5, 0, 0}, {1, 0, 0}, test::kUnitBox, 3.9f) == kInfinity);
  CHECK(entry({-5, 0, 0}, {1, 0, 0}, test::kUnitBox, 4.0f) == 4.0f);  // inclusive
  Ray r;
  r.org = {0, 0, 0};
  r.dir = {1, 0, 0};
  r.tmin = 0.5f;
  CHECK(slab_entry(RayInv(r), test::kUnitBox) == 0.5f);  // inside: enters at tmin
  r.tmin = 1.5f;
  CHECK(slab_entry(RayInv(r), test::kUnitBox) == kInfinity);  // already left at t = 1
  const SlabInterval s = slab_interval(RayInv(Ray{{-5, 0, 0}, {1, 0, 0}}), test::kUnitBox);
  CHECK(s.hit());
  CHECK(s.tnear == 4.0f);
  CHECK(s.tfar == 6.0f);
}

TEST_CASE("a ray parallel to a slab and outside it misses: entry at t = +inf is no hit") {
  // dir.x = +0: the origin is outside the x slab, so t would be "infinite".
  CHECK(entry({5, 0, 0}, {0, 1, 0}, test::kUnitBox) == kInfinity);
  CHECK(entry({-5, 0, 0}, {0, 1, 0}, test::kUnitBox) == kInfinity);
}

TEST_CASE("slab test agrees with a double-precision check on random axis-plane rays") {
  // Origins snapped to the box planes, directions with zero components of
  // both signs: every mix of the NaN and infinity cases.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> pick(0, 4);
  const float coords[5] = {-2.0f, -1.0f, 0.0f, 1.0f, 2.0f};
  const float dirs[5] = {-1.0f, -0.0f, 0.0f, 0.5f, 1.0f};
  int hits = 0, cases = 0;
  for (int i = 0; i < 20000; ++i) {
    const glm::vec3 o{coords[pick(rng)], coords[pick(rng)], coords[pick(rng)]};
    const glm::vec3 d{dirs[pick(rng)], dirs[pick(rng)], dirs[pick(rng)]};
    if (d == glm::vec3{0.0f}) continue;
    ++cases;
    // Reference: inside-slab checks for zero components, exact division
    // otherwise (all values here are small dyadic numbers: exact in float).
    double t0 = 0.0, t1 = 1e300;
    bool miss = false;
    for (int a = 0; a < 3; ++a) {
      if (d[a] == 0.0f) {
        if (o[a] < -1.0f || o[a] > 1.0f) miss = true;
        continue;
      }
      double ta = (-1.0 - o[a]) / d[a], tb = (1.0 - o[a]) / d[a];
      if (ta > tb) std::swap(ta, tb);
      t0 = std::max(t0, ta);
      t1 = std::min(t1, tb);
    }
    const float expected =
        (!miss && t0 <= t1) ? static_cast<float>(t0) : kInfinity;
    hits += expected != kInfinity;
    CAPTURE(o.x); CAPTURE(o.y); CAPTURE(o.z);
    CAPTURE(d.x); CAPTURE(d.y); CAPTURE(d.z);
    REQUIRE(entry(o, d, test::kUnitBox) == expected);
  }
  CHECK(hits > cases / 10);  // the sample really exercises hits
}

TEST_CASE("boxes reaching infinity on an axis: each octant takes the right plane") {
  // A box unbounded below or above on one axis: a ray from beyond its
  // finite face enters there; a ray from the open side starts inside. Each
  // direction octant, so that the near plane is min on some axes and max on
  // others, and an infinite plane on either side.
  const float inf = kInfinity;
  int hits = 0, cases = 0;
  for (int axis = 0; axis < 3; ++axis) {
    for (const bool open_below : {true, false}) {
      Aabb box{glm::vec3{-1.0f}, glm::vec3{1.0f}};
      if (open_below) box.min[axis] = -inf; else box.max[axis] = inf;
      for (int octant = 0; octant < 8; ++octant) {
        glm::vec3 d;
        for (int a = 0; a < 3; ++a) d[a] = (octant >> a) & 1 ? -0.25f : 0.25f;
        d[axis] *= 4.0f;  // along the open axis mostly
        // From 3 beyond the finite face, or 3 into the open side.
        for (const float from : {3.0f, -3.0f}) {
          glm::vec3 o{0.0f};
          o[axis] = open_below ? from : -from;
          ++cases;
          const bool beyond_face = from > 0.0f;
          // Beyond the finite face: a hit where the ray heads back to it,
          // at t = 2 / |d[axis]| = 2 (the face 2 away); the other axes'
          // slabs (from the centre, |d| 0.25, half-width 1) hold until t = 4.
          // From the open side: inside at t = 0.
          const bool towards = open_below ? d[axis] < 0.0f : d[axis] > 0.0f;
          const float expected = beyond_face ? (towards ? 2.0f : inf) : 0.0f;
          CAPTURE(axis); CAPTURE(open_below); CAPTURE(octant); CAPTURE(from);
          CHECK(entry(o, d, box) == expected);
          hits += expected != inf;
        }
      }
    }
  }
  CHECK(cases == 96);
  CHECK(hits == 72);
}

TEST_CASE("hit_point is org + t * dir in double, NaN for a miss") {
  raypick::Hit h;
  h.object = 3;
  h.t = 2.5f;
  raypick::RayD r;
  r.org = {1e6 + 0.25, 0.0, 0.0};
  r.dir = {0.0f, 2.0f, 0.0f};
  CHECK(raypick::hit_point(r, h) == glm::dvec3(1e6 + 0.25, 5.0, 0.0));
  raypick::Ray f;
  f.org = {1.0f, 2.0f, 3.0f};
  f.dir = {1.0f, 0.0f, 0.0f};
  CHECK(raypick::hit_point(f, h) == glm::dvec3(3.5, 2.0, 3.0));
  CHECK(std::isnan(raypick::hit_point(f, raypick::Hit{}).x));
}

TEST_CASE("is_valid: finite origin and direction, a non-zero direction, 0 <= tmin <= tmax, tmax not NaN") {
  // Against the rule written out with std::isfinite, on every field taking
  // special values (zeros of both signs, the largest float, a denormal,
  // infinities, NaN) over 200,000 seeded random rays.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float big = std::numeric_limits<float>::max();
  const float specials[] = {0.0f, -0.0f, 1.0f, -2.5f, big, -big, 1e-40f, inf, -inf, nan};
  auto rule = [](const Ray& r) {
    for (int a = 0; a < 3; ++a) {
      if (!std::isfinite(r.org[a]) || !std::isfinite(r.dir[a])) return false;
    }
    if (r.dir.x == 0.0f && r.dir.y == 0.0f && r.dir.z == 0.0f) return false;
    return std::isfinite(r.tmin) && r.tmin >= 0.0f && !std::isnan(r.tmax) && r.tmin <= r.tmax;
  };
  std::mt19937 rng(123);
  std::uniform_int_distribution<int> pick(0, 9);
  std::size_t valid = 0;
  for (int i = 0; i < 200000; ++i) {
    Ray r;
    for (int a = 0; a < 3; ++a) {
      // Mostly ordinary values, so that valid rays are common too.
      r.org[a] = pick(rng) < 7 ? 1.0f : specials[pick(rng)];
      r.dir[a] = pick(rng) < 5 ? 0.5f : specials[pick(rng)];
    }
    r.tmin = pick(rng) < 6 ? 0.0f : specials[pick(rng)];
    r.tmax = pick(rng) < 6 ? inf : specials[pick(rng)];
    REQUIRE(is_valid(r) == rule(r));
    valid += rule(r) ? 1 : 0;
  }
  CHECK(valid > 1000);
  CHECK(valid < 199000);
}
