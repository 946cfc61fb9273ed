// The glTF loader's document: the fields picking reads, checked once as they
// are read from nlohmann's tree, and the buffers' bytes. Private to loaders/.
//
// read_document() walks the parsed JSON once and refuses, with the JSON
// path of the value, what picking depends on and the specification forbids:
// types, references between arrays, enum values, every buffer view inside
// its buffer and every accessor inside its buffer view. What it returns is
// therefore consistent; the scene walk (gltf_loader.cpp) checks only what
// needs the data: cycles, index values, counts that fit the mode, finite
// positions. Images, materials, textures, animations and skins are never
// read, so no image is ever opened or decoded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <glm/mat4x4.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "budget.h"
#include "json_text.h"
#include "raypick/core/scene.h"

namespace raypick::gltf {

constexpr int kByte = 5120;
constexpr int kUnsignedByte = 5121;
constexpr int kShort = 5122;
constexpr int kUnsignedShort = 5123;
constexpr int kUnsignedInt = 5125;
constexpr int kFloat = 5126;

constexpr int kModeTriangles = 4;
constexpr int kModeTriangleStrip = 5;
constexpr int kModeTriangleFan = 6;

// Size in bytes of one component, or 0 for an invalid component type (5124,
// a 32-bit signed int, is not a glTF 2.0 component type).
std::size_t component_size(int component_type);
const char* component_name(int component_type);

struct AccessorType {
  const char* name;  // "SCALAR", "VEC3", ...
  int rows;          // components per column
  int columns;       // 1 except for matrices
};

// "1 byte", "3 bytes"; `many` for irregular plurals ("indices").
std::string plural(std::uint64_t n, const char* one, const char* many = nullptr);

// Where the JSON and the binary chunk are in the file's bytes.
struct Container {
  std::string_view json;
  bool glb = false;
  std::optional<std::string_view> bin;  // GLB BIN chunk, without padding
};

// The container of the file at `path` whose bytes are `data`: a GLB when
// they start with "glTF" (glTF 2.0, "Binary glTF Layout"), else JSON text,
// which a .glb may not be. Throws the LoadError for a broken container.
Container open_container(std::string_view data, const std::string& path);

// Bytes `offset`.. of a buffer view, `stride` apart.
struct View {
  std::size_t buffer = 0;
  std::uint64_t offset = 0;  // in its buffer
  std::uint64_t length = 0;
  std::uint64_t stride = 0;  // 0: tightly packed
};

struct SparsePart {
  std::size_t view = 0;
  std::uint64_t offset = 0;
  int component_type = 0;  // indices only
};

struct Sparse {
  std::uint64_t count = 0;  // in 1..the accessor's count
  SparsePart indices, values;
};

struct Accessor {
  std::optional<std::size_t> view;  // none: all zeros
  std::uint64_t offset = 0;
  int component_type = 0;
  std::uint64_t count = 0;  // at least 1
  const AccessorType* type = nullptr;
  bool normalized = false;
  std::optional<Sparse> sparse;
};

struct Primitive {
  int position = -1;  // the POSITION accessor, or -1
  int indices = -1;   // the indices accessor, or -1
  int mode = kModeTriangles;
};

struct Node {
  std::string name;  // as the file spells it
  int mesh = -1;
  std::vector<std::size_t> children;
  glm::dmat4 local{1.0};  // `matrix`, or T * R * S
  int camera = -1;        // a usable camera, or -1
};

struct Document {
  std::vector<std::string> owned;         // bytes of data URIs and buffer files
  std::vector<std::string_view> buffers;  // exactly byteLength bytes each
  std::vector<View> views;
  std::vector<Accessor> accessors;
  std::vector<std::vector<Primitive>> meshes;
  std::vector<Node> nodes;
  std::vector<std::vector<std::size_t>> scenes;  // each scene's root nodes
  std::optional<std::size_t> scene;              // `scene`
  std::vector<std::optional<SceneCamera>> cameras;
  bool quantized = false;  // KHR_mesh_quantization is used
  std::vector<std::string> warnings;
};

// Reads and checks `doc`, the JSON of `container`, and loads the buffers'
// bytes (the GLB BIN chunk, base64 data URIs, or files that must resolve
// inside `root`, or the folder of `scene_file` when it is empty), charging
// the files to `budget`. Throws detail::JsonError naming the path of the
// offending value. Cameras are read leniently: one that cannot be used is
// left out, and a node's "camera" that does not name a usable one ignored.
Document read_document(const detail::Json& doc, const Container& container,
                       const std::string& scene_file, const std::string& root,
                       detail::Budget& budget);

}  // namespace raypick::gltf
