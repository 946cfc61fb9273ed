// The glTF 2.0 loader (.gltf and .glb), in one pass: the container is taken
// apart and the JSON parsed (gltf_document.cpp reads and checks the fields
// picking needs straight from nlohmann's tree, and loads the buffers), then
// this file walks the node graph and reads the accessors into the scene,
// refusing what only the data can show: cycles in the node graph, indices
// past the vertex count, index counts that do not fit the primitive mode,
// non-finite positions. Every read from a buffer is bounds-checked.
//
// Errors name the JSON path of the offending value ("accessors[3]: ...") and,
// for a .gltf file, the line it is on.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "budget.h"
#include "file_io.h"
#include "gltf_document.h"
#include "json_text.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

namespace raypick {
namespace {

using detail::fail;
using detail::JsonPath;
using namespace gltf;

JsonPath accessor_path(std::size_t a) { return (JsonPath() / "accessors")[a]; }
JsonPath node_path(std::size_t n) { return (JsonPath() / "nodes")[n]; }

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Reads one component as a float: the value itself, or, when `normalized`,
// the value mapped to [0, 1] or [-1, 1] as glTF 2.0's "Animations" section
// defines for normalized integers.
float read_component(const unsigned char* p, int component_type, bool normalized) {
  switch (component_type) {
    case kFloat:
      return load<float>(p);
    case kByte:
      return normalized ? std::max(load<std::int8_t>(p) / 127.0f, -1.0f) : load<std::int8_t>(p);
    case kUnsignedByte:
      return normalized ? *p / 255.0f : *p;
    case kShort:
      return normalized ? std::max(load<std::int16_t>(p) / 32767.0f, -1.0f) : load<std::int16_t>(p);
    case kUnsignedShort:
      return normalized ? load<std::uint16_t>(p) / 65535.0f : load<std::uint16_t>(p);
    default:
      return static_cast<float>(load<std::uint32_t>(p));
  }
}

std::uint32_t read_index(const unsigned char* p, int component_type) {
  if (component_type == kUnsignedByte) return *p;
  if (component_type == kUnsignedShort) return load<std::uint16_t>(p);
  return load<std::uint32_t>(p);
}

class SceneBuilder {
 public:
  SceneBuilder(const Document& doc, detail::Budget& budget)
      : d_(doc),
        budget_(budget),
        // Counts saturate one past the objects the budget has left (and
        // never wrap).
        max_objects_(
            std::min<std::uint64_t>(budget.left(detail::Budget::kObjects), std::uint64_t{1} << 62) +
            1),
        mesh_slot_(doc.meshes.size(), -1) {}

  Scene build() {
    const std::vector<std::size_t> roots = root_nodes();
    // Cycles first (their message names the cycle), then shared children.
    const std::uint64_t total = count_objects(roots);
    check_strict_trees();
    if (total == 0) fail(JsonPath(), "no objects in scene (no node with a mesh)");
    if (auto over = budget_.take(detail::Budget::kObjects, total)) {
      fail(JsonPath() / "nodes", *over);
    }
    scene_.objects.reserve(static_cast<std::size_t>(total));
    traverse(roots);
    return std::move(scene_);
  }

 private:
  // glTF 2.0 requires the node hierarchy to be disjoint strict trees: no
  // node is the child of two nodes (nor twice of one), and a scene lists
  // only root nodes, each once. Refuses the first node that breaks that,
  // naming both of its parents. Cycles are left to count_objects().
  void check_strict_trees() const {
    const std::size_t none = d_.nodes.size();
    std::vector<std::size_t> parent(d_.nodes.size(), none);
    for (std::size_t i = 0; i < d_.nodes.size(); ++i) {
      const std::vector<std::size_t>& children = d_.nodes[i].children;
      for (std::size_t k = 0; k < children.size(); ++k) {
        const std::size_t c = children[k];
        if (parent[c] == none) {
          parent[c] = i;
          continue;
        }
        if (parent[c] == i) {
          fail((node_path(i) / "children")[k],
               "node " + std::to_string(c) + " is listed twice among node " + std::to_string(i) +
                   "'s children (glTF 2.0 requires the node hierarchy to be strict trees)");
        }
        fail((node_path(i) / "children")[k],
             "node " + std::to_string(c) + " has two parents, nodes " + std::to_string(parent[c]) +
                 " and " + std::to_string(i) +
                 " (glTF 2.0 requires the node hierarchy to be strict trees)");
      }
    }
    for (std::size_t sc = 0; sc < d_.scenes.size(); ++sc) {
      const std::vector<std::size_t>& nodes = d_.scenes[sc];
      std::vector<bool> listed(d_.nodes.size(), false);
      for (std::size_t k = 0; k < nodes.size(); ++k) {
        const std::size_t r = nodes[k];
        const JsonPath at = (((JsonPath() / "scenes")[sc]) / "nodes")[k];
        if (parent[r] != none) {
          fail(at, "node " + std::to_string(r) + " is listed as a root but is a child of node " +
                       std::to_string(parent[r]) +
                       " (glTF 2.0 requires a scene's nodes to be root nodes)");
        }
        if (listed[r]) fail(at, "node " + std::to_string(r) + " is listed twice");
        listed[r] = true;
      }
    }
  }

  // The default scene's root nodes, scene 0's when none is set. Without
  // scenes: every node that is no node's child, in index order.
  std::vector<std::size_t> root_nodes() const {
    if (!d_.scenes.empty()) return d_.scenes[d_.scene.value_or(0)];
    std::vector<bool> is_child(d_.nodes.size(), false);
    for (const Node& n : d_.nodes) {
      for (const std::size_t c : n.children) is_child[c] = true;
    }
    std::vector<std::size_t> roots;
    for (std::size_t i = 0; i < d_.nodes.size(); ++i) {
      if (!is_child[i]) roots.push_back(i);
    }
    return roots;
  }

  // Depth-first over every node, without recursion: refuses a node that is
  // its own ancestor, and counts the objects below each node (a node reached
  // along k paths is k objects), saturating at max_objects_.
  std::uint64_t count_objects(const std::vector<std::size_t>& roots) {
    const std::size_t n = d_.nodes.size();
    enum : unsigned char { kWhite, kGray, kBlack };
    std::vector<unsigned char> color(n, kWhite);
    std::vector<std::uint64_t> below(n, 0);
    reaches_.assign(n, false);
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
        const Node& node = d_.nodes[f.node];
        if (f.next_child < node.children.size()) {
          const std::size_t k = f.next_child++;
          const std::size_t child = node.children[k];
          if (color[child] == kGray) {
            std::string cycle;
            bool on = false;
            for (const Frame& g : stack) {
              on = on || g.node == child;
              if (on) cycle += std::to_string(g.node) + " -> ";
            }
            fail((node_path(f.node) / "children")[k], "node " + std::to_string(child) +
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
        bool reaches = node.mesh >= 0 || node.camera >= 0;
        for (const std::size_t c : node.children) {
          sum = std::min(sum + below[c], max_objects_);
          reaches = reaches || reaches_[c];
        }
        below[f.node] = sum;
        reaches_[f.node] = reaches;
        color[f.node] = kBlack;
        stack.pop_back();
      }
    }
    std::uint64_t total = 0;
    for (const std::size_t r : roots) {
      total = std::min(total + below[r], max_objects_);
    }
    return total;
  }

  // Pre-order from the roots, children in listed order: the contract's
  // object order.
  void traverse(const std::vector<std::size_t>& roots) {
    struct Item {
      std::size_t node;
      glm::dmat4 parent;
    };
    std::vector<Item> stack;
    for (const std::size_t r : roots) {
      if (!reaches_[r]) continue;
      stack.push_back({r, glm::dmat4{1.0}});
      while (!stack.empty()) {
        const Item item = stack.back();
        stack.pop_back();
        const Node& node = d_.nodes[item.node];
        const glm::dmat4 world = item.parent * node.local;
        if (node.mesh >= 0) add_object(item.node, world);
        if (node.camera >= 0) add_camera(node, world);
        for (auto c = node.children.rbegin(); c != node.children.rend(); ++c) {
          // A subtree with no mesh and no camera adds nothing. (Strict
          // trees: the walk visits each node once at most.)
          if (reaches_[*c]) stack.push_back({*c, world});
        }
      }
    }
  }

  void add_object(std::size_t node_index, const glm::dmat4& world) {
    const Node& node = d_.nodes[node_index];
    Object object;
    object.place(world);
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (!std::isfinite(object.matrix[c][r])) {
          fail(node_path(node_index),
               "world matrix does not fit a float (the chain of transforms "
               "overflows)");
        }
      }
    }
    object.mesh = mesh_slot(static_cast<std::size_t>(node.mesh));
    object.name = node.name.empty() ? "node" + std::to_string(node_index) : valid_utf8(node.name);
    scene_.objects.push_back(std::move(object));
  }

  // A camera node, in the order of the traversal (issue 12).
  void add_camera(const Node& node, const glm::dmat4& world) {
    for (int k = 0; k < 16; ++k) {
      if (!std::isfinite(world[k / 4][k % 4])) return;
    }
    SceneCamera c = *d_.cameras[static_cast<std::size_t>(node.camera)];
    c.name = node.name;
    c.matrix = world;
    scene_.cameras.push_back(std::move(c));
  }

  // The raypick mesh of glTF mesh `m`, converted on first use.
  std::uint32_t mesh_slot(std::size_t m) {
    std::int64_t& slot = mesh_slot_[m];
    if (slot < 0) {
      slot = static_cast<std::int64_t>(scene_.meshes.size());
      scene_.meshes.push_back(convert_mesh(m));
    }
    return static_cast<std::uint32_t>(slot);
  }

  // `count` elements of `size` bytes, `stride` apart, at `offset` of buffer
  // view `v`: read_document() checked that they lie inside the view and the
  // view inside its buffer's loaded bytes; checked again here, where a
  // mistake would read out of bounds.
  const unsigned char* view_bytes(std::size_t v, std::uint64_t offset, std::uint64_t stride,
                                  std::uint64_t count, std::uint64_t size,
                                  const JsonPath& path) const {
    const View& view = d_.views[v];
    const std::string_view data = d_.buffers[view.buffer];
    const std::uint64_t end = offset + stride * (count - 1) + size;
    if (count == 0 || view.offset > data.size() || view.length > data.size() - view.offset ||
        end > view.length) {
      fail(path, "data out of range of bufferViews[" + std::to_string(v) + "] or its buffer");
    }
    return reinterpret_cast<const unsigned char*>(data.data()) + view.offset + offset;
  }

  // Accessor `a`'s elements of `elem` bytes, each passed to read(bytes)
  // into `out` (which holds the accessor's count of zeros), then its sparse
  // substitutes; refuses a sparse index past the accessor's count.
  template <typename T, typename Read>
  void read_elements(std::size_t a, std::size_t elem, std::vector<T>& out, Read read) const {
    const Accessor& acc = d_.accessors[a];
    if (acc.view) {
      const std::uint64_t stride =
          d_.views[*acc.view].stride != 0 ? d_.views[*acc.view].stride : elem;
      const unsigned char* base =
          view_bytes(*acc.view, acc.offset, stride, acc.count, elem, accessor_path(a));
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = read(base + i * stride);
    }
    if (!acc.sparse) return;
    const Sparse& sparse = *acc.sparse;
    const JsonPath path = accessor_path(a) / "sparse";
    const int itype = sparse.indices.component_type;
    const std::size_t isize = component_size(itype);
    const unsigned char* indices = view_bytes(sparse.indices.view, sparse.indices.offset, isize,
                                              sparse.count, isize, path / "indices");
    const unsigned char* values = view_bytes(sparse.values.view, sparse.values.offset, elem,
                                             sparse.count, elem, path / "values");
    for (std::uint64_t k = 0; k < sparse.count; ++k) {
      const std::uint32_t target = read_index(indices + k * isize, itype);
      if (target >= acc.count) {
        fail(path / "indices", "sparse index " + std::to_string(target) + " (element " +
                                   std::to_string(k) + ") is past the accessor's " +
                                   plural(acc.count, "element"));
      }
      out[target] = read(values + k * elem);
    }
  }

  std::vector<glm::vec3> read_positions(std::size_t a, const std::string& use) {
    const Accessor& acc = d_.accessors[a];
    const JsonPath path = accessor_path(a);
    if (acc.type->rows != 3 || acc.type->columns != 1) {
      fail(path, use + " must be a VEC3 accessor, not " + acc.type->name);
    }
    const int ct = acc.component_type;
    const bool integer = ct == kByte || ct == kUnsignedByte || ct == kShort || ct == kUnsignedShort;
    if (ct != kFloat && !(integer && d_.quantized)) {
      fail(path, use + " must have float components, not " + component_name(ct) +
                     (integer ? " (integer positions need KHR_mesh_quantization "
                                "in extensionsUsed)"
                              : ""));
    }
    const std::size_t csize = component_size(ct);
    if (auto over = budget_.take(detail::Budget::kVertices, acc.count)) {
      fail(path, use + ": " + *over);
    }
    std::vector<glm::vec3> out(acc.count, glm::vec3{0.0f});
    read_elements(a, 3 * csize, out, [&](const unsigned char* p) {
      return glm::vec3{read_component(p, ct, acc.normalized),
                       read_component(p + csize, ct, acc.normalized),
                       read_component(p + 2 * csize, ct, acc.normalized)};
    });
    for (std::size_t i = 0; i < out.size(); ++i) {
      const glm::vec3& v = out[i];
      if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z)) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "(%g, %g, %g)", v.x, v.y, v.z);
        fail(path, use + ": vertex " + std::to_string(i) + " is not finite " + buf);
      }
    }
    return out;
  }

  std::vector<std::uint32_t> read_indices(std::size_t a, const std::string& use) {
    const Accessor& acc = d_.accessors[a];
    const int ct = acc.component_type;
    if (std::string_view(acc.type->name) != "SCALAR" ||
        (ct != kUnsignedByte && ct != kUnsignedShort && ct != kUnsignedInt)) {
      fail(accessor_path(a), use +
                                 " must be a SCALAR accessor of unsigned byte, short or int, "
                                 "not " +
                                 acc.type->name + " of " + component_name(ct));
    }
    std::vector<std::uint32_t> out(acc.count, 0);
    read_elements(a, component_size(ct), out,
                  [&](const unsigned char* p) { return read_index(p, ct); });
    return out;
  }

  // Every triangle primitive of the mesh, in primitive order, into one
  // Mesh. Primitives that share a POSITION accessor share its vertices.
  Mesh convert_mesh(std::size_t m) {
    Mesh mesh;
    std::map<int, std::uint32_t> first_vertex;  // by POSITION accessor
    const std::vector<Primitive>& primitives = d_.meshes[m];
    for (std::size_t k = 0; k < primitives.size(); ++k) {
      const Primitive& prim = primitives[k];
      const JsonPath path = ((JsonPath() / "meshes")[m] / "primitives")[k];
      const int mode = prim.mode;
      if (mode != kModeTriangles && mode != kModeTriangleStrip && mode != kModeTriangleFan) {
        continue;  // points and lines cannot be hit
      }
      if (prim.position < 0) continue;
      const auto pa = static_cast<std::size_t>(prim.position);
      // Built by appending: GCC 12 warns falsely (-Wrestrict) about
      // "(" + std::string.
      std::string where = "(";
      where += path.to_string();
      where += ')';
      auto [it, fresh] = first_vertex.try_emplace(
          prim.position, static_cast<std::uint32_t>(mesh.positions.size()));
      const std::uint64_t vertex_count = d_.accessors[pa].count;
      if (fresh) {
        std::vector<glm::vec3> positions = read_positions(pa, "POSITION " + where);
        if (mesh.positions.size() + positions.size() > std::numeric_limits<std::uint32_t>::max()) {
          fail(path, "the mesh has more than 2^32 - 1 vertices");
        }
        if (mesh.positions.empty()) {
          mesh.positions = std::move(positions);  // the usual case: no copy
        } else {
          mesh.positions.insert(mesh.positions.end(), positions.begin(), positions.end());
        }
      }
      const std::uint32_t base = it->second;

      std::vector<std::uint32_t> indices;
      const bool indexed = prim.indices >= 0;
      const auto ia = static_cast<std::size_t>(prim.indices);
      // Charged before the indices are read: n indices make n / 3
      // triangles, or n - 2 in a strip or fan.
      const std::uint64_t corners = indexed ? d_.accessors[ia].count : vertex_count;
      const std::uint64_t triangles =
          mode == kModeTriangles ? corners / 3 : (corners < 3 ? 0 : corners - 2);
      if (auto over = budget_.take(detail::Budget::kTriangles, triangles)) {
        fail(path, *over);
      }
      if (indexed) {
        indices = read_indices(ia, "indices " + where);
        for (std::size_t i = 0; i < indices.size(); ++i) {
          if (indices[i] >= vertex_count) {
            fail(accessor_path(ia), "index " + std::to_string(indices[i]) + " (element " +
                                        std::to_string(i) + ") is past the " +
                                        plural(vertex_count, "vertex", "vertices") +
                                        " of POSITION " + where);
          }
        }
      } else {
        indices.resize(static_cast<std::size_t>(vertex_count));
        for (std::size_t i = 0; i < indices.size(); ++i) {
          indices[i] = static_cast<std::uint32_t>(i);
        }
      }
      const std::size_t n = indices.size();
      if (mode == kModeTriangles && n % 3 != 0) {
        fail(path, (indexed ? plural(n, "index", "indices") : plural(n, "vertex", "vertices")) +
                       " do not make whole triangles (mode 4, triangles, "
                       "needs a multiple of 3)");
      }
      if (mode != kModeTriangles && n < 3) {
        fail(path, std::string("mode ") + std::to_string(mode) + " (" +
                       (mode == kModeTriangleStrip ? "triangle strip" : "triangle fan") +
                       ") needs at least 3 " + (indexed ? "indices" : "vertices") + ", got " +
                       std::to_string(n));
      }
      // glTF 2.0, "Topology Types": strip triangle i is
      // {v_i, v_{i+(1+i%2)}, v_{i+(2-i%2)}}, fan triangle i is
      // {v_{i+1}, v_{i+2}, v_0}. Degenerate ones are kept: triangle ids stay
      // positional.
      const auto v = [&](std::size_t i) { return base + indices[i]; };
      for (std::size_t i = 0; i + 2 < n; i += mode == kModeTriangles ? 3 : 1) {
        if (mode == kModeTriangles) {
          mesh.triangles.emplace_back(v(i), v(i + 1), v(i + 2));
        } else if (mode == kModeTriangleStrip) {
          mesh.triangles.emplace_back(v(i), v(i + 1 + i % 2), v(i + 2 - i % 2));
        } else {
          mesh.triangles.emplace_back(v(i + 1), v(i + 2), v(0));
        }
      }
    }
    return mesh;
  }

  const Document& d_;
  detail::Budget& budget_;
  std::uint64_t max_objects_;
  std::vector<std::int64_t> mesh_slot_;
  std::vector<bool> reaches_;            // by node: a mesh or camera below
  Scene scene_;
};

}  // namespace

LoadResult detail::load_gltf(const std::string& path, const LoadOptions& options, Budget& budget) {
  const std::string data = read_or_fail(path, budget);
  const Container container = open_container(data, path);
  JsonParse parsed = parse_json(container.json);
  JsonGuard parsed_guard(parsed.value);
  if (!parsed.value) {
    // A GLB's JSON chunk has lines of its own, not the file's.
    if (container.glb) {
      return fail_result(LoadError::Kind::kMalformed, path, 0,
                         "JSON chunk, line " + std::to_string(parsed.line) + ": " + parsed.error);
    }
    return fail_result(LoadError::Kind::kMalformed, path, parsed.line, parsed.error);
  }
  std::vector<std::string> warnings;  // kept when the walk fails
  try {
    Document doc = read_document(*parsed.value, container, path, options.root, budget);
    dismantle(*parsed.value);  // the document is all that is needed now
    parsed.value.reset();
    warnings = std::move(doc.warnings);
    Scene scene = SceneBuilder(doc, budget).build();
    return LoadResult(std::move(scene), std::move(warnings));
  } catch (const JsonError& e) {
    const std::size_t line = container.glb ? 0 : line_of_path(container.json, e.where());
    return LoadResult(LoadError{e.io ? LoadError::Kind::kIo : LoadError::Kind::kMalformed, path,
                                line, e.to_string()},
                      std::move(warnings));
  }
}

}  // namespace raypick
