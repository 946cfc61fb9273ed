// The glTF 2.0 loader (.gltf and .glb).
//
// Three stages, so that nothing reaches the scene unchecked:
//
// 1. raypick reads the file, takes a GLB container apart with its own
//    bounds checks, parses the JSON with nlohmann (a parse error keeps its
//    line) and checks every field that picking reads: types, references
//    between arrays, enum values, and that every buffer view fits its buffer
//    and every accessor its buffer view. It resolves each buffer (GLB BIN
//    chunk, base64 data URI, or a file inside the allowed root) and writes a
//    reduced document holding only those fields. Images, materials,
//    textures, animations and skins are never read: picking reads none of
//    them, and so no image is ever opened or decoded. Cameras are read
//    leniently from the parsed document (read_cameras) for the screen
//    commands; an unusable one is left out.
// 2. The reduced document becomes a small model of plain structs, and the
//    buffers' bytes are decoded or read (only the files stage 1 resolved).
//    (tinygltf did this until issue 10: its own JSON tree and heavy nodes
//    doubled the memory, and running out of memory inside it aborted.)
// 3. raypick walks the model: cycles in the node graph, indices past the
//    vertex count, index counts that do not fit the primitive mode and
//    non-finite positions are refused here, and every read from a buffer is
//    bounds-checked again against the bytes actually loaded.
//
// Errors name the JSON path of the offending value ("accessors[3]: ...") and,
// for a .gltf file, the line it is on.

#include <glm/ext/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "budget.h"
#include "file_io.h"
#include "json_text.h"
#include "text.h"
#include "raypick/loaders/load.h"

namespace raypick {
namespace {

namespace fs = std::filesystem;
using detail::fail;
using detail::Json;
using detail::JsonError;
using detail::JsonPath;

// ---------------------------------------------------------------------------
// Constants and limits

constexpr int kByte = 5120;
constexpr int kUnsignedByte = 5121;
constexpr int kShort = 5122;
constexpr int kUnsignedShort = 5123;
constexpr int kUnsignedInt = 5125;
constexpr int kFloat = 5126;

constexpr int kModeTriangles = 4;
constexpr int kModeTriangleStrip = 5;
constexpr int kModeTriangleFan = 6;

// The model keeps array indices and the sparse fields in an int.
constexpr std::uint64_t kMaxInt = std::numeric_limits<std::int32_t>::max();
// Byte offsets, lengths and counts are capped at 2^53 (beyond it JSON
// numbers are not exact anyway), so stride * count + offset never wraps.
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 53;
// What a small file can make the loader allocate is bounded by the load's
// Budget, charged before allocating: objects (a node reachable along many
// paths is an object per path, and a small file can describe a DAG of 2^40
// paths), vertices (an accessor without a buffer view is all zeros and
// costs no file bytes) and triangles (one accessor may serve any number of
// primitives).

// Size in bytes of one component, or 0 for an invalid component type (5124,
// a 32-bit signed int, is not a glTF 2.0 component type).
std::size_t component_size(int component_type) {
  switch (component_type) {
    case kByte:
    case kUnsignedByte:
      return 1;
    case kShort:
    case kUnsignedShort:
      return 2;
    case kUnsignedInt:
    case kFloat:
      return 4;
    default:
      return 0;
  }
}

const char* component_name(int component_type) {
  switch (component_type) {
    case kByte:
      return "byte";
    case kUnsignedByte:
      return "unsigned byte";
    case kShort:
      return "short";
    case kUnsignedShort:
      return "unsigned short";
    case kUnsignedInt:
      return "unsigned int";
    case kFloat:
      return "float";
    default:
      return "unknown";
  }
}

constexpr int kTypeScalar = 1;
constexpr int kTypeVec3 = 3;

struct AccessorType {
  const char* name;
  int code;  // gltf::Accessor::type
  int rows;     // components per column
  int columns;  // 1 except for matrices
};

constexpr std::array<AccessorType, 7> kAccessorTypes{{
    {"SCALAR", kTypeScalar, 1, 1},
    {"VEC2", 2, 2, 1},
    {"VEC3", kTypeVec3, 3, 1},
    {"VEC4", 4, 4, 1},
    {"MAT2", 5, 2, 2},
    {"MAT3", 6, 3, 3},
    {"MAT4", 7, 4, 4},
}};

const AccessorType* accessor_type(int code) {
  for (const AccessorType& t : kAccessorTypes) {
    if (t.code == code) return &t;
  }
  return nullptr;
}

// Bytes of one element. Matrix columns start on 4-byte boundaries (glTF
// 2.0, "Data Alignment"), which pads MAT2/MAT3 of bytes and MAT3 of shorts.
std::size_t element_size(const AccessorType& type, int component_type) {
  const std::size_t column = type.rows * component_size(component_type);
  if (type.columns == 1) return column;
  return type.columns * ((column + 3) / 4 * 4);
}

const char* mode_name(int mode) {
  switch (mode) {
    case 0:
      return "points";
    case 1:
      return "lines";
    case 2:
      return "line loop";
    case 3:
      return "line strip";
    case kModeTriangles:
      return "triangles";
    case kModeTriangleStrip:
      return "triangle strip";
    case kModeTriangleFan:
      return "triangle fan";
    default:
      return "unknown";
  }
}

// "1 byte", "3 bytes"; `many` for irregular plurals ("indices").
std::string plural(std::uint64_t n, const char* one, const char* many = nullptr) {
  if (n == 1) return "1 " + std::string(one);
  return std::to_string(n) + " " +
         (many != nullptr ? std::string(many) : std::string(one) + "s");
}

// ---------------------------------------------------------------------------
// Stage 1: the container

// Where the loader found the JSON and the binary chunk.
struct Container {
  std::string_view json;
  bool glb = false;
  std::optional<std::string_view> bin;  // GLB BIN chunk, without padding
};

std::uint32_t read_u32le(std::string_view bytes, std::size_t at) {
  const auto b = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + k]));
  };
  return b(0) | (b(1) << 8) | (b(2) << 16) | (b(3) << 24);
}

constexpr std::uint32_t kChunkJson = 0x4E4F534A;  // "JSON"
constexpr std::uint32_t kChunkBin = 0x004E4942;   // "BIN\0"

// Takes a GLB apart (glTF 2.0, "Binary glTF Layout"): a 12-byte header
// (magic, version 2, total length), a JSON chunk, then chunks of which the
// first BIN one holds the binary buffer; chunks of other types are skipped,
// as the specification asks. Bytes past the header's length are ignored.
// Returns the problem, if any.
std::optional<std::string> split_glb(std::string_view data, Container& out) {
  if (data.size() < 12) {
    return "GLB header is truncated (" + plural(data.size(), "byte") +
           ", 12 needed)";
  }
  const std::uint32_t version = read_u32le(data, 4);
  if (version != 2) {
    return "GLB version " + std::to_string(version) +
           " (raypick reads version 2)";
  }
  const std::uint32_t length = read_u32le(data, 8);
  if (length > data.size()) {
    return "GLB header says " + plural(length, "byte") + " but the file has " +
           std::to_string(data.size()) + " (truncated?)";
  }
  const std::string_view glb = data.substr(0, length);
  std::size_t at = 12;
  bool first = true;
  while (at < glb.size()) {
    if (glb.size() - at < 8) {
      return "GLB chunk header at byte " + std::to_string(at) +
             " is truncated";
    }
    const std::uint32_t chunk_length = read_u32le(glb, at);
    const std::uint32_t chunk_type = read_u32le(glb, at + 4);
    if (chunk_length > glb.size() - at - 8) {
      return "GLB chunk at byte " + std::to_string(at) + " says " +
             plural(chunk_length, "byte") + ", past the end of the file";
    }
    const std::string_view payload = glb.substr(at + 8, chunk_length);
    if (first) {
      if (chunk_type != kChunkJson) {
        return "the first GLB chunk is not JSON";
      }
      out.json = payload;
      first = false;
    } else if (chunk_type == kChunkBin && !out.bin) {
      out.bin = payload;
    }
    at += 8 + std::size_t{chunk_length};
  }
  if (first) return "GLB has no JSON chunk";
  out.glb = true;
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Stage 1: checking the document

// A buffer that lives in a file: stage 1 renames the buffer's uri to a
// token, and stage 2 maps the token to the resolved path and reads exactly
// `length` bytes of it.
struct ExternalBuffer {
  std::string path;
  std::uint64_t length = 0;
};

// What stage 1 hands on.
struct Checked {
  Json reduced;  // the document stage 2 turns into the model
  std::map<std::string, ExternalBuffer> files;  // by token
  bool uses_bin = false;   // buffers[0] is the GLB BIN chunk
  bool quantized = false;  // KHR_mesh_quantization is used
  std::string warnings;
};

// Required extensions that change geometry in ways raypick does not read.
constexpr std::array<std::string_view, 3> kUnreadableExtensions{
    "KHR_draco_mesh_compression", "EXT_meshopt_compression",
    "EXT_mesh_gpu_instancing"};

// Prefixes of extensions that only touch what picking never reads.
constexpr std::array<std::string_view, 6> kHarmlessPrefixes{
    "KHR_materials_", "KHR_texture_", "KHR_lights_",
    "EXT_texture_",   "KHR_technique", "MSFT_texture_"};

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
         (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A URI reference to a file, percent-decoded (RFC 3986); unlike some
// decoders, a '+' stays a '+'.
std::string decode_uri_path(const std::string& uri, const JsonPath& path) {
  // A scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":")
  // before any '/' makes it an absolute URI: http:, file:, ...
  const std::size_t colon = uri.find(':');
  if (colon != std::string::npos && colon > 0 &&
      uri.find('/') > colon) {
    bool scheme = std::isalpha(static_cast<unsigned char>(uri[0])) != 0;
    for (std::size_t i = 1; i < colon && scheme; ++i) {
      const char c = uri[i];
      scheme = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' ||
               c == '-' || c == '.';
    }
    if (scheme) {
      fail(path, "'" + detail::printable(uri, 60) +
                     "' is not a relative file reference or a data: URI");
    }
  }
  std::string out;
  for (std::size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] != '%') {
      out += uri[i];
      continue;
    }
    const int hi = i + 1 < uri.size() ? hex_value(uri[i + 1]) : -1;
    const int lo = i + 2 < uri.size() ? hex_value(uri[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      fail(path, "malformed percent-encoding at character " +
                     std::to_string(i) + " of the uri");
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (out.empty()) fail(path, "the uri is empty");
  if (out.find('\0') != std::string::npos) fail(path, "the uri holds a NUL");
  return out;
}

// Checks a base64 data URI and returns it in the one spelling stage 2
// decodes, cut to `length` bytes if it holds more.
std::string check_data_uri(const std::string& uri, std::uint64_t length,
                           const JsonPath& path) {
  const std::size_t comma = uri.find(',');
  const std::string header = uri.substr(0, comma);
  constexpr std::string_view kBase64 = ";base64";
  if (comma == std::string::npos || header.size() < kBase64.size() ||
      header.compare(header.size() - kBase64.size(), kBase64.size(),
                     kBase64) != 0) {
    fail(path, "only base64 data URIs are supported");
  }
  const std::string mime =
      header.substr(5, header.find(';') == std::string::npos
                           ? std::string::npos
                           : header.find(';') - 5);
  if (mime != "application/octet-stream" && mime != "application/gltf-buffer") {
    fail(path, "data URI of type '" + detail::printable(mime, 60) +
                   "' (expected application/octet-stream or "
                   "application/gltf-buffer)");
  }
  const std::string_view payload = std::string_view(uri).substr(comma + 1);
  std::size_t chars = 0;
  while (chars < payload.size() && is_base64_char(payload[chars])) ++chars;
  for (std::size_t i = chars; i < payload.size(); ++i) {
    if (payload[i] != '=' || i - chars >= 2) {
      fail(path, "data URI has a character that is not base64 at position " +
                     std::to_string(comma + 1 + i));
    }
  }
  if (chars % 4 == 1) fail(path, "data URI is not valid base64 (bad length)");
  const std::uint64_t decoded = chars / 4 * 3 + (chars % 4 ? chars % 4 - 1 : 0);
  if (decoded < length) {
    fail(path, "the data URI holds " + plural(decoded, "byte") +
                   ", byteLength says " + std::to_string(length));
  }
  // 4 characters per 3 bytes; a partial group of k + 1 characters gives k
  // bytes.
  const std::size_t keep =
      static_cast<std::size_t>(length / 3 * 4 + (length % 3 ? length % 3 + 1 : 0));
  return "data:application/octet-stream;base64," +
         std::string(payload.substr(0, keep));
}

class DocumentChecker {
 public:
  // `scene_file` is the glTF file's path; buffer files must lie inside
  // `root` (its folder when empty), as detail::resolve_reference decides.
  DocumentChecker(const Container& container, std::string scene_file,
                  std::string root, detail::Budget& budget)
      : container_(container),
        scene_file_(std::move(scene_file)),
        root_(std::move(root)),
        budget_(budget) {}

  Checked check(const Json& doc) {
    const JsonPath root;
    detail::require_object(doc, root);
    check_asset(doc);
    check_extensions(doc);
    check_buffers(doc);
    check_buffer_views(doc);
    check_accessors(doc);
    check_meshes(doc);
    check_nodes(doc);
    check_scenes(doc);
    // Last, so that a broken document is reported as such before a file it
    // names is looked for.
    resolve_buffers(doc);
    return std::move(out_);
  }

 private:
  // The array `key` of the document (empty when absent), with its size
  // recorded in `count`.
  const Json& top_array(const Json& doc, const char* key) {
    static const Json kEmpty = Json::array();
    const Json* v = detail::find_member(doc, key);
    if (v == nullptr) return kEmpty;
    detail::require_array(*v, JsonPath() / key);
    if (v->size() > kMaxInt) fail(JsonPath() / key, "too many elements");
    return *v;
  }

  // An index into the top-level array `array` of `count` elements.
  static std::uint64_t index(const Json& v, const JsonPath& path,
                             const char* array, std::size_t count) {
    const std::uint64_t i = detail::require_uint(v, path, kMaxInt);
    if (i >= count) {
      fail(path, std::string(array) + "[" + std::to_string(i) +
                     "] does not exist (" + plural(count, "element") + ")");
    }
    return i;
  }

  static std::uint64_t uint_member(const Json& obj, const JsonPath& path,
                                   const char* key, std::uint64_t fallback,
                                   std::uint64_t max, bool required = false) {
    const Json* v = detail::find_member(obj, key);
    if (v == nullptr) {
      if (required) fail(path, std::string("missing '") + key + "'");
      return fallback;
    }
    return detail::require_uint(*v, path / key, max);
  }

  void check_asset(const Json& doc) {
    const JsonPath path = JsonPath() / "asset";
    const Json* asset = detail::find_member(doc, "asset");
    if (asset == nullptr) {
      fail(JsonPath(), "missing 'asset' (not a glTF document?)");
    }
    detail::require_object(*asset, path);
    const Json* version = detail::find_member(*asset, "version");
    if (version == nullptr) fail(path, "missing 'version'");
    const std::string v = detail::require_string(*version, path / "version");
    if (v.rfind("2.", 0) != 0) {
      fail(path / "version", "glTF version '" + detail::printable(v, 20) +
                                 "' (raypick reads glTF 2.0)");
    }
    out_.reduced["asset"] = Json{{"version", v}};
  }

  void check_extensions(const Json& doc) {
    for (const char* key : {"extensionsUsed", "extensionsRequired"}) {
      const Json& list = top_array(doc, key);
      const bool required = std::string_view(key) == "extensionsRequired";
      for (std::size_t i = 0; i < list.size(); ++i) {
        const JsonPath path = JsonPath() / key;
        const std::string name = detail::require_string(list[i], path[i]);
        if (name == "KHR_mesh_quantization") out_.quantized = true;
        if (!required) continue;
        if (name == "KHR_mesh_quantization") continue;
        for (const std::string_view bad : kUnreadableExtensions) {
          if (name == bad) {
            fail(path[i], "the file requires " + detail::printable(name, 60) +
                              ", which raypick cannot read");
          }
        }
        bool harmless = false;
        for (const std::string_view prefix : kHarmlessPrefixes) {
          harmless = harmless || name.rfind(prefix, 0) == 0;
        }
        if (!harmless) {
          out_.warnings += "the file requires extension '" +
                           detail::printable(name, 60) +
                           "', unknown to raypick; geometry is read without "
                           "it\n";
        }
      }
    }
  }

  void check_buffers(const Json& doc) {
    const Json& buffers = top_array(doc, "buffers");
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      const JsonPath p = (JsonPath() / "buffers")[i];
      const Json& b = detail::require_object(buffers[i], p);
      const std::uint64_t length =
          uint_member(b, p, "byteLength", 0, kMaxBytes, true);
      if (length == 0) fail(p / "byteLength", "byteLength must be at least 1");
      if (const Json* uri = detail::find_member(b, "uri")) {
        detail::require_string(*uri, p / "uri");
      }
      buffer_lengths_.push_back(length);
    }
  }

  // Where each buffer's bytes come from: the GLB BIN chunk, a base64 data
  // URI, or a file next to the scene (which must exist and be long enough).
  void resolve_buffers(const Json& doc) {
    const Json& buffers = top_array(doc, "buffers");
    Json reduced = Json::array();
    detail::JsonGuard reduced_guard(reduced);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      const JsonPath p = (JsonPath() / "buffers")[i];
      const std::uint64_t length = buffer_lengths_[i];
      Json rb{{"byteLength", length}};
      const Json* uri = detail::find_member(buffers[i], "uri");
      if (uri == nullptr) {
        if (!container_.glb) {
          fail(p, "missing 'uri' (only the first buffer of a .glb may omit it)");
        }
        if (i != 0) {
          fail(p, "missing 'uri' (only buffers[0] may be the GLB BIN chunk)");
        }
        if (!container_.bin) {
          fail(p, "refers to the GLB BIN chunk, but the file has none");
        }
        if (length > container_.bin->size()) {
          fail(p / "byteLength",
               "byteLength " + std::to_string(length) +
                   " is larger than the GLB BIN chunk (" +
                   plural(container_.bin->size(), "byte") + ")");
        }
        out_.uses_bin = true;
      } else {
        const std::string& text = uri->get_ref<const std::string&>();
        if (text.rfind("data:", 0) == 0) {
          rb["uri"] = check_data_uri(text, length, p / "uri");
        } else {
          rb["uri"] = external_buffer(text, length, p);
        }
      }
      reduced.push_back(std::move(rb));
    }
    out_.reduced["buffers"] = std::move(reduced);
  }

  std::string external_buffer(const std::string& uri, std::uint64_t length,
                              const JsonPath& p) {
    const std::string relative = decode_uri_path(uri, p / "uri");
    std::string refused;
    const std::optional<std::string> resolved =
        detail::resolve_reference(scene_file_, relative, root_, refused);
    if (!resolved) fail(p / "uri", refused);
    const fs::path file(*resolved);
    std::error_code ec;
    const fs::file_status status = fs::status(file, ec);
    std::string why;
    if (!fs::exists(status)) {
      why = std::make_error_code(std::errc::no_such_file_or_directory).message();
    } else if (!fs::is_regular_file(status)) {
      why = "not a regular file";
    }
    if (!why.empty()) {
      JsonError e{p / "uri", "cannot open buffer file '" + file.string() +
                                 "': " + why, std::nullopt};
      e.io = true;
      throw e;
    }
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec) {
      fail(p / "uri", "cannot read buffer file '" + file.string() +
                          "': " + ec.message());
    }
    if (size < length) {
      fail(p, "buffer file '" + file.string() + "' has " +
                  plural(size, "byte") + ", byteLength says " +
                  std::to_string(length));
    }
    if (auto over = budget_.take_bytes(length)) fail(p / "uri", *over);
    // A token needs no decoding: it has no %XX and no '+'.
    std::string token = "raypick-buffer-" + std::to_string(out_.files.size());
    out_.files[token] = ExternalBuffer{file.string(), length};
    return token;
  }

  void check_buffer_views(const Json& doc) {
    const Json& views = top_array(doc, "bufferViews");
    Json reduced = Json::array();
    detail::JsonGuard reduced_guard(reduced);
    for (std::size_t i = 0; i < views.size(); ++i) {
      const JsonPath p = (JsonPath() / "bufferViews")[i];
      const Json& v = detail::require_object(views[i], p);
      const Json* buffer_json = detail::find_member(v, "buffer");
      if (buffer_json == nullptr) fail(p, "missing 'buffer'");
      const std::uint64_t buffer = index(*buffer_json, p / "buffer", "buffers",
                                         buffer_lengths_.size());
      const std::uint64_t offset = uint_member(v, p, "byteOffset", 0, kMaxBytes);
      const std::uint64_t length =
          uint_member(v, p, "byteLength", 0, kMaxBytes, true);
      if (length == 0) fail(p / "byteLength", "byteLength must be at least 1");
      const std::uint64_t stride = uint_member(v, p, "byteStride", 0, 252);
      if (detail::find_member(v, "byteStride") != nullptr &&
          (stride < 4 || stride % 4 != 0)) {
        fail(p / "byteStride", "byteStride " + std::to_string(stride) +
                                   " is not a multiple of 4 in 4..252");
      }
      if (offset + length > buffer_lengths_[buffer]) {
        fail(p, "bytes " + std::to_string(offset) + ".." +
                    std::to_string(offset + length) +
                    " are out of range of buffers[" + std::to_string(buffer) +
                    "] (" + plural(buffer_lengths_[buffer], "byte") + ")");
      }
      views_.push_back(View{offset, length, stride});
      Json rv{{"buffer", buffer}, {"byteOffset", offset}, {"byteLength", length}};
      if (stride != 0) rv["byteStride"] = stride;
      reduced.push_back(std::move(rv));
    }
    out_.reduced["bufferViews"] = std::move(reduced);
  }

  int component_type(const Json& obj, const JsonPath& p) {
    const std::uint64_t t =
        uint_member(obj, p, "componentType", 0, kMaxInt, true);
    if (component_size(static_cast<int>(t)) == 0) {
      fail(p / "componentType",
           "componentType " + std::to_string(t) +
               " is not one of 5120, 5121, 5122, 5123, 5125, 5126");
    }
    return static_cast<int>(t);
  }

  // Checks that `count` elements of `size` bytes, `stride` apart, starting
  // `offset` bytes into bufferViews[view], stay inside it.
  void check_range(const JsonPath& p, std::uint64_t view, std::uint64_t offset,
                   std::uint64_t stride, std::uint64_t count,
                   std::uint64_t size) {
    const std::uint64_t end = offset + stride * (count - 1) + size;
    if (end > views_[view].length) {
      fail(p, plural(count, "element") + " from byte " +
                  std::to_string(offset) + " end at byte " +
                  std::to_string(end) + ", out of range of bufferViews[" +
                  std::to_string(view) + "] (" +
                  plural(views_[view].length, "byte") + ")");
    }
  }

  void check_accessors(const Json& doc) {
    const Json& accessors = top_array(doc, "accessors");
    Json reduced = Json::array();
    detail::JsonGuard reduced_guard(reduced);
    for (std::size_t i = 0; i < accessors.size(); ++i) {
      const JsonPath p = (JsonPath() / "accessors")[i];
      const Json& a = detail::require_object(accessors[i], p);
      const int ctype = component_type(a, p);
      const std::uint64_t count = uint_member(a, p, "count", 0, kMaxBytes, true);
      if (count == 0) fail(p / "count", "count must be at least 1");
      const Json* type_json = detail::find_member(a, "type");
      if (type_json == nullptr) fail(p, "missing 'type'");
      const std::string type_name =
          detail::require_string(*type_json, p / "type");
      const AccessorType* type = nullptr;
      for (const AccessorType& t : kAccessorTypes) {
        if (type_name == t.name) type = &t;
      }
      if (type == nullptr) {
        fail(p / "type", "unknown accessor type '" + detail::printable(type_name, 20) +
                             "' (expected SCALAR, VEC2, VEC3, VEC4, MAT2, "
                             "MAT3 or MAT4)");
      }
      const std::uint64_t elem = element_size(*type, ctype);
      const std::uint64_t offset = uint_member(a, p, "byteOffset", 0, kMaxBytes);
      bool normalized = false;
      if (const Json* n = detail::find_member(a, "normalized")) {
        normalized = detail::require_bool(*n, p / "normalized");
      }
      // glTF 2.0 forbids it (glTF-Validator agrees); a reader that mapped a
      // float to [0, 1] would read other geometry than one that ignored it.
      if (normalized && (ctype == kFloat || ctype == kUnsignedInt)) {
        fail(p / "normalized", std::string("normalized is true on ") +
                                   component_name(ctype) +
                                   " components (glTF allows it on byte and "
                                   "short types only)");
      }
      Json ra{{"componentType", ctype},
              {"count", count},
              {"type", type_name},
              {"byteOffset", offset},
              {"normalized", normalized}};
      if (const Json* view_json = detail::find_member(a, "bufferView")) {
        const std::uint64_t view =
            index(*view_json, p / "bufferView", "bufferViews", views_.size());
        const std::uint64_t stride =
            views_[view].stride != 0 ? views_[view].stride : elem;
        // glTF 2.0, "Data Alignment": elements may not overlap, and each
        // component starts at a multiple of its size within the buffer.
        if (stride < elem) {
          fail(p, "bufferViews[" + std::to_string(view) + "] has byteStride " +
                      std::to_string(stride) +
                      ", less than the accessor's element (" +
                      plural(elem, "byte") + "): elements would overlap");
        }
        const std::uint64_t csize = component_size(ctype);
        if ((offset + views_[view].offset) % csize != 0) {
          fail(p / "byteOffset",
               "byteOffset " + std::to_string(offset) + " plus bufferViews[" +
                   std::to_string(view) + "].byteOffset " +
                   std::to_string(views_[view].offset) +
                   " is not a multiple of the component size (" +
                   plural(csize, "byte") + ")");
        }
        check_range(p, view, offset, stride, count, elem);
        ra["bufferView"] = view;
      }
      if (const Json* sparse = detail::find_member(a, "sparse")) {
        ra["sparse"] = check_sparse(*sparse, p / "sparse", count, elem);
      }
      reduced.push_back(std::move(ra));
    }
    accessor_count_ = accessors.size();
    out_.reduced["accessors"] = std::move(reduced);
  }

  Json check_sparse(const Json& sparse, const JsonPath& p,
                    std::uint64_t accessor_count, std::uint64_t elem) {
    detail::require_object(sparse, p);
    const std::uint64_t count = uint_member(sparse, p, "count", 0, kMaxInt, true);
    if (count == 0 || count > accessor_count) {
      fail(p / "count", "sparse count " + std::to_string(count) +
                            " is not in 1.." + std::to_string(accessor_count));
    }
    Json out{{"count", count}};
    for (const char* part : {"indices", "values"}) {
      const JsonPath pp = p / part;
      const Json* obj = detail::find_member(sparse, part);
      if (obj == nullptr) fail(p, std::string("missing '") + part + "'");
      detail::require_object(*obj, pp);
      const Json* view_json = detail::find_member(*obj, "bufferView");
      if (view_json == nullptr) fail(pp, "missing 'bufferView'");
      const std::uint64_t view =
          index(*view_json, pp / "bufferView", "bufferViews", views_.size());
      const std::uint64_t offset =
          uint_member(*obj, pp, "byteOffset", 0, kMaxInt);
      Json r{{"bufferView", view}, {"byteOffset", offset}};
      std::uint64_t size = elem;
      if (std::string_view(part) == "indices") {
        const int ctype = component_type(*obj, pp);
        if (ctype != kUnsignedByte && ctype != kUnsignedShort &&
            ctype != kUnsignedInt) {
          fail(pp / "componentType",
               std::string("sparse indices must be unsigned byte, short or "
                           "int, not ") +
                   component_name(ctype));
        }
        size = component_size(ctype);
        r["componentType"] = ctype;
      }
      // Sparse data is tightly packed whatever the view's byteStride says.
      check_range(pp, view, offset, size, count, size);
      out[part] = std::move(r);
    }
    return out;
  }

  void check_meshes(const Json& doc) {
    const Json& meshes = top_array(doc, "meshes");
    Json reduced = Json::array();
    detail::JsonGuard reduced_guard(reduced);
    for (std::size_t i = 0; i < meshes.size(); ++i) {
      const JsonPath p = (JsonPath() / "meshes")[i];
      const Json& m = detail::require_object(meshes[i], p);
      const Json* prims = detail::find_member(m, "primitives");
      if (prims == nullptr) fail(p, "missing 'primitives'");
      detail::require_array(*prims, p / "primitives");
      Json rprims = Json::array();
      detail::JsonGuard rprims_guard(rprims);
      for (std::size_t k = 0; k < prims->size(); ++k) {
        const JsonPath pp = (p / "primitives")[k];
        const Json& prim = detail::require_object((*prims)[k], pp);
        const Json* attrs = detail::find_member(prim, "attributes");
        if (attrs == nullptr) fail(pp, "missing 'attributes'");
        detail::require_object(*attrs, pp / "attributes");
        Json rattrs = Json::object();
        if (const Json* pos = detail::find_member(*attrs, "POSITION")) {
          rattrs["POSITION"] = index(*pos, pp / "attributes" / "POSITION",
                                     "accessors", accessor_count_);
        }
        Json rp{{"attributes", std::move(rattrs)}};
        if (const Json* ind = detail::find_member(prim, "indices")) {
          rp["indices"] =
              index(*ind, pp / "indices", "accessors", accessor_count_);
        }
        const std::uint64_t mode =
            uint_member(prim, pp, "mode", kModeTriangles, kMaxInt);
        if (mode > 6) {
          fail(pp / "mode", "mode " + std::to_string(mode) +
                                " is not a primitive mode (0..6)");
        }
        rp["mode"] = mode;
        rprims.push_back(std::move(rp));
      }
      reduced.push_back(Json{{"primitives", std::move(rprims)}});
    }
    mesh_count_ = meshes.size();
    out_.reduced["meshes"] = std::move(reduced);
  }

  void check_nodes(const Json& doc) {
    const Json& nodes = top_array(doc, "nodes");
    node_count_ = nodes.size();
    Json reduced = Json::array();
    detail::JsonGuard reduced_guard(reduced);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const JsonPath p = (JsonPath() / "nodes")[i];
      const Json& n = detail::require_object(nodes[i], p);
      Json rn = Json::object();
      if (const Json* name = detail::find_member(n, "name")) {
        rn["name"] = detail::require_string(*name, p / "name");
      }
      if (const Json* mesh = detail::find_member(n, "mesh")) {
        rn["mesh"] = index(*mesh, p / "mesh", "meshes", mesh_count_);
      }
      if (const Json* children = detail::find_member(n, "children")) {
        detail::require_array(*children, p / "children");
        Json rc = Json::array();
        for (std::size_t k = 0; k < children->size(); ++k) {
          rc.push_back(index((*children)[k], (p / "children")[k], "nodes",
                             nodes.size()));
        }
        rn["children"] = std::move(rc);
      }
      const Json* matrix = detail::find_member(n, "matrix");
      bool trs = false;
      for (const auto& [key, size] :
           {std::pair<const char*, std::size_t>{"translation", 3},
            {"rotation", 4},
            {"scale", 3}}) {
        const Json* v = detail::find_member(n, key);
        if (v == nullptr) continue;
        trs = true;
        const std::vector<double> values =
            detail::require_floats(*v, p / key, size);
        if (std::string_view(key) == "rotation") {
          double norm2 = 0.0;
          for (const double x : values) norm2 += x * x;
          if (norm2 == 0.0) fail(p / key, "rotation is a zero quaternion");
        }
        rn[key] = values;
      }
      if (matrix != nullptr) {
        if (trs) {
          fail(p, "has both 'matrix' and translation/rotation/scale (glTF "
                  "allows one or the other)");
        }
        const std::vector<double> m =
            detail::require_floats(*matrix, p / "matrix", 16);
        // Column-major: elements 3, 7, 11 and 15 are the last row. glTF
        // requires a TRS-decomposable matrix; raypick needs it affine (it
        // takes shear), and forgives rounding in the last row.
        constexpr double kTol = 1e-6;
        if (std::fabs(m[3]) > kTol || std::fabs(m[7]) > kTol ||
            std::fabs(m[11]) > kTol || std::fabs(m[15] - 1.0) > kTol) {
          fail(p / "matrix",
               "matrix is not affine (its last row, elements 3, 7, 11 and "
               "15, must be 0 0 0 1)");
        }
        rn["matrix"] = m;
      }
      reduced.push_back(std::move(rn));
    }
    out_.reduced["nodes"] = std::move(reduced);
  }

  void check_scenes(const Json& doc) {
    const Json& scenes = top_array(doc, "scenes");
    Json reduced = Json::array();
    detail::JsonGuard reduced_guard(reduced);
    for (std::size_t i = 0; i < scenes.size(); ++i) {
      const JsonPath p = (JsonPath() / "scenes")[i];
      const Json& s = detail::require_object(scenes[i], p);
      Json rnodes = Json::array();
      detail::JsonGuard rnodes_guard(rnodes);
      if (const Json* nodes = detail::find_member(s, "nodes")) {
        detail::require_array(*nodes, p / "nodes");
        for (std::size_t k = 0; k < nodes->size(); ++k) {
          rnodes.push_back(
              index((*nodes)[k], (p / "nodes")[k], "nodes", node_count_));
        }
      }
      reduced.push_back(Json{{"nodes", std::move(rnodes)}});
    }
    out_.reduced["scenes"] = std::move(reduced);
    if (const Json* scene = detail::find_member(doc, "scene")) {
      out_.reduced["scene"] =
          index(*scene, JsonPath() / "scene", "scenes", scenes.size());
    }
  }

  struct View {
    std::uint64_t offset;  // in its buffer
    std::uint64_t length;
    std::uint64_t stride;  // 0: tightly packed
  };

  const Container& container_;
  std::string scene_file_;
  std::string root_;
  detail::Budget& budget_;
  Checked out_;
  detail::JsonGuard reduced_guard_{out_.reduced};
  std::vector<std::uint64_t> buffer_lengths_;
  std::vector<View> views_;
  std::size_t accessor_count_ = 0;
  std::size_t mesh_count_ = 0;
  std::size_t node_count_ = 0;
};

// ---------------------------------------------------------------------------
// Stage 2: the model

// The fields of the reduced document that stage 3 reads, in plain structs
// (named as glTF names them), and the buffers' bytes. Built from the
// reduced document, whose every field stage 1 checked; it costs a few
// dozen bytes per node, where a general glTF library keeps hundreds and a
// JSON tree of its own that running out of memory could not unwind.
namespace gltf {

struct SparsePart {
  int bufferView = -1;
  std::uint64_t byteOffset = 0;
  int componentType = 0;  // indices only
};

struct Sparse {
  bool isSparse = false;
  std::uint64_t count = 0;
  SparsePart indices;
  SparsePart values;
};

struct Accessor {
  int bufferView = -1;  // -1: all zeros
  std::uint64_t byteOffset = 0;
  int componentType = 0;
  std::uint64_t count = 0;
  int type = 0;  // an AccessorType code
  bool normalized = false;
  Sparse sparse;
};

struct BufferView {
  int buffer = 0;
  std::uint64_t byteOffset = 0;
  std::uint64_t byteLength = 0;
  std::uint64_t byteStride = 0;  // 0: tightly packed
};

// Bytes owned (a data URI or a file) or borrowed (the GLB BIN chunk, alive
// as long as the file's bytes).
struct Buffer {
  std::string owned;
  std::string_view data;
};

struct Primitive {
  int position = -1;  // the POSITION accessor, or -1
  int indices = -1;
  int mode = kModeTriangles;
};

struct Mesh {
  std::vector<Primitive> primitives;
};

struct Node {
  std::string name;
  int mesh = -1;
  std::vector<int> children;
  std::vector<double> matrix, translation, rotation, scale;
};

struct Model {
  std::vector<Accessor> accessors;
  std::vector<BufferView> bufferViews;
  std::vector<Buffer> buffers;
  std::vector<Mesh> meshes;
  std::vector<Node> nodes;
  std::vector<std::vector<int>> scenes;  // each scene's root nodes
  int defaultScene = -1;
};

}  // namespace gltf

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  return c == '+' ? 62 : 63;  // '/'; check_data_uri allowed nothing else
}

// The first `length` bytes of the base64 payload of a data URI that
// check_data_uri() wrote (it holds at least that many).
std::string decode_base64(std::string_view uri, std::uint64_t length) {
  const std::string_view payload = uri.substr(uri.find(',') + 1);
  std::string out;
  out.reserve(static_cast<std::size_t>(length));
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : payload) {
    if (out.size() >= length || c == '=') break;
    bits = (bits << 6) | static_cast<std::uint32_t>(base64_value(c));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  return out;
}

// The first `length` bytes of a file stage 1 resolved and measured.
std::string read_buffer_file(const ExternalBuffer& file, const JsonPath& path) {
  std::FILE* f = std::fopen(file.path.c_str(), "rb");
  std::string out;
  if (f != nullptr) {
    out.resize(static_cast<std::size_t>(file.length));
    out.resize(std::fread(out.data(), 1, out.size(), f));
    std::fclose(f);
  }
  if (out.size() != file.length) {
    JsonError e{path, "cannot read buffer file '" +
                          detail::printable(file.path, 200) + "'",
                std::nullopt};
    e.io = true;
    throw e;
  }
  return out;
}

int int_member(const Json& obj, const char* key, int fallback) {
  const Json* v = detail::find_member(obj, key);
  return v == nullptr ? fallback : v->get<int>();
}

std::uint64_t u64_member(const Json& obj, const char* key) {
  const Json* v = detail::find_member(obj, key);
  return v == nullptr ? 0 : v->get<std::uint64_t>();
}

std::vector<double> doubles_member(const Json& obj, const char* key) {
  const Json* v = detail::find_member(obj, key);
  return v == nullptr ? std::vector<double>{} : v->get<std::vector<double>>();
}

// The model of the reduced document (which stage 1 checked, so every field
// has its type and every index its target) and its buffers' bytes.
gltf::Model build_model(const Checked& checked, const Container& container) {
  const Json& doc = checked.reduced;
  gltf::Model model;
  const auto array = [&](const char* key) -> const Json& {
    static const Json kEmpty = Json::array();
    const Json* v = detail::find_member(doc, key);
    return v == nullptr ? kEmpty : *v;
  };

  const Json& buffers = array("buffers");
  model.buffers.resize(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const std::uint64_t length = u64_member(buffers[i], "byteLength");
    gltf::Buffer& buffer = model.buffers[i];
    const Json* uri = detail::find_member(buffers[i], "uri");
    if (uri == nullptr) {
      buffer.data = container.bin->substr(0, static_cast<std::size_t>(length));
      continue;
    }
    const std::string& text = uri->get_ref<const std::string&>();
    if (text.rfind("data:", 0) == 0) {
      buffer.owned = decode_base64(text, length);
    } else {
      buffer.owned = read_buffer_file(checked.files.at(text),
                                      (JsonPath() / "buffers")[i] / "uri");
    }
    buffer.data = buffer.owned;
  }

  for (const Json& v : array("bufferViews")) {
    model.bufferViews.push_back({int_member(v, "buffer", 0),
                                 u64_member(v, "byteOffset"),
                                 u64_member(v, "byteLength"),
                                 u64_member(v, "byteStride")});
  }

  for (const Json& a : array("accessors")) {
    gltf::Accessor acc;
    acc.bufferView = int_member(a, "bufferView", -1);
    acc.byteOffset = u64_member(a, "byteOffset");
    acc.componentType = int_member(a, "componentType", 0);
    acc.count = u64_member(a, "count");
    const std::string& type = a.at("type").get_ref<const std::string&>();
    for (const AccessorType& t : kAccessorTypes) {
      if (type == t.name) acc.type = t.code;
    }
    acc.normalized = a.at("normalized").get<bool>();
    if (const Json* sparse = detail::find_member(a, "sparse")) {
      acc.sparse.isSparse = true;
      acc.sparse.count = u64_member(*sparse, "count");
      const Json& ind = sparse->at("indices");
      const Json& val = sparse->at("values");
      acc.sparse.indices = {int_member(ind, "bufferView", -1),
                            u64_member(ind, "byteOffset"),
                            int_member(ind, "componentType", 0)};
      acc.sparse.values = {int_member(val, "bufferView", -1),
                           u64_member(val, "byteOffset"), 0};
    }
    model.accessors.push_back(acc);
  }

  for (const Json& m : array("meshes")) {
    gltf::Mesh mesh;
    for (const Json& p : m.at("primitives")) {
      gltf::Primitive prim;
      prim.position = int_member(p.at("attributes"), "POSITION", -1);
      prim.indices = int_member(p, "indices", -1);
      prim.mode = int_member(p, "mode", kModeTriangles);
      mesh.primitives.push_back(prim);
    }
    model.meshes.push_back(std::move(mesh));
  }

  const Json& nodes = array("nodes");
  model.nodes.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Json& n = nodes[i];
    gltf::Node& node = model.nodes[i];
    if (const Json* name = detail::find_member(n, "name")) {
      node.name = name->get<std::string>();
    }
    node.mesh = int_member(n, "mesh", -1);
    if (const Json* children = detail::find_member(n, "children")) {
      node.children = children->get<std::vector<int>>();
    }
    node.matrix = doubles_member(n, "matrix");
    node.translation = doubles_member(n, "translation");
    node.rotation = doubles_member(n, "rotation");
    node.scale = doubles_member(n, "scale");
  }

  for (const Json& scene : array("scenes")) {
    model.scenes.push_back(scene.at("nodes").get<std::vector<int>>());
  }
  model.defaultScene = int_member(doc, "scene", -1);
  return model;
}

// ---------------------------------------------------------------------------
// Stage 3: the scene

JsonPath accessor_path(std::size_t a) { return (JsonPath() / "accessors")[a]; }
JsonPath node_path(std::size_t n) { return (JsonPath() / "nodes")[n]; }

// Reads component `k` of an element as a float: the value itself, or, when
// `normalized`, the value mapped to [0, 1] or [-1, 1] as glTF 2.0's
// "Animations" section defines for normalized integers.
float read_component(const unsigned char* p, int component_type,
                     bool normalized) {
  switch (component_type) {
    case kFloat: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case kByte: {
      std::int8_t v;
      std::memcpy(&v, p, 1);
      return normalized ? std::max(v / 127.0f, -1.0f) : v;
    }
    case kUnsignedByte:
      return normalized ? *p / 255.0f : *p;
    case kShort: {
      std::int16_t v;
      std::memcpy(&v, p, 2);
      return normalized ? std::max(v / 32767.0f, -1.0f) : v;
    }
    case kUnsignedShort: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return normalized ? v / 65535.0f : v;
    }
    default: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return static_cast<float>(v);
    }
  }
}

std::uint32_t read_index(const unsigned char* p, int component_type) {
  switch (component_type) {
    case kUnsignedByte:
      return *p;
    case kUnsignedShort: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    default: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

// The document's cameras (issue 12), read leniently from the parsed JSON:
// they are not part of the model and picking does not need them, so a camera
// that cannot be used (not an object, an unknown type, a yfov outside
// (0, pi), a ymag not > 0 and finite) is left out, and a node's "camera"
// that is not a valid index is ignored, rather than failing the scene.
struct GltfCameras {
  std::vector<std::optional<SceneCamera>> cameras;  // by camera index
  std::vector<int> node_camera;                     // by node index; -1: none
};

GltfCameras read_cameras(const Json& doc) {
  GltfCameras out;
  auto number = [](const Json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_number() ? it->get<double>() : std::nan("");
  };
  if (const auto cams = doc.find("cameras"); cams != doc.end() && cams->is_array()) {
    for (const Json& cam : *cams) {
      std::optional<SceneCamera>& slot = out.cameras.emplace_back();
      if (!cam.is_object()) continue;
      const auto type = cam.find("type");
      if (type == cam.end() || !type->is_string()) continue;
      SceneCamera c;
      if (const auto name = cam.find("name"); name != cam.end() && name->is_string()) {
        c.camera_name = name->get<std::string>();
      }
      const auto params = cam.find(type->get<std::string>());
      if (params == cam.end() || !params->is_object()) continue;
      if (*type == "perspective") {
        c.fov_deg = number(*params, "yfov") * (180.0 / 3.14159265358979323846);
        c.aspect = params->contains("aspectRatio") ? number(*params, "aspectRatio") : 0.0;
        if (!(c.fov_deg > 0.0 && c.fov_deg < 180.0)) continue;
      } else if (*type == "orthographic") {
        c.projection = Projection::kOrthographic;
        const double ymag = number(*params, "ymag");
        c.ortho_height = 2.0 * ymag;  // ymag is half the view height
        c.aspect = number(*params, "xmag") / ymag;
        if (!(c.ortho_height > 0.0 && std::isfinite(c.ortho_height))) continue;
      } else {
        continue;
      }
      if (!std::isfinite(c.aspect)) c.aspect = 0.0;
      slot = std::move(c);
    }
  }
  if (const auto nodes = doc.find("nodes"); nodes != doc.end() && nodes->is_array()) {
    for (const Json& n : *nodes) {
      int& k = out.node_camera.emplace_back(-1);
      if (!n.is_object()) continue;
      const auto cam = n.find("camera");
      if (cam == n.end() || !cam->is_number_unsigned()) continue;
      const auto i = cam->get<std::uint64_t>();
      if (i < out.cameras.size() && out.cameras[i]) k = static_cast<int>(i);
    }
  }
  return out;
}

class SceneBuilder {
 public:
  SceneBuilder(const gltf::Model& model, bool quantized,
               detail::Budget& budget)
      : m_(model),
        quantized_(quantized),
        budget_(budget),
        // Counts saturate one past the objects the budget has left (and
        // never wrap).
        max_objects_(std::min<std::uint64_t>(budget.objects_left(),
                                             std::uint64_t{1} << 62) +
                     1),
        mesh_slot_(model.meshes.size(), -1) {}

  // The cameras read from the document (read_cameras), to be placed by the
  // traversal; must outlive build().
  void set_cameras(const GltfCameras* cameras) { cameras_ = cameras; }

  Scene build() {
    const std::vector<int> roots = root_nodes();
    const std::uint64_t total = count_objects(roots);
    if (total == 0) fail(JsonPath(), "no objects in scene (no node with a mesh)");
    if (auto over = budget_.take_objects(total)) {
      fail(JsonPath() / "nodes", *over);
    }
    check_instances(roots, total);
    compute_locals();
    scene_.objects.reserve(static_cast<std::size_t>(total));
    traverse(roots);
    return std::move(scene_);
  }

 private:
  // The default scene's root nodes, scene 0's when none is set. Without
  // scenes: every node that is no node's child, in index order.
  std::vector<int> root_nodes() {
    if (!m_.scenes.empty()) {
      const int s = m_.defaultScene >= 0 ? m_.defaultScene : 0;
      if (static_cast<std::size_t>(s) >= m_.scenes.size()) {
        fail(JsonPath() / "scene", "scene does not exist");
      }
      scene_path_ = (JsonPath() / "scenes")[static_cast<std::size_t>(s)];
      return m_.scenes[static_cast<std::size_t>(s)];
    }
    std::vector<bool> is_child(m_.nodes.size(), false);
    for (const gltf::Node& n : m_.nodes) {
      for (const int c : n.children) {
        if (c >= 0 && static_cast<std::size_t>(c) < is_child.size()) {
          is_child[static_cast<std::size_t>(c)] = true;
        }
      }
    }
    std::vector<int> roots;
    for (std::size_t i = 0; i < m_.nodes.size(); ++i) {
      if (!is_child[i]) roots.push_back(static_cast<int>(i));
    }
    return roots;
  }

  void check_node_index(int n, const JsonPath& path) const {
    if (n < 0 || static_cast<std::size_t>(n) >= m_.nodes.size()) {
      fail(path, "node " + std::to_string(n) + " does not exist");
    }
  }

  // Depth-first over every node, without recursion: refuses a node that is
  // its own ancestor, and counts the objects below each node (a node reached
  // along k paths is k objects), saturating at max_objects_.
  std::uint64_t count_objects(const std::vector<int>& roots) {
    const std::size_t n = m_.nodes.size();
    enum : unsigned char { kWhite, kGray, kBlack };
    std::vector<unsigned char> color(n, kWhite);
    std::vector<std::uint64_t> below(n, 0);
    reaches_.assign(n, false);
    post_order_.clear();
    post_order_.reserve(n);
    struct Frame {
      std::size_t node;
      std::size_t next_child;
    };
    std::vector<Frame> stack;
    for (std::size_t start = 0; start < n; ++start) {
      if (color[start] != kWhite) continue;
      stack.push_back({start, 0});
      color[start] = kGray;
      while (!stack.empty()) {
        Frame& f = stack.back();
        const gltf::Node& node = m_.nodes[f.node];
        if (f.next_child < node.children.size()) {
          const std::size_t k = f.next_child++;
          const int c = node.children[k];
          const JsonPath where = (node_path(f.node) / "children")[k];
          check_node_index(c, where);
          const auto child = static_cast<std::size_t>(c);
          if (color[child] == kGray) {
            std::string cycle;
            bool on = false;
            for (const Frame& g : stack) {
              on = on || g.node == child;
              if (on) cycle += std::to_string(g.node) + " -> ";
            }
            fail(where, "node " + std::to_string(child) +
                            " is its own ancestor (cycle " + cycle +
                            std::to_string(child) + ")");
          }
          if (color[child] == kWhite) {
            color[child] = kGray;
            stack.push_back({child, 0});
          }
          continue;
        }
        std::uint64_t sum = node.mesh >= 0 ? 1 : 0;
        bool reaches = node.mesh >= 0 || has_camera(f.node);
        for (const int c : node.children) {
          sum = std::min(sum + below[static_cast<std::size_t>(c)],
                         max_objects_);
          reaches = reaches || reaches_[static_cast<std::size_t>(c)];
        }
        below[f.node] = sum;
        reaches_[f.node] = reaches;
        post_order_.push_back(f.node);
        color[f.node] = kBlack;
        stack.pop_back();
      }
    }
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < roots.size(); ++k) {
      check_node_index(roots[k], (scene_path_ / "nodes")[k]);
      total = std::min(total + below[static_cast<std::size_t>(roots[k])],
                       max_objects_);
    }
    return total;
  }

  bool has_camera(std::size_t node) const {
    return cameras_ != nullptr && node < cameras_->node_camera.size() &&
           cameras_->node_camera[node] >= 0;
  }

  // The traversal visits every path from a root to a node that leads to a
  // mesh or a camera. A small node graph (a DAG) can have astronomically
  // many such paths even when few of them end in an object: a doubling
  // chain above a long single chain, say. Counts the visits (and the camera
  // instances) before walking, saturating, and refuses a graph whose walk
  // would cost more than kVisitsPerItem per object or camera placed, plus
  // one per node.
  void check_instances(const std::vector<int>& roots, std::uint64_t objects) {
    constexpr std::uint64_t kCap = std::uint64_t{1} << 62;
    constexpr std::uint64_t kMaxCameras = 65536;
    constexpr std::uint64_t kVisitsPerItem = 64;
    const auto add = [kCap](std::uint64_t a, std::uint64_t b) {
      return std::min(a + b, kCap);  // a, b <= kCap: no wrap
    };
    std::vector<std::uint64_t> paths(m_.nodes.size(), 0);
    for (const int r : roots) {
      const auto k = static_cast<std::size_t>(r);
      if (reaches_[k]) paths[k] = add(paths[k], 1);
    }
    std::uint64_t visits = 0;
    std::uint64_t cameras = 0;
    // Reverse post-order is a topological order: parents before children.
    for (auto it = post_order_.rbegin(); it != post_order_.rend(); ++it) {
      const std::size_t k = *it;
      if (paths[k] == 0) continue;
      visits = add(visits, paths[k]);
      if (has_camera(k)) cameras = add(cameras, paths[k]);
      for (const int c : m_.nodes[k].children) {
        const auto child = static_cast<std::size_t>(c);
        if (reaches_[child]) paths[child] = add(paths[child], paths[k]);
      }
    }
    if (cameras > kMaxCameras) {
      fail(JsonPath() / "nodes",
           "the node graph places more than " + std::to_string(kMaxCameras) +
               " camera instances");
    }
    const std::uint64_t allowed =
        kVisitsPerItem * (objects + cameras) + m_.nodes.size();
    if (visits > allowed) {
      fail(JsonPath() / "nodes",
           "the node graph is too deep for its objects: placing " +
               std::to_string(objects) + " objects walks " +
               (visits >= kCap ? std::string("more than 2^62")
                               : std::to_string(visits)) +
               " node instances (at most " + std::to_string(kVisitsPerItem) +
               " per object or camera, plus one per node, are allowed)");
    }
  }

  // Each node's local matrix: `matrix`, or T * R * S. In double, so that a
  // deep chain rounds once, when the world matrix is stored.
  void compute_locals() {
    local_.resize(m_.nodes.size());
    for (std::size_t i = 0; i < m_.nodes.size(); ++i) {
      const gltf::Node& n = m_.nodes[i];
      glm::dmat4 local{1.0};
      if (n.matrix.size() == 16) {
        for (int c = 0; c < 4; ++c) {
          for (int r = 0; r < 4; ++r) local[c][r] = n.matrix[4 * c + r];
        }
        // Stage 1 allowed rounding in the last row; make it exact.
        local[0][3] = local[1][3] = local[2][3] = 0.0;
        local[3][3] = 1.0;
      } else {
        glm::dvec3 t{0.0};
        glm::dquat q{1.0, 0.0, 0.0, 0.0};
        glm::dvec3 s{1.0};
        if (n.translation.size() == 3) {
          t = {n.translation[0], n.translation[1], n.translation[2]};
        }
        if (n.rotation.size() == 4) {
          // glTF stores x, y, z, w; glm's constructor takes w first. glTF
          // asks for a unit quaternion; exporters round, so normalize.
          q = glm::normalize(glm::dquat{n.rotation[3], n.rotation[0],
                                        n.rotation[1], n.rotation[2]});
        }
        if (n.scale.size() == 3) s = {n.scale[0], n.scale[1], n.scale[2]};
        local = glm::translate(glm::dmat4{1.0}, t) * glm::mat4_cast(q) *
                glm::scale(glm::dmat4{1.0}, s);
      }
      local_[i] = local;
    }
  }

  // Pre-order from the roots, children in listed order: the contract's
  // object order.
  void traverse(const std::vector<int>& roots) {
    struct Item {
      std::size_t node;
      glm::dmat4 parent;
    };
    std::vector<Item> stack;
    for (const int r : roots) {
      if (!reaches_[static_cast<std::size_t>(r)]) continue;
      stack.push_back({static_cast<std::size_t>(r), glm::dmat4{1.0}});
      while (!stack.empty()) {
        const Item item = stack.back();
        stack.pop_back();
        const gltf::Node& node = m_.nodes[item.node];
        const glm::dmat4 world = item.parent * local_[item.node];
        if (node.mesh >= 0) add_object(item.node, world);
        if (cameras_ && cameras_->node_camera[item.node] >= 0) add_camera(item.node, world);
        for (auto c = node.children.rbegin(); c != node.children.rend(); ++c) {
          // A subtree with no mesh and no camera adds nothing: skipping it
          // keeps the walk within check_instances' bound.
          if (!reaches_[static_cast<std::size_t>(*c)]) continue;
          stack.push_back({static_cast<std::size_t>(*c), world});
        }
      }
    }
  }

  void add_object(std::size_t node_index, const glm::dmat4& world) {
    const gltf::Node& node = m_.nodes[node_index];
    Object object;
    object.matrix = glm::mat4{world};
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (!std::isfinite(object.matrix[c][r])) {
          fail(node_path(node_index),
               "world matrix does not fit a float (the chain of transforms "
               "overflows)");
        }
      }
    }
    object.mesh = mesh_slot(node.mesh, node_path(node_index) / "mesh");
    object.name = node.name.empty() ? "node" + std::to_string(node_index)
                                    : detail::escape_controls(node.name);
    scene_.objects.push_back(std::move(object));
  }

  // A camera node, in the order of the traversal (issue 12).
  void add_camera(std::size_t node_index, const glm::dmat4& world) {
    SceneCamera c = *cameras_->cameras[static_cast<std::size_t>(cameras_->node_camera[node_index])];
    c.name = m_.nodes[node_index].name;
    c.matrix = world;
    for (int k = 0; k < 16; ++k) {
      if (!std::isfinite(world[k / 4][k % 4])) return;
    }
    scene_.cameras.push_back(std::move(c));
  }

  // The raypick mesh of glTF mesh `m`, converted on first use.
  std::uint32_t mesh_slot(int m, const JsonPath& where) {
    if (m < 0 || static_cast<std::size_t>(m) >= m_.meshes.size()) {
      fail(where, "mesh " + std::to_string(m) + " does not exist");
    }
    std::int64_t& slot = mesh_slot_[static_cast<std::size_t>(m)];
    if (slot < 0) {
      slot = static_cast<std::int64_t>(scene_.meshes.size());
      scene_.meshes.push_back(convert_mesh(static_cast<std::size_t>(m)));
    }
    return static_cast<std::uint32_t>(slot);
  }

  // A bounds-checked view of an accessor's elements in its buffer; `base`
  // is null for an accessor without a buffer view (all zeros).
  struct Elements {
    const unsigned char* base = nullptr;
    std::size_t stride = 0;
    std::size_t count = 0;
  };

  // `size` bytes at `offset` of bufferViews[view], checked against the
  // bytes stage 2 actually loaded.
  const unsigned char* view_bytes(int view, std::uint64_t offset,
                                  std::uint64_t stride, std::uint64_t count,
                                  std::uint64_t size, const JsonPath& path) {
    if (view < 0 || static_cast<std::size_t>(view) >= m_.bufferViews.size()) {
      fail(path, "bufferView " + std::to_string(view) + " does not exist");
    }
    const gltf::BufferView& bv = m_.bufferViews[static_cast<std::size_t>(view)];
    if (bv.buffer < 0 || static_cast<std::size_t>(bv.buffer) >= m_.buffers.size()) {
      fail(path, "buffer " + std::to_string(bv.buffer) + " does not exist");
    }
    const std::string_view data =
        m_.buffers[static_cast<std::size_t>(bv.buffer)].data;
    const std::uint64_t end = offset + stride * (count - 1) + size;
    if (count == 0 || bv.byteOffset > data.size() ||
        bv.byteLength > data.size() - bv.byteOffset || end > bv.byteLength) {
      fail(path, "data out of range of bufferViews[" + std::to_string(view) +
                     "] or its buffer");
    }
    return reinterpret_cast<const unsigned char*>(data.data()) +
           bv.byteOffset + offset;
  }

  Elements elements(std::size_t a, std::size_t elem_size) {
    const gltf::Accessor& acc = m_.accessors[a];
    Elements out;
    out.count = acc.count;
    if (acc.bufferView < 0) return out;  // zeros; the caller charged them
    const gltf::BufferView& bv =
        m_.bufferViews[static_cast<std::size_t>(acc.bufferView)];
    out.stride = bv.byteStride != 0 ? bv.byteStride : elem_size;
    out.base = view_bytes(acc.bufferView, acc.byteOffset, out.stride, acc.count,
                          elem_size, accessor_path(a));
    return out;
  }

  // Calls set(element, bytes) for each sparse substitute of accessor `a`;
  // refuses a sparse index past the accessor's count.
  template <typename Set>
  void apply_sparse(std::size_t a, std::size_t elem_size, Set set) {
    const gltf::Accessor& acc = m_.accessors[a];
    if (!acc.sparse.isSparse) return;
    const JsonPath path = accessor_path(a) / "sparse";
    const auto count = acc.sparse.count;
    const int itype = acc.sparse.indices.componentType;
    const std::size_t isize = component_size(itype);
    if (acc.sparse.count == 0 || isize == 0 || itype == kFloat) {
      fail(path, "malformed sparse accessor");
    }
    const unsigned char* indices =
        view_bytes(acc.sparse.indices.bufferView,
                   acc.sparse.indices.byteOffset,
                   isize, count, isize, path / "indices");
    const unsigned char* values =
        view_bytes(acc.sparse.values.bufferView,
                   acc.sparse.values.byteOffset,
                   elem_size, count, elem_size, path / "values");
    for (std::uint64_t k = 0; k < count; ++k) {
      const std::uint32_t target = read_index(indices + k * isize, itype);
      if (target >= acc.count) {
        fail(path / "indices",
             "sparse index " + std::to_string(target) + " (element " +
                 std::to_string(k) + ") is past the accessor's " +
                 plural(acc.count, "element"));
      }
      set(target, values + k * elem_size);
    }
  }

  std::vector<glm::vec3> read_positions(std::size_t a, const std::string& use) {
    const gltf::Accessor& acc = m_.accessors[a];
    const JsonPath path = accessor_path(a);
    const AccessorType* type = accessor_type(acc.type);
    if (type == nullptr || acc.type != kTypeVec3) {
      fail(path, use + " must be a VEC3 accessor, not " +
                     (type ? type->name : "unknown"));
    }
    const int ct = acc.componentType;
    const bool integer = ct == kByte || ct == kUnsignedByte || ct == kShort ||
                         ct == kUnsignedShort;
    if (ct != kFloat && !(integer && quantized_)) {
      fail(path, use + " must have float components, not " +
                     component_name(ct) +
                     (integer ? " (integer positions need KHR_mesh_quantization "
                                "in extensionsUsed)"
                              : ""));
    }
    const std::size_t elem = element_size(*type, ct);
    const std::size_t csize = component_size(ct);
    if (auto over = budget_.take_vertices(acc.count)) fail(path, use + ": " + *over);
    const Elements e = elements(a, elem);
    const auto read = [&](const unsigned char* p) {
      return glm::vec3{read_component(p, ct, acc.normalized),
                       read_component(p + csize, ct, acc.normalized),
                       read_component(p + 2 * csize, ct, acc.normalized)};
    };
    std::vector<glm::vec3> out(e.count, glm::vec3{0.0f});
    if (e.base != nullptr) {
      for (std::size_t i = 0; i < e.count; ++i) out[i] = read(e.base + i * e.stride);
    }
    apply_sparse(a, elem, [&](std::uint32_t i, const unsigned char* p) {
      out[i] = read(p);
    });
    for (std::size_t i = 0; i < out.size(); ++i) {
      const glm::vec3& v = out[i];
      if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "(%g, %g, %g)", v.x, v.y, v.z);
        fail(path, use + ": vertex " + std::to_string(i) + " is not finite " +
                       buf);
      }
    }
    return out;
  }

  std::vector<std::uint32_t> read_indices(std::size_t a, const std::string& use) {
    const gltf::Accessor& acc = m_.accessors[a];
    const JsonPath path = accessor_path(a);
    const int ct = acc.componentType;
    if (acc.type != kTypeScalar ||
        (ct != kUnsignedByte && ct != kUnsignedShort && ct != kUnsignedInt)) {
      const AccessorType* type = accessor_type(acc.type);
      fail(path, use + " must be a SCALAR accessor of unsigned byte, short or "
                       "int, not " +
                       (type ? type->name : "unknown") + " of " +
                       component_name(ct));
    }
    const std::size_t size = component_size(ct);
    const Elements e = elements(a, size);
    std::vector<std::uint32_t> out(e.count, 0);
    if (e.base != nullptr) {
      for (std::size_t i = 0; i < e.count; ++i) {
        out[i] = read_index(e.base + i * e.stride, ct);
      }
    }
    apply_sparse(a, size, [&](std::uint32_t i, const unsigned char* p) {
      out[i] = read_index(p, ct);
    });
    return out;
  }

  // Every triangle primitive of the mesh, in primitive order, into one
  // Mesh. Primitives that share a POSITION accessor share its vertices.
  Mesh convert_mesh(std::size_t m) {
    Mesh mesh;
    std::map<int, std::uint32_t> first_vertex;  // by POSITION accessor
    const gltf::Mesh& src = m_.meshes[m];
    for (std::size_t k = 0; k < src.primitives.size(); ++k) {
      const gltf::Primitive& prim = src.primitives[k];
      const JsonPath path = ((JsonPath() / "meshes")[m] / "primitives")[k];
      const int mode = prim.mode;
      if (mode != kModeTriangles && mode != kModeTriangleStrip &&
          mode != kModeTriangleFan) {
        continue;  // points and lines cannot be hit
      }
      if (prim.position < 0) continue;
      const int pa = prim.position;
      if (pa < 0 || static_cast<std::size_t>(pa) >= m_.accessors.size()) {
        fail(path / "attributes" / "POSITION", "accessor does not exist");
      }
      // Built by appending: GCC 12 warns falsely (-Wrestrict) about
      // "(" + std::string.
      std::string where = "(";
      where += path.to_string();
      where += ')';
      auto [it, fresh] = first_vertex.try_emplace(
          pa, static_cast<std::uint32_t>(mesh.positions.size()));
      const std::uint64_t vertex_count =
          m_.accessors[static_cast<std::size_t>(pa)].count;
      if (fresh) {
        std::vector<glm::vec3> positions =
            read_positions(static_cast<std::size_t>(pa), "POSITION " + where);
        if (mesh.positions.size() + positions.size() >
            std::numeric_limits<std::uint32_t>::max()) {
          fail(path, "the mesh has more than 2^32 - 1 vertices");
        }
        if (mesh.positions.empty()) {
          mesh.positions = std::move(positions);  // the usual case: no copy
        } else {
          mesh.positions.insert(mesh.positions.end(), positions.begin(),
                                positions.end());
        }
      }
      const std::uint32_t base = it->second;

      std::vector<std::uint32_t> indices;
      const bool indexed = prim.indices >= 0;
      if (indexed &&
          static_cast<std::size_t>(prim.indices) >= m_.accessors.size()) {
        fail(path / "indices", "accessor does not exist");
      }
      // Charged before the indices are read: n indices make n / 3
      // triangles, or n - 2 in a strip or fan.
      const std::uint64_t corners =
          indexed ? m_.accessors[static_cast<std::size_t>(prim.indices)].count
                  : vertex_count;
      const std::uint64_t triangles =
          mode == kModeTriangles ? corners / 3 : (corners < 3 ? 0 : corners - 2);
      if (auto over = budget_.take_triangles(triangles)) fail(path, *over);
      if (indexed) {
        indices = read_indices(static_cast<std::size_t>(prim.indices),
                               "indices " + where);
        for (std::size_t i = 0; i < indices.size(); ++i) {
          if (indices[i] >= vertex_count) {
            fail(accessor_path(static_cast<std::size_t>(prim.indices)),
                 "index " + std::to_string(indices[i]) + " (element " +
                     std::to_string(i) + ") is past the " +
                     plural(vertex_count, "vertex", "vertices") + " of POSITION " + where);
          }
        }
      } else {
        indices.resize(static_cast<std::size_t>(vertex_count));
        for (std::size_t i = 0; i < indices.size(); ++i) {
          indices[i] = static_cast<std::uint32_t>(i);
        }
      }
      const std::size_t n = indices.size();
      const std::string what = indexed ? "indices" : "vertices";
      if (mode == kModeTriangles && n % 3 != 0) {
        fail(path, (indexed ? plural(n, "index", "indices") : plural(n, "vertex", "vertices")) +
                       " do not make whole triangles (mode 4, triangles, "
                       "needs a multiple of 3)");
      }
      if (mode != kModeTriangles && n < 3) {
        fail(path, std::string("mode ") + std::to_string(mode) + " (" +
                       mode_name(mode) + ") needs at least 3 " + what +
                       ", got " + std::to_string(n));
      }
      // glTF 2.0, "Topology Types": strip triangle i is
      // {v_i, v_{i+(1+i%2)}, v_{i+(2-i%2)}}, fan triangle i is
      // {v_{i+1}, v_{i+2}, v_0}. Degenerate ones are kept: triangle ids stay
      // positional.
      const auto v = [&](std::size_t i) { return base + indices[i]; };
      if (mode == kModeTriangles) {
        for (std::size_t i = 0; i + 2 < n; i += 3) {
          mesh.triangles.emplace_back(v(i), v(i + 1), v(i + 2));
        }
      } else if (mode == kModeTriangleStrip) {
        for (std::size_t i = 0; i + 2 < n; ++i) {
          mesh.triangles.emplace_back(v(i), v(i + 1 + i % 2), v(i + 2 - i % 2));
        }
      } else {
        for (std::size_t i = 0; i + 2 < n; ++i) {
          mesh.triangles.emplace_back(v(i + 1), v(i + 2), v(0));
        }
      }
    }
    return mesh;
  }

  const gltf::Model& m_;
  const GltfCameras* cameras_ = nullptr;
  bool quantized_;
  detail::Budget& budget_;
  std::uint64_t max_objects_;
  std::vector<std::int64_t> mesh_slot_;
  std::vector<glm::dmat4> local_;
  std::vector<bool> reaches_;            // by node: a mesh or camera below
  std::vector<std::size_t> post_order_;  // nodes, children before parents
  JsonPath scene_path_;
  Scene scene_;
};

// ---------------------------------------------------------------------------
// The loader

using detail::fail_result;

std::string ascii_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

LoadResult load_gltf_unguarded(const std::string& path,
                               const LoadOptions& options,
                               detail::Budget& budget) {
  LoadError read_error;
  const std::optional<std::string> data =
      detail::read_file(path, budget, read_error);
  if (!data) {
    LoadResult failed;
    failed.error = std::move(read_error);
    return failed;
  }

  Container container;
  if (data->size() >= 4 && data->compare(0, 4, "glTF") == 0) {
    if (std::optional<std::string> problem = split_glb(*data, container)) {
      return fail_result(LoadError::Kind::kMalformed, path, 0,
                         std::move(*problem));
    }
  } else if (ascii_lower(fs::path(path).extension().string()) == ".glb") {
    return fail_result(LoadError::Kind::kMalformed, path, 0,
                       "not a GLB file (it does not start with 'glTF')");
  } else {
    container.json = *data;
  }

  detail::JsonParse parsed = detail::parse_json(container.json);
  detail::JsonGuard parsed_guard(parsed.value);
  if (!parsed.value) {
    // A GLB's JSON chunk has lines of its own, not the file's.
    if (container.glb) {
      return fail_result(LoadError::Kind::kMalformed, path, 0,
                         "JSON chunk, line " + std::to_string(parsed.line) +
                             ": " + parsed.error);
    }
    return fail_result(LoadError::Kind::kMalformed, path, parsed.line,
                       parsed.error);
  }

  LoadResult result;
  try {
    DocumentChecker checker(container, path, options.root, budget);
    Checked checked = checker.check(*parsed.value);
    detail::JsonGuard checked_guard(checked.reduced);
    const GltfCameras cameras = read_cameras(*parsed.value);
    detail::dismantle(*parsed.value);  // the reduced copy is all that is
    parsed.value.reset();              // needed now
    result.warnings = checked.warnings;
    const gltf::Model model = build_model(checked, container);
    SceneBuilder builder(model, checked.quantized, budget);
    builder.set_cameras(&cameras);
    Scene scene = builder.build();
    // Last safety net: what the engine relies on, checked by core itself.
    if (std::string problem = validate_scene(scene); !problem.empty()) {
      return fail_result(LoadError::Kind::kMalformed, path, 0,
                         std::move(problem));
    }
    result.scene = std::move(scene);
  } catch (const JsonError& e) {
    const std::size_t line =
        container.glb ? 0 : detail::line_of_path(container.json, e.where());
    result.error = LoadError{
        e.io ? LoadError::Kind::kIo : LoadError::Kind::kMalformed, path, line,
        e.to_string()};
  }
  return result;
}

}  // namespace

LoadResult detail::load_gltf(const std::string& path,
                             const LoadOptions& options, Budget& budget) {
  return guarded_load(
      path, [&] { return load_gltf_unguarded(path, options, budget); });
}

}  // namespace raypick
