// Scene loading: OBJ (and, as they land, glTF and raypick's JSON scenes)
// into core's scene description. No loader library appears in this header.
#pragma once

#include "raypick/core/scene.h"

#include <optional>
#include <string>

namespace raypick {

// Why a load failed. `line` is 1-based as counted in the file, 0 when the
// problem has no line (a missing file, a binary format).
struct LoadError {
  enum class Kind {
    kUnsupported,  // extension raypick cannot read: a usage error (exit 2)
    kIo,           // missing or unreadable file
    kMalformed,    // the file breaks its format in a way picking depends on
  };
  Kind kind = Kind::kMalformed;
  std::string file;
  std::size_t line = 0;
  std::string message;

  // "file:line: message" (or "file: message" without a line).
  std::string to_string() const;
};

// A loaded scene, the warnings met on the way (one per line, e.g. a missing
// material library), or the error that stopped the load.
struct LoadResult {
  std::optional<Scene> scene;
  std::optional<LoadError> error;
  std::string warnings;

  bool ok() const { return scene.has_value(); }
};

// Loads the scene at `path`, choosing the loader by extension
// (case-insensitive): .obj today. Objects come in the contract's id order.
// Never throws: errors of the underlying libraries are caught and returned.
// A file that yields no objects at all is an error. Cost: linear in the file.
LoadResult load_scene(const std::string& path);

// The OBJ loader: one object per shape that tinyobjloader reports, in file
// order, identity matrix, named by the shape (or "shape<id>" when unnamed).
// Each object gets its own mesh holding the vertices its faces use.
LoadResult load_obj(const std::string& path);

}  // namespace raypick
