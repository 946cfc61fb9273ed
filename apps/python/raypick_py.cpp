// The Python module `raypick`: scenes from files or numpy arrays, rays in
// as (N, 6) arrays, hits out as numpy arrays. A thin layer over the
// installed C++ API (raypick::Picker, raypick::load_scene); every query and
// commit() releases the GIL. Reference: docs/python.md.
#include "raypick/bvh/picker.h"
#include "raypick/core/obb.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

#include "screen_view.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <array>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace raypick::python {
namespace {

// Python's LoadError (a ValueError), set at import.
PyObject* g_load_error = nullptr;

std::string shape_of(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    s += (i ? ", " : "") + std::to_string(a.shape(i));
  }
  return s + (a.ndim() == 1 ? ",)" : ")");
}

// `value` as a C-contiguous array of T, copied only when it is not one
// already. Real numbers of any dtype are accepted (converted once);
// complex, object and other dtypes raise TypeError naming `what`.
template <class T>
py::array_t<T, py::array::c_style> as_array(const py::handle& value, const char* what,
                                             const char* expected) {
  const py::array a = py::array::ensure(value);
  if (!a) {
    throw py::type_error(std::string(what) + ": expected an array of shape " + expected);
  }
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b') {
    throw py::type_error(std::string(what) + ": expected real numbers, got dtype " +
                         std::string(py::str(a.dtype())));
  }
  return py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
}

void require_shape(const py::array& a, const char* what, py::ssize_t cols, const char* expected) {
  if (a.ndim() != 2 || a.shape(1) != cols) {
    throw py::value_error(std::string(what) + ": expected shape " + expected + ", got " +
                          shape_of(a));
  }
}

// A (4, 4) affine matrix from 16 doubles in numpy's row-major order.
glm::dmat4 matrix_of(const double* rows, const char* what) {
  glm::dmat4 out;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) {
      const double v = rows[4 * r + c];
      if (!std::isfinite(v) || !std::isfinite(static_cast<float>(v))) {
        throw py::value_error(std::string(what) + ": entries must be finite floats");
      }
      out[c][r] = v;  // numpy row-major, glm column-major
    }
  }
  // As floats (1 +- an ulp of double, as np.linalg.inv leaves it, passes),
  // then exactly 0, 0, 0, 1.
  if (float(out[0][3]) != 0.0f || float(out[1][3]) != 0.0f || float(out[2][3]) != 0.0f ||
      float(out[3][3]) != 1.0f) {
    throw py::value_error(std::string(what) + ": the last row must be 0, 0, 0, 1 (an affine map)");
  }
  out[0][3] = out[1][3] = out[2][3] = 0.0;
  out[3][3] = 1.0;
  return out;
}

// A (4, 4) affine matrix as given, in double: the Picker keeps its
// translation beyond float (Object::translation_low).
glm::dmat4 to_matrix(const py::handle& value, const char* what) {
  const auto m = as_array<double>(value, what, "(4, 4)");
  if (m.ndim() != 2 || m.shape(0) != 4 || m.shape(1) != 4) {
    throw py::value_error(std::string(what) + ": expected shape (4, 4), got " + shape_of(m));
  }
  return matrix_of(m.data(), what);
}

PickMode mode_of(const std::string& mode) {
  if (mode == "obb") return PickMode::kObb;
  if (mode == "mesh") return PickMode::kMesh;
  throw py::value_error("mode: expected 'obb' or 'mesh', got '" + printable(mode, 40) + "'");
}

// The most threads a call takes (as the CLI's --threads): TBB sets up
// storage for every slot of an arena, asked for or not.
constexpr int kMaxThreads = 1024;

// Runs f on `threads` threads (0: all cores), without the GIL.
template <class F>
void run_parallel(int threads, F&& f) {
  if (threads < 0 || threads > kMaxThreads) {
    throw py::value_error("threads: expected 0 (all cores) to " + std::to_string(kMaxThreads) +
                          ", got " + std::to_string(threads));
  }
  py::gil_scoped_release release;
  tbb::task_arena arena(threads == 0 ? tbb::task_arena::automatic : threads);
  arena.execute(f);
}

// The dict a batch query returns: its arrays by name, in the order given.
py::dict arrays_dict(std::initializer_list<std::pair<const char*, py::handle>> arrays) {
  py::dict out;
  for (const auto& [name, array] : arrays) out[name] = array;
  return out;
}

// The module's classes reach their methods (self) and arguments through
// this caster (specialized for each class right after it). pybind11 hands
// over an instance whose __init__ never ran (one made by cls.__new__(cls)
// alone) as memory it allocates then and never constructs; read, it gave
// garbage (a repr) or any behaviour at all. Such an instance is refused
// with a TypeError, before pybind11 allocates anything for it.
template <class T>
class InitializedCaster : public py::detail::type_caster_base<T> {
 public:
  bool load(py::handle src, bool convert) {
    if (src && !src.is_none() && py::isinstance<T>(src)) {
      auto* inst = reinterpret_cast<py::detail::instance*>(src.ptr());
      const py::detail::value_and_holder v_h =
          inst->get_value_and_holder(py::detail::get_type_info(typeid(T)));
      if (!v_h.holder_constructed()) {
        throw py::type_error("this raypick." + std::string(T::kPythonName) +
                             " was never initialized (made by __new__ without __init__)");
      }
    }
    return py::detail::type_caster_base<T>::load(src, convert);
  }
};

// A camera (the contract's screen space): raypick::Camera with the spec it
// was made from and, for a scene file's camera, its name.
static_assert(sizeof(tools::Rgb) == 3, "render() copies the image's pixels as bytes");

class PyCamera {
 public:
  static constexpr const char* kPythonName = "Camera";
  static CameraSpec checked(const CameraSpec& spec) {
    std::string e = check_camera(spec);
    if (!e.empty()) {
      // The core words its checks with the CLI's option names.
      for (std::size_t at; (at = e.find("--")) != std::string::npos;) e.erase(at, 2);
      throw py::value_error("Camera: " + e);
    }
    return spec;
  }
  explicit PyCamera(const CameraSpec& spec, std::string name = {})
      : camera_(checked(spec)), name_(std::move(name)) {}

  static PyCamera make(const py::handle& eye, const py::handle& target, const py::handle& up,
                       int width, int height, std::optional<double> fov,
                       std::optional<double> ortho_height) {
    CameraSpec s;
    s.eye = vec3(eye, "eye");
    s.target = vec3(target, "target");
    s.up = vec3(up, "up");
    s.width = width;
    s.height = height;
    if (fov && ortho_height) {
      throw py::value_error("Camera: give fov (perspective) or ortho_height (orthographic), "
                            "not both");
    }
    if (ortho_height) {
      s.projection = Projection::kOrthographic;
      s.ortho_height = *ortho_height;
    } else {
      s.fov_deg = fov.value_or(60.0);
    }
    return PyCamera(s);
  }

  const raypick::Camera& camera() const { return camera_; }
  const CameraSpec& spec() const { return camera_.spec(); }
  const std::string& name() const { return name_; }
  py::tuple eye() const { return tuple3(spec().eye); }
  py::tuple target() const { return tuple3(spec().target); }
  py::tuple up() const { return tuple3(spec().up); }
  std::string projection() const {
    return spec().projection == Projection::kPerspective ? "perspective" : "orthographic";
  }
  py::object fov() const {
    return spec().projection == Projection::kPerspective ? py::object(py::float_(spec().fov_deg))
                                                         : py::object(py::none());
  }
  py::object ortho_height() const {
    return spec().projection == Projection::kOrthographic
               ? py::object(py::float_(spec().ortho_height))
               : py::object(py::none());
  }
  PyCamera resized(int width, int height) const {
    CameraSpec s = spec();
    s.width = width;
    s.height = height;
    return PyCamera(s, name_);
  }

  // The rays through image-plane points (N, 2): (N, 6) float64, the
  // float rays the CLI casts (raypick::Camera::ray), widened.
  py::array_t<double> rays(const py::handle& pixels) const {
    const std::vector<Ray> r = float_rays(pixels);
    py::array_t<double> out({static_cast<py::ssize_t>(r.size()), py::ssize_t{6}});
    auto o = out.mutable_unchecked<2>();
    for (std::size_t i = 0; i < r.size(); ++i) {
      for (int k = 0; k < 3; ++k) {
        o(py::ssize_t(i), k) = r[i].org[k];
        o(py::ssize_t(i), 3 + k) = r[i].dir[k];
      }
    }
    return out;
  }
  std::vector<Ray> float_rays(const py::handle& pixels) const {
    const auto a = as_array<double>(pixels, "pixels", "(N, 2)");
    require_shape(a, "pixels", 2, "(N, 2)");
    const double* p = a.data();
    std::vector<Ray> out(static_cast<std::size_t>(a.shape(0)));
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (!(std::abs(p[2 * i]) <= kMaxInputPoint) || !(std::abs(p[2 * i + 1]) <= kMaxInputPoint)) {
        throw py::value_error("pixels[" + std::to_string(i) +
                              "]: not finite or outside the supported range (|x| <= 1e11)");
      }
      out[i] = camera_.ray(p[2 * i], p[2 * i + 1]);
    }
    return out;
  }
  // The image-plane points of world points (N, 3): (N, 2) float64.
  py::array_t<double> project(const py::handle& points) const {
    const auto a = as_array<double>(points, "points", "(N, 3)");
    require_shape(a, "points", 3, "(N, 3)");
    const double* p = a.data();
    const auto n = a.shape(0);
    py::array_t<double> out({n, py::ssize_t{2}});
    auto o = out.mutable_unchecked<2>();
    for (py::ssize_t i = 0; i < n; ++i) {
      const glm::dvec2 q = camera_.project({p[3 * i], p[3 * i + 1], p[3 * i + 2]});
      o(i, 0) = q.x;
      o(i, 1) = q.y;
    }
    return out;
  }
  std::string repr() const {
    const CameraSpec& s = spec();
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "<raypick.Camera%s%s: %s %dx%d, eye (%g, %g, %g), target (%g, %g, %g), %s %g>",
                  name_.empty() ? "" : " ", printable(name_, 40).c_str(), projection().c_str(),
                  s.width, s.height, s.eye.x, s.eye.y, s.eye.z, s.target.x, s.target.y,
                  s.target.z, s.projection == Projection::kPerspective ? "fov" : "height",
                  s.projection == Projection::kPerspective ? s.fov_deg : s.ortho_height);
    return buf;
  }

 private:
  static glm::dvec3 vec3(const py::handle& v, const char* what) {
    const auto a = as_array<double>(v, what, "(3,)");
    if (a.ndim() != 1 || a.shape(0) != 3) {
      throw py::value_error(std::string(what) + ": expected shape (3,), got " + shape_of(a));
    }
    return {a.at(0), a.at(1), a.at(2)};
  }
  static py::tuple tuple3(const glm::dvec3& v) { return py::make_tuple(v.x, v.y, v.z); }

  raypick::Camera camera_;
  std::string name_;
};

}  // namespace
}  // namespace raypick::python

// (InitializedCaster, above.)
namespace pybind11::detail {
template <>
class type_caster<raypick::python::PyCamera>
    : public raypick::python::InitializedCaster<raypick::python::PyCamera> {};
}  // namespace pybind11::detail

namespace raypick::python {
namespace {

class Scene {
 public:
  static constexpr const char* kPythonName = "Scene";
  explicit Scene(const std::string& mode) : mode_(mode_of(mode)) {
    PickerConfig config;
    config.mesh_mode = mode_ == PickMode::kMesh;
    picker_ = std::make_unique<Picker>(config);
  }

  // From a loaded scene: the Picker's ids are the scene's. A saved
  // scene's trees (LoadResult::saved_trees) spare the build when they fit.
  Scene(raypick::Scene&& scene, PickMode mode, std::string_view trees = {}) : mode_(mode) {
    PickerConfig config;
    config.mesh_mode = mode == PickMode::kMesh;
    {
      py::gil_scoped_release release;
      std::string why;
      picker_ = std::make_unique<Picker>(Picker::open(scene, trees, config, &why));
      saved_trees_ = why.empty();
    }
    for (const Mesh& m : scene.meshes) {
      bounds_.push_back(m.triangle_bounds());
      triangles_ += m.triangles.size();
    }
    for (const Object& o : scene.objects) {
      names_.push_back(o.name);
      object_mesh_.push_back(o.mesh);
    }
    cameras_ = scene.cameras;
    source_ = std::move(scene);
  }

  // The scene as it stands (changes since commit() included) in raypick's
  // saved form: removed objects keep their ids and names but point at an
  // empty mesh, so they can never be hit.
  std::string saved_bytes(bool trees = true) const {
    const QueryGuard busy = begin_reading();
    const auto pending = std::find(removed_.begin(), removed_.end(), true);
    // The picker's trees go along when they are the scene's as it stands
    // (nothing changed since the last commit, nothing removed).
    if (pending == removed_.end()) {
      return encode_scene(source_, trees && !dirty_ ? picker_->save_trees() : "");
    }
    raypick::Scene copy = source_;
    const auto empty = static_cast<std::uint32_t>(copy.meshes.size());
    copy.meshes.emplace_back();
    for (std::size_t id = 0; id < removed_.size(); ++id) {
      if (removed_[id]) copy.objects[id].mesh = empty;
    }
    return encode_scene(copy);
  }

  void save(const std::string& path, bool trees) const {
    const std::string bytes = saved_bytes(trees);
    std::string error;
    {
      py::gil_scoped_release release;
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      out.close();
      if (!out) error = path + ": cannot write the saved scene: " + std::strerror(errno);
    }
    if (!error.empty()) throw py::value_error(printable(error));
  }

  py::tuple get_state() const { return py::make_tuple(mode(), py::bytes(saved_bytes())); }

  static Scene from_state(const py::tuple& state) {
    if (state.size() != 2) throw py::value_error("Scene state: expected (mode, bytes)");
    const std::string mode = state[0].cast<std::string>();
    const std::string bytes = state[1].cast<std::string>();
    std::optional<LoadResult> r;
    {
      py::gil_scoped_release release;
      // A Scene may be pickled while it holds no objects yet.
      LoadOptions options;
      options.require_objects = false;
      r.emplace(decode_scene(bytes, "<pickled raypick.Scene>", options));
    }
    if (!r->ok()) {
      PyErr_SetString(g_load_error, printable(r->error().to_string()).c_str());
      throw py::error_already_set();
    }
    return Scene(std::move(r->scene()), mode_of(mode), r->saved_trees);
  }

  std::uint32_t add_mesh(const py::handle& vertices, const py::handle& triangles) {
    const auto v = as_array<float>(vertices, "vertices", "(V, 3)");
    require_shape(v, "vertices", 3, "(V, 3)");
    const py::array t_any = py::array::ensure(triangles);
    if (!t_any || (t_any.dtype().kind() != 'i' && t_any.dtype().kind() != 'u')) {
      throw py::type_error("triangles: expected an integer array of shape (T, 3)");
    }
    const auto t = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(t_any);
    require_shape(t, "triangles", 3, "(T, 3)");
    std::vector<glm::vec3> positions(static_cast<std::size_t>(v.shape(0)));
    const float* pv = v.data();
    for (std::size_t i = 0; i < positions.size(); ++i) {
      positions[i] = {pv[3 * i], pv[3 * i + 1], pv[3 * i + 2]};
    }
    std::vector<glm::uvec3> tris(static_cast<std::size_t>(t.shape(0)));
    const std::int64_t* pt = t.data();
    Aabb box;
    for (std::size_t i = 0; i < tris.size(); ++i) {
      for (int k = 0; k < 3; ++k) {
        const std::int64_t index = pt[3 * i + k];
        if (index < 0 || index >= static_cast<std::int64_t>(positions.size())) {
          throw py::value_error("triangles[" + std::to_string(i) + "]: index " +
                                std::to_string(index) + " out of range for " +
                                std::to_string(positions.size()) + " vertices");
        }
        const glm::vec3& p = positions[static_cast<std::size_t>(index)];
        for (int a = 0; a < 3; ++a) {
          if (!(std::abs(p[a]) <= kMaxCoordinate)) {
            throw py::value_error("vertices[" + std::to_string(index) +
                                  "]: not finite or outside the supported range (|x| <= 1e11)");
          }
        }
        tris[i][k] = static_cast<std::uint32_t>(index);
        box.extend(p);
      }
    }
    check_idle();
    mark_changed();
    bounds_.push_back(box);
    triangles_ += tris.size();
    source_.meshes.push_back(Mesh{positions, tris});
    return picker_->add_mesh(positions, tris);
  }

  std::uint32_t add_object(std::uint32_t mesh, const py::handle& matrix, std::uint32_t mask,
                           std::optional<std::string> name) {
    // Arguments first (a conversion may run Python code, and so let other
    // threads in), then the checks against the scene, then the change.
    const glm::dmat4 m = to_matrix(matrix, "matrix");
    check_idle();
    if (mesh >= bounds_.size()) {
      throw py::index_error("mesh: no mesh " + std::to_string(mesh) + " (the scene has " +
                            std::to_string(bounds_.size()) + ")");
    }
    check_range(bounds_[mesh], m, "matrix");
    mark_changed();
    const std::uint32_t id = picker_->add_object(mesh, m, mask);
    names_.push_back(name ? valid_utf8(*name) : "object" + std::to_string(id));
    object_mesh_.push_back(mesh);
    Object o;
    o.mesh = mesh;
    o.place(m);
    o.name = names_.back();
    o.mask = mask;
    source_.objects.push_back(std::move(o));
    removed_.push_back(false);
    return id;
  }

  void set_matrix(std::uint32_t id, const py::handle& matrix) {
    const glm::dmat4 m = to_matrix(matrix, "matrix");  // as add_object: arguments first
    check_idle();
    check_live(id);
    check_range(bounds_[object_mesh_[id]], m, "matrix");
    mark_changed();  // before the engine changes: queries then refuse
    picker_->set_matrix(id, m);
    source_.objects[id].place(m);
  }

  // set_matrix(ids[k], matrices[k]) for every k, in order, in one call;
  // every id and matrix is checked before any object moves.
  void set_matrices(const py::handle& ids, const py::handle& matrices) {
    const py::array ids_any = py::array::ensure(ids);
    // (An empty list is float64 to numpy: any dtype will do for no ids.)
    if (!ids_any || (ids_any.size() != 0 && ids_any.dtype().kind() != 'i' &&
                     ids_any.dtype().kind() != 'u')) {
      throw py::type_error("ids: expected an integer array of shape (N,)");
    }
    const auto id_array =
        py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(ids_any);
    if (id_array.ndim() != 1) {
      throw py::value_error("ids: expected shape (N,), got " + shape_of(id_array));
    }
    const auto m = as_array<double>(matrices, "matrices", "(N, 4, 4)");
    if (m.ndim() != 3 || m.shape(0) != id_array.shape(0) || m.shape(1) != 4 || m.shape(2) != 4) {
      throw py::value_error("matrices: expected shape (" + std::to_string(id_array.shape(0)) +
                            ", 4, 4) for " + std::to_string(id_array.shape(0)) + " ids, got " +
                            shape_of(m));
    }
    check_idle();  // as add_object: arguments first
    const std::size_t n = static_cast<std::size_t>(id_array.shape(0));
    std::vector<std::uint32_t> id_of(n);
    std::vector<glm::dmat4> placed(n);
    const std::int64_t* pid = id_array.data();
    // uint64 ids past int64's range became negative in the cast: the
    // message names them as given.
    // (A default array_t is an empty array, not a null handle: hence the
    // flag.)
    const bool u64 = ids_any.dtype().kind() == 'u' && ids_any.dtype().itemsize() == 8;
    py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast> unsigned_ids;
    if (u64) unsigned_ids = decltype(unsigned_ids)::ensure(ids_any);
    const std::uint64_t* uid = u64 && unsigned_ids ? unsigned_ids.data() : nullptr;
    const double* pm = m.data();
    for (std::size_t k = 0; k < n; ++k) {
      auto row = [k](const char* what) {
        return std::string(what) + "[" + std::to_string(k) + "]";
      };
      if (pid[k] < 0 || pid[k] >= static_cast<std::int64_t>(picker_->object_count())) {
        const std::string given = uid ? std::to_string(uid[k]) : std::to_string(pid[k]);
        throw py::index_error(row("ids") + ": object " + given + " does not exist (the scene has " +
                              std::to_string(picker_->object_count()) + ")");
      }
      id_of[k] = static_cast<std::uint32_t>(pid[k]);
      if (removed(id_of[k])) {
        throw py::value_error(row("ids") + ": object " + std::to_string(id_of[k]) + " was removed");
      }
      // The checks' messages name the row only when one fails.
      try {
        placed[k] = matrix_of(pm + 16 * k, "matrices");
        check_range(bounds_[object_mesh_[id_of[k]]], placed[k], "matrices");
      } catch (const py::value_error& e) {
        // "matrices: why" becomes "matrices[k]: why".
        const std::string why = e.what();
        throw py::value_error(row("matrices") + why.substr(std::strlen("matrices")));
      }
    }
    if (n > 0) mark_changed();
    for (std::size_t k = 0; k < n; ++k) {
      picker_->set_matrix(id_of[k], placed[k]);
      source_.objects[id_of[k]].place(placed[k]);
    }
  }

  void set_mask(std::uint32_t id, std::uint32_t mask) {
    check_idle();
    check_live(id);
    picker_->set_mask(id, mask);
    source_.objects[id].mask = mask;
  }

  void remove(std::uint32_t id) {
    check_idle();
    check_live(id);
    if (removed_.size() < source_.objects.size()) removed_.resize(source_.objects.size(), false);
    mark_changed();
    picker_->remove_object(id);
    removed_[id] = true;
  }

  py::dict commit() {
    check_idle();
    CommitStats s;
    {
      committing_ = true;
      struct Done {
        bool& flag;
        ~Done() { flag = false; }  // after the GIL is back
      } done{committing_};
      py::gil_scoped_release release;
      s = picker_->commit();
    }
    dirty_ = false;
    py::dict d;
    d["rebuilt"] = s.rebuilt;
    d["refitted"] = s.refitted;
    d["moved"] = s.moved;
    d["sah_cost"] = s.sah_cost;
    return d;
  }

  py::dict cast_rays(const py::handle& rays, std::optional<double> tmax,
                     std::optional<std::uint32_t> mask, int threads,
                     std::optional<std::int64_t> width) const {
    const QueryGuard busy = begin_query();
    if (width && *width < 1) throw py::value_error("width: expected an integer >= 1");
    const QueryOptions options = options_of(mask);
    const py::array a = py::array::ensure(rays);
    const bool single = a && a.dtype().kind() == 'f' && a.dtype().itemsize() == 4;
    std::vector<Hit> hits;
    std::vector<RayD> as_double;
    std::vector<Ray> as_float;
    if (single) {
      as_float = float_rays(rays, tmax);
    } else {
      as_double = double_rays(rays, tmax);
    }
    run_parallel(threads, [&] {
      if (width) {
        // An image's rays, row by row: 4x4 tiles on a large scene.
        const auto w = static_cast<std::size_t>(*width);
        hits = single ? picker_->intersect_image(as_float, w, options)
                      : picker_->intersect_image(as_double, w, options);
      } else {
        hits = single ? picker_->intersect_batch(as_float, options)
                      : picker_->intersect_batch(as_double, options);
      }
    });
    return hits_dict(hits, as_float, as_double);
  }

  // The scene file's cameras (glTF), each at 640x480, or 480 high and as
  // wide as the file's aspect ratio says; cameras whose node cannot place
  // one (a degenerate matrix) are left out. resized() sets another size.
  py::list cameras() const {
    py::list out;
    for (const SceneCamera& c : cameras_) {
      const int height = 480;
      const int width = c.aspect > 0.0 && c.aspect < 64.0 ? int(std::lround(480.0 * c.aspect)) : 640;
      const CameraSpec s = camera_spec(c, std::max(width, 1), height);
      if (!check_camera(s).empty()) continue;
      out.append(PyCamera(s, !c.name.empty() ? c.name : c.camera_name));
    }
    return out;
  }

  py::dict pick_pixels(const PyCamera& camera, const py::handle& pixels, std::optional<double> tmax,
                       std::optional<std::uint32_t> mask, int threads) const {
    const QueryGuard busy = begin_query();
    if (tmax && !(*tmax >= 0.0)) throw py::value_error("tmax: expected a number >= 0");
    std::vector<Ray> rays = camera.float_rays(pixels);
    if (tmax) {
      for (Ray& r : rays) r.tmax = static_cast<float>(*tmax);
    }
    std::vector<Hit> hits;
    run_parallel(threads, [&] { hits = picker_->intersect_batch(rays, options_of(mask)); });
    return hits_dict(hits, rays, {});
  }

  py::array_t<std::int64_t> select(const PyCamera& camera, const py::handle& rect,
                                   const std::string& rule, bool visible_only,
                                   std::optional<std::uint32_t> mask, int threads) const {
    const QueryGuard busy = begin_query();
    const auto r = as_array<double>(rect, "rect", "(4,)");
    if (r.ndim() != 1 || r.shape(0) != 4) {
      throw py::value_error("rect: expected (x0, y0, x1, y1), shape (4,), got " + shape_of(r));
    }
    const std::array<double, 4> box{r.at(0), r.at(1), r.at(2), r.at(3)};
    for (double c : box) {
      if (!std::isfinite(c)) throw py::value_error("rect: the corners must be finite");
    }
    if (rule != "touch" && rule != "contain") {
      throw py::value_error("rule: expected 'touch' or 'contain', got '" + printable(rule, 40) +
                            "'");
    }
    std::vector<std::uint32_t> ids;
    run_parallel(threads, [&] {
      ids = tools::select_in_view(*picker_, camera.camera(), box,
                                  rule == "contain" ? SelectRule::kContain : SelectRule::kTouch,
                                  visible_only, options_of(mask));
    });
    py::array_t<std::int64_t> out(static_cast<py::ssize_t>(ids.size()));
    auto o = out.mutable_unchecked<1>();
    for (std::size_t i = 0; i < ids.size(); ++i) o(py::ssize_t(i)) = ids[i];
    return out;
  }

  py::array_t<std::uint8_t> render(const PyCamera& camera, const std::string& color,
                                   const py::handle& highlight, int threads) const {
    const QueryGuard busy = begin_query();
    const std::optional<tools::Colouring> colouring = tools::colouring_of(color);
    if (!colouring) {
      throw py::value_error("color: expected 'shade', 'id', 'ids', 'depth' or 'normal', got '" +
                            printable(color, 40) + "'");
    }
    std::vector<std::uint8_t> lit(picker_->object_count(), 0);
    bool any = false;
    if (!highlight.is_none()) {
      const py::array h = py::array::ensure(highlight);
      if (!h || (h.dtype().kind() != 'i' && h.dtype().kind() != 'u') || h.ndim() > 1) {
        throw py::type_error("highlight: expected object ids (an integer array or list)");
      }
      if (*colouring == tools::Colouring::kIds && h.size() > 0) {
        throw py::value_error("highlight: color='ids' is the exact id buffer; no highlight");
      }
      const auto ids = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(h);
      for (py::ssize_t i = 0; i < ids.size(); ++i) {
        const std::int64_t id = ids.data()[i];
        if (id < 0 || id >= std::int64_t(lit.size())) {
          throw py::index_error("highlight: object " + std::to_string(id) +
                                " does not exist (the scene has " + std::to_string(lit.size()) +
                                ")");
        }
        lit[std::size_t(id)] = 1;
        any = true;
      }
    }
    tools::RenderedView view;
    run_parallel(threads, [&] {
      view = tools::render_view(*picker_, camera.camera(), mode_, *colouring, lit);
      if (any) tools::outline_lit(view, lit);
    });
    const py::ssize_t H = view.image.height, W = view.image.width;
    py::array_t<std::uint8_t> out({H, W, py::ssize_t{3}});
    std::memcpy(out.mutable_data(), view.image.pixels.data(), std::size_t(H * W * 3));
    return out;
  }

 private:
  // The cast_rays() dict of `hits`, the answers to `as_float` rays (or, when
  // empty, to `as_double` rays): points o + t d in double from the rays as
  // given, rounded once (as the CLI prints them).
  py::dict hits_dict(const std::vector<Hit>& hits, const std::vector<Ray>& as_float,
                     const std::vector<RayD>& as_double) const {
    const bool single = !as_float.empty() || as_double.empty();
    const auto n = static_cast<py::ssize_t>(hits.size());
    py::array_t<float> t(n);
    py::array_t<std::int64_t> object(n), triangle(n);
    py::array_t<float> point({n, py::ssize_t{3}});
    auto pt = t.mutable_unchecked<1>();
    auto po = object.mutable_unchecked<1>();
    auto ptri = triangle.mutable_unchecked<1>();
    auto pp = point.mutable_unchecked<2>();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (py::ssize_t i = 0; i < n; ++i) {
      const Hit& h = hits[static_cast<std::size_t>(i)];
      pt(i) = h.t;
      po(i) = h.hit() ? std::int64_t{h.object} : -1;
      ptri(i) = h.hit() && h.triangle != kInvalidId ? std::int64_t{h.triangle} : -1;
      // o + t d, in double from the ray as given, rounded once (as the CLI).
      const glm::dvec3 p = single ? hit_point(as_float[i], h) : hit_point(as_double[i], h);
      for (int k = 0; k < 3; ++k) pp(i, k) = h.hit() ? static_cast<float>(p[k]) : nan;
    }
    py::dict out =
        arrays_dict({{"t", t}, {"object", object}, {"triangle", triangle}, {"point", point}});
    if (mode_ == PickMode::kMesh) {
      py::array_t<float> normal({n, py::ssize_t{3}});
      auto pn = normal.mutable_unchecked<2>();
      for (py::ssize_t i = 0; i < n; ++i) {
        const glm::vec3 v = picker_->world_normal(hits[static_cast<std::size_t>(i)]);
        for (int k = 0; k < 3; ++k) pn(i, k) = v[k];
      }
      out["normal"] = normal;
    }
    return out;
  }


 public:
  py::array_t<bool> occluded(const py::handle& rays, std::optional<double> tmax,
                             std::optional<std::uint32_t> mask, int threads) const {
    const QueryGuard busy = begin_query();
    const QueryOptions options = options_of(mask);
    const std::vector<RayD> r = double_rays(rays, tmax);
    std::vector<std::uint8_t> hit(r.size(), 0);
    run_parallel(threads, [&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, r.size(), 1024),
                        [&](const tbb::blocked_range<std::size_t>& range) {
                          for (std::size_t i = range.begin(); i != range.end(); ++i) {
                            hit[i] = picker_->occluded(r[i], options) ? 1 : 0;
                          }
                        });
    });
    py::array_t<bool> out(static_cast<py::ssize_t>(r.size()));
    auto po = out.mutable_unchecked<1>();
    for (std::size_t i = 0; i < r.size(); ++i) po(static_cast<py::ssize_t>(i)) = hit[i] != 0;
    return out;
  }

  py::dict all_hits(const py::handle& rays, std::optional<std::size_t> limit,
                    std::optional<std::uint32_t> mask, int threads) const {
    const QueryGuard busy = begin_query();
    const QueryOptions options = options_of(mask);
    const std::vector<RayD> r = double_rays(rays, std::nullopt);
    std::vector<std::vector<Hit>> per_ray(r.size());
    run_parallel(threads, [&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, r.size(), 256),
                        [&](const tbb::blocked_range<std::size_t>& range) {
                          for (std::size_t i = range.begin(); i != range.end(); ++i) {
                            per_ray[i] = picker_->intersect_all(r[i], options,
                                                                limit.value_or(SIZE_MAX));
                          }
                        });
    });
    std::size_t total = 0;
    for (const auto& v : per_ray) total += v.size();
    const auto n = static_cast<py::ssize_t>(total);
    py::array_t<std::int64_t> ray(n), object(n), triangle(n);
    py::array_t<float> t(n);
    auto pr = ray.mutable_unchecked<1>();
    auto po = object.mutable_unchecked<1>();
    auto ptri = triangle.mutable_unchecked<1>();
    auto pt = t.mutable_unchecked<1>();
    py::ssize_t k = 0;
    for (std::size_t i = 0; i < per_ray.size(); ++i) {
      for (const Hit& h : per_ray[i]) {
        pr(k) = static_cast<std::int64_t>(i);
        po(k) = h.object;
        ptri(k) = h.triangle != kInvalidId ? std::int64_t{h.triangle} : -1;
        pt(k) = h.t;
        ++k;
      }
    }
    return arrays_dict({{"ray", ray}, {"object", object}, {"triangle", triangle}, {"t", t}});
  }

  // `points` as world points: (N, 3), finite and within kMaxInputPoint (the
  // scenes' range, as for vertices).
  static std::vector<glm::dvec3> world_points(const py::handle& points) {
    const auto a = as_array<double>(points, "points", "(N, 3)");
    require_shape(a, "points", 3, "(N, 3)");
    std::vector<glm::dvec3> p(static_cast<std::size_t>(a.shape(0)));
    const double* d = a.data();
    for (std::size_t i = 0; i < p.size(); ++i) {
      p[i] = {d[3 * i], d[3 * i + 1], d[3 * i + 2]};
      for (int axis = 0; axis < 3; ++axis) {
        if (!(std::abs(p[i][axis]) <= kMaxInputPoint)) {
          throw py::value_error("points[" + std::to_string(i) +
                                "]: not finite or outside the supported range (|x| <= 1e11)");
        }
      }
    }
    return p;
  }
  static double reach(std::optional<double> max_distance) {
    if (max_distance && !(*max_distance >= 0.0)) {
      throw py::value_error("max_distance: expected a number >= 0");
    }
    return max_distance.value_or(std::numeric_limits<double>::infinity());
  }

  // The Picker's batch point query `query` (closest_points or
  // signed_distances) of `points` (N, 3) within max_distance (None: any
  // distance) among the layers of `mask`, each argument checked first.
  template <class Result>
  std::vector<Result> point_batch(
      std::vector<Result> (Picker::*query)(std::span<const glm::dvec3>, const QueryOptions&,
                                           double) const,
      const py::handle& points, std::optional<double> max_distance,
      std::optional<std::uint32_t> mask, int threads) const {
    const QueryGuard busy = begin_query();
    const std::vector<glm::dvec3> p = world_points(points);
    const double limit = reach(max_distance);
    std::vector<Result> out;
    run_parallel(threads, [&] { out = (picker_.get()->*query)(p, options_of(mask), limit); });
    return out;
  }

  py::array_t<double> distance(const py::handle& points, std::optional<double> max_distance,
                               std::optional<std::uint32_t> mask, int threads) const {
    const std::vector<PointHit> hits =
        point_batch(&Picker::closest_points, points, max_distance, mask, threads);
    py::array_t<double> out(static_cast<py::ssize_t>(hits.size()));
    auto o = out.mutable_unchecked<1>();
    for (std::size_t i = 0; i < hits.size(); ++i) o(py::ssize_t(i)) = hits[i].distance;
    return out;
  }

  py::array_t<double> signed_distance(const py::handle& points,
                                      std::optional<double> max_distance,
                                      std::optional<std::uint32_t> mask, int threads) const {
    const std::vector<double> d =
        point_batch(&Picker::signed_distances, points, max_distance, mask, threads);
    return py::array_t<double>(static_cast<py::ssize_t>(d.size()), d.data());
  }

  py::array_t<bool> contains(const py::handle& points, std::optional<std::uint32_t> mask,
                             int threads) const {
    const QueryGuard busy = begin_query();
    const std::vector<glm::dvec3> p = world_points(points);
    std::vector<std::uint32_t> holder;
    run_parallel(threads, [&] { holder = picker_->containing_objects(p, options_of(mask)); });
    py::array_t<bool> out(static_cast<py::ssize_t>(holder.size()));
    auto o = out.mutable_unchecked<1>();
    for (std::size_t i = 0; i < holder.size(); ++i) o(py::ssize_t(i)) = holder[i] != kInvalidId;
    return out;
  }

  py::dict closest_points(const py::handle& points, std::optional<double> max_distance,
                          std::optional<std::uint32_t> mask, int threads) const {
    const std::vector<PointHit> hits =
        point_batch(&Picker::closest_points, points, max_distance, mask, threads);
    const auto n = static_cast<py::ssize_t>(hits.size());
    py::array_t<std::int64_t> object(n), triangle(n);
    py::array_t<double> distance(n);
    py::array_t<double> point({n, py::ssize_t{3}});
    auto po = object.mutable_unchecked<1>();
    auto pt = triangle.mutable_unchecked<1>();
    auto pd = distance.mutable_unchecked<1>();
    auto pp = point.mutable_unchecked<2>();
    for (py::ssize_t i = 0; i < n; ++i) {
      const PointHit& h = hits[static_cast<std::size_t>(i)];
      po(i) = h.hit() ? std::int64_t{h.object} : -1;
      pt(i) = h.hit() && h.triangle != kInvalidId ? std::int64_t{h.triangle} : -1;
      pd(i) = h.distance;
      for (int k = 0; k < 3; ++k) {
        pp(i, k) = h.hit() ? h.point[k] : std::numeric_limits<double>::quiet_NaN();
      }
    }
    return arrays_dict(
        {{"object", object}, {"triangle", triangle}, {"distance", distance}, {"point", point}});
  }

  // Seconds that the C++ batch query alone takes on these rays (converted
  // first, untimed): the bench's reference for cast_rays' overhead.
  double time_batch(const py::handle& rays, int threads) const {
    const QueryGuard busy = begin_query();
    const std::vector<RayD> r = double_rays(rays, std::nullopt);
    double seconds = 0.0;
    run_parallel(threads, [&] {
      const auto start = std::chrono::steady_clock::now();
      const std::vector<Hit> hits = picker_->intersect_batch(r, options_of(std::nullopt));
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      volatile std::uint32_t sink = hits.empty() ? 0 : hits[0].object;
      (void)sink;
    });
    return seconds;
  }

  const std::vector<std::string>& names() const { return names_; }
  std::size_t size() const { return picker_->object_count(); }
  std::string mode() const { return mode_ == PickMode::kMesh ? "mesh" : "obb"; }

  // (N, 2, 3): each object's world box (min, max), NaN when it cannot be hit.
  py::array_t<float> boxes() const {
    const QueryGuard busy = begin_reading();
    const auto n = static_cast<py::ssize_t>(picker_->object_count());
    py::array_t<float> out({n, py::ssize_t{2}, py::ssize_t{3}});
    auto p = out.mutable_unchecked<3>();
    for (py::ssize_t i = 0; i < n; ++i) {
      const auto id = static_cast<std::uint32_t>(i);
      const Aabb b = picker_->alive(id) ? picker_->obb(id).world_bounds() : Aabb{};
      for (int k = 0; k < 3; ++k) {
        p(i, 0, k) = b.empty() ? std::numeric_limits<float>::quiet_NaN() : b.min[k];
        p(i, 1, k) = b.empty() ? std::numeric_limits<float>::quiet_NaN() : b.max[k];
      }
    }
    return out;
  }

  // (N, 4, 4) float64: each object's matrix, row-major as numpy reads it:
  // the linear part as the picker holds it (float), the translation with
  // its part beyond float.
  py::array_t<double> matrices() const {
    const auto n = static_cast<py::ssize_t>(picker_->object_count());
    py::array_t<double> out({n, py::ssize_t{4}, py::ssize_t{4}});
    auto p = out.mutable_unchecked<3>();
    for (py::ssize_t i = 0; i < n; ++i) {
      const glm::dmat4 m = source_.objects[static_cast<std::size_t>(i)].world_matrix();
      for (int r = 0; r < 4; ++r) {
        for (int c = 0; c < 4; ++c) p(i, r, c) = m[c][r];
      }
    }
    return out;
  }

  py::dict stats() const {
    const QueryGuard busy = begin_reading();
    const BvhStats s = picker_->bvh_stats();
    py::dict d;
    d["objects"] = picker_->object_count();
    d["meshes"] = picker_->mesh_count();
    d["triangles"] = triangles_;
    d["nodes"] = s.nodes;
    d["leaves"] = s.leaves;
    d["max_depth"] = s.max_depth;
    d["sah_cost"] = s.sah_cost;
    d["memory_bytes"] = picker_->memory_bytes();
    // What the queries run on: the top level's slots per node (16 where
    // the CPU has AVX-512, else 8) and its node test's instruction set.
    d["top_width"] = picker_->top_width();
    const Isa isa = picker_->isa();
    d["isa"] = isa == Isa::kAvx512 ? "avx512" : isa == Isa::kAvx2 ? "avx2" : "sse2";
    // "saved": the trees came with a saved scene (open_saved, unpickling),
    // no build; "built": built here.
    d["trees"] = saved_trees_ ? "saved" : "built";
    return d;
  }

  std::string repr() const {
    return "<raypick.Scene: " + std::to_string(picker_->object_count()) + " objects, " +
           std::to_string(picker_->mesh_count()) + " meshes, " + std::to_string(triangles_) +
           " triangles, mode '" + mode() + "'>";
  }

 private:
  void check_id(std::uint32_t id) const {
    if (id >= picker_->object_count()) {
      throw py::index_error("object " + std::to_string(id) + " does not exist (the scene has " +
                            std::to_string(picker_->object_count()) + ")");
    }
  }
  bool removed(std::uint32_t id) const { return id < removed_.size() && removed_[id]; }
  // An object that exists and was not removed (moving, masking or
  // removing a removed one is the caller's mistake: an error, not a no-op).
  void check_live(std::uint32_t id) const {
    check_id(id);
    if (removed(id)) {
      throw py::value_error("object " + std::to_string(id) + " was removed");
    }
  }
  // Adds and moves take effect at commit(): queries refuse until then.
  void mark_changed() { dirty_ = true; }
  // A query, from its first step (its arguments' conversion may run
  // Python code, and so let other threads in) to its last (the answer's
  // arrays): the scene counts it, and a change from another thread raises
  // instead of pulling the trees from under it.
  struct QueryGuard {
    const Scene& scene;
    ~QueryGuard() { --scene.queries_; }  // the GIL held, as at the start
  };
  QueryGuard begin_query() const {
    check_committed();
    ++queries_;
    return QueryGuard{*this};
  }
  // The same for a call that reads the engine's objects or trees but not
  // as a query (boxes, stats, the saved form): a scene changed since its
  // commit is fine, one being committed is not.
  QueryGuard begin_reading() const {
    check_not_committing();
    ++queries_;
    return QueryGuard{*this};
  }
  // While another thread commits, nothing reads the engine: RuntimeError.
  void check_not_committing() const {
    if (committing_) {
      throw std::runtime_error(
          "the scene is being committed by another thread: use it when commit() returns");
    }
  }
  // Changes (adds, moves, masks, removals, commit) wait for no one: while
  // another thread queries or commits, they raise RuntimeError.
  void check_idle() const {
    check_not_committing();
    if (queries_ > 0) {
      throw std::runtime_error(
          "the scene is being queried by another thread: change it when that query returns");
    }
  }
  void check_committed() const {
    check_not_committing();
    if (dirty_) {
      throw py::value_error("the scene changed since its last commit(): call commit() first");
    }
  }
  // The mesh's box placed by `m` as the engine holds it must stay within
  // the supported range: the rule loading a scene applies (world_reach), so
  // that what is added here also saves, pickles and loads again.
  static void check_range(const Aabb& local, const glm::dmat4& m, const char* what) {
    if (local.empty()) return;
    Object placed;
    placed.place(m);
    const glm::dvec3 reach = world_reach(local, placed);
    for (int a = 0; a < 3; ++a) {
      if (!(reach[a] <= double(kMaxCoordinate))) {
        throw py::value_error(std::string(what) +
                              ": places the mesh outside the supported range (|x| <= 1e11)");
      }
    }
  }
  QueryOptions options_of(std::optional<std::uint32_t> mask) const {
    return QueryOptions(mode_, mask.value_or(~0u));
  }
  // The rays of an (N, 6) array, checked row by row.
  template <class R, class T>
  std::vector<R> rays_of(const py::handle& value, std::optional<double> tmax) const {
    const auto a = as_array<T>(value, "rays", "(N, 6)");
    require_shape(a, "rays", 6, "(N, 6)");
    if (tmax && !(*tmax >= 0.0)) throw py::value_error("tmax: expected a number >= 0");
    const T* p = a.data();
    std::vector<R> out(static_cast<std::size_t>(a.shape(0)));
    for (std::size_t i = 0; i < out.size(); ++i) {
      R& r = out[i];
      for (int k = 0; k < 3; ++k) {
        r.org[k] = p[6 * i + k];
        r.dir[k] = static_cast<float>(p[6 * i + 3 + k]);
      }
      if (tmax) r.tmax = static_cast<float>(*tmax);
      if (!is_valid(r)) {
        throw py::value_error("rays[" + std::to_string(i) +
                              "]: origin and direction must be finite, the direction non-zero");
      }
    }
    return out;
  }
  std::vector<Ray> float_rays(const py::handle& v, std::optional<double> tmax) const {
    return rays_of<Ray, float>(v, tmax);
  }
  std::vector<RayD> double_rays(const py::handle& v, std::optional<double> tmax) const {
    return rays_of<RayD, double>(v, tmax);
  }

  PickMode mode_;
  std::unique_ptr<Picker> picker_;
  std::vector<std::string> names_;
  std::vector<Aabb> bounds_;  // by mesh
  std::vector<std::uint32_t> object_mesh_;  // by object
  std::size_t triangles_ = 0;
  bool dirty_ = false;
  // Calls running without the GIL on other threads: queries (how many) and
  // a commit. Read and written with the GIL held.
  mutable int queries_ = 0;
  bool committing_ = false;
  bool saved_trees_ = false;  // the picker adopted a saved scene's trees
  std::vector<SceneCamera> cameras_;
  // What the scene holds, for save() and pickling: the loaded scene or the
  // meshes and objects added, with moves and masks applied; removed_ by id.
  raypick::Scene source_;
  std::vector<bool> removed_;
};

}  // namespace
}  // namespace raypick::python

// (InitializedCaster, above.)
namespace pybind11::detail {
template <>
class type_caster<raypick::python::Scene>
    : public raypick::python::InitializedCaster<raypick::python::Scene> {};
}  // namespace pybind11::detail

namespace raypick::python {
namespace {

Scene load(const std::string& path, const std::string& mode, std::optional<std::string> root,
           std::optional<std::uint64_t> max_bytes, std::optional<std::uint64_t> max_vertices,
           std::optional<std::uint64_t> max_triangles, std::optional<std::uint64_t> max_objects,
           std::optional<std::uint64_t> max_memory) {
  const PickMode m = mode_of(mode);
  LoadOptions options;
  if (root) options.root = *root;
  if (max_bytes) options.budget.max_bytes = *max_bytes;
  if (max_vertices) options.budget.max_vertices = *max_vertices;
  if (max_triangles) options.budget.max_triangles = *max_triangles;
  if (max_objects) options.budget.max_objects = *max_objects;
  if (max_memory) options.budget.max_memory = *max_memory;
  std::optional<LoadResult> r;
  {
    py::gil_scoped_release release;
    r.emplace(load_scene(path, options));
  }
  if (!r->ok()) {
    PyErr_SetString(g_load_error, printable(r->error().to_string()).c_str());
    throw py::error_already_set();
  }
  return Scene(std::move(r->scene()), m, r->saved_trees);
}

Scene open_saved(const std::string& path, const std::string& mode,
                 std::optional<std::uint64_t> max_bytes, std::optional<std::uint64_t> max_vertices,
                 std::optional<std::uint64_t> max_triangles,
                 std::optional<std::uint64_t> max_objects, std::optional<std::uint64_t> max_memory) {
  const std::string ext = path.size() >= 8 ? path.substr(path.size() - 8) : "";
  std::string lower = ext;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != ".rpscene") {
    throw py::value_error("path: a saved scene ends in .rpscene (Scene.save writes one), got '" +
                          printable(path, 80) + "'");
  }
  return load(path, mode, std::nullopt, max_bytes, max_vertices, max_triangles, max_objects,
              max_memory);
}

}  // namespace
}  // namespace raypick::python

PYBIND11_MODULE(raypick, m) {
  using raypick::python::PyCamera;
  using raypick::python::Scene;
  m.doc() =
      "raypick: ray picking of objects in 3D scenes (BVH over oriented boxes, exact mesh hits).\n"
      "Rays are (N, 6) arrays of ox, oy, oz, dx, dy, dz; float64 rays keep their origins in\n"
      "double precision. See docs/python.md.";
  m.attr("__version__") = RAYPICK_VERSION;
  raypick::python::g_load_error =
      PyErr_NewException("raypick.LoadError", PyExc_ValueError, nullptr);
  m.attr("LoadError") = py::handle(raypick::python::g_load_error);

  py::class_<PyCamera>(m, "Camera",
                       "A camera, as the contract's screen space defines it: pixel (i, j)'s "
                       "centre is at (i + 0.5, j + 0.5), (0, 0) the image's top-left corner.")
      .def(py::init(&PyCamera::make), py::arg("eye"), py::arg("target"),
           py::arg("up") = py::make_tuple(0.0, 1.0, 0.0), py::arg("width") = 640,
           py::arg("height") = 480, py::arg("fov") = py::none(),
           py::arg("ortho_height") = py::none(),
           "A look-at camera: eye and target (3,) world points, up (3,) a direction, an image "
           "of width x height pixels; perspective with vertical field of view `fov` degrees "
           "(default 60), or orthographic with a view `ortho_height` world units high. "
           "Raises ValueError for an unusable one (eye == target, up along the view, ...).")
      .def_property_readonly("eye", &PyCamera::eye)
      .def_property_readonly("target", &PyCamera::target)
      .def_property_readonly("up", &PyCamera::up)
      .def_property_readonly("width", [](const PyCamera& c) { return c.spec().width; })
      .def_property_readonly("height", [](const PyCamera& c) { return c.spec().height; })
      .def_property_readonly("projection", &PyCamera::projection,
                             "'perspective' or 'orthographic'.")
      .def_property_readonly("fov", &PyCamera::fov, "Vertical field of view in degrees "
                                                    "(perspective), else None.")
      .def_property_readonly("ortho_height", &PyCamera::ortho_height,
                             "View height in world units (orthographic), else None.")
      .def_property_readonly("name", &PyCamera::name,
                             "A scene file's camera: its node's name (or the camera's); '' "
                             "otherwise.")
      .def("resized", &PyCamera::resized, py::arg("width"), py::arg("height"),
           "The same camera for an image of width x height pixels.")
      .def("rays", &PyCamera::rays, py::arg("pixels"),
           "The rays through image-plane points (N, 2) in pixels: (N, 6) float64 (origin, "
           "direction), what pick_pixels casts.")
      .def("project", &PyCamera::project, py::arg("points"),
           "The image-plane points (N, 2) float64 of world points (N, 3) in front of the camera.")
      .def("__repr__", &PyCamera::repr);

  // The keyword arguments the batch queries share: how far each ray or point
  // reaches (None: unbounded), the layer mask (None: every layer) and the
  // threads (0: all cores).
  const py::arg_v tmax = py::arg("tmax") = py::none();
  const py::arg_v max_distance = py::arg("max_distance") = py::none();
  const py::arg_v mask = py::arg("mask") = py::none();
  const py::arg_v threads = py::arg("threads") = 0;

  py::class_<Scene>(m, "Scene",
                    "A scene to pick from: meshes placed by 4x4 affine matrices. Ids are "
                    "0, 1, 2, ... in the order objects are added (or as the file orders them).")
      .def(py::init<const std::string&>(), py::arg("mode") = "obb",
           "An empty scene. mode: 'obb' (hits on each object's oriented box) or 'mesh' "
           "(exact triangle hits).")
      .def("add_mesh", &Scene::add_mesh, py::arg("vertices"), py::arg("triangles"),
           "Adds a mesh: vertices (V, 3) real, triangles (T, 3) integer indices. Returns its id.")
      .def("add_object", &Scene::add_object, py::arg("mesh"), py::arg("matrix"),
           py::arg("mask") = 0xFFFFFFFFu, py::arg("name") = py::none(),
           "Places mesh `mesh` by the affine 4x4 `matrix` (row-major, as numpy) with a layer "
           "mask; returns the object id. Takes effect at commit().")
      .def("set_matrix", &Scene::set_matrix, py::arg("id"), py::arg("matrix"),
           "Moves object `id`; takes effect at commit() (a refit).")
      .def("set_matrices", &Scene::set_matrices, py::arg("ids"), py::arg("matrices"),
           "Moves objects `ids` (N,) to `matrices` (N, 4, 4), as set_matrix for each in order; "
           "all are checked before any moves. Takes effect at commit().")
      .def("set_mask", &Scene::set_mask, py::arg("id"), py::arg("mask"),
           "Changes object `id`'s layer mask, at once.")
      .def("remove", &Scene::remove, py::arg("id"),
           "Removes object `id` (its id is not reused); takes effect at commit().")
      .def("commit", &Scene::commit,
           "Brings the BVH up to date after adds, moves and removals (releases the GIL). "
           "Returns a dict: rebuilt, refitted, moved, sah_cost.")
      .def("cast_rays", &Scene::cast_rays, py::arg("rays"), tmax, mask, threads,
           py::arg("width") = py::none(),
           "Nearest hits of rays (N, 6): ox oy oz dx dy dz, float32 or float64 (float64 keeps "
           "origins in double, as the CLI does). Directions need not be unit length; t is in "
           "units of the given direction. Returns a dict of arrays: t (N,) float32, inf on a "
           "miss; object (N,) int64, -1 on a miss; triangle (N,) int64, -1 in obb mode or on a "
           "miss; point (N, 3) float32, NaN on a miss; normal (N, 3) float32 in mesh mode "
           "(unit world-space geometric normal, 0 on a miss). threads=0 uses all cores. "
           "width: the rays are an image's pixels row by row, `width` to a row; the same "
           "answers, faster on large scenes (4x4 pixel tiles walk together). The GIL is "
           "released.")
      .def("occluded", &Scene::occluded, py::arg("rays"), tmax, mask, threads,
           "(N,) bool: whether each ray (N, 6) hits anything within tmax.")
      .def("all_hits", &Scene::all_hits, py::arg("rays"), py::arg("limit") = py::none(), mask,
           threads,
           "Every object each ray hits, one hit per object: flat arrays ray, object, triangle, "
           "t (int64, int64, int64, float32), grouped by ray, nearest first; at most `limit` "
           "per ray.")
      .def("closest_points", &Scene::closest_points, py::arg("points"), max_distance, mask, threads,
           "The object nearest to each point (N, 3), in world space: obb mode the nearest "
           "point of its box (0 inside), mesh mode of its triangles. Returns a dict of "
           "arrays: object (N,) int64, -1 when nothing lies within max_distance; triangle "
           "(N,) int64, -1 in obb mode; distance (N,) float64, inf on a miss; point (N, 3) "
           "float64, NaN on a miss. Ties: lower object id, then triangle id.")
      .def("distance", &Scene::distance, py::arg("points"), max_distance, mask, threads,
           "(N,) float64: each point's distance to the nearest object, as closest_points "
           "measures it (obb mode 0 inside a box); inf when nothing lies within max_distance.")
      .def("signed_distance", &Scene::signed_distance, py::arg("points"), max_distance, mask,
           threads,
           "(N,) float64: the distance to the nearest surface, negative inside. mesh mode: "
           "inside as contains() says, -inf inside with no surface within max_distance; obb "
           "mode: minus the depth in the box that holds the point deepest. For closed meshes; "
           "see docs/python.md for open ones.")
      .def("contains", &Scene::contains, py::arg("points"), mask, threads,
           "(N,) bool: whether each point (N, 3) is inside an object or on its surface. obb "
           "mode: inside its box; mesh mode: the object's generalized winding number (the "
           "solid angle its triangles subtend, over 4 pi) is at least 1/2 in magnitude.")
      .def("_time_batch", &Scene::time_batch, py::arg("rays"), threads,
           "Seconds the C++ intersect_batch alone takes on float64 rays (N, 6), for "
           "apps/python/bench_python.py.")
      .def_property_readonly("cameras", &Scene::cameras,
                             "The scene file's cameras (glTF) as Camera objects, 480 pixels high "
                             "and as wide as the file's aspect ratio says (else 640); use "
                             "Camera.resized() for another size. Empty for other scenes.")
      .def("pick_pixels", &Scene::pick_pixels, py::arg("camera"), py::arg("pixels"), tmax, mask,
           threads,
           "Picks through image-plane points (N, 2) of `camera` (pixel (i, j)'s centre is "
           "(i + 0.5, j + 0.5)): the dict of cast_rays() for the camera's rays, as `raypick "
           "pick --pixels` answers. The GIL is released.")
      .def("select", &Scene::select, py::arg("camera"), py::arg("rect"),
           py::arg("rule") = "touch", py::arg("visible_only") = false, mask, threads,
           "Marquee selection: the ids (int64, ascending) of the objects in the region the "
           "rectangle rect = (x0, y0, x1, y1) of `camera`'s image covers (corners in either "
           "order, boundary included). rule 'touch': the object meets the region, 'contain': "
           "it lies in it; visible_only keeps those the pick also hits at a pixel centre inside "
           "the rectangle. As `raypick select`.")
      .def("render", &Scene::render, py::arg("camera"), py::arg("color") = "shade",
           py::arg("highlight") = py::none(), threads,
           "The picture `camera` sees, one ray per pixel centre: (height, width, 3) uint8 RGB, "
           "rows top to bottom, what `raypick render` writes to its PNG. color: 'shade' "
           "(palette colour under a headlight), 'id' (palette, flat), 'ids' (the exact id "
           "buffer: RGB = id + 1 big-endian, misses black), 'depth' or 'normal'. highlight: "
           "object ids tinted and outlined.")
      .def_property_readonly("names", &Scene::names, "Object names, by id.")
      .def_property_readonly("mode", &Scene::mode, "'obb' or 'mesh'.")
      .def("boxes", &Scene::boxes,
           "(N, 2, 3) float32: each object's world box (min, max); NaN for one that cannot be "
           "hit or was removed.")
      .def("matrices", &Scene::matrices, "(N, 4, 4) float64: each object's matrix (the translation as given, beyond float).")
      .def("stats", &Scene::stats, "A dict of counts: objects, meshes, triangles, nodes, leaves, "
                                   "max_depth, sah_cost, memory_bytes; trees: 'saved' when "
                                   "they came with a saved scene, else 'built'; and what the "
                                   "queries run on: top_width (8 or 16) and isa ('avx512', "
                                   "'avx2' or 'sse2').")
      .def("save", &Scene::save, py::arg("path"), py::arg("trees") = true,
           "Writes the scene (meshes, objects with their ids, matrices, masks and names, and a "
           "glTF file's cameras; changes since commit() included) to `path` in raypick's saved "
           "form (.rpscene), which raypick.open_saved, raypick.load and `raypick pick` read "
           "back. With trees=True (and nothing changed since commit()), the shape of the BVH "
           "goes along: open_saved in the same mode refits it instead of building one.")
      .def(py::pickle([](const Scene& s) { return s.get_state(); },
                      [](const py::tuple& t) { return Scene::from_state(t); }))
      .def("__len__", &Scene::size)
      .def("__repr__", &Scene::repr);

  m.def("open_saved", &raypick::python::open_saved, py::arg("path"), py::arg("mode") = "obb",
        py::arg("max_bytes") = py::none(), py::arg("max_vertices") = py::none(),
        py::arg("max_triangles") = py::none(), py::arg("max_objects") = py::none(),
        py::arg("max_memory") = py::none(),
        "Opens a scene Scene.save wrote (.rpscene) into a committed Scene, with the load "
        "budgets of raypick.load. A truncated, corrupted or foreign file, or one of another "
        "format version, raises raypick.LoadError naming the file.");
  m.def("load", &raypick::python::load, py::arg("path"), py::arg("mode") = "obb",
        py::arg("root") = py::none(), py::arg("max_bytes") = py::none(),
        py::arg("max_vertices") = py::none(), py::arg("max_triangles") = py::none(),
        py::arg("max_objects") = py::none(), py::arg("max_memory") = py::none(),
        "Loads an OBJ, glTF/GLB or raypick JSON scene (same rules, confinement and budgets as "
        "the CLI) into a committed Scene. Raises raypick.LoadError (a ValueError) naming the "
        "file and line.");
}
