#include "raypick/core/ray.h"

#include <cmath>

namespace raypick {

bool is_valid(const Ray& ray) {
  for (int a = 0; a < 3; ++a) {
    if (!std::isfinite(ray.org[a]) || !std::isfinite(ray.dir[a])) return false;
  }
  const bool nonzero = ray.dir.x != 0.0f || ray.dir.y != 0.0f ||
                       ray.dir.z != 0.0f;
  // tmin must be a real number; tmax may be +inf.
  return nonzero && std::isfinite(ray.tmin) && ray.tmin >= 0.0f &&
         !std::isnan(ray.tmax) && ray.tmin <= ray.tmax;
}

RayInv::RayInv(const Ray& ray)
    : org(ray.org),
      tmin(ray.tmin),
      tmax(ray.tmax < std::numeric_limits<float>::max()
               ? ray.tmax
               : std::numeric_limits<float>::max()) {
  for (int a = 0; a < 3; ++a) {
    // 1/+0 = +inf and 1/-0 = -inf under IEEE 754, which is what we want.
    inv_dir[a] = 1.0f / ray.dir[a];
    neg[a] = std::signbit(ray.dir[a]) ? 1 : 0;
  }
}

}  // namespace raypick
