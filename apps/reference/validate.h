// raypick validate: raypick's picking against Embree in either hit mode,
// with every disagreement re-decided by a double-precision brute force.
#pragma once

#include "embree_scene.h"
#include "reference.h"

#include "raypick/bvh/picker.h"
#include "raypick/core/hit.h"
#include "raypick/core/scene.h"

#include <cstdint>
#include <functional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace raypick::tools {

// Random rays over the scene, deterministic for (scene, n, seed, mode):
// - 40% from a random point on a sphere around the whole scene, aimed at a
//   random point of a random object: inside its OBB in obb mode, on one of
//   its triangles in mesh mode;
// - 40% from a point uniform in the scene's world box grown by 10% on each
//   side (often inside a box), direction uniform on the sphere;
// - 20% from such a point along a coordinate axis, the other two direction
//   components +-0.0 and, half the time, the origin put exactly on a face
//   plane of some object's world box (the slab test's NaN case).
std::vector<Ray> make_validation_rays(const Scene& scene, const Picker& picker,
                                      std::size_t n, std::uint64_t seed,
                                      PickMode mode = PickMode::kObb);

// Random points for closest-point checks (validate --points, the bench's
// point row), deterministic for (scene, n, seed, mode):
// - 40% near a random object's surface: a random point of one of its
//   triangles (mesh mode) or of its box's faces (obb mode), moved along a
//   random direction by up to 5% of the object's size, and a quarter of
//   them not moved at all (on the surface, up to the rounding of the
//   placement);
// - 20% on a random triangle's corner or edge midpoint (ties between the
//   triangles that share them);
// - 40% uniform in the scene's world box grown by 10% on each side.
std::vector<glm::dvec3> make_validation_points(const Scene& scene, std::size_t n,
                                               std::uint64_t seed, PickMode mode);

// How one ray's answers relate, from best to worst.
enum class Verdict {
  kAgree,         // same object and triangle (or both miss),
                  // |dt| <= kAgreeTol * scale
  kFloatNoise,    // same object and triangle, |dt| <= kTol * scale, and the
                  // reference agrees
  kTie,           // different objects or triangles hit at the same t (within
                  // kTol): coincident objects, shared edges
  kBoundary,      // the ray only grazes a box or a triangle's edge within
                  // rounding: the answers differ by rounding there
  kOriginInside,  // obb mode: origin inside or on a box; raypick says t = 0,
                  // Embree (surfaces only) reports a face further on
  kEmbreeWrong,   // Embree's answer is refuted by the reference and
                  // raypick's is not (Embree carries rays into instances by
                  // its own float inverse, which loses precision far from
                  // the origin)
  kMismatch,      // raypick's answer is refuted by the reference
};
const char* to_string(Verdict v);

// Tolerances, relative to scale / max|d| where scale is twice the larger of
// the scene's world box's half-size and the ray origin's distance from the
// box's centre (max abs coordinate): sizes and distances, not coordinates,
// so a scene far from the origin is held to the same tolerance as near it.
inline constexpr double kAgreeTol = 2e-6;
inline constexpr double kTol = 1e-4;

// The agreement rule that validate and bench share: the scale above for
// the scene whose world box is `bounds` (an empty box counts as a unit box
// at the origin), and the float-noise and tie bound kTol * scale.
class Agreement {
 public:
  explicit Agreement(const Aabb& bounds);
  // scale / max|d| for `ray` (t is in units of the direction).
  double scale(const Ray& ray) const;
  // kTol * scale(ray).
  double tolerance(const Ray& ray) const { return kTol * scale(ray); }
  // Both miss, or both hit with their t within tolerance(ray), whatever
  // objects or triangles they name (equal within rounding, or a tie).
  bool same_t(const Hit& a, const Hit& b, const Ray& ray) const;

 private:
  glm::dvec3 centre_{0.0};
  double half_ = 0.5;
};

// One ray's verdict from raypick's answer `r` and Embree's `e` (validate's
// rule; bench uses it too): kAgree when they agree, else the
// double-precision reference decides. `detail` (may be null) gets why a
// refuted answer is wrong, `nearest` (may be null) the reference's nearest
// hit (left alone on kAgree).
Verdict classify(const SceneReference& reference, const Agreement& agreement,
                 PickMode mode, const Ray& ray, const Hit& r, const Hit& e,
                 std::string* detail = nullptr, Hit* nearest = nullptr);

struct Disagreement {
  std::size_t ray_index;
  Ray ray;
  Verdict verdict;
  Hit raypick;
  Hit embree;
  Hit reference;       // the double-precision nearest (exact test)
  std::string detail;  // for a mismatch: whose answer is refuted and why
};

struct ValidateReport {
  PickMode mode = PickMode::kObb;
  std::size_t rays = 0;
  std::size_t raypick_hits = 0;
  std::size_t embree_hits = 0;
  std::size_t counts[7] = {};  // indexed by Verdict
  double max_dt_agree = 0.0;   // max |t_raypick - t_embree| over kAgree rays
  double max_dt = 0.0;         // the same over kAgree and kFloatNoise rays
  // Mesh mode only: rays whose obb-mode answer (object, or hit / miss)
  // differs from raypick's mesh-mode answer.
  std::size_t obb_mesh_differ = 0;
  std::vector<Disagreement> disagreements;  // every verdict but kAgree
  // Mesh mode: where the boundary rays' hits lie on their triangles (the
  // hit of raypick, else Embree's): within 1e-3 of a corner (barycentric)
  // or of an edge; the distinct mesh vertices met, and the one met most.
  struct BoundaryHint {
    std::size_t at_vertex = 0;
    std::size_t at_edge = 0;
    std::size_t vertices = 0;
    std::uint32_t top_object = kInvalidId;
    std::uint32_t top_vertex = 0;
    std::size_t top_count = 0;
    glm::dvec3 top_point{0.0};
  } boundary_hint;

  std::size_t count(Verdict v) const {
    return counts[static_cast<int>(v)];
  }
  // raypick's answers refuted by the reference (what validate fails on).
  std::size_t mismatches() const { return count(Verdict::kMismatch); }
};

// Runs raypick and Embree (built in the same mode) on every ray and
// classifies each. `progress` (may be empty) is called now and then with
// the number of rays done.
ValidateReport validate(const Scene& scene, const Picker& picker,
                        const EmbreeScene& embree, PickMode mode,
                        std::span<const Ray> rays,
                        const std::function<void(std::size_t)>& progress = {});

// The disagreeing rays as a rays file (`raypick pick --rays` reads it back),
// each preceded by a comment with its verdict and the three answers.
void write_dump(std::ostream& out, const ValidateReport& report);

}  // namespace raypick::tools
