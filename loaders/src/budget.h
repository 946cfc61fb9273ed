// The load budget of one load_*() call, shared by every file it reads (a
// JSON scene's mesh files, a glTF's buffers), and the loaders' internal
// entry points that carry it. Private to loaders/.
#pragma once

#include "raypick/loaders/load.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace raypick::detail {

// What one load has used so far of its LoadBudget. take() records `n` more
// of a resource before it is allocated, or, when that would pass the budget,
// records nothing and returns the message to refuse the load with ("load
// budget max_vertices exceeded: ...").
class Budget {
 public:
  enum Resource { kBytes, kVertices, kTriangles, kObjects };

  explicit Budget(const LoadBudget& limits)
      : limit_{limits.max_bytes, limits.max_vertices, limits.max_triangles,
               limits.max_objects},
        max_memory_(limits.max_memory) {}

  // Each take also charges the memory estimate (LoadBudget::max_memory)
  // and is refused, naming max_memory, when that would pass it.
  std::optional<std::string> take(Resource r, std::uint64_t n);
  // The message take(r, ...) refuses with.
  std::string exceeded(Resource r) const;
  std::uint64_t left(Resource r) const { return limit_[r] - used_[r]; }

 private:
  // The memory limit now: max_memory, or the automatic one.
  std::uint64_t memory_limit() const;

  std::uint64_t limit_[4];
  std::uint64_t used_[4] = {0, 0, 0, 0};
  std::uint64_t max_memory_;
  std::uint64_t memory_ = 0;  // the estimate so far
};

// The loaders with the budget of the load they are part of. They may throw
// (a LoadError among others) and do not call validate_scene(): the public
// load_*() functions and load_any() wrap them in load.cpp's one guard, which
// does both. A JSON scene calls load_any() for its mesh files with its own
// Budget.
LoadResult load_obj(const std::string& path, const LoadOptions& options,
                    Budget& budget);
LoadResult load_gltf(const std::string& path, const LoadOptions& options,
                     Budget& budget);
LoadResult load_json_scene(const std::string& path, const LoadOptions& options,
                           Budget& budget);
LoadResult load_saved_scene(const std::string& path, const LoadOptions& options,
                            Budget& budget);
// require_objects: LoadOptions::require_objects (load_saved_scene: true).
LoadResult decode_scene(std::string_view bytes, const std::string& file, Budget& budget,
                        bool require_objects = true);
// By extension, as load_scene() chooses; guarded, validated, never throws.
LoadResult load_any(const std::string& path, const LoadOptions& options,
                    Budget& budget);

}  // namespace raypick::detail
