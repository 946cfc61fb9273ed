#include "gltf_document.h"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <glm/ext/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <limits>
#include <system_error>
#include <utility>

#include "file_io.h"
#include "raypick/core/text.h"

namespace raypick::gltf {

namespace {

namespace fs = std::filesystem;
using detail::fail;
using detail::find_member;
using detail::Json;
using detail::JsonError;
using detail::JsonPath;

// Array indices fit an int.
constexpr std::uint64_t kMaxInt = std::numeric_limits<std::int32_t>::max();
// Byte offsets, lengths and counts are capped at 2^53 (beyond it JSON
// numbers are not exact anyway), so stride * count + offset never wraps.
constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 53;

constexpr std::array<AccessorType, 7> kAccessorTypes{{
    {"SCALAR", 1, 1},
    {"VEC2", 2, 1},
    {"VEC3", 3, 1},
    {"VEC4", 4, 1},
    {"MAT2", 2, 2},
    {"MAT3", 3, 3},
    {"MAT4", 4, 4},
}};

// Bytes of one element. Matrix columns start on 4-byte boundaries (glTF
// 2.0, "Data Alignment"), which pads MAT2/MAT3 of bytes and MAT3 of shorts.
std::size_t element_size(const AccessorType& type, int component_type) {
  const std::size_t column = type.rows * component_size(component_type);
  if (type.columns == 1) return column;
  return type.columns * ((column + 3) / 4 * 4);
}

// Required extensions that change geometry in ways raypick does not read.
constexpr std::array<std::string_view, 3> kUnreadableExtensions{
    "KHR_draco_mesh_compression", "EXT_meshopt_compression", "EXT_mesh_gpu_instancing"};

// Prefixes of extensions that only touch what picking never reads.
constexpr std::array<std::string_view, 6> kHarmlessPrefixes{"KHR_materials_", "KHR_texture_",
                                                            "KHR_lights_",    "EXT_texture_",
                                                            "KHR_technique",  "MSFT_texture_"};

std::uint32_t read_u32le(std::string_view bytes, std::size_t at) {
  const auto b = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + k]));
  };
  return b(0) | (b(1) << 8) | (b(2) << 16) | (b(3) << 24);
}

constexpr std::uint32_t kChunkJson = 0x4E4F534A;  // "JSON"
constexpr std::uint32_t kChunkBin = 0x004E4942;   // "BIN\0"

// Takes a GLB apart: a 12-byte header (magic, version 2, total length), a
// JSON chunk, then chunks of which the first BIN one holds the binary
// buffer; chunks of other types are skipped, as the specification asks.
// Bytes past the header's length are ignored. Returns the problem, if any.
std::optional<std::string> split_glb(std::string_view data, Container& out) {
  if (data.size() < 12) {
    return "GLB header is truncated (" + plural(data.size(), "byte") + ", 12 needed)";
  }
  const std::uint32_t version = read_u32le(data, 4);
  if (version != 2) {
    return "GLB version " + std::to_string(version) + " (raypick reads version 2)";
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
      return "GLB chunk header at byte " + std::to_string(at) + " is truncated";
    }
    const std::uint32_t chunk_length = read_u32le(glb, at);
    const std::uint32_t chunk_type = read_u32le(glb, at + 4);
    if (chunk_length > glb.size() - at - 8) {
      return "GLB chunk at byte " + std::to_string(at) + " says " + plural(chunk_length, "byte") +
             ", past the end of the file";
    }
    const std::string_view payload = glb.substr(at + 8, chunk_length);
    if (first) {
      if (chunk_type != kChunkJson) return "the first GLB chunk is not JSON";
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
  if (colon != std::string::npos && colon > 0 && uri.find('/') > colon) {
    bool scheme = std::isalpha(static_cast<unsigned char>(uri[0])) != 0;
    for (std::size_t i = 1; i < colon && scheme; ++i) {
      const char c = uri[i];
      scheme = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
    }
    if (scheme) {
      fail(path, "'" + printable(uri, 60) + "' is not a relative file reference or a data: URI");
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
      fail(path, "malformed percent-encoding at character " + std::to_string(i) + " of the uri");
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (out.empty()) fail(path, "the uri is empty");
  if (out.find('\0') != std::string::npos) fail(path, "the uri holds a NUL");
  return out;
}

// 0..63 for a base64 character, -1 for any other.
int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  return c == '/' ? 63 : -1;
}

// The first `length` bytes of a base64 data URI, which must hold at least
// that many; what follows them is ignored.
std::string decode_data_uri(const std::string& uri, std::uint64_t length, const JsonPath& path) {
  const std::size_t comma = uri.find(',');
  const std::string header = uri.substr(0, comma);
  constexpr std::string_view kBase64 = ";base64";
  if (comma == std::string::npos || header.size() < kBase64.size() ||
      header.compare(header.size() - kBase64.size(), kBase64.size(), kBase64) != 0) {
    fail(path, "only base64 data URIs are supported");
  }
  const std::string mime = header.substr(
      5, header.find(';') == std::string::npos ? std::string::npos : header.find(';') - 5);
  if (mime != "application/octet-stream" && mime != "application/gltf-buffer") {
    fail(path, "data URI of type '" + printable(mime, 60) +
                   "' (expected application/octet-stream or "
                   "application/gltf-buffer)");
  }
  const std::string_view payload = std::string_view(uri).substr(comma + 1);
  std::size_t chars = 0;
  while (chars < payload.size() && base64_value(payload[chars]) >= 0) ++chars;
  for (std::size_t i = chars; i < payload.size(); ++i) {
    if (payload[i] != '=' || i - chars >= 2) {
      fail(path, "data URI has a character that is not base64 at position " +
                     std::to_string(comma + 1 + i));
    }
  }
  if (chars % 4 == 1) fail(path, "data URI is not valid base64 (bad length)");
  const std::uint64_t decoded = chars / 4 * 3 + (chars % 4 ? chars % 4 - 1 : 0);
  if (decoded < length) {
    fail(path, "the data URI holds " + plural(decoded, "byte") + ", byteLength says " +
                   std::to_string(length));
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(length));
  std::uint32_t bits = 0;
  int count = 0;
  for (std::size_t i = 0; out.size() < length; ++i) {
    bits = (bits << 6) | static_cast<std::uint32_t>(base64_value(payload[i]));
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += static_cast<char>((bits >> count) & 0xFF);
    }
  }
  return out;
}

// A buffer that lives in a file, resolved and measured; read last.
struct BufferFile {
  std::size_t buffer;
  std::string path;
};

class Reader {
 public:
  Reader(const Container& container, const std::string& scene_file, const std::string& root,
         detail::Budget& budget)
      : container_(container), scene_file_(scene_file), root_(root), budget_(budget) {}

  Document read(const Json& doc) {
    detail::require_object(doc, JsonPath());
    read_asset(doc);
    read_extensions(doc);
    read_buffers(doc);
    read_views(doc);
    read_accessors(doc);
    read_meshes(doc);
    read_nodes(doc);
    read_scenes(doc);
    read_cameras(doc);
    // Last, so that a broken document is reported as such before a file it
    // names is looked for.
    load_buffers(doc);
    return std::move(out_);
  }

 private:
  // The array `key` of the document (empty when absent).
  static const Json& top_array(const Json& doc, const char* key) {
    static const Json kEmpty = Json::array();
    const Json* v = find_member(doc, key);
    if (v == nullptr) return kEmpty;
    detail::require_array(*v, JsonPath() / key);
    if (v->size() > kMaxInt) fail(JsonPath() / key, "too many elements");
    return *v;
  }

  // Calls read(element, its path, its index) for each element of the
  // top-level array `key`, which must be an object.
  template <class Read>
  static void each_object(const Json& doc, const char* key, Read read) {
    const Json& list = top_array(doc, key);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const JsonPath p = (JsonPath() / key)[i];
      read(detail::require_object(list[i], p), p, i);
    }
  }

  // An index into the top-level array `array` of `count` elements.
  static std::size_t index(const Json& v, const JsonPath& path, const char* array,
                           std::size_t count) {
    const std::uint64_t i = detail::require_uint(v, path, kMaxInt);
    if (i >= count) {
      fail(path, std::string(array) + "[" + std::to_string(i) + "] does not exist (" +
                     plural(count, "element") + ")");
    }
    return static_cast<std::size_t>(i);
  }

  static std::uint64_t uint_member(const Json& obj, const JsonPath& path, const char* key,
                                   std::uint64_t fallback, std::uint64_t max,
                                   bool required = false) {
    const Json* v = find_member(obj, key);
    if (v == nullptr) {
      if (required) fail(path, std::string("missing '") + key + "'");
      return fallback;
    }
    return detail::require_uint(*v, path / key, max);
  }

  static const Json& required(const Json& obj, const JsonPath& path, const char* key) {
    const Json* v = find_member(obj, key);
    if (v == nullptr) fail(path, std::string("missing '") + key + "'");
    return *v;
  }

  void read_asset(const Json& doc) {
    const JsonPath path = JsonPath() / "asset";
    const Json* asset = find_member(doc, "asset");
    if (asset == nullptr) {
      fail(JsonPath(), "missing 'asset' (not a glTF document?)");
    }
    detail::require_object(*asset, path);
    const std::string v =
        detail::require_string(required(*asset, path, "version"), path / "version");
    if (v.rfind("2.", 0) != 0) {
      fail(path / "version", "glTF version '" + printable(v, 20) + "' (raypick reads glTF 2.0)");
    }
  }

  void read_extensions(const Json& doc) {
    for (const char* key : {"extensionsUsed", "extensionsRequired"}) {
      const Json& list = top_array(doc, key);
      const bool is_required = std::string_view(key) == "extensionsRequired";
      const JsonPath path = JsonPath() / key;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string name = detail::require_string(list[i], path[i]);
        if (name == "KHR_mesh_quantization") out_.quantized = true;
        if (!is_required || name == "KHR_mesh_quantization") continue;
        for (const std::string_view bad : kUnreadableExtensions) {
          if (name == bad) {
            fail(path[i],
                 "the file requires " + printable(name, 60) + ", which raypick cannot read");
          }
        }
        bool harmless = false;
        for (const std::string_view prefix : kHarmlessPrefixes) {
          harmless = harmless || name.rfind(prefix, 0) == 0;
        }
        if (!harmless) {
          out_.warnings.push_back("the file requires extension '" + printable(name, 60) +
                                  "', unknown to raypick; geometry is read "
                                  "without it");
        }
      }
    }
  }

  void read_buffers(const Json& doc) {
    each_object(doc, "buffers", [&](const Json& b, const JsonPath& p, std::size_t) {
      const std::uint64_t length = uint_member(b, p, "byteLength", 0, kMaxBytes, true);
      if (length == 0) fail(p / "byteLength", "byteLength must be at least 1");
      if (const Json* uri = find_member(b, "uri")) {
        detail::require_string(*uri, p / "uri");
      }
      buffer_lengths_.push_back(length);
    });
  }

  void read_views(const Json& doc) {
    each_object(doc, "bufferViews", [&](const Json& v, const JsonPath& p, std::size_t) {
      View view;
      view.buffer =
          index(required(v, p, "buffer"), p / "buffer", "buffers", buffer_lengths_.size());
      view.offset = uint_member(v, p, "byteOffset", 0, kMaxBytes);
      view.length = uint_member(v, p, "byteLength", 0, kMaxBytes, true);
      if (view.length == 0) {
        fail(p / "byteLength", "byteLength must be at least 1");
      }
      view.stride = uint_member(v, p, "byteStride", 0, 252);
      if (find_member(v, "byteStride") != nullptr && (view.stride < 4 || view.stride % 4 != 0)) {
        fail(p / "byteStride",
             "byteStride " + std::to_string(view.stride) + " is not a multiple of 4 in 4..252");
      }
      const std::uint64_t buffer_length = buffer_lengths_[view.buffer];
      if (view.offset + view.length > buffer_length) {
        fail(p, "bytes " + std::to_string(view.offset) + ".." +
                    std::to_string(view.offset + view.length) + " are out of range of buffers[" +
                    std::to_string(view.buffer) + "] (" + plural(buffer_length, "byte") + ")");
      }
      out_.views.push_back(view);
    });
  }

  static int component_type(const Json& obj, const JsonPath& p) {
    const std::uint64_t t = uint_member(obj, p, "componentType", 0, kMaxInt, true);
    if (component_size(static_cast<int>(t)) == 0) {
      fail(p / "componentType", "componentType " + std::to_string(t) +
                                    " is not one of 5120, 5121, 5122, 5123, 5125, 5126");
    }
    return static_cast<int>(t);
  }

  // Checks that `count` elements of `size` bytes, `stride` apart, starting
  // `offset` bytes into bufferViews[view], stay inside it.
  void check_range(const JsonPath& p, std::size_t view, std::uint64_t offset, std::uint64_t stride,
                   std::uint64_t count, std::uint64_t size) const {
    const std::uint64_t end = offset + stride * (count - 1) + size;
    const std::uint64_t length = out_.views[view].length;
    if (end > length) {
      fail(p, plural(count, "element") + " from byte " + std::to_string(offset) + " end at byte " +
                  std::to_string(end) + ", out of range of bufferViews[" + std::to_string(view) +
                  "] (" + plural(length, "byte") + ")");
    }
  }

  void read_accessors(const Json& doc) {
    each_object(doc, "accessors", [&](const Json& a, const JsonPath& p, std::size_t) {
      Accessor acc;
      acc.component_type = component_type(a, p);
      const int ctype = acc.component_type;
      acc.count = uint_member(a, p, "count", 0, kMaxBytes, true);
      if (acc.count == 0) fail(p / "count", "count must be at least 1");
      const std::string type_name = detail::require_string(required(a, p, "type"), p / "type");
      for (const AccessorType& t : kAccessorTypes) {
        if (type_name == t.name) acc.type = &t;
      }
      if (acc.type == nullptr) {
        fail(p / "type", "unknown accessor type '" + printable(type_name, 20) +
                             "' (expected SCALAR, VEC2, VEC3, VEC4, MAT2, "
                             "MAT3 or MAT4)");
      }
      const std::uint64_t elem = element_size(*acc.type, ctype);
      acc.offset = uint_member(a, p, "byteOffset", 0, kMaxBytes);
      if (const Json* n = find_member(a, "normalized")) {
        acc.normalized = detail::require_bool(*n, p / "normalized");
      }
      // glTF 2.0 forbids it (glTF-Validator agrees); a reader that mapped a
      // float to [0, 1] would read other geometry than one that ignored it.
      if (acc.normalized && (ctype == kFloat || ctype == kUnsignedInt)) {
        fail(p / "normalized", std::string("normalized is true on ") + component_name(ctype) +
                                   " components (glTF allows it on byte and "
                                   "short types only)");
      }
      if (const Json* view_json = find_member(a, "bufferView")) {
        const std::size_t v = index(*view_json, p / "bufferView", "bufferViews", out_.views.size());
        const View& view = out_.views[v];
        const std::uint64_t stride = view.stride != 0 ? view.stride : elem;
        // glTF 2.0, "Data Alignment": elements may not overlap, and each
        // component starts at a multiple of its size within the buffer.
        if (stride < elem) {
          fail(p, "bufferViews[" + std::to_string(v) + "] has byteStride " +
                      std::to_string(stride) + ", less than the accessor's element (" +
                      plural(elem, "byte") + "): elements would overlap");
        }
        const std::uint64_t csize = component_size(ctype);
        if ((acc.offset + view.offset) % csize != 0) {
          fail(p / "byteOffset",
               "byteOffset " + std::to_string(acc.offset) + " plus bufferViews[" +
                   std::to_string(v) + "].byteOffset " + std::to_string(view.offset) +
                   " is not a multiple of the component size (" + plural(csize, "byte") + ")");
        }
        check_range(p, v, acc.offset, stride, acc.count, elem);
        acc.view = v;
      }
      if (const Json* sparse = find_member(a, "sparse")) {
        acc.sparse = read_sparse(*sparse, p / "sparse", acc.count, elem);
      }
      out_.accessors.push_back(acc);
    });
  }

  Sparse read_sparse(const Json& sparse, const JsonPath& p, std::uint64_t accessor_count,
                     std::uint64_t elem) const {
    detail::require_object(sparse, p);
    Sparse out;
    out.count = uint_member(sparse, p, "count", 0, kMaxInt, true);
    if (out.count == 0 || out.count > accessor_count) {
      fail(p / "count", "sparse count " + std::to_string(out.count) + " is not in 1.." +
                            std::to_string(accessor_count));
    }
    for (const char* part : {"indices", "values"}) {
      const JsonPath pp = p / part;
      const Json& obj = detail::require_object(required(sparse, p, part), pp);
      SparsePart& r = std::string_view(part) == "indices" ? out.indices : out.values;
      r.view = index(required(obj, pp, "bufferView"), pp / "bufferView", "bufferViews",
                     out_.views.size());
      r.offset = uint_member(obj, pp, "byteOffset", 0, kMaxInt);
      std::uint64_t size = elem;
      if (&r == &out.indices) {
        r.component_type = component_type(obj, pp);
        const int ctype = r.component_type;
        if (ctype != kUnsignedByte && ctype != kUnsignedShort && ctype != kUnsignedInt) {
          fail(pp / "componentType", std::string("sparse indices must be unsigned byte, short or "
                                                 "int, not ") +
                                         component_name(ctype));
        }
        size = component_size(ctype);
      }
      // Sparse data is tightly packed whatever the view's byteStride says.
      check_range(pp, r.view, r.offset, size, out.count, size);
    }
    return out;
  }

  void read_meshes(const Json& doc) {
    const std::size_t accessors = out_.accessors.size();
    each_object(doc, "meshes", [&](const Json& m, const JsonPath& p, std::size_t) {
      const Json& prims = detail::require_array(required(m, p, "primitives"), p / "primitives");
      std::vector<Primitive>& mesh = out_.meshes.emplace_back();
      for (std::size_t k = 0; k < prims.size(); ++k) {
        const JsonPath pp = (p / "primitives")[k];
        const Json& prim = detail::require_object(prims[k], pp);
        const Json& attrs =
            detail::require_object(required(prim, pp, "attributes"), pp / "attributes");
        Primitive r;
        if (const Json* pos = find_member(attrs, "POSITION")) {
          r.position =
              static_cast<int>(index(*pos, pp / "attributes" / "POSITION", "accessors", accessors));
        }
        if (const Json* ind = find_member(prim, "indices")) {
          r.indices = static_cast<int>(index(*ind, pp / "indices", "accessors", accessors));
        }
        const std::uint64_t mode = uint_member(prim, pp, "mode", kModeTriangles, kMaxInt);
        if (mode > 6) {
          fail(pp / "mode", "mode " + std::to_string(mode) + " is not a primitive mode (0..6)");
        }
        r.mode = static_cast<int>(mode);
        mesh.push_back(r);
      }
    });
  }

  void read_nodes(const Json& doc) {
    out_.nodes.resize(top_array(doc, "nodes").size());
    each_object(doc, "nodes", [&](const Json& n, const JsonPath& p, std::size_t i) {
      Node& node = out_.nodes[i];
      if (const Json* name = find_member(n, "name")) {
        node.name = detail::require_string(*name, p / "name");
      }
      if (const Json* mesh = find_member(n, "mesh")) {
        node.mesh = static_cast<int>(index(*mesh, p / "mesh", "meshes", out_.meshes.size()));
      }
      if (const Json* children = find_member(n, "children")) {
        detail::require_array(*children, p / "children");
        for (std::size_t k = 0; k < children->size(); ++k) {
          node.children.push_back(
              index((*children)[k], (p / "children")[k], "nodes", out_.nodes.size()));
        }
      }
      // T * R * S, each part when present. In double, so that a deep chain
      // rounds once, when the world matrix is stored.
      bool trs = false;
      glm::dmat4 t{1.0}, r{1.0}, s{1.0};
      for (const auto& [key, size] :
           {std::pair<const char*, std::size_t>{"translation", 3}, {"rotation", 4}, {"scale", 3}}) {
        const Json* v = find_member(n, key);
        if (v == nullptr) continue;
        trs = true;
        const std::vector<double> x = detail::require_floats(*v, p / key, size);
        if (size == 4) {
          if (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3] == 0.0) {
            fail(p / key, "rotation is a zero quaternion");
          }
          // glTF stores x, y, z, w; glm's constructor takes w first. glTF
          // asks for a unit quaternion; exporters round, so normalize.
          r = glm::mat4_cast(glm::normalize(glm::dquat{x[3], x[0], x[1], x[2]}));
        } else if (std::string_view(key) == "translation") {
          t = glm::translate(glm::dmat4{1.0}, glm::dvec3{x[0], x[1], x[2]});
        } else {
          s = glm::scale(glm::dmat4{1.0}, glm::dvec3{x[0], x[1], x[2]});
        }
      }
      node.local = t * r * s;
      if (const Json* matrix = find_member(n, "matrix")) {
        if (trs) {
          fail(p,
               "has both 'matrix' and translation/rotation/scale (glTF "
               "allows one or the other)");
        }
        const std::vector<double> m = detail::require_floats(*matrix, p / "matrix", 16);
        // Column-major: elements 3, 7, 11 and 15 are the last row. glTF
        // requires a TRS-decomposable matrix; raypick needs it affine (it
        // takes shear), and forgives rounding in the last row, which it
        // then makes exact.
        constexpr double kTol = 1e-6;
        if (std::fabs(m[3]) > kTol || std::fabs(m[7]) > kTol || std::fabs(m[11]) > kTol ||
            std::fabs(m[15] - 1.0) > kTol) {
          fail(p / "matrix",
               "matrix is not affine (its last row, elements 3, 7, 11 and "
               "15, must be 0 0 0 1)");
        }
        for (int c = 0; c < 4; ++c) {
          for (int row = 0; row < 3; ++row) node.local[c][row] = m[4 * c + row];
        }
      }
    });
  }

  void read_scenes(const Json& doc) {
    each_object(doc, "scenes", [&](const Json& s, const JsonPath& p, std::size_t) {
      std::vector<std::size_t>& roots = out_.scenes.emplace_back();
      if (const Json* nodes = find_member(s, "nodes")) {
        detail::require_array(*nodes, p / "nodes");
        for (std::size_t k = 0; k < nodes->size(); ++k) {
          roots.push_back(index((*nodes)[k], (p / "nodes")[k], "nodes", out_.nodes.size()));
        }
      }
    });
    if (const Json* scene = find_member(doc, "scene")) {
      out_.scene = index(*scene, JsonPath() / "scene", "scenes", out_.scenes.size());
    }
  }

  // Leniently (issue 12): picking does not need cameras, so one that cannot
  // be used (not an object, an unknown type, a yfov outside (0, pi), a ymag
  // not > 0 and finite) is left out, and a node's "camera" that is not a
  // valid index is ignored, rather than failing the scene.
  void read_cameras(const Json& doc) {
    const auto number = [](const Json& o, const char* key) {
      const auto it = o.find(key);
      return it != o.end() && it->is_number() ? it->get<double>() : std::nan("");
    };
    static const Json kNone = Json::array();
    const Json* cams = find_member(doc, "cameras");
    for (const Json& cam : cams && cams->is_array() ? *cams : kNone) {
      std::optional<SceneCamera>& slot = out_.cameras.emplace_back();
      const Json* type = find_member(cam, "type");
      if (type == nullptr || !type->is_string()) continue;
      SceneCamera c;
      if (const Json* name = find_member(cam, "name"); name && name->is_string()) {
        c.camera_name = name->get<std::string>();
      }
      const Json* params = find_member(cam, type->get<std::string>());
      if (params == nullptr || !params->is_object()) continue;
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
    for (std::size_t i = 0; i < out_.nodes.size(); ++i) {
      const Json* cam = find_member(doc["nodes"][i], "camera");
      if (cam == nullptr || !cam->is_number_unsigned()) continue;
      const auto k = cam->get<std::uint64_t>();
      if (k < out_.cameras.size() && out_.cameras[k]) {
        out_.nodes[i].camera = static_cast<int>(k);
      }
    }
  }

  // Where each buffer's bytes come from: the GLB BIN chunk, a base64 data
  // URI, or a file next to the scene (which must exist and be long enough,
  // and is read once all have been resolved).
  void load_buffers(const Json& doc) {
    const Json& buffers = top_array(doc, "buffers");
    out_.owned.resize(buffers.size());
    out_.buffers.resize(buffers.size());
    std::vector<BufferFile> files;
    for (std::size_t i = 0; i < buffers.size(); ++i) {
      const JsonPath p = (JsonPath() / "buffers")[i];
      const std::uint64_t length = buffer_lengths_[i];
      const Json* uri = find_member(buffers[i], "uri");
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
          fail(p / "byteLength", "byteLength " + std::to_string(length) +
                                     " is larger than the GLB BIN chunk (" +
                                     plural(container_.bin->size(), "byte") + ")");
        }
        out_.buffers[i] = container_.bin->substr(0, length);
        continue;
      }
      const std::string& text = uri->get_ref<const std::string&>();
      if (text.rfind("data:", 0) == 0) {
        out_.owned[i] = decode_data_uri(text, length, p / "uri");
        out_.buffers[i] = out_.owned[i];
      } else {
        files.push_back({i, resolve_file(text, length, p)});
      }
    }
    for (const BufferFile& file : files) {
      std::string& bytes = out_.owned[file.buffer];
      bytes = read_buffer_file(file.path, buffer_lengths_[file.buffer],
                               (JsonPath() / "buffers")[file.buffer] / "uri");
      out_.buffers[file.buffer] = bytes;
    }
  }

  // The path of a buffer file, checked to lie inside the root, to exist and
  // to be long enough; its bytes are charged to the budget.
  std::string resolve_file(const std::string& uri, std::uint64_t length, const JsonPath& p) {
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
      throw JsonError{p / "uri", "cannot open buffer file '" + file.string() + "': " + why,
                      std::nullopt, /*io=*/true};
    }
    const std::uintmax_t size = fs::file_size(file, ec);
    if (ec) {
      fail(p / "uri", "cannot read buffer file '" + file.string() + "': " + ec.message());
    }
    if (size < length) {
      fail(p, "buffer file '" + file.string() + "' has " + plural(size, "byte") +
                  ", byteLength says " + std::to_string(length));
    }
    if (auto over = budget_.take(detail::Budget::kBytes, length)) {
      fail(p / "uri", *over);
    }
    return file.string();
  }

  // The first `length` bytes of a file resolve_file() measured.
  static std::string read_buffer_file(const std::string& path, std::uint64_t length,
                                      const JsonPath& where) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    std::string out;
    if (f != nullptr) {
      out.resize(static_cast<std::size_t>(length));
      out.resize(std::fread(out.data(), 1, out.size(), f));
      std::fclose(f);
    }
    if (out.size() != length) {
      throw JsonError{where, "cannot read buffer file '" + printable(path, 200) + "'", std::nullopt,
                      /*io=*/true};
    }
    return out;
  }

  const Container& container_;
  const std::string& scene_file_;
  const std::string& root_;
  detail::Budget& budget_;
  Document out_;
  std::vector<std::uint64_t> buffer_lengths_;
};

}  // namespace

namespace {

struct Component {
  int code;
  std::size_t size;
  const char* name;
};

constexpr Component kComponents[] = {{kByte, 1, "byte"},
                                     {kUnsignedByte, 1, "unsigned byte"},
                                     {kShort, 2, "short"},
                                     {kUnsignedShort, 2, "unsigned short"},
                                     {kUnsignedInt, 4, "unsigned int"},
                                     {kFloat, 4, "float"}};

const Component* component(int code) {
  for (const Component& c : kComponents) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

}  // namespace

std::size_t component_size(int component_type) {
  const Component* c = component(component_type);
  return c != nullptr ? c->size : 0;
}

const char* component_name(int component_type) {
  const Component* c = component(component_type);
  return c != nullptr ? c->name : "unknown";
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
  if (n == 1) return "1 " + std::string(one);
  return std::to_string(n) + " " + (many != nullptr ? std::string(many) : std::string(one) + "s");
}

Container open_container(std::string_view data, const std::string& path) {
  Container container;
  if (data.size() >= 4 && data.substr(0, 4) == "glTF") {
    if (std::optional<std::string> problem = split_glb(data, container)) {
      throw LoadError{LoadError::Kind::kMalformed, path, 0, std::move(*problem)};
    }
  } else if (detail::lower_extension(path) == ".glb") {
    throw LoadError{LoadError::Kind::kMalformed, path, 0,
                    "not a GLB file (it does not start with 'glTF')"};
  } else {
    container.json = data;
  }
  return container;
}

Document read_document(const detail::Json& doc, const Container& container,
                       const std::string& scene_file, const std::string& root,
                       detail::Budget& budget) {
  return Reader(container, scene_file, root, budget).read(doc);
}

}  // namespace raypick::gltf
