// raypick's saved scene (.rpscene): a loaded scene as a versioned binary
// file, read back without parsing any text. Format (little-endian):
//
//   "RPSCENE\n"                       8 bytes, the magic
//   u32 version                       kSavedVersion (3) when an object has
//                                     a translation_low, else 2
//   u64 mesh count, then per mesh:    u64 V, V x 3 f32 positions,
//                                     u64 T, T x 3 u32 vertex indices
//   u64 object count, then per object: u32 mesh, 16 f32 matrix (column-
//                                     major), 3 f32 translation_low
//                                     (version 3), u32 mask, string name
//   u64 camera count, then per camera: string name, string camera name,
//                                     16 f64 matrix, u8 projection (0
//                                     perspective, 1 orthographic),
//                                     f64 fov_deg, f64 ortho_height, f64 aspect
//   u64 trees length, then its bytes   (version 2) the picker's saved trees
//                                     (Picker::save_trees), opaque here;
//                                     0 when the saver had none
//   u64 FNV-1a 64 of every byte before it
//
// where a string is a u32 length and its bytes. Every count is checked
// against the bytes left before anything is allocated, and against the
// load budget; the checksum refuses a truncated or corrupted file, the
// magic and version a file of another kind or version; validate_scene()
// (load.cpp's guard) checks the rest.
#include "budget.h"
#include "file_io.h"

#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <string>
#include <type_traits>

namespace raypick {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the saved scene format is little-endian, as this host must be");

constexpr char kMagic[8] = {'R', 'P', 'S', 'C', 'E', 'N', 'E', '\n'};

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

class Writer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  void put_array(const T* p, std::size_t n) {
    if (n == 0) return;
    out_.append(reinterpret_cast<const char*>(p), n * sizeof(T));
  }
  void put_string(const std::string& s) {
    put(static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  std::string finish() {
    put(fnv1a(out_));
    return std::move(out_);
  }
  std::string out_;
};

// Reads the checked body; every failure throws the LoadError naming the
// byte offset where the problem is (in LoadError::line's place: "at byte").
class Reader {
 public:
  Reader(std::string_view body, const std::string& file) : body_(body), file_(file) {}

  template <class T>
  T get(const char* what) {
    T v;
    need(sizeof v, 1, what);
    std::memcpy(&v, body_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  // A count of items of `item_bytes` each that must fit in what is left.
  std::uint64_t count(std::size_t item_bytes, const char* what) {
    const std::size_t start = at_;
    const auto n = get<std::uint64_t>(what);
    if (item_bytes > 0 && n > left() / item_bytes) {
      fail(start, std::string(what) + " count " + std::to_string(n) +
                      " is more than the file holds");
    }
    return n;
  }
  template <class T>
  void get_array(T* p, std::size_t n, const char* what) {
    need(sizeof(T), n, what);
    if (n == 0) return;  // an empty mesh's array may have no storage
    std::memcpy(static_cast<void*>(p), body_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
  }
  std::string get_string(const char* what) {
    const auto n = get<std::uint32_t>(what);
    need(1, n, what);
    std::string s(body_.substr(at_, n));
    at_ += n;
    return s;
  }
  std::size_t left() const { return body_.size() - at_; }
  std::size_t at() const { return at_; }
  [[noreturn]] void fail(std::size_t at, const std::string& message) const {
    throw LoadError{LoadError::Kind::kMalformed, file_, 0,
                    "saved scene, byte " + std::to_string(at) + ": " + message};
  }

 private:
  void need(std::size_t size, std::uint64_t n, const char* what) const {
    if (n > left() / (size ? size : 1) || n * size > left()) {
      fail(at_, std::string("the file ends inside ") + what);
    }
  }
  std::string_view body_;
  const std::string& file_;
  std::size_t at_ = 0;
};

void charge(detail::Budget& budget, detail::Budget::Resource r, std::uint64_t n,
            const Reader& in, const std::string& file) {
  if (auto refused = budget.take(r, n)) {
    throw LoadError{LoadError::Kind::kMalformed, file, 0, *refused};
  }
  (void)in;
}

}  // namespace

std::string encode_scene(const Scene& scene, std::string_view trees) {
  // Version 3 only for a scene placed beyond float, so that other files
  // stay readable by a raypick that reads version 2.
  bool low = false;
  for (const Object& o : scene.objects) low = low || o.translation_low != glm::vec3{0.0f};
  Writer w;
  w.put_array(kMagic, sizeof kMagic);
  w.put(low ? kSavedSceneVersion : std::uint32_t{2});
  w.put(static_cast<std::uint64_t>(scene.meshes.size()));
  for (const Mesh& m : scene.meshes) {
    w.put(static_cast<std::uint64_t>(m.positions.size()));
    w.put_array(m.positions.data(), m.positions.size());
    w.put(static_cast<std::uint64_t>(m.triangles.size()));
    w.put_array(m.triangles.data(), m.triangles.size());
  }
  w.put(static_cast<std::uint64_t>(scene.objects.size()));
  for (const Object& o : scene.objects) {
    w.put(o.mesh);
    w.put(o.matrix);
    if (low) w.put(o.translation_low);
    w.put(o.mask);
    w.put_string(o.name);
  }
  w.put(static_cast<std::uint64_t>(scene.cameras.size()));
  for (const SceneCamera& c : scene.cameras) {
    w.put_string(c.name);
    w.put_string(c.camera_name);
    w.put(c.matrix);
    w.put(static_cast<std::uint8_t>(c.projection == Projection::kPerspective ? 0 : 1));
    w.put(c.fov_deg);
    w.put(c.ortho_height);
    w.put(c.aspect);
  }
  w.put(static_cast<std::uint64_t>(trees.size()));
  w.put_array(trees.data(), trees.size());
  return w.finish();
}

std::string save_scene(const Scene& scene, const std::string& path, std::string_view trees) {
  const std::string bytes = encode_scene(scene, trees);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return path + ": cannot create the file: " + std::strerror(errno);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return path + ": cannot write the file: " + std::strerror(errno);
  return {};
}

namespace detail {

LoadResult decode_scene(std::string_view bytes, const std::string& file, Budget& budget,
                        bool require_objects) {
  const auto refuse = [&](std::string message) {
    return fail_result(LoadError::Kind::kMalformed, file, 0, "saved scene: " + std::move(message));
  };
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    return refuse("not a raypick saved scene (its first bytes are not \"RPSCENE\")");
  }
  if (bytes.size() < sizeof kMagic + 4 + 8) return refuse("the file is truncated");
  std::uint32_t version;
  std::memcpy(&version, bytes.data() + sizeof kMagic, 4);
  // Version 1 is version 2 without the trees; version 2 is version 3
  // without the objects' translation_low (placements held beyond float).
  if (version < 1 || version > kSavedSceneVersion) {
    return refuse("format version " + std::to_string(version) + ", this raypick reads versions " +
                  "1 to " + std::to_string(kSavedSceneVersion) +
                  ": save the scene again from its source");
  }
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + body.size(), 8);
  if (stored != fnv1a(body)) {
    return refuse("the checksum does not match: the file is truncated or corrupted");
  }
  Reader in(body.substr(sizeof kMagic + 4), file);
  Scene scene;
  const std::uint64_t meshes = in.count(16, "mesh");
  scene.meshes.resize(meshes);
  for (Mesh& m : scene.meshes) {
    const std::uint64_t v = in.count(12, "vertex");
    charge(budget, Budget::kVertices, v, in, file);
    m.positions.resize(v);
    in.get_array(m.positions.data(), v, "a mesh's vertices");
    const std::uint64_t t = in.count(12, "triangle");
    charge(budget, Budget::kTriangles, t, in, file);
    m.triangles.resize(t);
    in.get_array(m.triangles.data(), t, "a mesh's triangles");
  }
  const std::uint64_t objects = in.count(4 + 64 + (version >= 3 ? 12 : 0) + 4 + 4, "object");
  charge(budget, Budget::kObjects, objects, in, file);
  scene.objects.resize(objects);
  for (Object& o : scene.objects) {
    const std::size_t at = in.at();
    o.mesh = in.get<std::uint32_t>("an object");
    if (o.mesh >= scene.meshes.size()) {
      in.fail(at, "object " + std::to_string(&o - scene.objects.data()) + " names mesh " +
                      std::to_string(o.mesh) + " of " + std::to_string(scene.meshes.size()));
    }
    o.matrix = in.get<glm::mat4>("an object's matrix");
    if (version >= 3) {
      o.translation_low = in.get<glm::vec3>("an object's translation_low");
      // Split again as place() splits it: a forged low part of any size
      // still means matrix[3] + translation_low.
      if (o.translation_low != glm::vec3{0.0f}) o.place(o.world_matrix());
    }
    o.mask = in.get<std::uint32_t>("an object's mask");
    o.name = valid_utf8(in.get_string("an object's name"));
  }
  const std::uint64_t cameras = in.count(4 + 4 + 128 + 1 + 24, "camera");
  scene.cameras.resize(cameras);
  for (SceneCamera& c : scene.cameras) {
    c.name = valid_utf8(in.get_string("a camera's name"));
    c.camera_name = valid_utf8(in.get_string("a camera's name"));
    c.matrix = in.get<glm::dmat4>("a camera's matrix");
    const std::size_t at = in.at();
    const auto projection = in.get<std::uint8_t>("a camera's projection");
    if (projection > 1) in.fail(at, "camera projection " + std::to_string(projection));
    c.projection = projection == 0 ? Projection::kPerspective : Projection::kOrthographic;
    c.fov_deg = in.get<double>("a camera's fov");
    c.ortho_height = in.get<double>("a camera's view height");
    c.aspect = in.get<double>("a camera's aspect ratio");
  }
  std::string trees;
  if (version >= 2) {
    trees.resize(in.count(1, "saved tree byte"));
    in.get_array(trees.data(), trees.size(), "the saved trees");
  }
  if (in.left() != 0) {
    in.fail(in.at(), std::to_string(in.left()) + " bytes after the " +
                         (version >= 2 ? "saved trees" : "last camera"));
  }
  if (require_objects && scene.objects.empty()) return refuse("the scene has no objects");
  LoadResult result(std::move(scene));
  result.saved_trees = std::move(trees);
  return result;
}

LoadResult load_saved_scene(const std::string& path, const LoadOptions&, Budget& budget) {
  const std::string bytes = read_or_fail(path, budget);
  return decode_scene(bytes, path, budget);
}

}  // namespace detail
}  // namespace raypick
