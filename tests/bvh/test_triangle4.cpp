// The mesh trees' four-triangle leaf test (bvh/src/triangle4.h) against
// intersect_triangle(), lane by lane and bit for bit.
#include <doctest/doctest.h>

#include "test_util.h"
#include "triangle4.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace raypick;

#if RAYPICK_WIDE_SSE
namespace {

bool same_bits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

// Every lane of intersect_triangles4() on tri[0 .. count - 1] against
// intersect_triangle(); returns how many lanes hit.
int require_lanes_match(const Ray& ray, const TriangleVerts* tri, unsigned count) {
  const TriangleRay tr(ray.org, ray.dir);
  const Triangle4Hits h4 = intersect_triangles4(tr, tri, count, ray.tmin, ray.tmax);
  const unsigned both = h4.hit & h4.redo;
  REQUIRE(both == 0u);
  const unsigned past_run = (h4.hit | h4.redo) >> count;
  REQUIRE(past_run == 0u);
  int hits = 0;
  for (unsigned k = 0; k < count; ++k) {
    CAPTURE(k);
    const TriangleHit h =
        intersect_triangle(tr, tri[k][0], tri[k][1], tri[k][2], ray.tmin, ray.tmax);
    if (h4.redo & (1u << k)) continue;  // intersect_triangle()'s to answer
    REQUIRE(bool(h4.hit & (1u << k)) == h.hit);
    if (!h.hit) continue;
    ++hits;
    REQUIRE(same_bits(h4.t[k], h.t));
    REQUIRE(same_bits(h4.u[k], h.u));
    REQUIRE(same_bits(h4.v[k], h.v));
  }
  return hits;
}

}  // namespace

TEST_CASE("four triangles at once equal intersect_triangle lane by lane on random rays and triangles") {
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> pos(-2.0f, 2.0f);
  std::uniform_real_distribution<float> small(-0.3f, 0.3f);
  std::vector<TriangleVerts> tris(4);
  int hits = 0;
  for (int i = 0; i < 20000; ++i) {
    // Triangles near the origin, some of them degenerate (two vertices the
    // same, or all three on a line).
    for (TriangleVerts& t : tris) {
      const glm::vec3 c{pos(rng), pos(rng), pos(rng)};
      t = {c + glm::vec3{small(rng), small(rng), small(rng)},
           c + glm::vec3{small(rng), small(rng), small(rng)},
           c + glm::vec3{small(rng), small(rng), small(rng)}};
      if (rng() % 16 == 0) t[2] = t[1];
      if (rng() % 16 == 0) t[2] = t[0] + 2.0f * (t[1] - t[0]);
    }
    // Rays from around the scene toward a point of one of the triangles
    // (a random weighting of its vertices, sometimes outside it), every
    // axis the largest sometimes, with tmin and tmax that cut some hits
    // off.
    const unsigned count = 1 + rng() % 4;
    const TriangleVerts& aim = tris[rng() % count];
    std::uniform_real_distribution<float> weight(-0.2f, 1.0f);
    const float a = weight(rng), b = weight(rng) * (1.0f - a);
    Ray ray;
    ray.org = glm::vec3{pos(rng), pos(rng), pos(rng)} * 3.0f;
    ray.dir = aim[0] + a * (aim[1] - aim[0]) + b * (aim[2] - aim[0]) - ray.org;
    if (rng() % 8 == 0) ray.dir[rng() % 3] = rng() % 2 ? 0.0f : -0.0f;
    ray.tmin = rng() % 4 == 0 ? 0.5f : 0.0f;
    ray.tmax = rng() % 4 == 0 ? 0.9f : std::numeric_limits<float>::max();
    CAPTURE(i);
    hits += require_lanes_match(ray, tris.data(), count);
  }
  CHECK(hits > 5000);  // the comparison saw many hits
}

TEST_CASE("four triangles at once: hand-computed lanes, an edge left to intersect_triangle, t at tmax, a NaN ray") {
  // The unit right triangle in z = 1, seen from the origin along +z.
  const TriangleVerts unit = {glm::vec3{0.0f, 0.0f, 1.0f}, glm::vec3{1.0f, 0.0f, 1.0f},
                              glm::vec3{0.0f, 1.0f, 1.0f}};
  TriangleVerts shifted = unit;
  for (glm::vec3& p : shifted) p.z = 2.0f;  // behind it, at t = 2
  TriangleVerts flat = unit;
  flat[2] = glm::vec3{2.0f, 0.0f, 1.0f};  // degenerate: all on a line
  TriangleVerts nan_tri = unit;
  nan_tri[1].x = std::numeric_limits<float>::quiet_NaN();
  const TriangleVerts tris[4] = {unit, shifted, flat, nan_tri};
  const float inf = std::numeric_limits<float>::infinity();

  const Ray inside{glm::vec3{0.25f, 0.25f, 0.0f}, glm::vec3{0.0f, 0.0f, 1.0f}, 0.0f, inf};
  const TriangleRay tr(inside.org, inside.dir);
  Triangle4Hits h = intersect_triangles4(tr, tris, 4, inside.tmin, inside.tmax);
  CHECK(h.hit == 0b0011u);  // the two real triangles
  CHECK(h.redo == 0u);
  CHECK(h.t[0] == 1.0f);
  CHECK(h.t[1] == 2.0f);
  // u weights p1 and v p2: the point (0.25, 0.25) is 0.25 of each.
  CHECK(h.u[0] == 0.25f);
  CHECK(h.v[0] == 0.25f);
  require_lanes_match(inside, tris, 4);

  // tmax exactly at the first hit keeps it (inclusive); just below drops it.
  h = intersect_triangles4(tr, tris, 4, 0.0f, 1.0f);
  CHECK(h.hit == 0b0001u);
  h = intersect_triangles4(tr, tris, 4, 0.0f, std::nextafter(1.0f, 0.0f));
  CHECK(h.hit == 0u);
  // tmin past both.
  h = intersect_triangles4(tr, tris, 4, 2.5f, inf);
  CHECK(h.hit == 0u);
  // A run of one: only the first lane.
  h = intersect_triangles4(tr, tris, 1, 0.0f, inf);
  CHECK(h.hit == 0b0001u);

  // Through the hypotenuse's midpoint: a barycentric rounds to exactly 0,
  // which intersect_triangle() settles in double; the lane is left to it.
  const Ray edge{glm::vec3{0.5f, 0.5f, 0.0f}, glm::vec3{0.0f, 0.0f, 1.0f}, 0.0f, inf};
  const TriangleRay te(edge.org, edge.dir);
  h = intersect_triangles4(te, tris, 2, 0.0f, inf);
  CHECK(h.redo == 0b0011u);
  CHECK(h.hit == 0u);
  require_lanes_match(edge, tris, 4);

  // A NaN in the ray: no lane hits, and none is left to intersect_triangle
  // (NaN barycentrics are not zeros).
  const Ray nan_ray{glm::vec3{0.25f, std::numeric_limits<float>::quiet_NaN(), 0.0f},
                    glm::vec3{0.0f, 0.0f, 1.0f}, 0.0f, inf};
  const TriangleRay tn(nan_ray.org, nan_ray.dir);
  h = intersect_triangles4(tn, tris, 4, 0.0f, inf);
  CHECK(h.hit == 0u);
  CHECK(h.redo == 0u);
  require_lanes_match(nan_ray, tris, 4);
}
#endif
