#include "raypick/core/scene.h"

#include "raypick/core/assert.h"
#include "raypick/core/obb.h"

#include <glm/ext/matrix_double4x4.hpp>
#include <glm/ext/vector_double4.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace raypick {

Aabb Mesh::triangle_bounds() const {
  Aabb box;
  for (const glm::uvec3& tri : triangles) {
    for (int k = 0; k < 3; ++k) box.extend(positions[tri[k]]);
  }
  return box;
}

glm::vec3 box_corner(const Aabb& box, int i) {
  return {(i & 1) ? box.max.x : box.min.x, (i & 2) ? box.max.y : box.min.y,
          (i & 4) ? box.max.z : box.min.z};
}

std::span<const glm::uvec3, 12> box_triangles() {
  static const glm::uvec3 kTriangles[12] = {{0, 4, 6}, {0, 6, 2},   // -x
                                                {1, 3, 7}, {1, 7, 5},   // +x
                                                {0, 1, 5}, {0, 5, 4},   // -y
                                                {2, 6, 7}, {2, 7, 3},   // +y
                                                {0, 2, 3}, {0, 3, 1},   // -z
                                                {4, 5, 7}, {4, 7, 6}};  // +z
  return std::span<const glm::uvec3, 12>(kTriangles);
}

Mesh box_mesh(const Aabb& box) {
  Mesh m;
  for (int i = 0; i < 8; ++i) m.positions.push_back(box_corner(box, i));
  const auto t = box_triangles();
  m.triangles.assign(t.begin(), t.end());
  return m;
}

CameraSpec camera_spec(const SceneCamera& camera, int width, int height) {
  CameraSpec s;
  const glm::dmat4& m = camera.matrix;
  s.eye = glm::dvec3(m[3]);
  s.target = s.eye - glm::dvec3(m[2]);  // looking down the node's -Z
  s.up = glm::dvec3(m[1]);
  s.projection = camera.projection;
  s.fov_deg = camera.fov_deg;
  s.ortho_height = camera.ortho_height;
  s.width = width;
  s.height = height;
  return s;
}

glm::vec3 translation_low(const glm::dvec3& t) {
  // Each coordinate's rounding goes through a volatile float: GCC 12 at
  // -O2 and above turns the vector form t - dvec3(vec3(t)) into t - t for
  // two of the three lanes (its SLP vectorizer drops the double -> float
  // -> double round trip), which made every low part of x and y zero.
  glm::vec3 low;
  for (int a = 0; a < 3; ++a) {
    volatile float hi = static_cast<float>(t[a]);
    low[a] = static_cast<float>(t[a] - static_cast<double>(hi));
  }
  return low;
}

glm::dvec3 Object::translation() const {
  return glm::dvec3{glm::vec3{matrix[3]}} + glm::dvec3{translation_low};
}

glm::dmat4 Object::world_matrix() const {
  glm::dmat4 m{matrix};
  m[3] = glm::dvec4{translation(), 1.0};
  return m;
}

void Object::place(const glm::dmat4& m) {
  matrix = glm::mat4{m};
  translation_low = raypick::translation_low(glm::dvec3{m[3]});
}

std::size_t Scene::triangle_count() const {
  std::size_t n = 0;
  for (const Object& o : objects) {
    if (o.mesh < meshes.size()) n += meshes[o.mesh].triangles.size();
  }
  return n;
}

Aabb world_bounds(const Scene& scene) {
  std::vector<Aabb> local(scene.meshes.size());
  std::vector<bool> done(scene.meshes.size(), false);
  Aabb out;
  for (const Object& obj : scene.objects) {
    if (!done[obj.mesh]) {
      local[obj.mesh] = scene.meshes[obj.mesh].triangle_bounds();
      done[obj.mesh] = true;
    }
    out.extend(Obb::make(local[obj.mesh], obj.matrix, obj.translation_low).world_bounds());
  }
  return out;
}

void append_placed(Mesh& out, const Mesh& mesh, const glm::mat4& matrix, const glm::vec3& low) {
  const auto base = static_cast<std::uint32_t>(out.positions.size());
  glm::dmat4 m{matrix};
  m[3] += glm::dvec4{glm::dvec3{low}, 0.0};
  for (const glm::vec3& p : mesh.positions) {
    out.positions.emplace_back(m * glm::dvec4{glm::dvec3{p}, 1.0});
  }
  for (const glm::uvec3& t : mesh.triangles) {
    out.triangles.push_back(t + glm::uvec3{base});
  }
}

Mesh merge_into_one_mesh(const Scene& scene) {
  Mesh out;
  for (const Object& obj : scene.objects) {
    append_placed(out, scene.meshes[obj.mesh], obj.matrix, obj.translation_low);
  }
  return out;
}

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string point(const glm::vec3& p) {
  return "(" + number(p.x) + ", " + number(p.y) + ", " + number(p.z) + ")";
}

const std::string& range_text() {
  // "%g": 1e+11 rather than the float's 99999997952.
  static const std::string text = [] {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", static_cast<double>(kMaxCoordinate));
    return "outside the supported range: every coordinate must be within +-" +
           std::string(buf);
  }();
  return text;
}

}  // namespace

std::string validate_meshes(const Scene& scene) {
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    const Mesh& mesh = scene.meshes[m];
    const std::size_t n = mesh.positions.size();
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      for (int k = 0; k < 3; ++k) {
        const std::uint32_t i = mesh.triangles[t][k];
        if (i >= n) {
          return "mesh " + std::to_string(m) + ": triangle " +
                 std::to_string(t) + " uses vertex " + std::to_string(i) +
                 " of " + std::to_string(n);
        }
        const glm::vec3& p = mesh.positions[i];
        if (!std::isfinite(p.x) || !std::isfinite(p.y) ||
            !std::isfinite(p.z)) {
          return "mesh " + std::to_string(m) + ": vertex " +
                 std::to_string(i) + " is not finite";
        }
        if (std::fabs(p.x) > kMaxCoordinate || std::fabs(p.y) > kMaxCoordinate ||
            std::fabs(p.z) > kMaxCoordinate) {
          return "mesh " + std::to_string(m) + ": vertex " +
                 std::to_string(i) + " " + point(p) + " is " + range_text();
        }
      }
    }
  }
  return {};
}

glm::dvec3 world_reach(const Aabb& local, const Object& obj) {
  // The world box: center M c, extent |M| e (the linear part's absolute
  // values), in double so that the check itself cannot overflow.
  glm::dmat4 m{obj.matrix};
  m[3] += glm::dvec4{glm::dvec3{obj.translation_low}, 0.0};
  const glm::dvec3 c = (glm::dvec3{local.min} + glm::dvec3{local.max}) * 0.5;
  const glm::dvec3 e = (glm::dvec3{local.max} - glm::dvec3{local.min}) * 0.5;
  glm::dvec3 reach;
  for (int r = 0; r < 3; ++r) {
    double center = m[3][r];
    double extent = 0.0;
    for (int k = 0; k < 3; ++k) {
      center += m[k][r] * c[k];
      extent += std::fabs(m[k][r]) * e[k];
    }
    reach[r] = std::fabs(center) + extent;
  }
  return reach;
}

std::string validate_objects(const Scene& scene, std::span<const Aabb> mesh_bounds,
                             std::size_t begin, std::size_t end) {
  RAYPICK_ASSERT(mesh_bounds.size() == scene.meshes.size() && begin <= end &&
                     end <= scene.objects.size(),
                 "validate_objects: a bound per mesh, a range of object ids");
  for (std::size_t o = begin; o < end; ++o) {
    const Object& obj = scene.objects[o];
    if (obj.mesh >= scene.meshes.size()) {
      return "object " + std::to_string(o) + " ('" + obj.name + "'): mesh " +
             std::to_string(obj.mesh) + " does not exist";
    }
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (!std::isfinite(obj.matrix[c][r]) || (c == 3 && r < 3 && !std::isfinite(obj.translation_low[r]))) {
          return "object " + std::to_string(o) + " ('" + obj.name +
                 "'): matrix is not finite";
        }
      }
    }
    const Aabb& box = mesh_bounds[obj.mesh];
    if (box.empty()) continue;
    const glm::dvec3 reach = world_reach(box, obj);
    for (int r = 0; r < 3; ++r) {
      if (!(reach[r] <= kMaxCoordinate)) {
        return "object " + std::to_string(o) + " ('" + obj.name +
               "'): its box reaches " + number(reach[r]) + " on the " +
               "xyz"[r] + " axis in world space, " + range_text();
      }
    }
  }
  return {};
}

std::string validate_scene(const Scene& scene) {
  std::string problem = validate_meshes(scene);
  if (!problem.empty()) return problem;
  std::vector<Aabb> bounds(scene.meshes.size());
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    bounds[m] = scene.meshes[m].triangle_bounds();
  }
  return validate_objects(scene, bounds, 0, scene.objects.size());
}

}  // namespace raypick
