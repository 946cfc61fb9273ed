#include "common.h"

#include "raypick/core/text.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <iostream>

namespace raypick::cli {

int fail(int status, const std::string& message) {
  std::fflush(stdout);
  const std::string line = "raypick: " + printable(message) + "\n";
  std::fputs(line.c_str(), stderr);
  return status;
}

int finish_output(int status) {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !std::ferror(stdout)) return status;
  // A write that failed earlier leaves the error flag; errno then may no
  // longer say why.
  std::string why = "cannot write to standard output";
  if (!flushed && err != 0) why += std::string(": ") + std::strerror(err);
  return fail(kExitBadInput, why);
}

namespace {

// How much of a bad value a message quotes.
constexpr std::size_t kQuoteBytes = 40;

}  // namespace

std::string in_quotes(const std::string& text) {
  return "'" + printable(text, kQuoteBytes) + "'";
}

CLI::Validator not_an_option() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        if (text.rfind("--", 0) != 0) return {};
        return "needs a value, got the option " + in_quotes(text);
      },
      "", "");
}

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  const std::string range =
      max == std::numeric_limits<std::uint64_t>::max()
          ? ">= " + std::to_string(min)
          : "from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        std::string_view digits = text;
        int base = 10;
        if (digits.size() > 2 && digits[0] == '0' &&
            (digits[1] == 'x' || digits[1] == 'X')) {
          digits.remove_prefix(2);
          base = 16;
        }
        std::uint64_t value = 0;
        const char* end = digits.data() + digits.size();
        const auto [ptr, ec] =
            std::from_chars(digits.data(), end, value, base);
        if (digits.empty() || ptr != end ||
            (ec != std::errc() && ec != std::errc::result_out_of_range)) {
          return "expected a whole number " + range + ", got " + in_quotes(text);
        }
        // A whole number, but not one in range: say so.
        if (ec == std::errc::result_out_of_range || value < min ||
            value > max) {
          return in_quotes(text) + " is out of range: expected a whole number " + range;
        }
        text = std::to_string(value);
        return {};
      },
      "", "");
}

namespace {

// Numbers >= `min`; `what` names them in the message.
CLI::Validator number_validator(double min, const std::string& what) {
  return CLI::Validator(
      [min, what](std::string& text) -> std::string {
        std::string_view number = text;
        if (!number.empty() && number.front() == '+') number.remove_prefix(1);
        double value = 0.0;
        const char* end = number.data() + number.size();
        const auto [ptr, ec] = std::from_chars(number.data(), end, value);
        const bool parsed =
            !number.empty() && ptr == end && !std::isnan(value) &&
            (ec == std::errc() || ec == std::errc::result_out_of_range) &&
            !(text.front() == '+' && number.front() == '-');
        if (!parsed) return "expected " + what + ", got " + in_quotes(text);
        if (ec == std::errc::result_out_of_range) {
          // Well formed but past a double's range: strtod says which way
          // (a tiny value reads as 0). The C locale is in force.
          value = std::strtod(std::string(number).c_str(), nullptr);
        }
        if (value < min) {
          return "expected " + what + ", got " + in_quotes(text);
        }
        const bool finite_float =
            value <= double(std::numeric_limits<float>::max());
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", value);
        text = finite_float ? std::string(buf) : std::string("inf");
        return {};
      },
      "", "");
}

}  // namespace

CLI::Validator float_at_least(double min) {
  char bound[32];
  std::snprintf(bound, sizeof bound, "%g", min);
  return number_validator(min, std::string("a number >= ") + bound);
}

CLI::Validator a_number() {
  return number_validator(-std::numeric_limits<double>::infinity(), "a number");
}

void add_load_options(CLI::App& command, LoadOptions& options) {
  command
      .add_option("--root", options.root,
                  "Files that the scene refers to (glTF buffers, mesh files, "
                  "material libraries) may lie anywhere in DIR (default: "
                  "only in the scene file's folder)")
      ->type_name("DIR")
      ->check(CLI::Validator(
          [](const std::string& dir) -> std::string {
            struct stat st;
            if (::stat(dir.c_str(), &st) != 0) {
              return in_quotes(dir) + ": " + std::strerror(errno);
            }
            if (!S_ISDIR(st.st_mode)) {
              return in_quotes(dir) + " is not a directory";
            }
            return {};
          },
          "", ""));
  LoadBudget& b = options.budget;
  const struct {
    const char* name;
    std::uint64_t* value;
    const char* help;
  } budgets[] = {
      {"--max-bytes", &b.max_bytes,
       "Refuse a scene whose files add up to more than N bytes"},
      {"--max-vertices", &b.max_vertices,
       "Refuse a scene with more than N vertex positions in all"},
      {"--max-triangles", &b.max_triangles,
       "Refuse a scene with more than N triangles in all its meshes"},
      {"--max-objects", &b.max_objects,
       "Refuse a scene with more than N objects"},
  };
  command.add_option("--max-memory", b.max_memory,
                     "Refuse a scene whose load and build would take more than about N bytes "
                     "of memory (estimated before anything is allocated); 0, the default, is "
                     "256 MiB or 64 times the bytes read, whichever is more")
      ->type_name("N")
      ->capture_default_str()
      ->transform(whole_number(0));
  for (const auto& budget : budgets) {
    command.add_option(budget.name, *budget.value, budget.help)
        ->type_name("N")
        ->capture_default_str()
        ->transform(whole_number(1));
  }
}

std::optional<Loaded> load_or_report(const std::string& path,
                                     const LoadOptions& options, int& status) {
  const auto start = Clock::now();
  LoadResult r = load_scene(path, options);
  if (!r.ok()) {
    const LoadError& err = r.error();
    status = fail(err.kind == LoadError::Kind::kUnsupported ? kExitUsage
                                                             : kExitBadInput,
                  err.to_string());
    return std::nullopt;
  }
  // Warnings do not stop the job; each gets its own prefixed line.
  for (const std::string& line : r.warnings) {
    std::cerr << "raypick: warning: " << printable(path) << ": "
              << printable(line) << "\n";
  }
  return Loaded{std::move(r.scene()), ms_since(start)};
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

const EnumNames<PickMode>& mode_names() {
  static const EnumNames<PickMode> names{{"obb", PickMode::kObb},
                                         {"mesh", PickMode::kMesh}};
  return names;
}

const char* mode_name(PickMode mode) {
  return mode == PickMode::kMesh ? "mesh" : "obb";
}

PickerConfig picker_config(PickMode mode) {
  PickerConfig config;
  config.mesh_mode = mode == PickMode::kMesh;
  return config;
}

CLI::Option* add_text_option(CLI::App& command, const std::string& name, std::string& value,
                             const std::string& help) {
  return command.add_option(name, value, help)->check(not_an_option());
}

void add_scene_argument(CLI::App& command, std::string& scene) {
  command.add_option("SCENE", scene, "Scene file (.obj, .gltf, .glb, .json)")->required();
}

void add_mask_option(CLI::App& command, std::uint32_t& mask, const std::string& help) {
  command.add_option("--mask", mask, help)->transform(whole_number(0, 0xFFFFFFFFu));
}

std::vector<std::string> object_names(const Scene& scene) {
  std::vector<std::string> names;
  names.reserve(scene.objects.size());
  for (const Object& o : scene.objects) names.push_back(o.name);
  return names;
}

void write_buffered(std::string& out, const std::string& text) {
  out += text;
  if (out.size() > (1 << 16)) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
  }
}

}  // namespace raypick::cli
