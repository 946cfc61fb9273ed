#include "bench_scenes.h"

#include "raypick/core/obb.h"

#include <glm/ext/matrix_transform.hpp>
#include <glm/geometric.hpp>
#include <glm/gtc/quaternion.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <random>
#include <unistd.h>

namespace raypick::tools {

Scene make_crowd_scene(const Mesh& model, std::size_t n, std::uint64_t seed) {
  Scene scene;
  scene.meshes.push_back(model);
  const Aabb box = model.triangle_bounds();
  const glm::vec3 size = box.empty() ? glm::vec3(1.0f) : box.max - box.min;
  const float extent = std::max({size.x, size.y, size.z, 1e-6f});
  const glm::mat4 centre = glm::translate(
      glm::mat4{1.0f}, box.empty() ? glm::vec3(0.0f) : -box.center());
  const float spread =
      4.0f * std::cbrt(static_cast<float>(std::max<std::size_t>(n, 1))) * extent;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  scene.objects.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Object obj;
    obj.name = "crowd" + std::to_string(i);
    const glm::vec3 t{unit(rng) * spread, unit(rng) * spread,
                      unit(rng) * spread};
    const float s = 0.5f + 1.5f * unit(rng);
    // A normalized 4D Gaussian is a uniformly random rotation.
    const glm::quat q =
        glm::normalize(glm::quat{gauss(rng), gauss(rng), gauss(rng), gauss(rng)});
    obj.matrix = glm::translate(glm::mat4{1.0f}, t) * glm::mat4_cast(q) *
                 glm::scale(glm::mat4{1.0f}, glm::vec3(s)) * centre;
    scene.objects.push_back(std::move(obj));
  }
  return scene;
}

std::vector<Ray> make_incoherent_rays(const Aabb& bounds, std::size_t count,
                                      std::uint64_t seed) {
  const glm::vec3 grow = 0.1f * (bounds.max - bounds.min);
  const glm::vec3 lo = bounds.min - grow;
  const glm::vec3 size = bounds.max + grow - lo;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<Ray> rays(count);
  for (Ray& r : rays) {
    r.org = lo + size * glm::vec3{unit(rng), unit(rng), unit(rng)};
    glm::vec3 d;
    do {
      d = {gauss(rng), gauss(rng), gauss(rng)};
    } while (glm::dot(d, d) < 1e-12f);
    r.dir = glm::normalize(d);
  }
  return rays;
}

CameraSpec make_camera(const Aabb& bounds, float fov_degrees) {
  const glm::vec3 centre = bounds.center();
  const float radius =
      std::max(0.5f * glm::length(bounds.max - bounds.min), 1e-3f);
  const float half = glm::radians(fov_degrees) * 0.5f;
  CameraSpec spec;
  spec.eye = glm::dvec3(centre + glm::normalize(kCameraView) * (radius / std::sin(half)));
  spec.target = glm::dvec3(centre);
  // kCameraView is never parallel to the world's up axis.
  spec.up = {0.0, 1.0, 0.0};
  spec.fov_deg = fov_degrees;
  spec.width = spec.height = 0;
  return spec;
}

std::vector<Ray> make_camera_rays(const CameraSpec& spec, int width, int height) {
  // The frame in float, from the float eye and target (exact in the spec).
  const glm::vec3 eye(spec.eye);
  const glm::vec3 forward = glm::normalize(glm::vec3(spec.target) - eye);
  const glm::vec3 right = glm::normalize(glm::cross(forward, glm::vec3(spec.up)));
  const glm::vec3 up = glm::cross(right, forward);
  const float tan_half_fov = std::tan(glm::radians(static_cast<float>(spec.fov_deg)) * 0.5f);
  std::vector<Ray> rays;
  rays.reserve(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
  const float aspect = static_cast<float>(width) / static_cast<float>(height);
  for (int y = 0; y < height; ++y) {
    const float sy = (1.0f - 2.0f * (static_cast<float>(y) + 0.5f) /
                                 static_cast<float>(height)) *
                     tan_half_fov;
    for (int x = 0; x < width; ++x) {
      const float sx = (2.0f * (static_cast<float>(x) + 0.5f) /
                            static_cast<float>(width) -
                        1.0f) *
                       tan_half_fov * aspect;
      Ray r;
      r.org = eye;
      r.dir = forward + sx * right + sy * up;
      rays.push_back(r);
    }
  }
  return rays;
}

std::vector<glm::mat4> object_matrices(const Scene& scene) {
  std::vector<glm::mat4> out;
  out.reserve(scene.objects.size());
  for (const Object& o : scene.objects) out.push_back(o.matrix);
  return out;
}

std::vector<glm::mat4> moved_matrices(const std::vector<glm::mat4>& matrices,
                                      float amount, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-amount, amount);
  std::vector<glm::mat4> out(matrices);
  for (glm::mat4& m : out) {
    // A world-space translation adds to the matrix's translation column.
    m[3] += glm::vec4{u(rng), u(rng), u(rng), 0.0f};
  }
  return out;
}

float move_amount(const Scene& scene) {
  const Aabb b = world_bounds(scene);
  if (b.empty()) return 0.0f;
  const float n = static_cast<float>(std::max<std::size_t>(scene.objects.size(), 1));
  return 0.02f * glm::length(b.max - b.min) / std::cbrt(n);
}

std::optional<std::pair<int, int>> parse_resolution(const std::string& text) {
  const auto x = text.find_first_of("xX");
  if (x == std::string::npos) return std::nullopt;
  int w = 0, h = 0;
  const char* end = text.data() + text.size();
  const auto rw = std::from_chars(text.data(), text.data() + x, w);
  const auto rh = std::from_chars(text.data() + x + 1, end, h);
  if (rw.ec != std::errc{} || rw.ptr != text.data() + x ||
      rh.ec != std::errc{} || rh.ptr != end || w < 1 || h < 1 || w > 65536 ||
      h > 65536) {
    return std::nullopt;
  }
  return std::pair{w, h};
}

std::size_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  if (!(in >> pages_total >> pages_resident)) return 0;
  return pages_resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace raypick::tools
