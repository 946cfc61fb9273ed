// The region a rectangle of the image selects (Frustum, from
// Camera::frustum): against the rays through the image, exactly on an
// axis-aligned rectangle, a zero-area rectangle's half-line, and the exact
// box and triangle tests on its boundary (select's tests check them against
// a brute-force reference on random scenes).
#include "support/random_camera.h"
#include "test_util.h"

#include "raypick/core/camera.h"
#include "raypick/core/frustum.h"

#include <glm/ext/matrix_transform.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <utility>

using namespace raypick;

TEST_CASE("the frustum of a rectangle holds exactly the points whose projection is in it") {
  std::mt19937_64 rng(15);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  test::for_random_cameras(rng, 100, [&](const CameraSpec& s, const Camera& cam) {
    const double X0 = u(rng) * s.width, X1 = u(rng) * s.width;
    const double Y0 = u(rng) * s.height, Y1 = u(rng) * s.height;
    const Frustum fr = cam.frustum(X0, Y0, X1, Y1);  // corners in any order
    for (int k = 0; k < 50; ++k) {
      // Points in front of the eye in a wider window around the rectangle.
      const double X = (u(rng) * 1.4 - 0.2) * s.width;
      const double Y = (u(rng) * 1.4 - 0.2) * s.height;
      const Ray r = cam.ray(X, Y);
      const glm::dvec3 q = glm::dvec3(r.org) + (0.5 + 10.0 * u(rng)) * glm::dvec3(r.dir);
      const glm::dvec2 w = cam.project(q);
      const double margin = 1e-6 * (s.width + s.height);
      const bool in = w.x >= std::min(X0, X1) && w.x <= std::max(X0, X1) &&
                      w.y >= std::min(Y0, Y1) && w.y <= std::max(Y0, Y1);
      const bool out = w.x < std::min(X0, X1) - margin || w.x > std::max(X0, X1) + margin ||
                       w.y < std::min(Y0, Y1) - margin || w.y > std::max(Y0, Y1) + margin;
      if (in) CHECK(fr.contains(q));
      if (out) CHECK_FALSE(fr.contains(q));
    }
    // Behind the eye's plane: never inside.
    CHECK_FALSE(fr.contains(cam.eye() - cam.forward()));
  });
}

TEST_CASE("an axis-aligned orthographic frustum has its sides exactly on the rectangle") {
  const CameraSpec s = test::ortho_down_z(10.0, 20.0, 200);  // 10 pixels per world unit
  const Frustum fr = Camera(s).frustum(150, 50, 50, 100);  // x in [-5, 5], y in [0, 5]
  CHECK(fr.contains({-5, 0, 3}));
  CHECK(fr.contains({5, 5, -1e6}));
  CHECK(fr.contains({0, 2, 10}));  // on the eye's plane
  CHECK_FALSE(fr.contains({0, 2, 10.000001}));
  CHECK_FALSE(fr.contains({std::nextafter(5.0, 6.0), 1, 0}));
  CHECK_FALSE(fr.contains({0, std::nextafter(0.0, -1.0), 0}));
}

TEST_CASE("a perspective frustum of a zero-area rectangle is the half-line of its ray") {
  CameraSpec s;
  s.eye = {1, 2, 3};
  s.target = {1, 2, -3};
  s.width = 64;
  s.height = 48;
  const Camera cam(s);
  const Frustum fr = cam.frustum(32, 24, 32, 24);
  CHECK(fr.contains({1, 2, 3}));
  CHECK(fr.contains({1, 2, -100}));
  CHECK_FALSE(fr.contains({1, 2, 100}));  // behind the eye
  CHECK_FALSE(fr.contains({1.001, 2, -100}));
}

TEST_CASE("box_touches and triangle_touches: faces on the boundary touch, an ulp beyond does not") {
  // The rectangle of the axis-aligned orthographic test above: x in
  // [-5, 5], y in [0, 5], in front of the eye's plane z = 10.
  const Frustum fr = Camera(test::ortho_down_z(10.0, 20.0, 200)).frustum(150, 50, 50, 100);
  const glm::mat4x3 identity{1.0f};
  CHECK(box_touches(fr, identity, Aabb{{5, 1, 0}, {6, 2, 1}}));  // a face on x = 5
  CHECK_FALSE(box_touches(fr, identity, Aabb{{std::nextafter(5.0f, 6.0f), 1, 0}, {6, 2, 1}}));
  CHECK(box_touches(fr, identity, Aabb{{-1, 1, 10}, {1, 2, 11}}));  // a face on the eye's plane
  CHECK_FALSE(box_touches(fr, identity, Aabb{{-1, 1, std::nextafter(10.0f, 11.0f)}, {1, 2, 11}}));
  // A unit cube turned 45 degrees about z: its corner reaches 0.7071 from
  // its centre along x, so centred at x = 5.6 it pokes in, at 5.8 it does not.
  for (const auto& [x, inside] : {std::pair{5.6f, true}, std::pair{5.8f, false}}) {
    CAPTURE(x);
    const glm::mat4 m = glm::rotate(glm::translate(glm::mat4{1.0f}, {x, 2.5f, 0.0f}),
                                    std::numbers::pi_v<float> / 4, glm::vec3{0, 0, 1});
    CHECK(box_touches(fr, glm::mat4x3(m), Aabb{glm::vec3{-0.5f}, glm::vec3{0.5f}}) == inside);
  }
  // A triangle around the whole section, no corner inside; one behind the
  // eye's plane; segments (degenerate triangles) across the region and
  // beside it.
  CHECK(triangle_touches(fr, {-100, -100, 0}, {100, -100, 0}, {0, 100, 0}));
  CHECK_FALSE(triangle_touches(fr, {-100, -100, 11}, {100, -100, 11}, {0, 100, 11}));
  CHECK(triangle_touches(fr, {-10, 2, 0}, {10, 2, 0}, {10, 2, 0}));
  CHECK_FALSE(triangle_touches(fr, {-10, 6, 0}, {10, 6, 0}, {10, 6, 0}));
}
