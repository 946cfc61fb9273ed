#include "ray_io.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>

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
    // from_chars takes a '-' but no '+'; allow one '+' and nothing more.
    std::string_view digits = token;
    if (digits.front() == '+') digits.remove_prefix(1);
    const bool sign_ok = digits.empty() ||
                         (token.front() != '+' || digits.front() != '-');
    double value = 0.0;
    const auto [ptr, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (!sign_ok || digits.empty() || ec != std::errc() ||
        ptr != digits.data() + digits.size()) {
      error = "'" + std::string(token) + "' is not a number";
      return std::nullopt;
    }
    if (v.size() == expected) {
      error = "expected " + std::to_string(expected) + " numbers (" + what +
              "), found more";
      return std::nullopt;
    }
    v.push_back(value);
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

std::optional<Ray> parse_ray(std::string_view text, std::string& error) {
  const std::optional<std::vector<double>> v =
      parse_numbers(text, 6, "ox oy oz dx dy dz", error);
  if (!v) return std::nullopt;
  Ray ray;
  ray.org = {static_cast<float>((*v)[0]), static_cast<float>((*v)[1]),
             static_cast<float>((*v)[2])};
  ray.dir = {static_cast<float>((*v)[3]), static_cast<float>((*v)[4]),
             static_cast<float>((*v)[5])};
  for (int a = 0; a < 3; ++a) {
    // Checked after narrowing: 1e39 is a finite double but not a float.
    if (!std::isfinite(ray.org[a])) {
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
  return ray;
}

RayList read_rays(std::istream& in, const std::string& source) {
  RayList out;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view body = trim(line);
    if (body.empty() || body.front() == '#') continue;
    std::string error;
    std::optional<Ray> ray = parse_ray(body, error);
    if (!ray) {
      out.error = source + ":" + std::to_string(number) + ": " + error;
      out.rays.clear();
      out.lines.clear();
      return out;
    }
    out.rays.push_back(*ray);
    out.lines.push_back(number);
  }
  if (in.bad()) {
    out.error = source + ": read error";
    out.rays.clear();
    out.lines.clear();
  }
  return out;
}

PointList read_points(std::istream& in, const std::string& source) {
  PointList out;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::string_view body = trim(line);
    if (body.empty() || body.front() == '#') continue;
    std::string error;
    const std::optional<std::vector<double>> v = parse_numbers(body, 2, "X Y", error);
    if (v && !(std::isfinite((*v)[0]) && std::isfinite((*v)[1]))) {
      error = "the point is not finite";
    }
    if (!error.empty()) {
      out.error = source + ":" + std::to_string(number) + ": " + error;
      out.points.clear();
      out.lines.clear();
      return out;
    }
    out.points.push_back({(*v)[0], (*v)[1]});
    out.lines.push_back(number);
  }
  if (in.bad()) {
    out.error = source + ": read error";
    out.points.clear();
    out.lines.clear();
  }
  return out;
}

std::string format_float(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

namespace {

// "object":o,"name":"...","t":t[,"triangle":k],"point":[x,y,z]
std::string hit_fields(const Ray& ray, const Hit& hit, const std::string& name) {
  const glm::vec3 p = ray.org + hit.t * ray.dir;
  std::string s = "\"object\":" + std::to_string(hit.object);
  // nlohmann's dump escapes quotes and control characters and replaces
  // invalid UTF-8, so any object name gives valid JSON.
  s += ",\"name\":" +
       nlohmann::json(name).dump(-1, ' ', false,
                                 nlohmann::json::error_handler_t::replace);
  s += ",\"t\":" + format_float(hit.t);
  if (hit.triangle != kInvalidId) {
    s += ",\"triangle\":" + std::to_string(hit.triangle);
  }
  s += ",\"point\":[" + format_float(p.x) + "," + format_float(p.y) + "," +
       format_float(p.z) + "]";
  return s;
}

}  // namespace

std::string hit_to_json(std::size_t ray_index, const Ray& ray, const Hit& hit,
                        const std::string& name) {
  std::string s = "{\"ray\":" + std::to_string(ray_index);
  if (!hit.hit()) return s + ",\"hit\":false}";
  return s + ",\"hit\":true," + hit_fields(ray, hit, name) + "}";
}

std::string hits_to_json(std::size_t ray_index, const Ray& ray,
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

std::string hit_to_text(std::size_t ray_index, const Ray& ray, const Hit& hit,
                        const std::string& name) {
  std::string s = "ray " + std::to_string(ray_index) + ": ";
  if (!hit.hit()) return s + "miss";
  const glm::vec3 p = ray.org + hit.t * ray.dir;
  s += "object " + std::to_string(hit.object) + " '" + name + "'";
  if (hit.triangle != kInvalidId) {
    s += " triangle " + std::to_string(hit.triangle);
  }
  s += " at t = " + format_float(hit.t) + ", point (" + format_float(p.x) +
       ", " + format_float(p.y) + ", " + format_float(p.z) + ")";
  return s;
}

}  // namespace raypick::tools
