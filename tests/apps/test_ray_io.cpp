// The contract's ray syntax and JSON Lines output.
#include "test_util.h"

#include "ray_io.h"

#include <nlohmann/json.hpp>

#include <sstream>

using namespace raypick;
using raypick::tools::parse_ray;

namespace {

bool parses(const std::string& text) {
  std::string error;
  return parse_ray(text, error).has_value();
}

std::string error_of(const std::string& text) {
  std::string error;
  CHECK_FALSE(parse_ray(text, error).has_value());
  return error;
}

}  // namespace

TEST_CASE("rays parse with white space or single commas as separators") {
  std::string error;
  const auto r = parse_ray("1 2 3 4 5 6", error);
  REQUIRE(r);
  CHECK(r->org == glm::dvec3(1, 2, 3));
  CHECK(r->dir == glm::vec3(4, 5, 6));
  CHECK(parses("1,2,3,4,5,6"));
  CHECK(parses("1 , 2,3 ,4,\t5 ,  6"));
  CHECK(parses("  -1.5e2\t+2 3 0 0 -1  "));
  CHECK(parses("1 2,3 4 5,6"));
  const auto neg = parse_ray("0 0 0 -0.0 0 1", error);
  REQUIRE(neg);
  CHECK(std::signbit(neg->dir.x));
}

TEST_CASE("malformed rays are refused with a reason") {
  CHECK(error_of("0,,0,1,0,0").find("empty field") != std::string::npos);
  CHECK(error_of(",0,0,0,1,0,0").find("empty field") != std::string::npos);
  CHECK(error_of("0,0,0,1,0,0,").find("trailing comma") != std::string::npos);
  CHECK(error_of("1 2 3 4 5").find("found 5") != std::string::npos);
  CHECK(error_of("1 2 3 4 5 6 7").find("found more") != std::string::npos);
  CHECK(error_of("").find("found 0") != std::string::npos);
  CHECK(error_of("1 2 3 4 5 x").find("'x' is not a number") != std::string::npos);
  CHECK(error_of("1 2 3 4 5 6x").find("not a number") != std::string::npos);
  CHECK(error_of("1 2 3 +-4 5 6").find("not a number") != std::string::npos);
  CHECK(error_of("0 0 0 0 0 0").find("direction is zero") != std::string::npos);
  CHECK(error_of("0 0 0 -0 0 -0").find("direction is zero") != std::string::npos);
  CHECK(error_of("0 0 0 inf 0 1").find("direction is not finite") != std::string::npos);
  CHECK(error_of("0 0 0 nan 0 1").find("direction is not finite") != std::string::npos);
  CHECK(error_of("nan 0 0 1 0 1").find("origin is not finite") != std::string::npos);
  CHECK(error_of("1e39 0 0 1 0 1").find("origin is not finite") != std::string::npos);
}

TEST_CASE("rays files skip blank and comment lines and report the 1-based line of an error") {
  std::istringstream good("# header\n\n1 2 3 0 0 1\n   # indented comment\n1,2,3,0,1,0\r\n");
  const auto list = tools::read_rays(good, "rays.txt");
  REQUIRE(list.ok());
  REQUIRE(list.rays.size() == 2);
  CHECK(list.lines[0] == 3);
  CHECK(list.lines[1] == 5);
  std::istringstream bad("0 0 0 1 0 0\n\n# c\n0 0 0 1 0\n0 0 0 1 0 0\n");
  const auto err = tools::read_rays(bad, "rays.txt");
  CHECK_FALSE(err.ok());
  CHECK(err.rays.empty());
  CHECK(err.error.rfind("rays.txt:4: ", 0) == 0);
}

TEST_CASE("JSON Lines output follows the contract and reads back to the same floats") {
  Ray ray{{0.1f, 0, 0}, {0, 0, 1}};
  Hit hit;
  hit.object = 12;
  hit.t = 3.25f;
  const std::string line = tools::hit_to_json(4, ray, hit, "wheel \"2\"");
  const auto j = nlohmann::json::parse(line);
  CHECK(j["ray"] == 4);
  CHECK(j["hit"] == true);
  CHECK(j["object"] == 12);
  CHECK(j["name"] == "wheel \"2\"");
  CHECK(j["t"].get<double>() == 3.25);
  CHECK_FALSE(j.contains("triangle"));
  CHECK(static_cast<float>(j["point"][0].get<double>()) == 0.1f);
  CHECK(static_cast<float>(j["point"][2].get<double>()) == 3.25f);
  CHECK(line.rfind("{\"ray\":4,\"hit\":true,\"object\":12,\"name\":", 0) == 0);
  hit.triangle = 7;
  CHECK(nlohmann::json::parse(tools::hit_to_json(0, ray, hit, "a"))["triangle"] == 7);
  CHECK(tools::hit_to_json(1, ray, Hit{}, "") == "{\"ray\":1,\"hit\":false}");
  // 9 significant digits: every float survives a round trip.
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-1e6f, 1e6f);
  for (int i = 0; i < 1000; ++i) {
    const float v = u(rng) * std::pow(10.0f, static_cast<float>(i % 9 - 4));
    CHECK(std::stof(tools::format_float(v)) == v);
  }
}
