// Cameras: rays against glm's own unProject of lookAt + perspective / ortho,
// project as the inverse of ray, the checks of bad camera parameters and
// framing_camera. The frustum of a rectangle: test_frustum.cpp.
#include "support/random_camera.h"
#include "test_util.h"

#include "raypick/core/camera.h"

#include <glm/ext/matrix_clip_space.hpp>
#include <glm/ext/matrix_projection.hpp>
#include <glm/ext/matrix_transform.hpp>
#include <glm/geometric.hpp>

#include <cmath>
#include <random>

namespace {

using namespace raypick;
using test::random_spec;

constexpr double kNear = 0.1, kFar = 100.0;

glm::dvec3 unproject(const CameraSpec& s, const glm::dmat4& proj, double X,
                     double Y, double z) {
  const glm::dmat4 view = glm::lookAt(s.eye, s.target, s.up);
  // glm's window y grows upwards, ours downwards.
  return glm::unProject(glm::dvec3(X, s.height - Y, z), view, proj,
                        glm::dvec4(0.0, 0.0, s.width, s.height));
}

bool near3(const glm::vec3& a, const glm::dvec3& b, double tol) {
  return std::abs(a.x - b.x) <= tol && std::abs(a.y - b.y) <= tol &&
         std::abs(a.z - b.z) <= tol;
}

std::string str3(const glm::dvec3& v) { return test::str(glm::vec3(v)); }

}  // namespace

TEST_CASE("perspective camera rays match glm::unProject of lookAt and perspective") {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> u(-0.2, 1.2);  // also outside the image
  for (int c = 0; c < 200; ++c) {
    const CameraSpec s = random_spec(rng, Projection::kPerspective);
    const Camera cam(s);
    const glm::dmat4 proj = glm::perspective(glm::radians(s.fov_deg),
                                             double(s.width) / s.height, kNear, kFar);
    for (int k = 0; k < 20; ++k) {
      const double X = u(rng) * s.width, Y = u(rng) * s.height;
      const glm::dvec3 a = unproject(s, proj, X, Y, 0.0);
      const glm::dvec3 b = unproject(s, proj, X, Y, 1.0);
      const glm::dvec3 dir = glm::normalize(b - a);
      const Ray r = cam.ray(X, Y);
      CHECK(r.org == glm::vec3(s.eye));
      CHECK_MESSAGE(near3(r.dir, dir, 1e-5), test::str(r.dir) << " vs " << str3(dir));
      CHECK(std::abs(glm::length(r.dir) - 1.0f) < 1e-6f);
      // The near point lies on the ray: t is the distance from the eye.
      const double t = glm::length(a - s.eye);
      CHECK(near3(r.org + float(t) * r.dir, a, 1e-4 * (1.0 + glm::length(s.eye))));
    }
  }
}

TEST_CASE("orthographic camera rays match glm::unProject of lookAt and ortho") {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> u(-0.2, 1.2);
  for (int c = 0; c < 200; ++c) {
    const CameraSpec s = random_spec(rng, Projection::kOrthographic);
    const Camera cam(s);
    const double hy = s.ortho_height / 2.0, hx = hy * s.width / s.height;
    const glm::dmat4 proj = glm::ortho(-hx, hx, -hy, hy, kNear, kFar);
    const glm::dvec3 f = glm::normalize(s.target - s.eye);
    for (int k = 0; k < 20; ++k) {
      const double X = u(rng) * s.width, Y = u(rng) * s.height;
      const glm::dvec3 a = unproject(s, proj, X, Y, 0.0);
      const glm::dvec3 b = unproject(s, proj, X, Y, 1.0);
      const Ray r = cam.ray(X, Y);
      // The origin is on the eye's plane: the near point moved back by kNear.
      const glm::dvec3 org = a - kNear * f;
      CHECK_MESSAGE(near3(r.org, org, 1e-5 * (1.0 + glm::length(org))),
                    test::str(r.org) << " vs " << str3(org));
      CHECK(near3(r.dir, glm::normalize(b - a), 1e-5));
      CHECK(near3(r.dir, f, 1e-6));
    }
  }
}

TEST_CASE("the image's centre looks at the target and (0, 0) is its top-left corner") {
  CameraSpec s = test::camera_down_z(10.0, 200);
  s.fov_deg = 90.0;
  s.height = 100;
  const Camera cam(s);
  CHECK(cam.ray(100, 50).dir == glm::vec3(0, 0, -1));
  // Top-left corner: x = -1, y = +1: direction (-tan45 * 2, tan45, -1).
  const glm::vec3 d = cam.ray(0, 0).dir;
  CHECK_VEC_NEAR(d, glm::normalize(glm::vec3(-2, 1, -1)), 1e-6f);
  // Pixel (199, 99)'s centre is half a pixel inside the bottom-right corner.
  CHECK(cam.ray(199.5, 99.5).dir.x > 0.0f);
  CHECK(cam.ray(199.5, 99.5).dir.y < 0.0f);
  s.projection = Projection::kOrthographic;
  s.ortho_height = 4.0;
  const Camera ortho(s);
  CHECK(ortho.ray(0, 0).org == glm::vec3(-4, 2, 10));
  CHECK(ortho.ray(200, 100).org == glm::vec3(4, -2, 10));
  CHECK(ortho.ray(0, 0).dir == glm::vec3(0, 0, -1));
}

TEST_CASE("project is the inverse of ray for points in front of the camera") {
  std::mt19937_64 rng(14);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  test::for_random_cameras(rng, 100, [&](const CameraSpec& s, const Camera& cam) {
    const double X = u(rng) * s.width, Y = u(rng) * s.height;
    const Ray r = cam.ray(X, Y);
    const glm::dvec3 q = glm::dvec3(r.org) + (1.0 + 10.0 * u(rng)) * glm::dvec3(r.dir);
    const glm::dvec2 back = cam.project(q);
    CHECK(std::abs(back.x - X) < 1e-3 * s.width);
    CHECK(std::abs(back.y - Y) < 1e-3 * s.height);
  });
}

TEST_CASE("bad camera parameters each get one clear message") {
  CameraSpec s = test::camera_down_z(5.0, 64);
  s.height = 48;
  CHECK(check_camera(s).empty());
  auto with = [&](auto change) {
    CameraSpec t = s;
    change(t);
    return check_camera(t);
  };
  CHECK(with([](CameraSpec& t) { t.width = 0; }) ==
        "--size must be WxH with both sides in 1..16384, got 0x48");
  CHECK(with([](CameraSpec& t) { t.height = 16385; }).find("--size") == 0);
  CHECK(with([](CameraSpec& t) { t.width = 16384; t.height = 16384; }).empty());
  CHECK(with([](CameraSpec& t) { t.fov_deg = 0; }) == "--fov must be in (0, 180) degrees, got 0");
  CHECK(with([](CameraSpec& t) { t.fov_deg = 180; }).find("--fov") == 0);
  CHECK(with([](CameraSpec& t) { t.fov_deg = std::nan(""); }).find("--fov") == 0);
  CHECK(with([](CameraSpec& t) {
          t.projection = Projection::kOrthographic;
          t.ortho_height = 0;
        }) == "--ortho must be a finite view height > 0, got 0");
  CHECK(with([](CameraSpec& t) {
          t.projection = Projection::kOrthographic;
          t.ortho_height = -1;
        }).find("--ortho") == 0);
  CHECK(with([](CameraSpec& t) { t.target = t.eye; }) ==
        "--eye and --target must differ (both are 0,0,5)");
  CHECK(with([](CameraSpec& t) { t.up = {0, 0, 2}; }) ==
        "--up 0,0,2 is parallel to the view direction (target - eye); give another --up");
  CHECK(with([](CameraSpec& t) { t.up = {0, 0, 0}; }) == "--up must not be zero");
  CHECK(with([](CameraSpec& t) { t.eye.x = INFINITY; }).find("--eye must be finite") == 0);
}

TEST_CASE("framing_camera keeps every corner of the box in the image, from every view") {
  const Aabb box{{-3.0f, 1.0f, 10.0f}, {5.0f, 2.5f, 14.0f}};
  const glm::dvec3 centre = 0.5 * (glm::dvec3(box.min) + glm::dvec3(box.max));
  for (ViewDirection view : {ViewDirection::kIso, ViewDirection::kFront, ViewDirection::kBack,
                             ViewDirection::kLeft, ViewDirection::kRight, ViewDirection::kTop,
                             ViewDirection::kBottom}) {
    for (Projection projection : {Projection::kPerspective, Projection::kOrthographic}) {
      for (const auto& [w, h] : {std::pair{640, 480}, std::pair{200, 600}}) {
        CAPTURE(int(view));
        CAPTURE(int(projection));
        CAPTURE(w);
        CameraSpec spec;
        spec.projection = projection;
        spec.ortho_height = 0.0;  // fit
        spec.width = w;
        spec.height = h;
        const CameraSpec framed = framing_camera(box, view, spec);
        REQUIRE(check_camera(framed).empty());
        CHECK(framed.target == centre);
        CHECK((framed.width == w && framed.height == h));
        const Camera cam(framed);
        // The centre is at the image's centre; all 8 corners inside it and
        // in front of the eye.
        const glm::dvec2 c = cam.project(centre);
        CHECK(c.x == doctest::Approx(w / 2.0));
        CHECK(c.y == doctest::Approx(h / 2.0));
        for (int k = 0; k < 8; ++k) {
          const glm::dvec3 p{(k & 1) ? box.max.x : box.min.x, (k & 2) ? box.max.y : box.min.y,
                             (k & 4) ? box.max.z : box.min.z};
          CHECK(cam.depth(p) > 0.0);
          const glm::dvec2 q = cam.project(p);
          CHECK(q.x >= 0.0);
          CHECK(q.x <= w);
          CHECK(q.y >= 0.0);
          CHECK(q.y <= h);
        }
      }
    }
  }
  // An empty box frames the unit box at the origin.
  CameraSpec spec;
  spec.width = spec.height = 10;
  CHECK(framing_camera(Aabb{}, ViewDirection::kFront, spec).target == glm::dvec3(0.0));
}
