// The load budget of one load_*() call, shared by every file it reads (a
// JSON scene's mesh files, a glTF's buffers), and the loaders' internal
// entry points that carry it. Private to loaders/.
#pragma once

#include "raypick/loaders/load.h"

#include <cstdint>
#include <optional>
#include <string>

namespace raypick::detail {

// What one load has used so far of its LoadBudget. Each take_*() records
// `n` more of a resource before it is allocated, or, when that would pass
// the budget, records nothing and returns the message to refuse the load
// with ("budget max_vertices exceeded: ...").
class Budget {
 public:
  explicit Budget(const LoadBudget& limits) : limits_(limits) {}

  std::optional<std::string> take_bytes(std::uint64_t n);
  std::optional<std::string> take_vertices(std::uint64_t n);
  std::optional<std::string> take_triangles(std::uint64_t n);
  std::optional<std::string> take_objects(std::uint64_t n);

  // The message for a file that would pass max_bytes.
  std::string bytes_exceeded() const;

  std::uint64_t bytes_left() const { return limits_.max_bytes - used_.max_bytes; }
  std::uint64_t objects_left() const {
    return limits_.max_objects - used_.max_objects;
  }

 private:
  LoadBudget limits_;
  LoadBudget used_{0, 0, 0, 0};
};

// The loaders with the budget of the load they are part of. The public
// load_*() functions make a Budget from their options and call these; a
// JSON scene calls load_any() for its mesh files with its own Budget.
// Each is guarded (never throws).
LoadResult load_obj(const std::string& path, const LoadOptions& options,
                    Budget& budget);
LoadResult load_gltf(const std::string& path, const LoadOptions& options,
                     Budget& budget);
LoadResult load_json_scene(const std::string& path, const LoadOptions& options,
                           Budget& budget);
// By extension, as load_scene() chooses.
LoadResult load_any(const std::string& path, const LoadOptions& options,
                    Budget& budget);

}  // namespace raypick::detail
