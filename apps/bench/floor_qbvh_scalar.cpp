// The scalar reference policy's query (baseline flags).
#include "floor_qbvh.h"

namespace raypick::floorq {

Hit intersect_scalar(const QBvh& tree, const Ray& ray, TraversalStats* stats) {
  return intersect_obb<IsaScalar>(tree, ray, stats);
}

}  // namespace raypick::floorq
