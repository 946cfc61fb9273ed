// What a hit means: the contract's two hit modes.
#pragma once

namespace raypick {

enum class PickMode {
  // The smallest t >= tmin at which the ray is inside or on the object's
  // OBB (a ray starting inside a box hits it at t = tmin). Hit::triangle is
  // kInvalidId.
  kObb,
  // The smallest t >= tmin at which the ray meets one of the object's
  // triangles, either face (watertight test). Hit carries triangle, u, v.
  kMesh,
};

}  // namespace raypick
