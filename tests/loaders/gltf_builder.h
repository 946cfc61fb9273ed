// Writes small glTF 2.0 files at test time: one binary buffer built up
// view by view, and the JSON around it, saved as a .gltf with a base64 data
// URI or an external .bin, or as a .glb.
#pragma once

#include <doctest/doctest.h>
#include <glm/vec3.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace raypick::test {

using Json = nlohmann::json;

inline std::string base64(const std::string& bytes) {
  static constexpr char kChars[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const auto a = static_cast<unsigned char>(bytes[i]);
    const auto b = static_cast<unsigned char>(bytes[i + 1]);
    const auto c = static_cast<unsigned char>(bytes[i + 2]);
    out += kChars[a >> 2];
    out += kChars[((a & 3) << 4) | (b >> 4)];
    out += kChars[((b & 15) << 2) | (c >> 6)];
    out += kChars[c & 63];
  }
  if (i + 1 == bytes.size()) {
    const auto a = static_cast<unsigned char>(bytes[i]);
    out += kChars[a >> 2];
    out += kChars[(a & 3) << 4];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const auto a = static_cast<unsigned char>(bytes[i]);
    const auto b = static_cast<unsigned char>(bytes[i + 1]);
    out += kChars[a >> 2];
    out += kChars[((a & 3) << 4) | (b >> 4)];
    out += kChars[(b & 15) << 2];
    out += '=';
  }
  return out;
}

template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

inline void put_u32(std::string& s, std::uint32_t v) {
  for (int k = 0; k < 4; ++k) s += static_cast<char>((v >> (8 * k)) & 0xFF);
}

// GLB bytes: header, JSON chunk (space-padded), BIN chunk (zero-padded,
// omitted when `bin` is empty).
inline std::string make_glb(std::string json, std::string bin) {
  while (json.size() % 4 != 0) json += ' ';
  while (bin.size() % 4 != 0) bin += '\0';
  const std::size_t total =
      12 + 8 + json.size() + (bin.empty() ? 0 : 8 + bin.size());
  std::string out = "glTF";
  put_u32(out, 2);
  put_u32(out, static_cast<std::uint32_t>(total));
  put_u32(out, static_cast<std::uint32_t>(json.size()));
  put_u32(out, 0x4E4F534A);
  out += json;
  if (!bin.empty()) {
    put_u32(out, static_cast<std::uint32_t>(bin.size()));
    put_u32(out, 0x004E4942);
    out += bin;
  }
  return out;
}

class GltfBuilder {
 public:
  GltfBuilder() {
    doc["asset"] = {{"version", "2.0"}};
  }

  Json doc;
  std::string bin;  // buffer 0

  // Appends `bytes` (4-byte aligned) as a new buffer view; returns its index.
  int add_view(const std::string& bytes, int stride = 0) {
    while (bin.size() % 4 != 0) bin += '\0';
    Json view{{"buffer", 0},
              {"byteOffset", bin.size()},
              {"byteLength", bytes.size()}};
    if (stride != 0) view["byteStride"] = stride;
    bin += bytes;
    doc["bufferViews"].push_back(view);
    return static_cast<int>(doc["bufferViews"].size() - 1);
  }

  int add_accessor(Json accessor) {
    doc["accessors"].push_back(std::move(accessor));
    return static_cast<int>(doc["accessors"].size() - 1);
  }

  // A tightly packed float VEC3 accessor in a view of its own.
  int add_positions(const std::vector<glm::vec3>& points) {
    std::vector<float> flat;
    for (const glm::vec3& p : points) {
      flat.insert(flat.end(), {p.x, p.y, p.z});
    }
    const int view = add_view(bytes_of(flat));
    return add_accessor({{"bufferView", view},
                         {"componentType", 5126},
                         {"count", points.size()},
                         {"type", "VEC3"}});
  }

  // A SCALAR index accessor of component type `ctype` (5121, 5123, 5125).
  int add_indices(const std::vector<std::uint32_t>& indices, int ctype = 5125) {
    std::string bytes;
    for (const std::uint32_t i : indices) {
      if (ctype == 5121) {
        bytes += static_cast<char>(i);
      } else if (ctype == 5123) {
        bytes += bytes_of(std::vector<std::uint16_t>{static_cast<std::uint16_t>(i)});
      } else {
        bytes += bytes_of(std::vector<std::uint32_t>{i});
      }
    }
    const int view = add_view(bytes);
    return add_accessor({{"bufferView", view},
                         {"componentType", ctype},
                         {"count", indices.size()},
                         {"type", "SCALAR"}});
  }

  int add_mesh(Json primitives) {
    doc["meshes"].push_back(Json{{"primitives", std::move(primitives)}});
    return static_cast<int>(doc["meshes"].size() - 1);
  }

  int add_node(Json node) {
    doc["nodes"].push_back(std::move(node));
    return static_cast<int>(doc["nodes"].size() - 1);
  }

  // The document with buffer 0 as a base64 data URI, pretty-printed with
  // `indent` spaces (-1: on one line).
  std::string gltf_embedded(int indent = 2) const {
    Json d = doc;
    if (!bin.empty()) {
      d["buffers"] = Json::array(
          {Json{{"byteLength", bin.size()},
                {"uri", "data:application/octet-stream;base64," + base64(bin)}}});
    }
    return d.dump(indent);
  }

  // The document with buffer 0 in the file `bin_name` (to be written next
  // to it).
  std::string gltf_external(const std::string& bin_name) const {
    Json d = doc;
    d["buffers"] = Json::array({Json{{"byteLength", bin.size()}, {"uri", bin_name}}});
    return d.dump(2);
  }

  std::string glb() const {
    Json d = doc;
    if (!bin.empty()) d["buffers"] = Json::array({Json{{"byteLength", bin.size()}}});
    return make_glb(d.dump(), bin);
  }
};

// A builder holding one unit right triangle mesh (mesh 0, positions
// accessor 0, u16 indices accessor 1), and nothing else.
inline GltfBuilder triangle_builder() {
  GltfBuilder b;
  const int pos = b.add_positions({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}});
  const int idx = b.add_indices({0, 1, 2}, 5123);
  b.add_mesh(Json::array({Json{{"attributes", {{"POSITION", pos}}}, {"indices", idx}}}));
  return b;
}

}  // namespace raypick::test
