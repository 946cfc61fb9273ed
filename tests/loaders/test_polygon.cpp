// OBJ polygons as drawn: the triangles of a face cover exactly its outline.
// Checked against the outline itself (even-odd point-in-polygon in double),
// never against another triangulator.
#include "test_util.h"

#include "polygon.h"
#include "loader_test_util.h"
#include "raypick/bvh/picker.h"
#include "raypick/loaders/load.h"
#include "temp_dir.h"

#include <fstream>
#include <random>
#include <sstream>

namespace raypick {
namespace {

using Poly = std::vector<glm::dvec2>;

// Even-odd rule on the outline (a bridge's two coincident edges cancel).
bool inside_outline(const Poly& poly, const glm::dvec2& p) {
  bool in = false;
  for (std::size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
    const glm::dvec2 a = poly[i], b = poly[j];
    if ((a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x) in = !in;
  }
  return in;
}

double distance_to_outline(const Poly& poly, const glm::dvec2& p) {
  double best = 1e300;
  for (std::size_t i = 0, j = poly.size() - 1; i < poly.size(); j = i++) {
    const glm::dvec2 a = poly[j], ab = poly[i] - poly[j];
    const double len2 = glm::dot(ab, ab);
    const double t = len2 > 0 ? std::clamp(glm::dot(p - a, ab) / len2, 0.0, 1.0) : 0.0;
    best = std::min(best, glm::length(p - (a + t * ab)));
  }
  return best;
}

bool in_triangle(const glm::dvec2& a, const glm::dvec2& b, const glm::dvec2& c, const glm::dvec2& p) {
  const auto cross = [](glm::dvec2 u, glm::dvec2 v) { return u.x * v.y - u.y * v.x; };
  const double d1 = cross(b - a, p - a), d2 = cross(c - b, p - b), d3 = cross(a - c, p - c);
  return (d1 >= 0 && d2 >= 0 && d3 >= 0) || (d1 <= 0 && d2 <= 0 && d3 <= 0);
}

// The face's triangles cover exactly its outline: every random point of
// the bounding box farther than `margin` from the outline is inside the
// outline exactly when it is inside one triangle, and inside no two (no
// overlap); returns the number of inside points tested.
std::size_t check_cover(const Poly& poly, std::uint64_t seed, int samples = 4000) {
  std::vector<glm::vec3> corners;
  glm::dvec2 lo{1e300}, hi{-1e300};
  for (const glm::dvec2& p : poly) {
    corners.emplace_back(float(p.x), float(p.y), 0.0f);
    lo = glm::min(lo, p);
    hi = glm::max(hi, p);
  }
  const detail::PolygonTriangles tris = detail::triangulate_polygon(corners);
  CHECK(tris.simple);
  CHECK(tris.triangles.size() <= poly.size() - 2);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double margin = 1e-6 * glm::length(hi - lo);
  std::size_t inside = 0;
  for (int k = 0; k < samples; ++k) {
    const glm::dvec2 p = lo + glm::dvec2{u(rng), u(rng)} * (hi - lo);
    if (distance_to_outline(poly, p) < margin) continue;
    int covered = 0;
    for (const auto& t : tris.triangles) {
      covered += in_triangle(poly[t[0]], poly[t[1]], poly[t[2]], p);
    }
    const bool want = inside_outline(poly, p);
    INFO("point (" << p.x << ", " << p.y << ")");
    REQUIRE(covered == (want ? 1 : 0));
    inside += want;
  }
  return inside;
}

Poly star(int points, double r0, double r1) {
  Poly p;
  for (int i = 0; i < 2 * points; ++i) {
    const double a = 3.141592653589793 * i / points;
    const double r = i % 2 ? r1 : r0;
    p.push_back({r * std::cos(a), r * std::sin(a)});
  }
  return p;
}

// A comb: a spine along y = 0 and `teeth` teeth of height 10 upward.
Poly comb(int teeth) {
  Poly p;
  p.push_back({0, -1});
  p.push_back({2.0 * teeth, -1});
  for (int i = teeth - 1; i >= 0; --i) {
    p.push_back({2.0 * i + 1.5, 0});
    p.push_back({2.0 * i + 1.5, 10});
    p.push_back({2.0 * i + 0.5, 10});
    p.push_back({2.0 * i + 0.5, 0});
  }
  p.push_back({0, 0});
  return p;
}

TEST_CASE("polygons: a convex face is its fan from the first corner, in either winding") {
  const Poly square{{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  check_cover(square, 1);
  std::vector<glm::vec3> cw{{0, 0, 0}, {0, 1, 0}, {1, 1, 0}, {1, 0, 0}};
  const auto t = detail::triangulate_polygon(cw).triangles;
  REQUIRE(t.size() == 2);
  CHECK(t[0] == std::array<std::uint32_t, 3>{0, 1, 2});
  CHECK(t[1] == std::array<std::uint32_t, 3>{0, 2, 3});
}

TEST_CASE("polygons: concave, collinear corners, stars and combs of 1,000+ corners") {
  CHECK(check_cover({{0, 0}, {4, 0}, {4, 4}, {2, 1}, {0, 4}}, 2) > 100);          // a dart
  CHECK(check_cover({{0, 0}, {1, 0}, {2, 0}, {3, 0}, {3, 3}, {1.5, 1}, {0, 3}}, 3) > 100);  // collinear
  CHECK(check_cover(star(6, 1.0, 0.3), 4) > 100);
  CHECK(check_cover(star(600, 1.0, 0.55), 5, 3000) > 100);      // 1,200 corners
  CHECK(check_cover(comb(251), 6, 3000) > 100);                  // 1,007 corners
}

TEST_CASE("polygons: a square with a square hole, joined by a bridge whose two edges coincide") {
  const Poly holed{{0, 0}, {4, 0}, {4, 4}, {0, 4}, {0, 0}, {1, 1}, {1, 3}, {3, 3}, {3, 1}, {1, 1}};
  CHECK(check_cover(holed, 7) > 100);
}

TEST_CASE("polygons: random simple polygons (star-shaped, random radii)") {
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int k = 0; k < 60; ++k) {
    const int n = 4 + static_cast<int>(u(rng) * (k < 50 ? 40 : 400));
    // Jittered angles all around the origin (gaps under half a turn), so
    // the polygon is star-shaped about it and simple.
    std::vector<double> angles;
    for (int i = 0; i < n; ++i) angles.push_back((i + 0.8 * u(rng)) / n * 6.283185307179586);
    Poly p;
    for (double a : angles) {
      const double r = 0.2 + u(rng);
      // Rounded to float first, as the loader stores positions.
      p.push_back({double(float(r * std::cos(a))), double(float(r * std::sin(a)))});
    }
    CAPTURE(k);
    check_cover(p, 100 + k, 1500);
  }
}

TEST_CASE("polygons: a face that crosses itself gets triangles and is flagged") {
  std::vector<glm::vec3> bow{{0, 0, 0}, {2, 2, 0}, {2, 0, 0}, {0, 2, 0}};
  const detail::PolygonTriangles t = detail::triangulate_polygon(bow);
  CHECK_FALSE(t.simple);
  CHECK_FALSE(t.triangles.empty());
  CHECK(t.triangles.size() <= 2);
  // Through the loader: loaded, with one warning.
  test::TempDir dir;
  const LoadResult r =
      load_scene(dir.write("bow.obj", "v 0 0 0\nv 2 2 0\nv 2 0 0\nv 0 2 0\nf 1 2 3 4\n"));
  REQUIRE(r.ok());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] == "1 polygon crosses itself: its triangles (ear clipping, the rest "
                         "fanned) may cover more or less than its outline");
}

// The OBJ's one face, read from the file itself: its corners in order.
Poly obj_face_yz(const std::string& path) {
  std::ifstream in(path);
  std::vector<glm::dvec2> v;
  Poly face;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string key;
    s >> key;
    if (key == "v") {
      double x, y, z;
      s >> x >> y >> z;
      v.push_back({y, z});  // the face lies in the plane x = -1.146
    } else if (key == "f") {
      std::string corner;
      while (s >> corner) face.push_back(v[std::stoul(corner.substr(0, corner.find('/'))) - 1]);
    }
  }
  return face;
}

TEST_CASE("polygons: rays through assimp's concave_polygon.obj ring hit, rays through its hole miss") {
  const std::string path = test::assimp_model("OBJ/concave_polygon.obj").string();
  const Poly face = obj_face_yz(path);
  REQUIRE(face.size() == 66);
  const LoadResult r = load_scene(path);
  REQUIRE(r.ok());
  CHECK(r.warnings.empty());
  PickerConfig config;
  config.mesh_mode = true;
  const Picker picker(r.scene(), config);
  glm::dvec2 lo{1e300}, hi{-1e300};
  for (const glm::dvec2& p : face) {
    lo = glm::min(lo, p);
    hi = glm::max(hi, p);
  }
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::size_t in = 0, out = 0;
  for (int k = 0; k < 4000; ++k) {
    const glm::dvec2 p = lo + glm::dvec2{u(rng), u(rng)} * (hi - lo);
    if (distance_to_outline(face, p) < 1e-4) continue;
    const Ray ray{{-0.146f, float(p.x), float(p.y)}, {-1.0f, 0.0f, 0.0f}};
    const bool want = inside_outline(face, p);
    INFO("point (" << p.x << ", " << p.y << ")");
    REQUIRE(picker.intersect(ray, PickMode::kMesh).hit() == want);
    (want ? in : out) += 1;
  }
  CHECK(in > 300);
  CHECK(out > 500);  // the hole and the corners of the box
}

}  // namespace
}  // namespace raypick
