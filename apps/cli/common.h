// What every raypick command shares: exit statuses, the one-line error,
// checked output, plain-worded option checks and the scene-loading options.
#pragma once

#include "raypick/bvh/picker.h"
#include "raypick/loaders/load.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace raypick::cli {

inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

// Every failure leaves through here: flushes stdout, writes
// "raypick: MESSAGE" on stderr as one line, returns `status`. The message
// goes through printable(), so no control character from a file name or a
// file's bytes reaches the terminal.
int fail(int status, const std::string& message);

// Flushes stdout and checks that everything written to it arrived. Returns
// `status` when it did; otherwise reports "cannot write to standard output:
// REASON" and returns kExitBadInput (so `raypick info > /dev/full` fails).
int finish_output(int status);

// `text` for a message: printable(), cut to 40 bytes, in single quotes.
std::string in_quotes(const std::string& text);

// Option checks with plain messages (CLI11's own say "Value 0 not in range
// 0.000000 to 1797693...", with 309 digits, even for "1x"). Use with
// Option::transform: they also rewrite the text to what CLI11's conversion
// reads the same way.

// A whole number from `min` to `max`, decimal or 0x-hex; leading zeros are
// decimal ("010" is 10, where CLI11 alone would read octal 8). Refuses signs,
// fractions and anything past `max` ("--seed: expected a whole number from
// 0 to 18446744073709551615, got '99999999999999999999'") instead of
// saturating.
CLI::Validator whole_number(std::uint64_t min,
                            std::uint64_t max =
                                std::numeric_limits<std::uint64_t>::max());

// A number >= `min` (decimal, exponent, or "inf"); NaN is refused. A value
// beyond a float's range reads as "inf".
CLI::Validator float_at_least(double min);

// Any number, as float_at_least reads it, for options whose range the
// command checks itself ("--fov: expected a number, got 'x'").
CLI::Validator a_number();

// For options that take a text value: refuses one that starts with "--",
// which is the next option, taken as the value when the option's own was
// left out ("--camera: needs a value, got the option '--size'").
CLI::Validator not_an_option();

// Adds an option that takes a text value (a file name, "X,Y,Z", ...),
// checked with not_an_option().
CLI::Option* add_text_option(CLI::App& command, const std::string& name, std::string& value,
                             const std::string& help);

// Adds the options of every command that loads a scene file, bound to
// `options`:
//   --root DIR          referenced files (glTF buffers, a JSON scene's mesh
//                       files, OBJ material libraries) may lie anywhere in
//                       DIR, not only in the scene file's folder; DIR must be
//                       an existing directory
//   --max-bytes N, --max-vertices N, --max-triangles N, --max-objects N
//                       the LoadBudget; each defaults to LoadBudget's value
//                       and must be >= 1
void add_load_options(CLI::App& command, LoadOptions& options);

// A scene file loaded, and how long that took.
struct Loaded {
  Scene scene;
  double load_ms = 0.0;
};

// Loads a scene file, each warning on its own "raypick: warning: FILE: ..."
// line; or reports why not through fail() and sets `status` (kExitUsage for
// an unsupported extension, kExitBadInput otherwise).
std::optional<Loaded> load_or_report(const std::string& path,
                                     const LoadOptions& options, int& status);

// Milliseconds from `start` to now, on the steady clock (the commands'
// timings).
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start);

// The spellings of an enum option's values, in the order that help and
// errors list them.
template <typename Enum>
using EnumNames = std::vector<std::pair<std::string, Enum>>;

// Adds an option that takes one of `names` and stores its enum value:
// CLI11's IsMember checks the spelling ("--mode: foo not in {obb,mesh}",
// help "TEXT:{obb,mesh}"), then a Transformer over the same names converts
// it.
template <typename Enum>
CLI::Option* add_enum_option(CLI::App& command, const std::string& name,
                             Enum& value, const EnumNames<Enum>& names,
                             const std::string& help) {
  return command.add_option(name, value, help)
      ->type_name("TEXT")
      ->transform(CLI::Transformer(names).description(""))
      ->transform(CLI::IsMember(names));
}

// The hit modes' names: "obb" and "mesh".
const EnumNames<PickMode>& mode_names();
const char* mode_name(PickMode mode);

// The Picker configuration for queries in `mode` (mesh mode builds the
// meshes' own BVHs).
PickerConfig picker_config(PickMode mode);


// Adds the SCENE argument every command that reads a scene file takes
// (required), bound to `scene`.
void add_scene_argument(CLI::App& command, std::string& scene);

// Adds --mask M, bound to `mask`: only objects whose pick mask shares a bit
// with M (decimal or 0x-hex). `help` replaces the default help text.
void add_mask_option(CLI::App& command, std::uint32_t& mask,
                     const std::string& help = "Only objects whose pick mask shares a bit "
                                               "with M (decimal or 0x-hex)");

// The scene's object names, by id.
std::vector<std::string> object_names(const Scene& scene);

// Appends `text` to `out`, writing `out` to stdout once it passes 64 KiB
// (finish_output() checks that it all arrived).
void write_buffered(std::string& out, const std::string& text);

}  // namespace raypick::cli
