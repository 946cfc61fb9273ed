#include "budget.h"

#include <string>

namespace raypick::detail {

namespace {

struct Named {
  const char* budget;
  const char* what;
};

constexpr Named kNames[] = {
    {"max_bytes", "bytes of files read"},
    {"max_vertices", "vertex positions in its meshes"},
    {"max_triangles", "triangles in its meshes"},
    {"max_objects", "objects"},
};

}  // namespace

std::string Budget::exceeded(Resource r) const {
  return std::string("load budget ") + kNames[r].budget +
         " exceeded: the scene needs more than " + std::to_string(limit_[r]) +
         " " + kNames[r].what;
}

std::optional<std::string> Budget::take(Resource r, std::uint64_t n) {
  if (n <= limit_[r] - used_[r]) {  // used <= limit always holds
    used_[r] += n;
    return std::nullopt;
  }
  return exceeded(r);
}

}  // namespace raypick::detail
