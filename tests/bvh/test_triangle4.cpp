// The 4-wide watertight test of mesh mode's leaves (bvh/src/triangle4.h)
// against the scalar intersect_triangle, lane by lane, bit for bit.
#include "test_util.h"

#include "triangle4.h"

#include <cstring>
#include <random>
#include <vector>

using namespace raypick;

namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Tests `tris` (up to 4) both ways and checks every lane's answer.
void check_block(const TriangleRay& ray, const std::vector<std::array<glm::vec3, 3>>& tris,
                 float tmin, float tmax, int& hits) {
  TriangleBlock4 block{};
  for (std::size_t k = 0; k < tris.size(); ++k) set_lane(block, static_cast<int>(k), tris[k]);
  const unsigned lanes = (1u << tris.size()) - 1u;
  TriangleHits4 out;
  const unsigned mask = intersect_triangle4(ray, block, lanes, tmin, tmax, out);
  CHECK((mask & ~lanes) == 0u);
  for (std::size_t k = 0; k < tris.size(); ++k) {
    const TriangleHit e = intersect_triangle(ray, tris[k][0], tris[k][1], tris[k][2], tmin, tmax);
    CAPTURE(k);
    REQUIRE(((mask >> k) & 1u) == (e.hit ? 1u : 0u));
    if (!e.hit) continue;
    ++hits;
    REQUIRE(same_bits(out.t[k], e.t));
    REQUIRE(same_bits(out.u[k], e.u));
    REQUIRE(same_bits(out.v[k], e.v));
  }
}

}  // namespace

TEST_CASE("the 4-wide triangle test equals the scalar one on random triangles and rays") {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> coord(-2.0f, 2.0f);
  std::uniform_int_distribution<int> size(1, 4);
  auto point = [&] { return glm::vec3{coord(rng), coord(rng), coord(rng)}; };
  int hits = 0;
  for (int i = 0; i < 50000; ++i) {
    std::vector<std::array<glm::vec3, 3>> tris(static_cast<std::size_t>(size(rng)));
    for (auto& t : tris) t = {point(), point(), point()};
    const glm::vec3 org = point(), target = tris[0][0] * 0.3f + tris[0][1] * 0.3f + tris[0][2] * 0.4f;
    const glm::vec3 dir = (i % 2 == 0) ? target - org : point();
    if (dir == glm::vec3{0.0f}) continue;
    CAPTURE(i);
    check_block(TriangleRay(org, dir), tris, 0.0f, (i % 5 == 0) ? 0.7f : kInfinity, hits);
  }
  CHECK(hits > 20000);
}

TEST_CASE("the 4-wide triangle test equals the scalar one on shared edges, vertices, -0.0 and degenerate triangles") {
  // Two triangles sharing the edge p1-p2 and two sharing only p0 with the
  // first, a degenerate one and its copy: rays aimed exactly at the shared
  // vertices and edges, along axes with signed zeros, and in the plane.
  const glm::vec3 p0{0, 0, 0}, p1{1, 0, 0}, p2{0, 1, 0}, p3{1, 1, 0}, p4{-1, 0, 0}, p5{0, -1, 0};
  const std::vector<std::array<glm::vec3, 3>> sets[] = {
      {{p0, p1, p2}, {p1, p3, p2}, {p0, p2, p4}, {p0, p5, p1}},
      {{p0, p1, p2}, {p0, p1, p1}, {p2, p2, p2}, {p1, p3, p2}},
      {{p0, p1, p2}},
  };
  const glm::vec3 targets[] = {p0, p1, p2, p3, 0.5f * (p1 + p2), 0.5f * (p0 + p1),
                               0.5f * (p0 + p2), {0.25f, 0.25f, 0.0f}, {-0.0f, 0.5f, 0.0f}};
  const glm::vec3 origins[] = {{0.1f, 0.2f, 3.0f}, {-0.0f, -0.0f, -2.0f}, {0.5f, 0.5f, 1.0f},
                               {3.0f, 0.3f, 0.0f}, {0.25f, 0.25f, 0.0f}, {1e-7f, -3.0f, 1e-3f}};
  int hits = 0, rays = 0;
  for (const auto& tris : sets) {
    for (const glm::vec3& o : origins) {
      for (const glm::vec3& target : targets) {
        const glm::vec3 d = target - o;
        if (d == glm::vec3{0.0f}) continue;
        ++rays;
        check_block(TriangleRay(o, d), tris, 0.0f, kInfinity, hits);
      }
      // Axis directions with signed zeros.
      for (const glm::vec3& d : {glm::vec3{-0.0f, 0.0f, -1.0f}, glm::vec3{0.0f, -0.0f, 1.0f},
                                 glm::vec3{-1.0f, -0.0f, 0.0f}, glm::vec3{0.0f, 1.0f, -0.0f}}) {
        ++rays;
        check_block(TriangleRay(o, d), tris, 0.0f, kInfinity, hits);
      }
    }
  }
  CHECK(rays > 100);
  CHECK(hits > 50);
}
