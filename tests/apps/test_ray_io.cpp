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

TEST_CASE("a ray origin beyond the supported coordinate range is refused with the range") {
  std::string error;
  CHECK(parse_ray("1e11 -1e11 0 1 0 0", error).has_value());
  CHECK(error_of("0 1.0001e11 0 1 0 0") ==
        "origin is outside the supported range (each coordinate within +-1e+11)");
  CHECK(error_of("0 0 -3e20 1 0 0").find("outside the supported range") !=
        std::string::npos);
}

TEST_CASE("rays files skip blank and comment lines and report the 1-based line of an error") {
  const auto list = tools::read_rays_text(
      "# header\n\n1 2 3 0 0 1\n   # indented comment\n1,2,3,0,1,0\r\n", "rays.txt");
  REQUIRE(list.ok());
  REQUIRE(list.rays.size() == 2);
  CHECK(list.lines[0] == 3);
  CHECK(list.lines[1] == 5);
  const auto err = tools::read_rays_text("0 0 0 1 0 0\n\n# c\n0 0 0 1 0\n0 0 0 1 0 0\n",
                                         "rays.txt");
  CHECK_FALSE(err.ok());
  CHECK(err.rays.empty());
  CHECK(err.error.rfind("rays.txt:4: ", 0) == 0);
}

TEST_CASE("JSON Lines output follows the contract and reads back to the same floats") {
  Ray ray{{0.1f, 0, 0}, {0, 0, 1}};
  Hit hit{12, 3.25f};
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

TEST_CASE("a rays file may begin with a UTF-8 byte-order mark, even one split over reads") {
  const auto list = tools::read_rays_text("\xEF\xBB\xBF" "0 0 0 1 0 0\n1 1 1 0 1 0", "bom.txt");
  REQUIRE(list.ok());
  CHECK(list.rays.size() == 2);
  CHECK(list.rays[1].org == glm::dvec3(1, 1, 1));  // last line without a line break
  // Fed one byte at a time, as a slow pipe delivers it.
  std::vector<std::string> lines;
  tools::LineSplitter split("pipe", [&](std::size_t, std::string_view line) {
    lines.emplace_back(line);
    return std::string();
  });
  const std::string text = "\xEF\xBB\xBF" "a\n\xEF\xBB\xBF" "b\n";
  for (char c : text) CHECK(split.feed(std::string_view(&c, 1)).empty());
  CHECK(split.finish().empty());
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "a");
  CHECK(lines[1] == "\xEF\xBB\xBF" "b");  // only the stream's first mark is skipped
  // Streams shorter than the mark, or only like its start, are plain text.
  lines.clear();
  tools::LineSplitter short_split("s", [&](std::size_t, std::string_view line) {
    lines.emplace_back(line);
    return std::string();
  });
  CHECK(short_split.feed("\xEF\xBB").empty());
  CHECK(short_split.finish().empty());
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "\xEF\xBB");
  CHECK(tools::read_rays_text("\xEF" "0 0 0 1 0 0\n", "x").error ==
        "x:1: '\\xEF0' is not a number");
}

TEST_CASE("a line longer than the bound is refused with its line number, without buffering the stream") {
  const std::string ok_line = std::string(tools::kMaxLineBytes - 11, ' ') + "0 0 0 1 0 0";
  REQUIRE(ok_line.size() == tools::kMaxLineBytes);
  CHECK(tools::read_rays_text(ok_line + "\n", "r").ok());
  const auto list = tools::read_rays_text("0 0 0 1 0 0\n#" + ok_line + "\n", "r");
  CHECK(list.error == "r:2: line is longer than 4096 bytes (is this a text file?)");
  // A stream with no line break at all stops at the bound.
  std::size_t calls = 0;
  tools::LineSplitter split("zeros", [&](std::size_t, std::string_view) {
    ++calls;
    return std::string();
  });
  const std::string zeros(1000, '\0');
  std::string error;
  int chunks = 0;
  while (error.empty() && chunks < 100) {
    error = split.feed(zeros);
    ++chunks;
  }
  CHECK(chunks == 5);  // the fifth 1000 bytes pass 4096
  CHECK(error == "zeros:1: line is longer than 4096 bytes (is this a text file?)");
  CHECK(calls == 0);
}

TEST_CASE("numbers below a double's range read as 0, above it as not finite") {
  std::string error;
  auto r = parse_ray("1e-400 -1e-400 1e-46 0 0 1", error);
  REQUIRE(r);
  CHECK(r->org.x == 0.0f);
  CHECK(r->org.y == 0.0f);
  CHECK(std::signbit(r->org.y));
  // 1e-46: the origin is kept in double (a RayD), where it is not below
  // the range; as a float it is 0.
  CHECK(r->org.z == 1e-46);
  CHECK(to_float(*r).org.z == 0.0f);
  CHECK(error_of("0 0 0 1e-400 0 0") == "direction is zero");
  CHECK(error_of("1e400 0 0 1 0 0").find("origin is not finite") != std::string::npos);
  CHECK(error_of("0 0 0 -1e999 0 1").find("direction is not finite") != std::string::npos);
  CHECK(error_of("0 0 0 1e-400x 0 1") == "'1e-400x' is not a number");
}

TEST_CASE("a bad token is quoted short and with its control bytes escaped") {
  const std::string huge(10000000, '7');
  const std::string error = error_of("0 0 0 1 0 " + huge + "x");
  CHECK(error == "'" + std::string(40, '7') + "...' is not a number");
  CHECK(error_of("0 0 0 1 0 \x1B[2J\r") == "'\\x1B[2J' is not a number");  // \r is blank
  CHECK(error_of(std::string("0 0 0 1 0 a\0b", 13)) == "'a\\x00b' is not a number");
  const auto list = tools::read_rays_text("0 0 0 1 0 \x1B]0;owned\x07\n", "evil\x1B.txt");
  CHECK(list.error == "evil\\x1B.txt:1: '\\x1B]0;owned\\x07' is not a number");
}

TEST_CASE("text results escape control characters in names, so one result is one line") {
  RayD ray{{0, 0, 0}, {0, 0, 1}};
  const Hit hit{1, 2.0f};
  const std::string line = tools::hit_to_text(0, ray, hit, "a\nray 1: miss\x1B[0m\r");
  CHECK(line == "ray 0: object 1 'a\\x0Aray 1: miss\\x1B[0m\\x0D' at t = 2, point (0, 0, 2)");
  CHECK(tools::hit_to_text(0, ray, hit, "caf\xC3\xA9") ==
        "ray 0: object 1 'caf\xC3\xA9' at t = 2, point (0, 0, 2)");
}

TEST_CASE("JSON results leave no control character raw and read back to the name") {
  Ray ray{{0, 0, 0}, {0, 0, 1}};
  const Hit hit{0, 1.0f};
  const std::string name = std::string("n\x1B\n\x7F\xC2\x9B\xC2\xA0\0z", 10);
  const std::string line = tools::hit_to_json(0, ray, hit, name);
  for (char c : line) CHECK(static_cast<unsigned char>(c) >= 0x20);
  CHECK(line.find('\x7F') == std::string::npos);
  CHECK(line.find("\xC2\x9B") == std::string::npos);
  CHECK(line.find("\\u001b\\n\\u007f\\u009b\xC2\xA0\\u0000z") != std::string::npos);
  CHECK(nlohmann::json::parse(line)["name"] == name);
  // Invalid UTF-8 becomes U+FFFD, so the line is still valid JSON.
  CHECK(nlohmann::json::parse(tools::hit_to_json(0, ray, hit, "\xFF"))["name"] ==
        "\xEF\xBF\xBD");
}
