// libFuzzer target: saved trees (Picker::open) from untrusted bytes. The
// scene is fixed (boxes and small meshes under rotations, mirrors, shears,
// one singular matrix, one empty mesh); the input decides the bytes:
//   byte 0, bit 0: mesh mode (else obb); bit 1: the rest of the input is
//   the trees' bytes as they are; else it is edits of this scene's own
//   saved trees: (u16 offset, u8 xor) triples, and with bit 2 the first
//   u16 cuts the bytes to that length; bit 3: both pickers have a 16-wide
//   top level (PickerConfig::top_width, on every CPU), whose shape the
//   bytes then hold, under the AVX-512 node test (two AVX2 halves per node
//   on a CPU without it). In mesh mode the meshes' trees are 16 wide where
//   the CPU has AVX-512, else 8.
// Whatever the bytes, adopted or refused, the opened picker must answer
// every ray and closest-point query exactly as the built one.
#include "raypick/bvh/picker.h"

#include <fuzzer/FuzzedDataProvider.h>
#include <glm/ext/matrix_transform.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace raypick;

namespace {

Scene fixed_scene() {
  Scene s;
  Mesh cube;
  for (int i = 0; i < 8; ++i) {
    cube.positions.push_back({float(i & 1) - 0.5f, float((i >> 1) & 1) - 0.5f, float(i >> 2) - 0.5f});
  }
  cube.triangles = {{0, 1, 3}, {0, 3, 2}, {4, 6, 7}, {4, 7, 5}, {0, 4, 5}, {0, 5, 1},
                    {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 5, 7}, {1, 7, 3}};
  Mesh fan;  // 24 triangles around a wavy rim
  fan.positions.push_back({0.0f, 0.0f, 0.0f});
  for (int k = 0; k < 24; ++k) {
    const float a = 6.2831853f * float(k) / 24.0f;
    fan.positions.push_back({std::cos(a), std::sin(a), 0.25f * std::sin(3.0f * a)});
  }
  for (std::uint32_t k = 0; k < 24; ++k) fan.triangles.push_back({0, 1 + k, 1 + (k + 1) % 24});
  s.meshes = {cube, fan, Mesh{}};
  for (int i = 0; i < 48; ++i) {
    Object o;
    o.mesh = i % 3 == 0 ? 1u : 0u;
    const glm::vec3 at{float(i % 4) * 2.5f, float((i / 4) % 4) * 2.5f, float(i / 16) * 2.5f};
    glm::mat4 m = glm::translate(glm::mat4{1.0f}, at) *
                  glm::rotate(glm::mat4{1.0f}, 0.37f * float(i), glm::normalize(glm::vec3{1.0f, float(i % 5), 2.0f}));
    if (i % 5 == 1) m = m * glm::scale(glm::mat4{1.0f}, glm::vec3{-1.0f, 0.5f, 2.0f});
    if (i % 7 == 2) m[1][0] = 0.6f;  // shear
    o.matrix = m;
    o.name = "o" + std::to_string(i);
    s.objects.push_back(o);
  }
  s.objects[5].matrix = glm::scale(glm::mat4{1.0f}, glm::vec3{1.0f, 0.0f, 1.0f});  // singular
  s.objects[9].mesh = 2;                                                            // empty
  return s;
}

// By (bit 3, bit 0) of the input's first byte: obb and mesh mode, 8 and
// 16 wide.
struct Fixed {
  Scene scene = fixed_scene();
  PickerConfig config[4];
  Picker built[4];
  std::string trees[4];
  std::vector<Ray> rays;
  std::vector<glm::dvec3> points;
  Fixed() {
    for (int m = 0; m < 4; ++m) {
      config[m].mesh_mode = (m & 1) == 1;
      config[m].isa = m >= 2 ? Isa::kAvx512 : Isa::kAvx2;
      config[m].top_width = m >= 2 ? 16 : 8;  // on every CPU
      built[m] = Picker(scene, config[m]);
      trees[m] = built[m].save_trees();
    }
    for (int i = 0; i < 64; ++i) {
      const float u = float(i) * 0.618034f;
      Ray r;
      r.org = {-3.0f + 0.2f * float(i % 9), -2.0f + 0.17f * float(i), 12.0f - 0.1f * float(i)};
      r.dir = {std::cos(u), std::sin(u) - 0.3f, -1.0f};
      rays.push_back(r);
      points.push_back(glm::dvec3(r.org) + 6.0 * glm::dvec3(r.dir));
    }
  }
};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_trees: %s\n", what);
  std::abort();
}

bool same(const Hit& a, const Hit& b) {
  return a.object == b.object && a.triangle == b.triangle &&
         (a.t == b.t || (std::isnan(a.t) && std::isnan(b.t)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Fixed fixed;
  FuzzedDataProvider in(data, size);
  const auto flags = in.ConsumeIntegral<std::uint8_t>();
  const int m = (flags & 1) | ((flags >> 2) & 2);
  std::string bytes;
  if (flags & 2) {
    bytes = in.ConsumeRemainingBytesAsString();
  } else {
    bytes = fixed.trees[m];
    if (flags & 4) bytes.resize(std::min<std::size_t>(bytes.size(), in.ConsumeIntegral<std::uint16_t>()));
    while (in.remaining_bytes() >= 3 && !bytes.empty()) {
      const auto at = in.ConsumeIntegral<std::uint16_t>() % bytes.size();
      bytes[at] = static_cast<char>(bytes[at] ^ in.ConsumeIntegral<std::uint8_t>());
    }
  }
  std::string why;
  const Picker opened = Picker::open(fixed.scene, bytes, fixed.config[m], &why);
  const Picker& built = fixed.built[m];
  for (const PickMode mode : {PickMode::kObb, PickMode::kMesh}) {
    if (mode == PickMode::kMesh && (m & 1) == 0) continue;
    for (const Ray& r : fixed.rays) {
      if (!same(opened.intersect(r, mode), built.intersect(r, mode))) fail("intersect differs");
      if (opened.occluded(r, mode) != built.occluded(r, mode)) fail("occluded differs");
    }
    for (const glm::dvec3& p : fixed.points) {
      const PointHit a = opened.closest_point(p, QueryOptions{mode});
      const PointHit b = built.closest_point(p, QueryOptions{mode});
      if (a.object != b.object || a.triangle != b.triangle || a.distance != b.distance) {
        fail("closest_point differs");
      }
    }
  }
  return 0;
}
