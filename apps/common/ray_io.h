// Reading rays and writing picking results in the contract's formats.
#pragma once

#include "raypick/core/hit.h"
#include "raypick/core/ray.h"

#include <functional>
#include <glm/ext/vector_double3.hpp>
#include <glm/vec2.hpp>

#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace raypick::tools {

// Parses exactly `expected` numbers separated by white space or by one
// comma with optional white space around it (the rays file's rule). On
// failure, nullopt and `error` says why; `what` names the fields in the
// count message ("expected 3 numbers (X,Y,Z), found 2").
std::optional<std::vector<double>> parse_numbers(std::string_view text,
                                                 std::size_t expected,
                                                 const std::string& what,
                                                 std::string& error);

// Parses one ray, "ox oy oz dx dy dz": six numbers separated by white space
// or by one comma with optional white space around it. Returns the ray, or
// nullopt with `error` set to what is wrong ("expected 6 numbers, found 5",
// "'1x' is not a number", "direction is zero", "origin is not finite").
// A number too small for a double (1e-400) reads as 0, as one too small for
// a float does; one too large is not finite. A token quoted in a message is
// shown through printable() and cut after 40 bytes.
// The origin is kept in double, as read from the decimal text (it must
// still fit a float); the direction is rounded to float.
std::optional<RayD> parse_ray(std::string_view text, std::string& error);

struct RayList {
  std::vector<RayD> rays;
  std::vector<std::size_t> lines;  // 1-based source line of each ray
  std::string error;               // "source:line: message"; empty when ok
  bool ok() const { return error.empty(); }
};

// No line of a rays (or pixels) stream may be longer than this, comments
// included: a stream without newlines (/dev/zero) is refused at this length
// instead of being buffered whole.
inline constexpr std::size_t kMaxLineBytes = 4096;

// Called with each line's 1-based number and its text (without the line
// break); returns an error message for that line, or "" to go on.
using LineHandler =
    std::function<std::string(std::size_t number, std::string_view line)>;

// Cuts a text stream into lines as it arrives: '\n' ends a line (a '\r'
// before it stays in the line), a UTF-8 byte-order mark at the very start
// is skipped, and a line longer than kMaxLineBytes is an error. Memory:
// O(kMaxLineBytes) whatever the stream.
class LineSplitter {
 public:
  LineSplitter(std::string source, LineHandler on_line);
  // Feeds the next bytes. Returns "" or the first error, as
  // "source:line: message"; after an error, feed and finish do nothing.
  std::string feed(std::string_view bytes);
  // The stream has ended: the last line, if it has no line break.
  std::string finish();

 private:
  std::string line_error(const std::string& message) const;
  std::string take_line(std::string_view text);

  std::string source_;
  LineHandler on_line_;
  std::string partial_;  // the current line so far (< kMaxLineBytes)
  std::size_t number_ = 1;
  std::size_t seen_ = 0;  // bytes fed so far (for the byte-order mark)
  bool failed_ = false;
};

// Reads a text stream line by line: `path` is a file or a pipe, "-" is
// standard input (named "<stdin>" in messages). Returns "" or the first
// error: the handler's, as "source:line: message", or why the stream cannot
// be read ("cannot open", "is a directory", "is not a regular file or a
// pipe", "standard input is closed", "read error: ..."), as
// "source: message". A named path must be a regular file or a pipe (devices
// such as /dev/zero are refused); standard input may be anything readable.
std::string read_lines(const std::string& path, const LineHandler& on_line);

// Reads a rays file: one ray per line; blank lines and lines whose first
// non-blank character is '#' are skipped. Stops at the first bad line, whose
// error names the source and the line (an error leaves `rays` empty).
// `path` as for read_lines.
RayList read_rays(const std::string& path);

// The same on text already in memory, named `source` in messages.
RayList read_rays_text(std::string_view text, const std::string& source);

// One point of N finite numbers, each within +-limit, separated as
// parse_numbers separates them; `what` names the fields in messages
// (default "X Y" for pixels, "x y z" for world points). nullopt with
// `error` set ("expected 3 numbers (x y z), found 2", "the point is not
// finite", "each coordinate must lie within +-1e+11") on failure. Points
// and pixels for queries take kMaxInputPoint; a camera's vectors none.
template <int N>
std::optional<glm::vec<N, double>> parse_point(
    std::string_view text, std::string& error, const std::string& what = {},
    double limit = std::numeric_limits<double>::infinity());

template <int N>
struct PointsFile {
  std::vector<glm::vec<N, double>> points;
  std::vector<std::size_t> lines;  // 1-based source line of each
  std::string error;               // "source:line: message"; empty when ok
  bool ok() const { return error.empty(); }
};
using PointList = PointsFile<2>;   // image-plane points (X, Y): --pixels
using Point3List = PointsFile<3>;  // world points (x, y, z): nearest --points

// Reads a points file: one point per line as parse_point<N> reads it,
// within kMaxInputPoint;
// blank lines and '#' lines skipped, as read_rays. `path` as for
// read_lines (so the same bounds apply: lines of at most kMaxLineBytes).
// An error leaves `points` empty.
template <int N>
PointsFile<N> read_points(const std::string& path);

// %.9g: enough digits for every float to read back to itself.
std::string format_float(float v);

// One JSON object per the contract:
// {"ray":i,"hit":true,"object":o,"name":"...","t":t,"point":[x,y,z]}
// with "triangle":k after "t" when the hit carries a triangle, or
// {"ray":i,"hit":false}. The point o + t d is computed in double from the
// ray's double origin, then printed as the nearest float.
std::string hit_to_json(std::size_t ray_index, const RayD& ray, const Hit& hit,
                        const std::string& name);
inline std::string hit_to_json(std::size_t ray_index, const Ray& ray, const Hit& hit,
                               const std::string& name) {
  return hit_to_json(ray_index, to_double(ray), hit, name);
}

// The same for --all: the nearest hit's fields as above, plus
// "hits":[{"object":o,"name":"...","t":t,"point":[x,y,z]}, ...] listing
// every hit in order ("triangle" in each where the hits carry one).
// `names` is indexed by object id.
std::string hits_to_json(std::size_t ray_index, const RayD& ray,
                         const std::vector<Hit>& hits,
                         const std::vector<std::string>& names);

// A line for people: "ray 0: object 3 'box' at t = 2.5, point (1, 2, 3)".
// The name is shown through printable(): control characters (a newline
// included) appear as \xNN, so one result is always one line.
// `text` as a JSON string (quoted) with no control character left raw:
// RFC 8259's escapes for quotes, backslashes and C0 controls, \u007f and
// \u0080..\u009f for DEL and the C1 controls; bytes that are not UTF-8 as
// U+FFFD.
std::string json_string(const std::string& text);

std::string hit_to_text(std::size_t ray_index, const RayD& ray, const Hit& hit,
                        const std::string& name);

}  // namespace raypick::tools
