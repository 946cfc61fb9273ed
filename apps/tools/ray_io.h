// Reading rays and writing picking results in the contract's formats.
#pragma once

#include "raypick/core/hit.h"
#include "raypick/core/ray.h"

#include <glm/vec2.hpp>

#include <istream>
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
std::optional<Ray> parse_ray(std::string_view text, std::string& error);

struct RayList {
  std::vector<Ray> rays;
  std::vector<std::size_t> lines;  // 1-based source line of each ray
  std::string error;               // "source:line: message"; empty when ok
  bool ok() const { return error.empty(); }
};

// Reads a rays file: one ray per line; blank lines and lines whose first
// non-blank character is '#' are skipped. Stops at the first bad line, whose
// error names `source` and the line. A read failure is reported as an error.
RayList read_rays(std::istream& in, const std::string& source);

struct PointList {
  std::vector<glm::dvec2> points;  // image-plane points (X, Y)
  std::vector<std::size_t> lines;  // 1-based source line of each
  std::string error;               // "source:line: message"; empty when ok
  bool ok() const { return error.empty(); }
};

// Reads a pixels file: one point "X Y" or "X,Y" per line, finite numbers;
// blank lines and '#' lines skipped, as read_rays.
PointList read_points(std::istream& in, const std::string& source);

// %.9g: enough digits for every float to read back to itself.
std::string format_float(float v);

// One JSON object per the contract:
// {"ray":i,"hit":true,"object":o,"name":"...","t":t,"point":[x,y,z]}
// with "triangle":k after "t" when the hit carries a triangle, or
// {"ray":i,"hit":false}.
std::string hit_to_json(std::size_t ray_index, const Ray& ray, const Hit& hit,
                        const std::string& name);

// The same for --all: the nearest hit's fields as above, plus
// "hits":[{"object":o,"name":"...","t":t,"point":[x,y,z]}, ...] listing
// every hit in order ("triangle" in each where the hits carry one).
// `names` is indexed by object id.
std::string hits_to_json(std::size_t ray_index, const Ray& ray,
                         const std::vector<Hit>& hits,
                         const std::vector<std::string>& names);

// A line for people: "ray 0: object 3 'box' at t = 2.5, point (1, 2, 3)".
std::string hit_to_text(std::size_t ray_index, const Ray& ray, const Hit& hit,
                        const std::string& name);

}  // namespace raypick::tools
