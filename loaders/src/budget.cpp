#include "budget.h"

#include <string>

namespace raypick::detail {

namespace {

std::string exceeded(std::uint64_t limit, const char* budget,
                     const char* what) {
  return std::string("load budget ") + budget + " exceeded: the scene needs " +
         "more than " + std::to_string(limit) + " " + what;
}

std::optional<std::string> take(std::uint64_t& used, std::uint64_t limit,
                                std::uint64_t n, const char* budget,
                                const char* what) {
  if (n <= limit - used) {  // used <= limit always holds
    used += n;
    return std::nullopt;
  }
  return exceeded(limit, budget, what);
}

}  // namespace

std::string Budget::bytes_exceeded() const {
  return exceeded(limits_.max_bytes, "max_bytes", "bytes of files read");
}

std::optional<std::string> Budget::take_bytes(std::uint64_t n) {
  return take(used_.max_bytes, limits_.max_bytes, n, "max_bytes",
              "bytes of files read");
}

std::optional<std::string> Budget::take_vertices(std::uint64_t n) {
  return take(used_.max_vertices, limits_.max_vertices, n, "max_vertices",
              "vertex positions in its meshes");
}

std::optional<std::string> Budget::take_triangles(std::uint64_t n) {
  return take(used_.max_triangles, limits_.max_triangles, n, "max_triangles",
              "triangles in its meshes");
}

std::optional<std::string> Budget::take_objects(std::uint64_t n) {
  return take(used_.max_objects, limits_.max_objects, n, "max_objects",
              "objects");
}

}  // namespace raypick::detail
