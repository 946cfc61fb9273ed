// libFuzzer target: the input is a rays file. read_rays must never crash,
// must return either rays or one error naming the source and a line, and
// every ray it returns must be valid and must be what parse_ray makes of its
// line. The first line also serves as an object name for the result
// writers, whose JSON must parse back with that name whatever its bytes.
// Each line is also read as a point (parse_point, as nearest --points and
// pick --pixels read them): a point or one error, never both, and a point
// finite and within the bound given.
#include "ray_io.h"

#include "raypick/core/scene.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "raypick fuzz check failed: %s\n", what.c_str());
  std::abort();
}

bool same_bits(const raypick::RayD& a, const raypick::RayD& b) {
  for (int k = 0; k < 3; ++k) {
    if (a.org[k] != b.org[k] || a.dir[k] != b.dir[k]) return false;
  }
  return a.tmin == b.tmin && a.tmax == b.tmax;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace raypick;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const tools::RayList list = tools::read_rays_text(text, "fuzz.rays");
  if (list.rays.size() != list.lines.size()) fail("rays and lines differ in count");
  if (!list.ok()) {
    if (!list.rays.empty()) fail("an error with rays kept");
    if (list.error.rfind("fuzz.rays", 0) != 0) fail("error does not name the source: " + list.error);
  }
  // Each ray is valid, comes from a later line than the one before, and is
  // what parse_ray makes of that line.
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(std::string_view(text).substr(start, end - start));
    start = end + 1;
  }
  std::size_t previous = 0;
  for (std::size_t i = 0; i < list.rays.size(); ++i) {
    const RayD& ray = list.rays[i];
    if (!is_valid(ray)) fail("read_rays returned an invalid ray");
    const std::size_t line = list.lines[i];
    if (line <= previous || line > lines.size()) fail("line numbers out of order");
    previous = line;
    std::string_view body = lines[line - 1];
    if (line == 1 && body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // a BOM
    std::string error;
    const std::optional<RayD> again = tools::parse_ray(body, error);
    if (!again || !same_bits(*again, ray)) fail("parse_ray disagrees with read_rays");
  }
  for (const std::string_view line : lines) {
    std::string error3, error2;
    const auto p3 = tools::parse_point<3>(line, error3, "", kMaxInputPoint);
    const auto p2 = tools::parse_point<2>(line, error2, "", kMaxInputPoint);
    if (p3.has_value() == !error3.empty() || p2.has_value() == !error2.empty()) {
      fail("parse_point gave both or neither of a point and an error");
    }
    for (int a = 0; p3 && a < 3; ++a) {
      if (!(std::abs((*p3)[a]) <= kMaxInputPoint)) fail("parse_point let a coordinate out of bounds");
    }
    for (int a = 0; p2 && a < 2; ++a) {
      if (!(std::abs((*p2)[a]) <= kMaxInputPoint)) fail("parse_point let a coordinate out of bounds");
    }
  }
  // Any name gives JSON that reads back to the same name (invalid UTF-8 is
  // replaced, so compare only when the name is valid JSON text itself).
  const std::string name(lines.empty() ? std::string_view{} : lines.front());
  RayD ray;
  if (!list.rays.empty()) ray = list.rays.front();
  Hit hit;
  hit.object = 0;
  hit.t = 1.0f;
  const std::string one = tools::hit_to_json(0, ray, hit, name);
  const std::string all = tools::hits_to_json(0, ray, {hit, hit}, {name});
  for (const std::string* json : {&one, &all}) {
    const auto parsed = nlohmann::json::parse(*json, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) fail("result line is not JSON: " + *json);
    if (json->find('\n') != std::string::npos) fail("a result line holds a newline");
  }
  (void)tools::hit_to_text(0, ray, hit, name);
  return 0;
}
