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

}  // namespace raypick
