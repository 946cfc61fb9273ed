// The OBB mode's brute force, used only by tests: every object's leaf test
// (obb_entry on Obb::make of its mesh's triangle_bounds() under its matrix),
// no tree. The picker must give its answers exactly: object and t.
#pragma once

#include "raypick/core/hit.h"
#include "raypick/core/obb.h"
#include "raypick/core/scene.h"

#include <cstdint>
#include <vector>

namespace raypick::test {

// The objects' OBBs are made once, when the scene is given: made again for
// every ray, they were most of the slowest tests' time under ASan. Make a
// new one after the scene's objects change.
class ObbBruteForce {
 public:
  explicit ObbBruteForce(const Scene& scene) {
    obbs_.reserve(scene.objects.size());
    for (const Object& o : scene.objects) {
      obbs_.push_back(Obb::make(scene.meshes[o.mesh].triangle_bounds(), o.matrix));
    }
  }

  // The nearest hit among the objects `take(id)` accepts, equal t to the
  // lower id; a miss is Hit{}.
  template <class Take>
  Hit nearest(const Ray& ray, Take&& take) const {
    Hit best;
    for (std::uint32_t i = 0; i < obbs_.size(); ++i) {
      if (!take(i)) continue;
      const float t = obb_entry(ray, obbs_[i], ray.tmax);
      if (t != kInfinity && closer(Hit{i, t}, best)) best = Hit{i, t};
    }
    return best;
  }
  Hit nearest(const Ray& ray) const {
    return nearest(ray, [](std::uint32_t) { return true; });
  }

 private:
  std::vector<Obb> obbs_;
};

}  // namespace raypick::test
