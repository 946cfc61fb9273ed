// The Embree reference: the same scene built in Embree, for validate, bench
// and tests. Lives in apps/, never in core, bvh or loaders.
#pragma once

#include "raypick/core/hit.h"
#include "raypick/core/ray.h"
#include "raypick/core/scene.h"

#include <memory>

namespace raypick::tools {

// Each mesh's OBB (the box of the vertices its triangles use) becomes a box
// of 12 triangles in a child scene; each object instances its mesh's box
// with the object's matrix, attached under its object id, so Embree's
// instID is raypick's object id. Objects that can never be hit (empty mesh,
// singular matrix) are left out. Scenes use RTC_SCENE_FLAG_ROBUST.
//
// Embree sees surfaces, not solids: a ray starting inside a box reports the
// face where it leaves (t > 0), where raypick's contract says t = 0.
// validate accounts for that.
class EmbreeObbScene {
 public:
  explicit EmbreeObbScene(const Scene& scene);
  ~EmbreeObbScene();
  EmbreeObbScene(const EmbreeObbScene&) = delete;
  EmbreeObbScene& operator=(const EmbreeObbScene&) = delete;

  // rtcIntersect1 over [ray.tmin, ray.tmax]: object = instance id, t = tfar.
  // Thread-safe after construction.
  Hit intersect(const Ray& ray) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace raypick::tools
