// The public face of the padding (picker.h): padding.h does the work.
#include "padding.h"

#include "raypick/bvh/picker.h"

namespace raypick {

glm::vec3 padding_centre(std::span<const Object> objects) {
  CentreSum c;
  for (const Object& o : objects) c.add(glm::vec3{o.matrix[3]});
  return c.centre();
}

Aabb padded_world_box(const Obb& obb, const glm::vec3& centre) {
  return pad(obb.world_bounds(), centre);
}

}  // namespace raypick
