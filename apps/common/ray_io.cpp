#include "ray_io.h"

#include "raypick/core/scene.h"

#include "raypick/core/text.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace raypick::tools {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// How much of a bad token a message quotes.
constexpr std::size_t kQuoteBytes = 40;

// The UTF-8 byte-order mark, skipped at the start of a stream.
constexpr std::string_view kBom = "\xEF\xBB\xBF";

// Reads one number that is all of `token` (an optional '+' or '-', then what
// std::from_chars takes: decimal, exponent, inf, nan). Out of a double's
// range, a tiny value reads as 0 and a huge one as +-inf, as strtod gives.
std::optional<double> parse_number(std::string_view token) {
  // from_chars takes a '-' but no '+'; allow one '+' and nothing more.
  std::string_view digits = token;
  if (!digits.empty() && digits.front() == '+') {
    digits.remove_prefix(1);
    if (!digits.empty() && digits.front() == '-') return std::nullopt;
  }
  if (digits.empty()) return std::nullopt;
  double value = 0.0;
  const char* end = digits.data() + digits.size();
  const auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (ptr != end) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // The token is a well-formed number (ptr reached its end); strtod says
    // which way it left the range. The C locale is in force: raypick never
    // calls setlocale.
    const std::string copy(digits);
    return std::strtod(copy.c_str(), nullptr);
  }
  if (ec != std::errc()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<std::vector<double>> parse_numbers(std::string_view text,
                                                 std::size_t expected,
                                                 const std::string& what,
                                                 std::string& error) {
  std::vector<double> v;
  std::size_t i = 0;
  const std::size_t n = text.size();
  auto skip_space = [&] {
    while (i < n && is_space(text[i])) ++i;
  };
  skip_space();
  while (i < n) {
    // One number: everything up to white space or a comma.
    std::size_t end = i;
    while (end < n && !is_space(text[end]) && text[end] != ',') ++end;
    const std::string_view token = text.substr(i, end - i);
    if (token.empty()) {
      error = "empty field (two commas in a row, or a leading comma)";
      return std::nullopt;
    }
    const std::optional<double> value = parse_number(token);
    if (!value) {
      error = "'" + printable(token, kQuoteBytes) + "' is not a number";
      return std::nullopt;
    }
    if (v.size() == expected) {
      error = "expected " + std::to_string(expected) + " numbers (" + what +
              "), found more";
      return std::nullopt;
    }
    v.push_back(*value);
    i = end;
    skip_space();
    if (i < n && text[i] == ',') {
      ++i;
      skip_space();
      if (i == n) {
        error = "trailing comma";
        return std::nullopt;
      }
    }
  }
  if (v.size() != expected) {
    error = "expected " + std::to_string(expected) + " numbers (" + what +
            "), found " + std::to_string(v.size());
    return std::nullopt;
  }
  return v;
}

std::optional<RayD> parse_ray(std::string_view text, std::string& error) {
  const std::optional<std::vector<double>> v =
      parse_numbers(text, 6, "ox oy oz dx dy dz", error);
  if (!v) return std::nullopt;
  // The origin stays in double until each object subtracts its own
  // translation (see RayD); it must still fit a float.
  RayD ray;
  ray.org = {(*v)[0], (*v)[1], (*v)[2]};
  ray.dir = {static_cast<float>((*v)[3]), static_cast<float>((*v)[4]),
             static_cast<float>((*v)[5])};
  for (int a = 0; a < 3; ++a) {
    // Checked after narrowing: 1e39 is a finite double but not a float.
    if (!std::isfinite(static_cast<float>(ray.org[a]))) {
      error = "origin is not finite (or not representable as a float)";
      return std::nullopt;
    }
    if (!std::isfinite(ray.dir[a])) {
      error = "direction is not finite (or not representable as a float)";
      return std::nullopt;
    }
  }
  if (ray.dir.x == 0.0f && ray.dir.y == 0.0f && ray.dir.z == 0.0f) {
    error = "direction is zero";
    return std::nullopt;
  }
  // Scenes are refused beyond kMaxCoordinate (validate_scene): an origin
  // beyond it would make the leaf tests' products overflow, a silent miss.
  for (int a = 0; a < 3; ++a) {
    if (std::fabs(static_cast<float>(ray.org[a])) > kMaxCoordinate) {
      char range[32];  // "%g": 1e+11, as the scene's range errors print it
      std::snprintf(range, sizeof range, "%g", static_cast<double>(kMaxCoordinate));
      error = "origin is outside the supported range (each coordinate within +-" +
              std::string(range) + ")";
      return std::nullopt;
    }
  }
  return ray;
}

LineSplitter::LineSplitter(std::string source, LineHandler on_line)
    : source_(std::move(source)), on_line_(std::move(on_line)) {}

std::string LineSplitter::line_error(const std::string& message) const {
  return printable(source_) + ":" + std::to_string(number_) + ": " + message;
}

std::string LineSplitter::take_line(std::string_view text) {
  std::string error = on_line_(number_, text);
  if (!error.empty()) {
    failed_ = true;
    return line_error(error);
  }
  ++number_;
  return {};
}

std::string LineSplitter::feed(std::string_view bytes) {
  if (failed_) return {};
  // The byte-order mark may arrive split over several feeds: hold the first
  // bytes back until they can be told apart from it.
  if (seen_ < kBom.size()) {
    const std::size_t n = std::min(bytes.size(), kBom.size() - seen_);
    partial_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    seen_ += n;
    if (kBom.substr(0, partial_.size()) != partial_) {
      seen_ = kBom.size();  // not a mark: the bytes are text
      std::string held;
      held.swap(partial_);
      std::string error = feed(held);
      if (!error.empty()) return error;
    } else if (partial_.size() == kBom.size()) {
      partial_.clear();
    } else {
      return {};  // a prefix of the mark so far
    }
  }
  while (!bytes.empty()) {
    const std::size_t nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (partial_.size() + piece.size() > kMaxLineBytes) {
      failed_ = true;
      return line_error("line is longer than " +
                        std::to_string(kMaxLineBytes) +
                        " bytes (is this a text file?)");
    }
    if (nl == std::string_view::npos) {
      partial_.append(piece);
      return {};
    }
    std::string error;
    if (partial_.empty()) {
      error = take_line(piece);
    } else {
      partial_.append(piece);
      error = take_line(partial_);
      partial_.clear();
    }
    if (!error.empty()) return error;
    bytes.remove_prefix(nl + 1);
  }
  return {};
}

std::string LineSplitter::finish() {
  if (failed_) return {};
  if (seen_ < kBom.size() && !partial_.empty()) {
    // A stream shorter than the mark that began like it: plain text.
    seen_ = kBom.size();
    std::string held;
    held.swap(partial_);
    std::string error = feed(held);
    if (!error.empty()) return error;
  }
  if (partial_.empty()) return {};
  std::string last;
  last.swap(partial_);
  return take_line(last);
}

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Reads `fd` to its end through `splitter`.
std::string read_fd(int fd, const std::string& source, LineSplitter& splitter) {
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return printable(source) + ": read error: " + errno_text(errno);
    }
    if (n == 0) return splitter.finish();
    std::string error =
        splitter.feed(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!error.empty()) return error;
  }
}

}  // namespace

std::string read_lines(const std::string& path, const LineHandler& on_line) {
  const bool is_stdin = path == "-";
  const std::string source = is_stdin ? "<stdin>" : path;
  const std::string shown = printable(source);
  int fd = STDIN_FILENO;
  if (!is_stdin) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return shown + ": cannot open: " + errno_text(errno);
  }
  struct stat st;
  std::string error;
  if (::fstat(fd, &st) != 0) {
    error = is_stdin && errno == EBADF
                ? shown + ": standard input is closed"
                : shown + ": cannot read: " + errno_text(errno);
  } else if (S_ISDIR(st.st_mode)) {
    error = shown + ": is a directory";
  } else if (!is_stdin && !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    error = shown + ": is not a regular file or a pipe";
  } else {
    LineSplitter splitter(source, on_line);
    error = read_fd(fd, source, splitter);
  }
  if (!is_stdin) ::close(fd);
  return error;
}

namespace {

// The rays handler: parses each ray line into `out`.
LineHandler ray_handler(RayList& out) {
  return [&out](std::size_t number, std::string_view line) -> std::string {
    const std::string_view body = trim(line);
    if (body.empty() || body.front() == '#') return {};
    std::string error;
    std::optional<RayD> ray = parse_ray(body, error);
    if (!ray) return error;
    out.rays.push_back(*ray);
    out.lines.push_back(number);
    return {};
  };
}

RayList finished(RayList out, std::string error) {
  if (!error.empty()) {
    out.error = std::move(error);
    out.rays.clear();
    out.lines.clear();
  }
  return out;
}

}  // namespace

RayList read_rays(const std::string& path) {
  RayList out;
  std::string error = read_lines(path, ray_handler(out));
  return finished(std::move(out), std::move(error));
}

RayList read_rays_text(std::string_view text, const std::string& source) {
  RayList out;
  LineSplitter splitter(source, ray_handler(out));
  std::string error = splitter.feed(text);
  if (error.empty()) error = splitter.finish();
  return finished(std::move(out), std::move(error));
}

template <int N>
std::optional<glm::vec<N, double>> parse_point(std::string_view text, std::string& error,
                                               const std::string& what, double limit) {
  const std::optional<std::vector<double>> v =
      parse_numbers(text, N, !what.empty() ? what : N == 2 ? "X Y" : "x y z", error);
  if (!v) return std::nullopt;
  glm::vec<N, double> p;
  for (int a = 0; a < N; ++a) {
    p[a] = (*v)[a];
    if (!std::isfinite(p[a])) {
      error = "the point is not finite";
      return std::nullopt;
    }
    if (!(std::abs(p[a]) <= limit)) {
      char message[80];
      std::snprintf(message, sizeof message, "each coordinate must lie within +-%g", limit);
      error = message;
      return std::nullopt;
    }
  }
  return p;
}

template <int N>
PointsFile<N> read_points(const std::string& path) {
  PointsFile<N> out;
  const std::string error = read_lines(
      path, [&out](std::size_t number, std::string_view line) -> std::string {
        const std::string_view body = trim(line);
        if (body.empty() || body.front() == '#') return {};
        std::string why;
        const std::optional<glm::vec<N, double>> p = parse_point<N>(body, why, "", kMaxInputPoint);
        if (!p) return why;
        out.points.push_back(*p);
        out.lines.push_back(number);
        return {};
      });
  if (!error.empty()) {
    out.points.clear();
    out.lines.clear();
    out.error = error;
  }
  return out;
}

template std::optional<glm::dvec2> parse_point<2>(std::string_view, std::string&,
                                                  const std::string&, double);
template std::optional<glm::dvec3> parse_point<3>(std::string_view, std::string&,
                                                  const std::string&, double);
template PointList read_points<2>(const std::string&);
template Point3List read_points<3>(const std::string&);

std::string format_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

// `text` as a JSON string with no control character left raw. nlohmann's
// dump escapes quotes, backslashes and C0 controls and replaces invalid
// UTF-8 with U+FFFD; DEL and the C1 controls (U+0080..U+009F, which some
// terminals obey) are valid JSON raw, so they are escaped here.
std::string json_string(const std::string& text) {
  const std::string dumped = nlohmann::json(text).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(dumped.size());
  char buf[8];
  for (std::size_t i = 0; i < dumped.size(); ++i) {
    const auto c = static_cast<unsigned char>(dumped[i]);
    const auto next = i + 1 < dumped.size()
                          ? static_cast<unsigned char>(dumped[i + 1])
                          : 0;
    // In valid UTF-8, C2 only ever starts a character, never continues one.
    if (c == 0x7F || (c == 0xC2 && next >= 0x80 && next < 0xA0)) {
      const unsigned code = c == 0x7F ? 0x7Fu : next;
      std::snprintf(buf, sizeof buf, "\\u%04x", code);
      out += buf;
      i += c == 0x7F ? 0 : 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

namespace {

// "object":o,"name":"...","t":t[,"triangle":k],"point":[x,y,z]
// The hit point o + t d (core's hit_point, in double from the double
// origin), rounded once to float.
glm::vec3 float_point(const RayD& ray, const Hit& hit) {
  return glm::vec3(raypick::hit_point(ray, hit));
}

std::string hit_fields(const RayD& ray, const Hit& hit, const std::string& name) {
  const glm::vec3 p = float_point(ray, hit);
  std::string s = "\"object\":" + std::to_string(hit.object);
  s += ",\"name\":" + json_string(name);
  s += ",\"t\":" + format_float(hit.t);
  if (hit.triangle != kInvalidId) {
    s += ",\"triangle\":" + std::to_string(hit.triangle);
  }
  s += ",\"point\":[" + format_float(p.x) + "," + format_float(p.y) + "," +
       format_float(p.z) + "]";
  return s;
}

}  // namespace

std::string hit_to_json(std::size_t ray_index, const RayD& ray, const Hit& hit,
                        const std::string& name) {
  std::string s = "{\"ray\":" + std::to_string(ray_index);
  if (!hit.hit()) return s + ",\"hit\":false}";
  return s + ",\"hit\":true," + hit_fields(ray, hit, name) + "}";
}

std::string hits_to_json(std::size_t ray_index, const RayD& ray,
                         const std::vector<Hit>& hits,
                         const std::vector<std::string>& names) {
  std::string s = "{\"ray\":" + std::to_string(ray_index);
  if (hits.empty()) return s + ",\"hit\":false,\"hits\":[]}";
  s += ",\"hit\":true," + hit_fields(ray, hits[0], names[hits[0].object]) +
       ",\"hits\":[";
  for (std::size_t k = 0; k < hits.size(); ++k) {
    if (k) s += ',';
    s += '{' + hit_fields(ray, hits[k], names[hits[k].object]) + '}';
  }
  return s + "]}";
}

std::string hit_to_text(std::size_t ray_index, const RayD& ray, const Hit& hit,
                        const std::string& name) {
  std::string s = "ray " + std::to_string(ray_index) + ": ";
  if (!hit.hit()) return s + "miss";
  const glm::vec3 p = float_point(ray, hit);
  s += "object " + std::to_string(hit.object) + " '" + printable(name) + "'";
  if (hit.triangle != kInvalidId) {
    s += " triangle " + std::to_string(hit.triangle);
  }
  s += " at t = " + format_float(hit.t) + ", point (" + format_float(p.x) +
       ", " + format_float(p.y) + ", " + format_float(p.z) + ")";
  return s;
}

}  // namespace raypick::tools
