// The watertight ray/triangle test on hand cases and closed meshes.
#include "test_util.h"

#include "raypick/core/ray_triangle.h"
#include "scene_gen.h"

#include <glm/geometric.hpp>

#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <utility>

using namespace raypick;

namespace {

const glm::vec3 kP0{0, 0, 0}, kP1{2, 0, 0}, kP2{0, 2, 0};

TriangleHit shoot(const glm::vec3& o, const glm::vec3& d,
                  const glm::vec3& p0 = kP0, const glm::vec3& p1 = kP1,
                  const glm::vec3& p2 = kP2) {
  return intersect_triangle(TriangleRay(o, d), p0, p1, p2, 0.0f, kInfinity);
}

}  // namespace

TEST_CASE("ray through a triangle's interior hits with t and barycentrics") {
  const TriangleHit h = shoot({0.5f, 0.5f, 5}, {0, 0, -1});
  REQUIRE(h.hit);
  CHECK(h.t == 5.0f);
  CHECK(h.u == doctest::Approx(0.25f));  // weight of p1 = x / 2
  CHECK(h.v == doctest::Approx(0.25f));  // weight of p2 = y / 2
  // t in units of the given direction.
  CHECK(shoot({0.5f, 0.5f, 5}, {0, 0, -2.5f}).t == 2.0f);
}

TEST_CASE("both faces are hit") {
  CHECK(shoot({0.5f, 0.5f, 5}, {0, 0, -1}).hit);
  CHECK(shoot({0.5f, 0.5f, -5}, {0, 0, 1}).hit);
  // Along every axis-and-sign that crosses a triangle in a tilted plane.
  const glm::vec3 a{1, 0, 0}, b{0, 1, 0}, c{0, 0, 1};
  for (int axis = 0; axis < 3; ++axis) {
    for (float s : {1.0f, -1.0f}) {
      glm::vec3 d{0.0f};
      d[axis] = s;
      const glm::vec3 o = glm::vec3{0.25f} - 5.0f * d;
      CAPTURE(axis);
      CAPTURE(s);
      const TriangleHit h = shoot(o, d, a, b, c);
      REQUIRE(h.hit);
      CHECK(h.t == doctest::Approx(5.0f + 0.25f * s));  // plane x+y+z = 1
    }
  }
}

TEST_CASE("rays outside a triangle, behind the origin or past tmax miss") {
  CHECK_FALSE(shoot({1.5f, 1.5f, 5}, {0, 0, -1}).hit);  // beyond the hypotenuse
  CHECK_FALSE(shoot({-0.1f, 0.5f, 5}, {0, 0, -1}).hit);
  CHECK_FALSE(shoot({0.5f, 0.5f, 5}, {0, 0, 1}).hit);  // behind
  CHECK_FALSE(intersect_triangle(TriangleRay({0.5f, 0.5f, 5}, {0, 0, -1}),
                                 kP0, kP1, kP2, 0.0f, 4.9f).hit);
  CHECK(intersect_triangle(TriangleRay({0.5f, 0.5f, 5}, {0, 0, -1}), kP0, kP1,
                           kP2, 0.0f, 5.0f).hit);  // tmax inclusive
}

TEST_CASE("rays through edges and vertices hit (closed edges)") {
  CHECK(shoot({1, 0, 5}, {0, 0, -1}).hit);   // on edge p0-p1
  CHECK(shoot({0, 1, 5}, {0, 0, -1}).hit);   // on edge p0-p2
  CHECK(shoot({1, 1, 5}, {0, 0, -1}).hit);   // on the hypotenuse
  CHECK(shoot({0, 0, 5}, {0, 0, -1}).hit);   // vertex p0
  CHECK(shoot({2, 0, 5}, {0, 0, -1}).hit);   // vertex p1
  CHECK(shoot({0, 2, 5}, {0, 0, -1}).hit);   // vertex p2
  CHECK(shoot({0, 2, 5}, {0, -0.0f, -1}).hit);
}

TEST_CASE("degenerate triangles and rays in the triangle's plane do not hit") {
  // Zero area: collinear and coincident vertices.
  CHECK_FALSE(shoot({1, 0, 5}, {0, 0, -1}, {0, 0, 0}, {1, 0, 0}, {2, 0, 0}).hit);
  CHECK_FALSE(shoot({0, 0, 5}, {0, 0, -1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}).hit);
  // In the plane z = 0, crossing the triangle: a segment, not a point.
  CHECK_FALSE(shoot({-1, 0.5f, 0}, {1, 0, 0}).hit);
}

TEST_CASE("a ray starting on the triangle hits at t = 0") {
  const TriangleHit h = shoot({0.5f, 0.5f, 0}, {0.3f, 0.1f, 1});
  REQUIRE(h.hit);
  CHECK(h.t == 0.0f);
}

namespace {

// A closed mesh: the unit sphere as a subdivided octahedron (shared vertices
// by index, so edges are shared exactly).
struct ClosedMesh {
  std::vector<glm::vec3> p;
  std::vector<glm::uvec3> tri;
};

ClosedMesh sphere(int levels) {
  const Mesh m = tools::sphere_mesh(levels);
  return {m.positions, m.triangles};
}

// A cube [-1,1]^3 with each face split into n x n quads (2 triangles each).
ClosedMesh subdivided_cube(int n) {
  ClosedMesh m;
  std::map<std::tuple<int, int, int>, unsigned> index;
  auto vertex = [&](int i, int j, int k) {
    const auto key = std::make_tuple(i, j, k);
    auto it = index.find(key);
    if (it != index.end()) return it->second;
    m.p.push_back(glm::vec3{float(i), float(j), float(k)} * (2.0f / float(n)) - 1.0f);
    return index[key] = static_cast<unsigned>(m.p.size() - 1);
  };
  for (int axis = 0; axis < 3; ++axis) {
    for (int side : {0, n}) {
      for (int a = 0; a < n; ++a) {
        for (int b = 0; b < n; ++b) {
          auto v = [&](int da, int db) {
            int c[3];
            c[axis] = side;
            c[(axis + 1) % 3] = a + da;
            c[(axis + 2) % 3] = b + db;
            return vertex(c[0], c[1], c[2]);
          };
          m.tri.push_back({v(0, 0), v(1, 0), v(1, 1)});
          m.tri.push_back({v(0, 0), v(1, 1), v(0, 1)});
        }
      }
    }
  }
  return m;
}

// Rays from `origin` aimed exactly at every vertex and every edge midpoint
// must hit some triangle: nothing slips through shared edges or vertices.
// From an outside origin only targets on the far side are used (the ray
// must cross the near side first): a ray aimed at a silhouette vertex may
// pass it by a rounding hair without entering, which is no leak.
void check_watertight(const ClosedMesh& m, const glm::vec3& origin,
                      bool outside = false) {
  std::vector<glm::vec3> targets = m.p;
  for (const glm::uvec3& t : m.tri) {
    for (int k = 0; k < 3; ++k) {
      targets.push_back(0.5f * (m.p[t[k]] + m.p[t[(k + 1) % 3]]));
    }
  }
  for (const glm::vec3& target : targets) {
    if (outside && glm::dot(target, origin) > -0.1f) continue;
    const glm::vec3 d = target - origin;
    if (d == glm::vec3{0.0f}) continue;
    const TriangleRay ray(origin, d);
    bool hit = false;
    for (const glm::uvec3& t : m.tri) {
      if (intersect_triangle(ray, m.p[t.x], m.p[t.y], m.p[t.z], 0.0f, kInfinity).hit) {
        hit = true;
        break;
      }
    }
    CAPTURE(target.x); CAPTURE(target.y); CAPTURE(target.z);
    REQUIRE(hit);
  }
}

}  // namespace

TEST_CASE("watertight: rays at shared edges and vertices of closed meshes never pass through") {
  SUBCASE("subdivided cube, from the centre and from off-centre inside points") {
    const ClosedMesh cube = subdivided_cube(4);
    check_watertight(cube, {0, 0, 0});
    check_watertight(cube, {0.1f, -0.3f, 0.7f});
    check_watertight(cube, {0.5f, 0.5f, 0.5f});
  }
  SUBCASE("sphere, from inside points") {
    const ClosedMesh s = sphere(3);
    check_watertight(s, {0, 0, 0});
    check_watertight(s, {0.01f, 0.2f, -0.3f});
  }
  SUBCASE("from outside, through the mesh: every ray enters") {
    const ClosedMesh s = sphere(3);
    std::mt19937_64 rng(9);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (int i = 0; i < 20; ++i) {
      const glm::vec3 o = glm::normalize(glm::vec3{g(rng), g(rng), g(rng)}) * 5.0f;
      check_watertight(s, o, /*outside=*/true);
    }
  }
}

namespace {

// The setup and test as first written (Woop et al.'s rule with branches and
// glm's operator[]): the reference the branch-free version must equal bit
// for bit.
struct RefRay {
  glm::vec3 org;
  int kx, ky, kz;
  float sx, sy, sz;
};

RefRay ref_ray(const glm::vec3& org, const glm::vec3& dir) {
  RefRay r{org, 0, 0, 0, 0, 0, 0};
  const glm::vec3 a{std::fabs(dir.x), std::fabs(dir.y), std::fabs(dir.z)};
  r.kz = a.x > a.y ? (a.x > a.z ? 0 : 2) : (a.y > a.z ? 1 : 2);
  r.kx = r.kz == 2 ? 0 : r.kz + 1;
  r.ky = r.kx == 2 ? 0 : r.kx + 1;
  if (dir[r.kz] < 0.0f) std::swap(r.kx, r.ky);
  r.sx = dir[r.kx] / dir[r.kz];
  r.sy = dir[r.ky] / dir[r.kz];
  r.sz = 1.0f / dir[r.kz];
  return r;
}

TriangleHit ref_intersect(const RefRay& ray, const glm::vec3& p0, const glm::vec3& p1,
                          const glm::vec3& p2, float tmin, float tmax) {
  const glm::vec3 a = p0 - ray.org, b = p1 - ray.org, c = p2 - ray.org;
  const float ax = a[ray.kx] - ray.sx * a[ray.kz], ay = a[ray.ky] - ray.sy * a[ray.kz];
  const float bx = b[ray.kx] - ray.sx * b[ray.kz], by = b[ray.ky] - ray.sy * b[ray.kz];
  const float cx = c[ray.kx] - ray.sx * c[ray.kz], cy = c[ray.ky] - ray.sy * c[ray.kz];
  float u = cx * by - cy * bx, v = ax * cy - ay * cx, w = bx * ay - by * ax;
  if (u == 0.0f || v == 0.0f || w == 0.0f) {
    u = static_cast<float>(double(cx) * double(by) - double(cy) * double(bx));
    v = static_cast<float>(double(ax) * double(cy) - double(ay) * double(cx));
    w = static_cast<float>(double(bx) * double(ay) - double(by) * double(ax));
  }
  const bool mixed_signs =
      (u < 0.0f || v < 0.0f || w < 0.0f) && (u > 0.0f || v > 0.0f || w > 0.0f);
  const float det = u + v + w;
  if (mixed_signs || !(det != 0.0f) || std::isnan(det)) return {};
  const float inv_det = 1.0f / det;
  const float t =
      (u * (ray.sz * a[ray.kz]) + v * (ray.sz * b[ray.kz]) + w * (ray.sz * c[ray.kz])) * inv_det;
  if (!(t >= tmin && t <= tmax)) return {};
  return TriangleHit{true, t, v * inv_det, w * inv_det};
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("the watertight setup picks the reference axes for every sign and tie of the direction") {
  const float values[] = {-2.0f, -1.0f, -0.0f, 0.0f, 1.0f, 2.0f};
  int checked = 0;
  for (float x : values) {
    for (float y : values) {
      for (float z : values) {
        const glm::vec3 d{x, y, z};
        if (d == glm::vec3{0.0f}) continue;
        const TriangleRay r({0, 0, 0}, d);
        const RefRay e = ref_ray({0, 0, 0}, d);
        CAPTURE(x); CAPTURE(y); CAPTURE(z);
        CHECK(r.kx == e.kx);
        CHECK(r.ky == e.ky);
        CHECK(r.kz == e.kz);
        CHECK(same_bits(r.sx, e.sx));
        CHECK(same_bits(r.sy, e.sy));
        CHECK(same_bits(r.sz, e.sz));
        ++checked;
      }
    }
  }
  CHECK(checked == 6 * 6 * 6 - 8);  // all but the eight signed zero directions
}

TEST_CASE("the watertight test gives the reference's hit, t, u and v bit for bit") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> coord(-2.0f, 2.0f);
  std::uniform_int_distribution<int> pick(0, 7);
  auto point = [&] { return glm::vec3{coord(rng), coord(rng), coord(rng)}; };
  int hits = 0, edge_cases = 0;
  for (int i = 0; i < 200000; ++i) {
    glm::vec3 p0 = point(), p1 = point(), p2 = point();
    glm::vec3 org = point(), dir = point();
    // Edge cases: rays aimed at a vertex or an edge's midpoint, degenerate
    // triangles, axis-aligned directions with -0.0 components, and rays in
    // the triangle's plane.
    switch (pick(rng)) {
      case 0: dir = p1 - org; ++edge_cases; break;
      case 1: dir = 0.5f * (p0 + p2) - org; ++edge_cases; break;
      case 2: p2 = p1; ++edge_cases; break;
      case 3: dir = {-0.0f, 0.0f, dir.z}; ++edge_cases; break;
      case 4: org = p0; dir = p1 - p0; ++edge_cases; break;
      default: break;
    }
    if (dir == glm::vec3{0.0f}) continue;
    const float tmax = (i % 3 == 0) ? 1.0f : kInfinity;
    const TriangleHit h = intersect_triangle(TriangleRay(org, dir), p0, p1, p2, 0.0f, tmax);
    const TriangleHit e = ref_intersect(ref_ray(org, dir), p0, p1, p2, 0.0f, tmax);
    CAPTURE(i);
    REQUIRE(h.hit == e.hit);
    REQUIRE(same_bits(h.t, e.t));
    REQUIRE(same_bits(h.u, e.u));
    REQUIRE(same_bits(h.v, e.v));
    hits += h.hit ? 1 : 0;
  }
  CHECK(hits > 10000);
  CHECK(edge_cases > 100000);
}
