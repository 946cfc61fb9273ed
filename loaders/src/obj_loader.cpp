// The OBJ loader: tinyobjloader parses, raypick checks what it lets through.
//
// tinyobjloader is lenient where picking cannot be: it only warns about face
// indices out of range and drops those faces, and it reads "nan", "1e999"
// or "abc" as coordinates (NaN, inf, 0). So the file goes through a light
// pre-scan of its `v` and `f` lines first, which refuses them with their
// line, and the parsed positions are checked once more for finiteness.
#include <tiny_obj_loader.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <streambuf>
#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "budget.h"
#include "polygon.h"
#include "file_io.h"
#include "raypick/core/text.h"
#include "raypick/loaders/load.h"

namespace raypick {
namespace {

namespace fs = std::filesystem;

// A failed load (detail::fail_result, under a short name).
constexpr auto fail = detail::fail_result;

// ---------------------------------------------------------------------------
// Reading the file

// Hands a buffer we own to tinyobjloader's istream overload without copying.
class BufferStreambuf : public std::streambuf {
 public:
  BufferStreambuf(char* begin, char* end) { setg(begin, begin, end); }
};

// Answers tinyobjloader's `mtllib` requests without reading any material:
// picking never reads them, and the warnings about undefined materials that
// an unread library causes are filtered out. A library must still be a
// relative path inside the allowed root (detail::resolve_reference; the
// first one outside it is kept in `refused()`, and the load is refused
// after parsing, so whether a file exists outside the root does not leak);
// one that is not a regular file there is a warning.
class MtlFileReader : public tinyobj::MaterialReader {
 public:
  MtlFileReader(std::string obj_path, std::string root)
      : obj_path_(std::move(obj_path)), root_(std::move(root)) {}

  bool operator()(const std::string& name, std::vector<tinyobj::material_t>*,
                  std::map<std::string, int>*, std::string* warn,
                  std::string*) override {
    std::string why;
    const std::optional<std::string> path =
        detail::resolve_reference(obj_path_, name, root_, why);
    if (!path) {
      if (!refused_) refused_ = Refusal{name, why};
      return false;
    }
    std::error_code ec;
    if (fs::is_regular_file(*path, ec)) return true;
    if (warn != nullptr) {
      *warn += "material library '" + printable(name, 120) +
               "' not found; materials are ignored\n";
    }
    return false;
  }

  struct Refusal {
    std::string name;  // as the `mtllib` line spells it
    std::string why;
  };
  const std::optional<Refusal>& refused() const { return refused_; }

 private:
  std::string obj_path_;
  std::string root_;
  std::optional<Refusal> refused_;
};

// ---------------------------------------------------------------------------
// The pre-scan

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view skip_blanks(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

// Splits off the next blank-separated token; empty at the end of the line.
std::string_view next_token(std::string_view& rest) {
  rest = skip_blanks(rest);
  std::size_t i = 0;
  while (i < rest.size() && !is_blank(rest[i])) ++i;
  const std::string_view token = rest.substr(0, i);
  rest = rest.substr(i);
  return token;
}

std::size_t count_digits(std::string_view s, std::size_t i) {
  std::size_t n = 0;
  while (i + n < s.size() && s[i + n] >= '0' && s[i + n] <= '9') ++n;
  return n;
}

// True when the whole token is a decimal number of the form
// [+-] (digits [. digits] | . digits) [(e|E) [+-] digits]: the numbers
// tinyobjloader reads as written. It reads "3.1+e2" as 3.1, "abc" as 0 and
// "0x10" as 0 without a word, so those are refused.
bool is_decimal(std::string_view s) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t int_digits = count_digits(s, i);
  i += int_digits;
  std::size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    frac_digits = count_digits(s, i);
    i += frac_digits;
  }
  if (int_digits + frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const std::size_t exp_digits = count_digits(s, i);
    if (exp_digits == 0) return false;
    i += exp_digits;
  }
  return i == s.size();
}

// The decimal exponent of the leading digit of a token that passed
// is_decimal() and is not zero: 2 for "123.4", -3 for "0.00105e0", and
// -5000 for "1e-5000". Saturates far beyond any double.
long long leading_exponent(std::string_view s) {
  constexpr long long kFar = 1000000;
  if (s.front() == '+' || s.front() == '-') s.remove_prefix(1);
  const std::size_t e = s.find_first_of("eE");
  long long exponent = 0;
  if (e != std::string_view::npos) {
    std::string_view digits = s.substr(e + 1);
    const bool negative = digits.front() == '-';
    if (digits.front() == '+' || digits.front() == '-') digits.remove_prefix(1);
    for (const char c : digits) {
      exponent = std::min(exponent * 10 + (c - '0'), kFar);
    }
    if (negative) exponent = -exponent;
    s = s.substr(0, e);
  }
  // Digits before the point count up from 0, after it down from -1.
  const std::size_t point = std::min(s.find('.'), s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '.' || s[i] == '0') continue;
    const long long place = i < point ? static_cast<long long>(point - i - 1)
                                      : -static_cast<long long>(i - point);
    return exponent + place;
  }
  return 0;
}

// True when a token that passed is_decimal() is finite once stored as a
// float (tinyobjloader's real_t). A number too small for a double
// ("1e-5000") underflows to a fine 0, as tinyobjloader reads it.
bool fits_float(std::string_view s) {
  if (s.front() == '+') s.remove_prefix(1);  // from_chars takes no '+'
  constexpr float kMax = std::numeric_limits<float>::max();
  double d = 0.0;
  const std::errc ec = std::from_chars(s.data(), s.data() + s.size(), d).ec;
  if (ec == std::errc::result_out_of_range) return leading_exponent(s) < 0;
  return ec == std::errc{} && std::fabs(d) <= kMax;
}

// What the pre-scan learned: the line of each vertex (1-based), to name the
// line of a position tinyobjloader parsed as non-finite, and how many
// triangles the faces make (n - 2 for n corners), to notice the polygons
// tinyobjloader's ear clipping gives up on.
struct PreScan {
  std::vector<std::size_t> vertex_lines;
  // Each `mtllib` line: its number and what follows the keyword.
  std::vector<std::pair<std::size_t, std::string>> mtllib_lines;
  std::size_t face_triangles = 0;
  // Each face's corner count, in file order: tinyobjloader keeps it in a
  // byte (modulo 256) when it does not triangulate.
  std::vector<std::uint32_t> face_corners;
  std::optional<LoadError> error;
};

// Checks one `v` line: x, y and z must be numbers that fit a float. What
// follows (w, or a vertex colour) is never read by picking and is not
// checked.
std::optional<std::string> check_vertex(std::string_view rest) {
  for (int k = 0; k < 3; ++k) {
    const std::string_view token = next_token(rest);
    if (token.empty() || token.front() == '#') {
      return "vertex has " + std::to_string(k) +
             " coordinates (expected x y z)";
    }
    if (!is_decimal(token)) {
      return "vertex coordinate '" + printable(token, 40) +
             "' is not a number";
    }
    if (!fits_float(token)) {
      return "vertex coordinate '" + printable(token, 40) +
             "' is too large for a float";
    }
  }
  return std::nullopt;
}

// Corners a face may have. Ear clipping (polygon.cpp) is about n log n on
// ordinary polygons but quadratic at worst, so larger polygons
// are refused with their line rather than triangulated slowly.
constexpr std::size_t kMaxFaceCorners = 4096;

// The magnitude of an OBJ index (an optional sign, then digits), 0 when it
// is not one, saturated when it is too long.
std::optional<std::uint64_t> index_magnitude(std::string_view index) {
  if (!index.empty() && (index.front() == '+' || index.front() == '-')) {
    index.remove_prefix(1);
  }
  if (index.empty() || count_digits(index, 0) != index.size()) {
    return std::nullopt;
  }
  std::uint64_t magnitude = 0;
  if (std::from_chars(index.data(), index.data() + index.size(), magnitude)
          .ec != std::errc{}) {
    magnitude = std::numeric_limits<std::uint64_t>::max();  // too long
  }
  return magnitude;
}

// Checks one `f` line against the `vertex_count` vertices defined so far: 3
// to kMaxFaceCorners corners, each v, v/vt, v//vn or v/vt/vn, where v is a
// 1-based vertex index (negative counts back from the last vertex so far,
// -1 being that vertex) and vt and vn are non-zero integers. Texture and
// normal indices are not checked against their arrays: picking reads
// neither. Returns the number of corners, or what is wrong.
struct FaceCheck {
  std::size_t corners = 0;
  std::optional<std::string> problem;
};

FaceCheck check_face(std::string_view rest, std::size_t vertex_count) {
  std::size_t corners = 0;
  for (std::string_view token = next_token(rest); !token.empty();
       token = next_token(rest)) {
    const std::string corner = "face corner '" + printable(token, 40) + "'";
    const std::size_t slash = token.find('/');
    const std::string_view index = token.substr(0, slash);
    const std::optional<std::uint64_t> magnitude = index_magnitude(index);
    if (!magnitude) return {corners, corner + " is not a vertex index"};
    if (*magnitude == 0) {
      return {corners, "face index " + std::string(index) +
                           " is invalid (OBJ indices start at 1)"};
    }
    if (*magnitude > vertex_count) {
      return {corners, "face index " + std::string(index) + " out of range (" +
                           std::to_string(vertex_count) + " vertices)"};
    }
    if (slash != std::string_view::npos) {
      // "/vt", "/vt/vn" or "//vn" follows.
      const std::string_view tail = token.substr(slash + 1);
      const std::size_t second = tail.find('/');
      const std::string_view vt = tail.substr(0, second);
      const std::string_view vn =
          second == std::string_view::npos ? std::string_view{}
                                           : tail.substr(second + 1);
      const auto bad = [&](std::string_view part, bool may_be_empty) {
        if (part.empty()) return !may_be_empty;
        const std::optional<std::uint64_t> m = index_magnitude(part);
        return !m || *m == 0;
      };
      const bool has_vn = second != std::string_view::npos;
      if ((vt.empty() && !has_vn) || bad(vt, has_vn) ||
          (has_vn && bad(vn, false))) {
        return {corners,
                corner + " is malformed (expected v, v/vt, v//vn or v/vt/vn "
                         "with non-zero integer indices)"};
      }
    }
    if (++corners > kMaxFaceCorners) {
      return {corners, "face has more than " + std::to_string(kMaxFaceCorners) +
                           " corners (raypick triangulates at most " +
                           std::to_string(kMaxFaceCorners) + ")"};
    }
  }
  if (corners < 3) {
    return {corners, "face has " + std::to_string(corners) +
                         " corners (expected at least 3)"};
  }
  return {corners, std::nullopt};
}

// One pass over the lines of `data`, split as tinyobjloader splits them
// ("\n", "\r\n" or a lone "\r") and cut at a NUL as it cuts them, so that
// line numbers and vertex counts agree with its own. Also turns the
// tinyobjloader extensions `t` and `vw` into comments, in place: a `t` line
// makes it allocate up to 3 x 8192 values whatever the line holds (a small
// file could ask for gigabytes), a negative `vw` joint fails the load, and
// picking reads neither.
PreScan prescan(std::string& data, const std::string& file) {
  PreScan scan;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < data.size()) {
    std::size_t end = pos;
    while (end < data.size() && data[end] != '\n' && data[end] != '\r') ++end;
    std::size_t next = end + 1;
    if (end < data.size() && data[end] == '\r' && next < data.size() &&
        data[next] == '\n') {
      ++next;
    }
    ++line_no;
    std::string_view line(data.data() + pos, end - pos);
    line = line.substr(0, line.find('\0'));
    const std::string_view body = skip_blanks(line);
    const std::size_t at =
        pos + static_cast<std::size_t>(body.data() - line.data());
    pos = next;

    if (body.empty()) continue;
    // The keyword is the first token: "f" alone is a face with no corners.
    const auto keyword = [&](std::string_view k) {
      return body.substr(0, k.size()) == k &&
             (body.size() == k.size() || is_blank(body[k.size()]));
    };
    std::optional<std::string> problem;
    if (keyword("v")) {
      scan.vertex_lines.push_back(line_no);
      problem = check_vertex(body.substr(1));
    } else if (keyword("f")) {
      FaceCheck face = check_face(body.substr(1), scan.vertex_lines.size());
      problem = std::move(face.problem);
      if (!problem) {
        scan.face_triangles += face.corners - 2;
        scan.face_corners.push_back(static_cast<std::uint32_t>(face.corners));
      }
    } else if (keyword("mtllib")) {
      scan.mtllib_lines.emplace_back(line_no, std::string(body.substr(6)));
    } else if (keyword("t") || keyword("vw")) {
      data[at] = '#';
    }
    if (problem) {
      scan.error = LoadError{LoadError::Kind::kMalformed, file, line_no,
                             std::move(*problem)};
      return scan;
    }
  }
  return scan;
}

// ---------------------------------------------------------------------------
// tinyobjloader's messages

// Splits tinyobjloader's message text into trimmed printable lines
// (raypick::printable), dropping the empty ones and the lone "." it leaves
// after "Degenerated face found\n.".
std::vector<std::string> message_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    while (!line.empty() && (is_blank(line.front()) || line.front() == '\r')) {
      line.remove_prefix(1);
    }
    while (!line.empty() && (is_blank(line.back()) || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    // tinyobjloader quotes what it read: shown printable, and short.
    if (!line.empty() && line != ".") {
      lines.push_back(printable(line, 200));
    }
    pos = end + 1;
  }
  return lines;
}

// The number in the last "line N" of a tinyobjloader message, or 0.
std::size_t line_in_message(const std::string& message) {
  std::size_t line = 0;
  for (std::size_t at = message.find("line "); at != std::string::npos;
       at = message.find("line ", at + 1)) {
    const char* first = message.data() + at + 5;
    std::size_t n = 0;
    auto [ptr, ec] = std::from_chars(first, message.data() + message.size(), n);
    if (ec == std::errc{} && ptr != first) line = n;
  }
  return line;
}

// ---------------------------------------------------------------------------
// Shapes to objects

// One mesh per shape holding only the vertices its triangles use, in order
// of first use. `owner`/`slot` are shared by all shapes, so compacting costs
// O(indices) per shape rather than O(vertices).
std::optional<std::string> build_scene(
    const tinyobj::attrib_t& attrib,
    const std::vector<tinyobj::shape_t>& shapes, detail::Budget& budget,
    Scene& scene, std::span<const std::uint32_t> face_corners, std::size_t& crossed) {
  std::size_t face = 0;  // the next face, in file order
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  const std::size_t vertex_count = attrib.vertices.size() / 3;
  std::vector<std::uint32_t> owner(vertex_count, kNone);
  std::vector<std::uint32_t> slot(vertex_count, 0);

  scene.meshes.resize(shapes.size());
  scene.objects.resize(shapes.size());
  std::vector<glm::vec3> polygon;
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    const tinyobj::shape_t& shape = shapes[s];
    const auto id = static_cast<std::uint32_t>(s);
    Mesh& mesh = scene.meshes[s];
    const auto remap = [&](const tinyobj::index_t& index) -> std::uint32_t {
      const auto v = static_cast<std::size_t>(index.vertex_index);
      if (owner[v] != id) {
        owner[v] = id;
        slot[v] = static_cast<std::uint32_t>(mesh.positions.size());
        mesh.positions.emplace_back(attrib.vertices[3 * v + 0],
                                    attrib.vertices[3 * v + 1],
                                    attrib.vertices[3 * v + 2]);
      }
      return slot[v];
    };

    const std::vector<tinyobj::index_t>& indices = shape.mesh.indices;
    std::size_t used = 0;  // distinct vertices, counted before storing them
    for (const tinyobj::index_t& index : indices) {
      // The pre-scan makes this unreachable; it guards the indexing above.
      if (index.vertex_index < 0 ||
          static_cast<std::size_t>(index.vertex_index) >= vertex_count) {
        return "shape " + std::to_string(s) + " uses vertex " +
               std::to_string(index.vertex_index) + " of " +
               std::to_string(vertex_count);
      }
      const auto v = static_cast<std::size_t>(index.vertex_index);
      if (owner[v] != id) {
        owner[v] = id;
        ++used;
      }
    }
    if (auto over = budget.take(detail::Budget::kVertices, used)) return over;
    mesh.positions.reserve(used);
    for (const tinyobj::index_t& index : indices) {
      owner[static_cast<std::size_t>(index.vertex_index)] = kNone;
    }
    std::size_t first = 0;
    mesh.triangles.reserve(indices.size() / 3);
    for (const unsigned char stored : shape.mesh.num_face_vertices) {
      // The shapes' faces, one after the other, are the file's faces in
      // order; the byte must agree with the count the pre-scan read.
      if (face >= face_corners.size() || (face_corners[face] & 0xFFu) != stored) {
        return "shape " + std::to_string(s) + " has inconsistent face data";
      }
      const std::size_t corners = face_corners[face++];
      if (first + corners > indices.size()) {
        return "shape " + std::to_string(s) + " has inconsistent face data";
      }
      if (corners == 3) {
        const std::uint32_t a = remap(indices[first]);
        const std::uint32_t b = remap(indices[first + 1]);
        const std::uint32_t c = remap(indices[first + 2]);
        mesh.triangles.emplace_back(a, b, c);
      } else if (corners > 3) {
        // A polygon: triangles that cover its outline (polygon.h).
        polygon.clear();
        for (std::size_t k = 0; k < corners; ++k) {
          const auto v = static_cast<std::size_t>(indices[first + k].vertex_index);
          polygon.emplace_back(attrib.vertices[3 * v], attrib.vertices[3 * v + 1],
                               attrib.vertices[3 * v + 2]);
        }
        const detail::PolygonTriangles tris = detail::triangulate_polygon(polygon);
        if (!tris.simple) ++crossed;
        for (const auto& t : tris.triangles) {
          mesh.triangles.emplace_back(remap(indices[first + t[0]]), remap(indices[first + t[1]]),
                                      remap(indices[first + t[2]]));
        }
      }
      first += corners;
    }

    Object& object = scene.objects[s];
    object.mesh = id;
    object.name = shape.name.empty() ? "shape" + std::to_string(s)
                                     : valid_utf8(shape.name);
  }
  return std::nullopt;
}

}  // namespace

// tinyobjloader reports through strings but allocates freely: what it throws
// (bad_alloc on a huge file) stops at load.cpp's guard.
LoadResult detail::load_obj(const std::string& path, const LoadOptions& options,
                            Budget& budget) {
  std::string data = detail::read_or_fail(path, budget);

  // tinyobjloader reads bytes: a UTF-16 file would come out as empty lines,
  // and a UTF-8 byte order mark would hide the first statement.
  if (data.size() >= 2 && ((data[0] == '\xFE' && data[1] == '\xFF') ||
                            (data[0] == '\xFF' && data[1] == '\xFE'))) {
    return fail(LoadError::Kind::kMalformed, path, 0,
                "file is UTF-16 encoded (OBJ files must be ASCII or UTF-8)");
  }
  if (data.compare(0, 3, "\xEF\xBB\xBF") == 0) data.erase(0, 3);
  // A NUL byte never belongs in a text OBJ: a binary file (a GLB, an image)
  // given the .obj extension would otherwise load as "no objects".
  if (const std::size_t nul = data.find('\0'); nul != std::string::npos) {
    const auto line = static_cast<std::size_t>(
        std::count(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(nul), '\n') + 1);
    return fail(LoadError::Kind::kMalformed, path, line,
                "a NUL byte: this is binary data, not a text OBJ file");
  }

  PreScan scan = prescan(data, path);
  if (scan.error) return LoadResult(std::move(*scan.error));
  // Charged before tinyobjloader triangulates: what the faces make is what
  // the meshes will hold.
  if (auto over = budget.take(detail::Budget::kTriangles, scan.face_triangles)) {
    return fail(LoadError::Kind::kMalformed, path, 0, std::move(*over));
  }

  tinyobj::attrib_t attrib;
  std::vector<tinyobj::shape_t> shapes;
  std::vector<tinyobj::material_t> materials;
  std::string warn;
  std::string err;
  BufferStreambuf buffer(data.data(), data.data() + data.size());
  std::istream stream(&buffer);
  MtlFileReader material_reader(path, options.root);
  const bool parsed =
      tinyobj::LoadObj(&attrib, &shapes, &materials, &warn, &err, &stream,
                       &material_reader, /*triangulate=*/false,
                       /*default_vcols_fallback=*/false);

  // Warnings, one per line and each once, without the file name (the caller
  // has it). Dropped: tinyobjloader's "material [ 'x' ] not found", repeated
  // for every `usemtl` (picking never reads materials; a missing library
  // has its own warning) and its generic echo of that missing library.
  std::vector<std::string> warnings;
  std::set<std::string> seen;
  for (const std::string& line : message_lines(warn)) {
    if (line.rfind("Failed to load material file(s)", 0) == 0) continue;
    if (line.rfind("material [", 0) == 0) continue;
    if (seen.insert(line).second) warnings.push_back(line);
  }

  // A material library outside the allowed root is refused, as the contract
  // asks of every file a scene refers to, although picking never reads it:
  // whether the file exists must not leak either. Its line is the first
  // `mtllib` line that names it.
  if (const auto& refused = material_reader.refused()) {
    std::size_t line = 0;
    for (const auto& [number, text] : scan.mtllib_lines) {
      if (text.find(refused->name) != std::string::npos) {
        line = number;
        break;
      }
    }
    return LoadResult(LoadError{LoadError::Kind::kMalformed, path, line,
                             "mtllib: " + refused->why},
                      std::move(warnings));
  }
  if (!parsed) {
    const std::vector<std::string> lines = message_lines(err);
    const std::string message =
        lines.empty() ? "tinyobjloader failed" : lines[0];
    return LoadResult(LoadError{LoadError::Kind::kMalformed, path,
                             line_in_message(message), message},
                      std::move(warnings));
  }
  // tinyobjloader succeeded but had something to say: keep it as warnings.
  for (const std::string& line : message_lines(err)) {
    if (seen.insert(line).second) warnings.push_back(line);
  }

  // The pre-scan refused coordinates that do not fit a float; this catches
  // what tinyobjloader's own arithmetic makes of the rest ("0e999" is NaN).
  const std::size_t vertex_count = attrib.vertices.size() / 3;
  for (std::size_t v = 0; v < vertex_count; ++v) {
    const tinyobj::real_t* p = &attrib.vertices[3 * v];
    if (!std::isfinite(p[0]) || !std::isfinite(p[1]) || !std::isfinite(p[2])) {
      const std::size_t line =
          v < scan.vertex_lines.size() ? scan.vertex_lines[v] : 0;
      return LoadResult(LoadError{LoadError::Kind::kMalformed, path, line,
                    "vertex position is not finite as tinyobjloader reads it"},
                        std::move(warnings));
    }
  }

  if (shapes.empty()) {
    return LoadResult(LoadError{LoadError::Kind::kMalformed, path, 0, "no objects in scene"},
                      std::move(warnings));
  }

  if (auto over = budget.take(detail::Budget::kObjects, shapes.size())) {
    return LoadResult(LoadError{LoadError::Kind::kMalformed, path, 0, std::move(*over)},
                      std::move(warnings));
  }
  Scene scene;
  std::size_t crossed = 0;
  if (std::optional<std::string> problem =
          build_scene(attrib, shapes, budget, scene, scan.face_corners, crossed)) {
    return LoadResult(LoadError{LoadError::Kind::kMalformed, path, 0, std::move(*problem)},
                      std::move(warnings));
  }
  // A face that crosses itself has no outline to cover: its corners that
  // ear clipping could not cut off are fanned, and the user is told.
  if (crossed > 0) {
    warnings.push_back(std::to_string(crossed) + " polygon" + (crossed == 1 ? "" : "s") +
                       " cross" + (crossed == 1 ? "es" : "") +
                       " itself: its triangles (ear clipping, the rest fanned) may cover more "
                       "or less than its outline");
  }
  return LoadResult(std::move(scene), std::move(warnings));
}

}  // namespace raypick
