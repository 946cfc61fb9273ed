// The command line's option checks and their plain messages, on a CLI11 app
// of the test's own.
#include "test_util.h"

#include "common.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace {

// Parses "--n TEXT" into an option checked by `check`; returns CLI11's
// message, or "" with the value in `value`.
template <typename T>
std::string parse_one(const CLI::Validator& check, const std::string& text, T& value) {
  CLI::App app;
  app.add_option("--n", value)->transform(check);
  std::vector<std::string> args{text, "--n"};  // CLI11 takes them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

TEST_CASE("whole numbers are decimal or 0x-hex, in range, and never saturate") {
  using raypick::cli::whole_number;
  std::uint64_t v = 0;
  CHECK(parse_one(whole_number(0), "18446744073709551615", v).empty());
  CHECK(v == 18446744073709551615u);
  CHECK(parse_one(whole_number(0), "010", v).empty());
  CHECK(v == 10);  // CLI11 alone reads octal 8
  CHECK(parse_one(whole_number(0), "0x1F", v).empty());
  CHECK(v == 31);
  CHECK(parse_one(whole_number(0), "99999999999999999999", v) ==
        "--n: '99999999999999999999' is out of range: expected a whole number >= 0");
  // A whole number too large for the option is out of range, not "not a
  // whole number".
  CHECK(parse_one(whole_number(1), "99999999999999999999", v) ==
        "--n: '99999999999999999999' is out of range: expected a whole number >= 1");
  CHECK(parse_one(whole_number(0), "-1", v) == "--n: expected a whole number >= 0, got '-1'");
  CHECK(parse_one(whole_number(0), "1.5", v) == "--n: expected a whole number >= 0, got '1.5'");
  CHECK(parse_one(whole_number(0), "", v) == "--n: expected a whole number >= 0, got ''");
  CHECK(parse_one(whole_number(1), "0", v) == "--n: '0' is out of range: expected a whole number >= 1");
  std::uint32_t mask = 0;
  CHECK(parse_one(whole_number(0, 0xFFFFFFFFu), "4294967296", mask) ==
        "--n: '4294967296' is out of range: expected a whole number from 0 to 4294967295");
  CHECK(parse_one(whole_number(0, 0xFFFFFFFFu), "0xFFFFFFFF", mask).empty());
  CHECK(mask == 0xFFFFFFFFu);
  int runs = 0;
  CHECK(parse_one(whole_number(1, 1000), "1000", runs).empty());
  CHECK(runs == 1000);
  // A long bad value is quoted short and escaped.
  CHECK(parse_one(whole_number(1, 1000), std::string(100, '7') + "\x1B", runs) ==
        "--n: expected a whole number from 1 to 1000, got '" + std::string(40, '7') + "...'");
}

TEST_CASE("float options take numbers >= the bound, inf included, and refuse NaN and junk") {
  using raypick::cli::float_at_least;
  float t = -1.0f;
  CHECK(parse_one(float_at_least(0.0), "2.5", t).empty());
  CHECK(t == 2.5f);
  CHECK(parse_one(float_at_least(0.0), "+2", t).empty());
  CHECK(t == 2.0f);
  CHECK(parse_one(float_at_least(0.0), "inf", t).empty());
  CHECK(std::isinf(t));
  CHECK(parse_one(float_at_least(0.0), "1e39", t).empty());  // past a float: inf
  CHECK(std::isinf(t));
  CHECK(parse_one(float_at_least(0.0), "1e-400", t).empty());  // underflow: 0
  CHECK(t == 0.0f);
  CHECK(parse_one(float_at_least(0.0), "0", t).empty());
  CHECK(t == 0.0f);
  for (const char* bad : {"1x", "nan", "-1", "", "+-1", "1e999x"}) {
    CAPTURE(bad);
    CHECK(parse_one(float_at_least(0.0), bad, t) ==
          std::string("--n: expected a number >= 0, got '") + bad + "'");
  }
}

TEST_CASE("the load options fill LoadOptions: --root and every budget, with LoadBudget's defaults") {
  const auto parse = [](std::vector<std::string> args, raypick::LoadOptions& options) {
    CLI::App app;
    raypick::cli::add_load_options(app, options);
    std::reverse(args.begin(), args.end());  // CLI11 takes them reversed
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  raypick::LoadOptions none;
  CHECK(parse({}, none).empty());
  const raypick::LoadBudget defaults;
  CHECK(none.root.empty());
  CHECK(none.budget.max_bytes == defaults.max_bytes);
  CHECK(none.budget.max_vertices == defaults.max_vertices);
  CHECK(none.budget.max_triangles == defaults.max_triangles);
  CHECK(none.budget.max_objects == defaults.max_objects);

  raypick::LoadOptions set;
  const std::string dir = RAYPICK_SOURCE_DIR;
  CHECK(parse({"--root", dir, "--max-bytes", "1000", "--max-vertices", "0x20",
               "--max-triangles", "30", "--max-objects", "4"},
              set)
            .empty());
  CHECK(set.root == dir);
  CHECK(set.budget.max_bytes == 1000);
  CHECK(set.budget.max_vertices == 32);
  CHECK(set.budget.max_triangles == 30);
  CHECK(set.budget.max_objects == 4);

  raypick::LoadOptions bad;
  CHECK(parse({"--max-objects", "0"}, bad) ==
        "--max-objects: '0' is out of range: expected a whole number >= 1");
  CHECK(parse({"--root", dir + "/README.md"}, bad) ==
        "--root: '" + dir + "/README.md' is not a directory");
  CHECK(parse({"--root", dir + "/no_such_dir"}, bad) ==
        "--root: '" + dir + "/no_such_dir': No such file or directory");
}
