// raypick's own JSON scene format (documented in docs/scene-format.md):
// meshes from OBJ or glTF files or built-in boxes, and objects placing them.
//
// The format is strict: an unknown key, a value of the wrong type, a
// duplicate key or a name that refers to nothing is an error naming the
// key's path ("objects[3].rotate: unknown key 'eulr'") and its line.
#include <glm/ext/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat3x3.hpp>
#include <glm/mat4x4.hpp>
#include <glm/matrix.hpp>
#include <glm/vec3.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "budget.h"
#include "file_io.h"
#include "json_text.h"
#include "raypick/core/obb.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

namespace raypick {
namespace {

namespace fs = std::filesystem;
using detail::fail;
using detail::Json;
using detail::JsonError;
using detail::JsonPath;

constexpr std::uint64_t kFormatVersion = 1;

// sin and cos of an angle in degrees, exact at multiples of 90 degrees so
// that quarter turns give matrices of exact 0s and 1s.
std::pair<double, double> sin_cos_degrees(double degrees) {
  const double quarter = degrees / 90.0;
  if (quarter == std::floor(quarter) && std::fabs(quarter) < 1e15) {
    const auto k = static_cast<long long>(std::fmod(quarter, 4.0) + 4.0) % 4;
    constexpr double kSin[4] = {0.0, 1.0, 0.0, -1.0};
    constexpr double kCos[4] = {1.0, 0.0, -1.0, 0.0};
    return {kSin[k], kCos[k]};
  }
  const double radians = degrees * (3.14159265358979323846 / 180.0);
  return {std::sin(radians), std::cos(radians)};
}

// Rotation about the fixed x, then y, then z axis: R = Rz * Ry * Rx.
glm::dmat4 euler_xyz_degrees(const std::vector<double>& deg) {
  const auto [sx, cx] = sin_cos_degrees(deg[0]);
  const auto [sy, cy] = sin_cos_degrees(deg[1]);
  const auto [sz, cz] = sin_cos_degrees(deg[2]);
  glm::dmat4 rx{1.0};
  rx[1][1] = cx;
  rx[1][2] = sx;
  rx[2][1] = -sx;
  rx[2][2] = cx;
  glm::dmat4 ry{1.0};
  ry[0][0] = cy;
  ry[0][2] = -sy;
  ry[2][0] = sy;
  ry[2][2] = cy;
  glm::dmat4 rz{1.0};
  rz[0][0] = cz;
  rz[0][1] = sz;
  rz[1][0] = -sz;
  rz[1][1] = cz;
  return rz * ry * rx;
}

// A JSON mesh: a raypick mesh, and the matrix that places it in the frame
// an object's transform applies to (identity, or the matrix of the object a
// mesh file's "object" selects).
struct SceneMesh {
  std::string name;
  glm::dmat4 pre{1.0};
};

class JsonSceneReader {
 public:
  // Mesh files are loaded with `options`, their root made the scene file's
  // folder when it is unset, so that they may refer to files anywhere
  // inside it; `budget` is the whole load's.
  JsonSceneReader(std::string scene_path, const LoadOptions& options,
                  detail::Budget& budget)
      : scene_path_(std::move(scene_path)),
        options_(options),
        budget_(budget) {
    if (options_.root.empty()) options_.root = detail::folder_of(scene_path_);
  }

  Scene read(const Json& doc) {
    const JsonPath root;
    detail::require_object(doc, root);
    detail::check_keys(doc, root, {"raypick_scene", "meshes", "objects"});
    const Json* version = detail::find_member(doc, "raypick_scene");
    if (version == nullptr) {
      fail(root, "missing 'raypick_scene' (the format version, 1)");
    }
    const std::uint64_t v = detail::require_uint(
        *version, root / "raypick_scene", std::numeric_limits<std::uint64_t>::max());
    if (v != kFormatVersion) {
      fail(root / "raypick_scene",
           "format version " + std::to_string(v) +
               " is not supported (this raypick reads version 1)");
    }
    const Json* meshes = detail::find_member(doc, "meshes");
    if (meshes == nullptr) fail(root, "missing 'meshes'");
    detail::require_array(*meshes, root / "meshes");
    for (std::size_t i = 0; i < meshes->size(); ++i) {
      read_mesh((*meshes)[i], (root / "meshes")[i]);
    }
    const Json* objects = detail::find_member(doc, "objects");
    if (objects == nullptr) fail(root, "missing 'objects'");
    detail::require_array(*objects, root / "objects");
    if (objects->empty()) fail(root / "objects", "no objects in scene");
    if (auto over = budget_.take(detail::Budget::kObjects, objects->size())) {
      fail(root / "objects", *over);
    }
    for (std::size_t i = 0; i < objects->size(); ++i) {
      read_object((*objects)[i], (root / "objects")[i], i);
    }
    return std::move(scene_);
  }

  std::vector<std::string>& warnings() { return warnings_; }

 private:
  void read_mesh(const Json& m, const JsonPath& p) {
    detail::require_object(m, p);
    detail::check_keys(m, p, {"name", "file", "object", "box"});
    const Json* name_json = detail::find_member(m, "name");
    if (name_json == nullptr) fail(p, "missing 'name'");
    std::string name = detail::require_string(*name_json, p / "name");
    if (name.empty()) fail(p / "name", "the name is empty");
    if (const auto it = mesh_by_name_.find(name); it != mesh_by_name_.end()) {
      fail(p / "name", "'" + printable(name, 60) +
                           "' is already the name of meshes[" +
                           std::to_string(it->second) + "]");
    }
    const Json* file = detail::find_member(m, "file");
    const Json* box = detail::find_member(m, "box");
    const Json* object = detail::find_member(m, "object");
    if ((file != nullptr) == (box != nullptr)) {
      fail(p, file != nullptr ? "has both 'file' and 'box' (a mesh is one or "
                                "the other)"
                              : "needs 'file' or 'box'");
    }
    if (object != nullptr && file == nullptr) {
      fail(p / "object", "'object' selects an object of a mesh file; it needs "
                         "'file'");
    }
    SceneMesh mesh;
    mesh.name = name;
    if (box != nullptr) {
      charge(p / "box", 8, 12);
      scene_.meshes.push_back(read_box(*box, p / "box"));
    } else {
      auto [built, pre] = read_file_mesh(*file, object, p);
      scene_.meshes.push_back(std::move(built));
      mesh.pre = pre;
    }
    mesh_by_name_[name] = meshes_.size();
    meshes_.push_back(std::move(mesh));
  }

  // A box of 8 corners and 12 triangles (core's box_mesh: two per face,
  // faces in the order -x, +x, -y, +y, -z, +z).
  Mesh read_box(const Json& box, const JsonPath& p) {
    detail::require_object(box, p);
    detail::check_keys(box, p, {"min", "max"});
    const Json* min_json = detail::find_member(box, "min");
    const Json* max_json = detail::find_member(box, "max");
    if (min_json == nullptr) fail(p, "missing 'min'");
    if (max_json == nullptr) fail(p, "missing 'max'");
    const std::vector<double> lo = detail::require_floats(*min_json, p / "min", 3);
    const std::vector<double> hi = detail::require_floats(*max_json, p / "max", 3);
    for (int k = 0; k < 3; ++k) {
      if (lo[k] > hi[k]) {
        fail(p, std::string("min is above max on axis ") + "xyz"[k]);
      }
    }
    // Each coordinate rounded to float once, as every other position.
    const auto point = [](const std::vector<double>& v) {
      return glm::vec3(static_cast<float>(v[0]), static_cast<float>(v[1]),
                       static_cast<float>(v[2]));
    };
    return box_mesh(Aabb{point(lo), point(hi)});
  }

  // The scene in a mesh file, loaded once however many meshes use it.
  const Scene& load_mesh_file(const std::string& file, const JsonPath& p) {
    if (file.empty()) fail(p, "the file name is empty");
    const fs::path relative(file);
    if (detail::lower_extension(file) == ".json") {
      fail(p, "'" + printable(file, 200) +
                  "' is a JSON scene; a mesh file must be OBJ or glTF");
    }
    std::string refused;
    const std::optional<std::string> resolved =
        detail::resolve_reference(scene_path_, file, options_.root, refused);
    if (!resolved) fail(p, refused);
    const auto cached = files_.find(*resolved);
    if (cached != files_.end()) return cached->second;
    // Loaded by the path as the user would write it, so that its messages
    // name it so; it resolves to the same file.
    const std::string shown =
        (fs::path(detail::folder_of(scene_path_)) / relative)
            .lexically_normal()
            .string();
    LoadResult loaded = detail::load_any(shown, options_, budget_);
    if (!loaded.ok()) {
      const LoadError& e = loaded.error();
      JsonError error{p,
                      "cannot load '" + printable(file, 200) +
                          "': " + e.to_string(),
                      std::nullopt, e.kind == LoadError::Kind::kIo};
      throw error;
    }
    for (const std::string& warning : loaded.warnings) {
      warnings_.push_back(p.to_string() + " ('" + printable(file, 200) +
                          "'): " + warning);
    }
    return files_.emplace(*resolved, std::move(loaded.scene())).first->second;
  }

  // The mesh a "file" entry makes: one object of the file (its mesh, placed
  // by its matrix), or all of them (their triangles, matrices baked in).
  std::pair<Mesh, glm::dmat4> read_file_mesh(const Json& file_json,
                                             const Json* object,
                                             const JsonPath& p) {
    const std::string file = detail::require_string(file_json, p / "file");
    const Scene& source = load_mesh_file(file, p / "file");
    if (object != nullptr) {
      const std::size_t id = select_object(source, *object, p / "object", file);
      const Object& o = source.objects[id];
      const Mesh& mesh = source.meshes[o.mesh];
      charge(p / "object", mesh.positions.size(), mesh.triangles.size());
      glm::dmat4 m{o.matrix};
      m[3] += glm::dvec4{glm::dvec3{o.translation_low}, 0.0};
      return {mesh, m};
    }
    Mesh out;
    for (const Object& o : source.objects) {
      // An object its own file could never hit adds nothing.
      if (!is_invertible(glm::mat4x3{o.matrix})) continue;
      const Mesh& src = source.meshes[o.mesh];
      if (out.positions.size() + src.positions.size() >
          std::numeric_limits<std::uint32_t>::max()) {
        fail(p / "file", "the union of the file's objects has more than "
                         "2^32 - 1 vertices");
      }
      charge(p / "file", src.positions.size(), src.triangles.size());
      const std::size_t first = out.positions.size();
      append_placed(out, src, o.matrix, o.translation_low);
      for (std::size_t k = first; k < out.positions.size(); ++k) {
        const glm::vec3& w = out.positions[k];
        if (!std::isfinite(w.x) || !std::isfinite(w.y) || !std::isfinite(w.z)) {
          fail(p / "file", "object '" + o.name + "' of '" +
                               printable(file, 200) +
                               "' does not fit a float once its matrix is "
                               "applied");
        }
      }
    }
    return {std::move(out), glm::dmat4{1.0}};
  }

  // Charges a mesh copy of `vertices` and `triangles` to the load's budget
  // before it is made; a mesh file's own meshes were charged when it was
  // loaded, and each copy of them counts again.
  void charge(const JsonPath& p, std::uint64_t vertices,
              std::uint64_t triangles) {
    if (auto over = budget_.take(detail::Budget::kVertices, vertices)) fail(p, *over);
    if (auto over = budget_.take(detail::Budget::kTriangles, triangles)) fail(p, *over);
  }

  static std::size_t select_object(const Scene& source, const Json& selector,
                                    const JsonPath& p, const std::string& file) {
    const std::size_t n = source.objects.size();
    if (selector.is_string()) {
      // Names are stored as the files hold them (valid UTF-8); so is the
      // selector.
      const std::string name = valid_utf8(selector.get<std::string>());
      std::size_t found = n;
      std::size_t matches = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (source.objects[i].name != name) continue;
        if (matches++ == 0) found = i;
      }
      if (matches == 0) {
        fail(p, "no object named '" + printable(name, 60) + "' in '" +
                    printable(file, 200) + "'");
      }
      if (matches > 1) {
        fail(p, "'" + printable(name, 60) + "' names " +
                    std::to_string(matches) + " objects of '" +
                    printable(file, 200) + "'; select one by its id");
      }
      return found;
    }
    if (!selector.is_number()) {
      fail(p, "expected an object name or id, got " + detail::describe(selector));
    }
    const std::uint64_t id = detail::require_uint(
        selector, p, std::numeric_limits<std::uint64_t>::max());
    if (id >= n) {
      fail(p, "object id " + std::to_string(id) + " is out of range ('" +
                  printable(file, 200) + "' has " + std::to_string(n) +
                  " objects)");
    }
    return static_cast<std::size_t>(id);
  }

  void read_object(const Json& o, const JsonPath& p, std::size_t id) {
    detail::require_object(o, p);
    detail::check_keys(
        o, p, {"name", "mesh", "matrix", "translate", "rotate", "scale", "layer"});
    Object object;
    object.name = "object" + std::to_string(id);
    if (const Json* name = detail::find_member(o, "name")) {
      object.name = valid_utf8(detail::require_string(*name, p / "name"));
    }
    const Json* mesh_json = detail::find_member(o, "mesh");
    if (mesh_json == nullptr) fail(p, "missing 'mesh'");
    const std::string mesh_name = detail::require_string(*mesh_json, p / "mesh");
    const auto it = mesh_by_name_.find(mesh_name);
    if (it == mesh_by_name_.end()) {
      fail(p / "mesh", "no mesh named '" + printable(mesh_name, 60) +
                           "' in 'meshes'");
    }
    object.mesh = static_cast<std::uint32_t>(it->second);

    const glm::dmat4 world = read_transform(o, p) * meshes_[it->second].pre;
    object.place(world);
    for (int c = 0; c < 4; ++c) {
      for (int r = 0; r < 4; ++r) {
        if (!std::isfinite(object.matrix[c][r])) {
          fail(p, "the object's matrix does not fit a float");
        }
      }
    }
    if (const Json* layer = detail::find_member(o, "layer")) {
      // Layer k is bit k of the object's pick mask (QueryOptions::mask).
      object.mask = 1u << detail::require_uint(*layer, p / "layer", 31);
    }
    scene_.objects.push_back(std::move(object));
  }

  // `matrix`, or translate * rotate * scale (each optional).
  static glm::dmat4 read_transform(const Json& o, const JsonPath& p) {
    const Json* matrix = detail::find_member(o, "matrix");
    const Json* translate = detail::find_member(o, "translate");
    const Json* rotate = detail::find_member(o, "rotate");
    const Json* scale = detail::find_member(o, "scale");
    if (matrix != nullptr) {
      for (const auto& [key, value] :
           {std::pair<const char*, const Json*>{"translate", translate},
            {"rotate", rotate},
            {"scale", scale}}) {
        if (value != nullptr) {
          fail(p, std::string("has both 'matrix' and '") + key +
                      "' (use one or the other)");
        }
      }
      const std::vector<double> m =
          detail::require_floats(*matrix, p / "matrix", 16);
      // Column-major like glTF: elements 3, 7, 11, 15 are the last row.
      if (m[3] != 0.0 || m[7] != 0.0 || m[11] != 0.0 || m[15] != 1.0) {
        fail(p / "matrix",
             "matrix is not affine (its last row, elements 3, 7, 11 and 15, "
             "must be 0 0 0 1)");
      }
      glm::dmat4 out;
      for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r) out[c][r] = m[4 * c + r];
      }
      return out;
    }
    glm::dmat4 t{1.0};
    glm::dmat4 r{1.0};
    glm::dmat4 s{1.0};
    if (translate != nullptr) {
      const std::vector<double> v =
          detail::require_floats(*translate, p / "translate", 3);
      t = glm::translate(glm::dmat4{1.0}, glm::dvec3{v[0], v[1], v[2]});
    }
    if (rotate != nullptr) r = read_rotation(*rotate, p / "rotate");
    if (scale != nullptr) {
      glm::dvec3 v;
      if (scale->is_number()) {
        v = glm::dvec3{detail::require_float(*scale, p / "scale")};
      } else if (scale->is_array()) {
        const std::vector<double> a =
            detail::require_floats(*scale, p / "scale", 3);
        v = {a[0], a[1], a[2]};
      } else {
        fail(p / "scale", "expected a number or an array of 3 numbers, got " +
                              detail::describe(*scale));
      }
      s = glm::scale(glm::dmat4{1.0}, v);
    }
    return t * r * s;
  }

  static glm::dmat4 read_rotation(const Json& rotate, const JsonPath& p) {
    detail::require_object(rotate, p);
    detail::check_keys(rotate, p, {"quat", "euler_deg"});
    const Json* quat = detail::find_member(rotate, "quat");
    const Json* euler = detail::find_member(rotate, "euler_deg");
    if (quat != nullptr && euler != nullptr) {
      fail(p, "has both 'quat' and 'euler_deg' (use one or the other)");
    }
    if (quat != nullptr) {
      const std::vector<double> q = detail::require_floats(*quat, p / "quat", 4);
      const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] +
                                    q[3] * q[3]);
      if (norm == 0.0 || !std::isfinite(norm)) {
        fail(p / "quat", "the quaternion is zero");
      }
      // [x, y, z, w] as glTF writes it; glm's constructor takes w first.
      return glm::mat4_cast(glm::dquat{q[3] / norm, q[0] / norm, q[1] / norm,
                                       q[2] / norm});
    }
    if (euler != nullptr) {
      return euler_xyz_degrees(
          detail::require_floats(*euler, p / "euler_deg", 3));
    }
    fail(p, "needs 'quat' or 'euler_deg'");
  }

  std::string scene_path_;
  LoadOptions options_;
  detail::Budget& budget_;
  Scene scene_;
  std::vector<SceneMesh> meshes_;
  std::map<std::string, std::size_t> mesh_by_name_;
  std::map<std::string, Scene> files_;  // by resolved path
  std::vector<std::string> warnings_;
};

}  // namespace

LoadResult detail::load_json_scene(const std::string& path,
                                   const LoadOptions& options, Budget& budget) {
  const std::string data = read_or_fail(path, budget);
  JsonParse parsed = parse_json(data, /*refuse_duplicate_keys=*/true);
  JsonGuard parsed_guard(parsed.value);
  if (!parsed.value) {
    return fail_result(LoadError::Kind::kMalformed, path, parsed.line,
                       parsed.error);
  }
  JsonSceneReader reader(path, options, budget);
  try {
    Scene scene = reader.read(*parsed.value);
    return LoadResult(std::move(scene), std::move(reader.warnings()));
  } catch (const JsonError& e) {
    return LoadResult(
        LoadError{e.io ? LoadError::Kind::kIo : LoadError::Kind::kMalformed,
                  path, line_of_path(data, e.where()), e.to_string()},
        std::move(reader.warnings()));
  }
}

}  // namespace raypick
