#include "test_util.h"

#include "raypick/core/closest_point.h"

#include <glm/geometric.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace raypick {
namespace {

// An independent formulation: the projection onto the plane when it falls
// inside (barycentrics by areas), else the nearest of the three edges.
glm::dvec3 reference(const glm::dvec3& p, const glm::dvec3& a, const glm::dvec3& b,
                     const glm::dvec3& c) {
  auto on_segment = [&](const glm::dvec3& s, const glm::dvec3& e) {
    const glm::dvec3 d = e - s;
    const double l = glm::dot(d, d);
    const double t = l > 0.0 ? std::clamp(glm::dot(p - s, d) / l, 0.0, 1.0) : 0.0;
    return s + t * d;
  };
  glm::dvec3 best = on_segment(a, b);
  for (const glm::dvec3& q : {on_segment(b, c), on_segment(c, a)}) {
    if (glm::length(p - q) < glm::length(p - best)) best = q;
  }
  const glm::dvec3 n = glm::cross(b - a, c - a);
  const double nn = glm::dot(n, n);
  if (nn > 0.0) {
    const glm::dvec3 q = p - glm::dot(p - a, n) / nn * n;
    const double wa = glm::dot(glm::cross(c - b, q - b), n);
    const double wb = glm::dot(glm::cross(a - c, q - c), n);
    const double wc = glm::dot(glm::cross(b - a, q - a), n);
    if (wa >= 0.0 && wb >= 0.0 && wc >= 0.0 && glm::length(p - q) < glm::length(p - best)) {
      best = q;
    }
  }
  return best;
}

TEST_CASE("squared_limit is the largest squared distance whose root is within the limit") {
  // The boundary: the limit's own root within, the next double's root beyond.
  auto check = [](double m) {
    CAPTURE(m);
    const double x = squared_limit(m);
    CHECK(std::sqrt(x) <= m);
    CHECK(std::sqrt(std::nextafter(x, std::numeric_limits<double>::infinity())) > m);
  };
  for (const double m : {0.0, 1.0, 0.5, std::sqrt(0.5), std::sqrt(0.75), 1e-160, 3e-162, 1e-300,
                         1e150, 1e154, 1e160, std::numeric_limits<double>::max()}) {
    check(m);
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-60, 60);
  std::size_t above_square = 0;
  for (int i = 0; i < 20000; ++i) {
    const double m = std::ldexp(mantissa(rng), exponent(rng));
    check(m);
    // A distance reported as m (its root) from a squared distance above m * m.
    above_square += squared_limit(m) > m * m;
  }
  CHECK(above_square > 1000);  // where m * m alone would refuse an object at m
  CHECK(squared_limit(std::numeric_limits<double>::infinity()) == std::numeric_limits<double>::infinity());
  // A squared distance of 0.75 is reported as sqrt(0.75), whose square
  // rounds below 0.75: that limit must still hold it.
  CHECK(std::sqrt(0.75) * std::sqrt(0.75) < 0.75);
  CHECK(squared_limit(std::sqrt(0.75)) >= 0.75);
}

TEST_CASE("the closest point on a triangle equals an independent formulation, random cases") {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int i = 0; i < 20000; ++i) {
    const glm::dvec3 a{g(rng), g(rng), g(rng)}, b{g(rng), g(rng), g(rng)}, c{g(rng), g(rng), g(rng)};
    const glm::dvec3 p{3 * g(rng), 3 * g(rng), 3 * g(rng)};
    const TrianglePoint t = closest_point_on_triangle(p, a, b, c);
    const glm::dvec3 want = reference(p, a, b, c);
    CAPTURE(i);
    REQUIRE(glm::length(t.point - want) <= 1e-9 * (1.0 + glm::length(p)));
    CHECK(t.distance2 == doctest::Approx(glm::dot(p - want, p - want)).epsilon(1e-9));
    CHECK(t.u >= 0.0);
    CHECK(t.v >= 0.0);
    CHECK(t.u + t.v <= 1.0 + 1e-12);
    CHECK(glm::length(a + t.u * (b - a) + t.v * (c - a) - t.point) <= 1e-12 * (1 + glm::length(p)));
  }
}

TEST_CASE("the closest point on a triangle: hand cases, on the face, edges and corners, degenerate") {
  const glm::dvec3 a{0, 0, 0}, b{2, 0, 0}, c{0, 2, 0};
  SUBCASE("above the face") {
    const TrianglePoint t = closest_point_on_triangle({0.5, 0.5, 3}, a, b, c);
    CHECK(t.point == glm::dvec3{0.5, 0.5, 0});
    CHECK(t.distance2 == 9.0);
    CHECK(t.u == 0.25);
    CHECK(t.v == 0.25);
  }
  SUBCASE("exactly on an edge and at a corner: distance 0") {
    CHECK(closest_point_on_triangle({1, 0, 0}, a, b, c).distance2 == 0.0);
    CHECK(closest_point_on_triangle({1, 1, 0}, a, b, c).distance2 == 0.0);
    CHECK(closest_point_on_triangle({2, 0, 0}, a, b, c).distance2 == 0.0);
    CHECK(closest_point_on_triangle({0, 0, 0}, a, b, c).point == a);
  }
  SUBCASE("beyond a corner and beside an edge") {
    CHECK(closest_point_on_triangle({3, -1, 0}, a, b, c).point == b);
    CHECK(closest_point_on_triangle({1, -2, 1}, a, b, c).point == glm::dvec3{1, 0, 0});
    CHECK(closest_point_on_triangle({2, 2, 0}, a, b, c).point == glm::dvec3{1, 1, 0});
  }
  SUBCASE("a degenerate triangle is its edges") {
    const TrianglePoint t = closest_point_on_triangle({1, 1, 0}, a, b, glm::dvec3{1, 0, 0});
    CHECK(t.point == glm::dvec3{1, 0, 0});
    CHECK(t.distance2 == 1.0);
    const TrianglePoint u = closest_point_on_triangle({5, 5, 5}, a, a, a);
    CHECK(u.point == a);
  }
}

}  // namespace
}  // namespace raypick
