// Scene loading: OBJ, glTF 2.0 and raypick's JSON scenes into core's scene
// description. No loader library appears in this header.
#pragma once

#include "raypick/core/scene.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

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

// What a load gives: either the scene or the error that stopped the load,
// and the warnings met on the way (each one line without its "\n", e.g. a
// missing material library; a failed load may have some too).
//
//   raypick::LoadResult r = raypick::load_scene("room.gltf");
//   if (!r.ok()) { std::puts(r.error().to_string().c_str()); return 1; }
//   for (const std::string& w : r.warnings) std::puts(w.c_str());
//   raypick::Scene scene = std::move(r.scene());
class LoadResult {
 public:
  LoadResult(Scene scene, std::vector<std::string> notes = {})
      : warnings(std::move(notes)), value_(std::move(scene)) {}
  LoadResult(LoadError error, std::vector<std::string> notes = {})
      : warnings(std::move(notes)), value_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<Scene>(value_); }
  // The scene; requires ok().
  Scene& scene() { return std::get<Scene>(value_); }
  const Scene& scene() const { return std::get<Scene>(value_); }
  // The error; requires !ok().
  const LoadError& error() const { return std::get<LoadError>(value_); }

  std::vector<std::string> warnings;
  // A saved scene's trees (Picker::save_trees), when it holds them: give
  // them to Picker::open(scene(), saved_trees) to skip the SAH build.
  // Empty for every other file.
  std::string saved_trees;

 private:
  std::variant<Scene, LoadError> value_;
};

// Budgets that bound what one load may cost, whatever the files say. They
// cover the whole load: a JSON scene's mesh files and a glTF's buffer files
// draw on the same budget as the scene file. Each is checked before the
// memory is allocated, and a load that would pass one is refused
// (LoadError::Kind::kMalformed) with a message naming the budget: "load
// budget max_triangles exceeded: the scene needs more than 67108864
// triangles in its meshes". The defaults suit scenes of tens of millions of
// triangles; a host that opens files from strangers can lower them.
struct LoadBudget {
  // Bytes of all files read: scene files, mesh files, buffer files.
  std::uint64_t max_bytes = std::uint64_t{1} << 31;  // 2 GiB
  // Vertex positions stored in all meshes (a mesh shared by many objects
  // counts once; each copy a JSON scene makes of a mesh counts again).
  std::uint64_t max_vertices = std::uint64_t{1} << 26;  // 67,108,864
  // Triangles stored in all meshes, counted as the vertices are.
  std::uint64_t max_triangles = std::uint64_t{1} << 26;  // 67,108,864
  // Objects, in the scene and in the mesh files a JSON scene loads.
  std::uint64_t max_objects = std::uint64_t{1} << 23;  // 8,388,608
  // Bytes of memory the load and the picker built from it may take at
  // their peak, estimated before anything is allocated from what the files
  // announce: kMemoryPerVertex per vertex position, kMemoryPerTriangle per
  // triangle, kMemoryPerObject per object, plus the bytes read. 0 (the
  // default) is automatic, as expat bounds entity expansion: a fixed
  // kMemoryAllowance, or kMemoryFactor times the bytes read when that is
  // more. So data a file does not contain (an index accessor without a
  // buffer view, a JSON scene's instances) is charged for what it expands
  // to, and a small file cannot ask for gigabytes.
  std::uint64_t max_memory = 0;

  static constexpr std::uint64_t kMemoryAllowance = std::uint64_t{256} << 20;  // 256 MiB
  static constexpr std::uint64_t kMemoryFactor = 64;
  // The estimate's costs, in bytes: a position in the scene and the
  // picker's copy; a triangle's indices, its copy, the mesh tree's vertex
  // copy and box (for point queries), build records and nodes; an object's record in the scene (name
  // included) and the picker's object record, leaf copy, build record and
  // nodes.
  static constexpr std::uint64_t kMemoryPerVertex = 24;
  static constexpr std::uint64_t kMemoryPerTriangle = 128;
  static constexpr std::uint64_t kMemoryPerObject = 384;
};

// How to load. Files that a scene refers to (glTF buffers, a JSON scene's
// mesh files, OBJ material libraries) are read only when their path is
// relative and resolves, after `..` and symbolic links, inside `root`;
// anything else is refused (kMalformed) naming the file and the reference.
// A JSON scene's mesh files get its options, with `root` its own folder
// when unset.
struct LoadOptions {
  // The folder that referenced files must lie in; empty means the folder of
  // the scene file that names them.
  std::string root;
  LoadBudget budget;
  // Read by decode_scene() alone: false accepts a saved form that holds no
  // objects (a Python Scene pickled while empty), which every file load
  // refuses.
  bool require_objects = true;
};

// Loads the scene at `path`, choosing the loader by extension
// (case-insensitive): .obj, .gltf, .glb, .json or .rpscene (a saved scene,
// below). Objects come in the
// contract's id order. Every load (each of the load_*() functions, and each
// mesh file of a JSON scene) ends with validate_scene(), so a loaded scene's
// coordinates lie within kMaxCoordinate.
// Never throws and never aborts: errors of the underlying libraries, and
// running out of memory, are caught and returned as a LoadError naming the
// file. Names are kept as the files hold them, except that bytes that are
// not UTF-8 become U+FFFD (raypick::valid_utf8): escape them for output.
// A file that yields no objects at all is an error. Cost: linear in the file.
LoadResult load_scene(const std::string& path, const LoadOptions& options = {});

// raypick's saved scene (extension .rpscene): a scene written as a
// versioned binary file (docs/scene-format.md, "Saved scenes") that
// load_scene() reads back without parsing text, the same meshes, objects
// (ids, matrices, masks, names) and cameras, and optionally the shape of a
// picker's trees (Picker::save_trees; LoadResult::saved_trees on reading),
// which Picker::open adopts instead of building. A truncated or corrupted file (a
// checksum covers every byte), one of another version or kind, and one
// whose counts pass the budgets are refused like any malformed scene.
// Version 2 added the trees, version 3 the objects' translation_low
// (placements held beyond float); versions 1 and 2 are still read.
inline constexpr std::uint32_t kSavedSceneVersion = 3;
// The saved form of `scene` with `trees` (bytes of Picker::save_trees for
// this scene, or none), as bytes.
std::string encode_scene(const Scene& scene, std::string_view trees = {});
// Writes encode_scene(scene, trees) to `path`; "" on success, else the
// message naming the file.
std::string save_scene(const Scene& scene, const std::string& path,
                       std::string_view trees = {});
// Reads a saved form held in memory, as load_scene() reads a .rpscene file
// (same checks, validate_scene() included); `name` stands for the file in
// messages.
LoadResult decode_scene(std::string_view bytes, const std::string& name,
                        const LoadOptions& options = {});

// The OBJ loader: one object per shape that tinyobjloader reports, in file
// order, identity matrix, named by the shape (or "shape<id>" when unnamed).
// Each object gets its own mesh holding the vertices its faces use. Faces
// have 3 to 4096 corners; a `mtllib` outside the allowed root is refused, a
// missing one inside it is a warning.
LoadResult load_obj(const std::string& path, const LoadOptions& options = {});

// The glTF 2.0 loader, for .gltf (JSON, buffers external or in base64 data
// URIs) and .glb (binary container) alike; the container is told by the
// file's first bytes ("glTF" starts a GLB), except that a .glb must be one.
// Objects: one per node with a mesh, depth-first pre-order from the default
// scene's root nodes (scene 0 when `scene` is unset; without scenes, every
// node that is no node's child, in index order), children in listed order;
// a node reached along two paths is two objects. Matrix: the product of the
// node chain's `matrix` or T * R * S. Name: the node's, or "node<index>".
// Each glTF mesh reachable from the scene becomes one Mesh, shared by the
// objects that instance it: every triangle primitive (modes 4, 5, 6; strips
// and fans as n - 2 triangles, degenerate ones kept) in primitive order;
// points, lines and primitives without POSITION add nothing. Skins, morph
// targets and animations are ignored (the bind pose is picked).
// Refused, with the JSON path of the value and (in a .gltf) its line: what
// picking depends on and the specification forbids, e.g. node cycles,
// accessors or buffer views out of range, missing buffers, indices past the
// vertex count, index counts that do not fit the mode, non-finite
// positions, POSITION that is not VEC3 float (or a quantized integer type
// under KHR_mesh_quantization), indices that are not SCALAR unsigned, and
// required extensions that change geometry (Draco, meshopt, GPU instancing).
// Cost: linear in the file, plus the objects' count.
LoadResult load_gltf(const std::string& path, const LoadOptions& options = {});

// raypick's JSON scene format (docs/scene-format.md): meshes from OBJ or glTF
// files (relative to the scene file, inside the allowed root) or built-in
// boxes, and objects that
// instance them with a matrix or translate / rotate / scale. Mesh i of the
// scene is meshes[i] of the file. Unknown keys, wrong types, duplicate keys
// and names that refer to nothing are errors naming the key's path and line.
LoadResult load_json_scene(const std::string& path, const LoadOptions& options = {});

}  // namespace raypick
