// JSON helpers shared by the glTF and JSON scene loaders: parsing with a
// line number on error, naming a value by its path ("objects[3].rotate"),
// finding the line a path's value starts on, and typed reads that fail with
// the path. Private to loaders/; nlohmann-json never reaches a public header.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace raypick::detail {

using Json = nlohmann::json;

// Where a value sits in a document: a chain of object keys and array
// indices. Printed as errors name it: `objects[3].rotate.quat`, or
// `(top level)` for the document itself.
class JsonPath {
 public:
  using Element = std::variant<std::string, std::size_t>;

  JsonPath operator/(std::string key) const;
  JsonPath operator[](std::size_t index) const;

  const std::vector<Element>& elements() const { return elements_; }
  void push_back(Element e) { elements_.push_back(std::move(e)); }
  void pop_back() { elements_.pop_back(); }
  std::string to_string() const;

 private:
  std::vector<Element> elements_;
};

// A problem with the value at `path`. The loaders throw it from deep inside
// their checks and turn it into a LoadError at their boundary, where the
// path becomes a line of the file.
struct JsonError {
  JsonPath path;
  std::string message;  // without the path
  // Where to look for the line when it is not `path` (an unknown key is
  // reported at its object and found at the key).
  std::optional<JsonPath> at;
  bool io = false;  // a file the document refers to cannot be read

  const JsonPath& where() const { return at ? *at : path; }

  std::string to_string() const;  // "path: message", or the message alone
                                  // for the document as a whole
};

[[noreturn]] void fail(const JsonPath& path, std::string message);
[[noreturn]] void fail_at(const JsonPath& path, const JsonPath& at,
                          std::string message);

// 1-based line of byte `offset` of `text`, counting "\n", "\r\n" and a lone
// "\r" each as one line break (as the OBJ loader counts them).
std::size_t line_of_offset(std::string_view text, std::size_t offset);

// The result of parsing: the document, or why it is not JSON and the 1-based
// line of `text` where the parser stopped (0 when it cannot say).
struct JsonParse {
  std::optional<Json> value;
  std::string error;  // "invalid JSON: ..." (or the duplicate key) when
                      // value is empty
  std::size_t line = 0;
};

// Arrays and objects nested deeper than this are refused by parse_json()
// as the parser reaches them: no raypick format needs more than a few
// levels, and the loaders' walks over a tree (dismantle()) recurse this deep.
constexpr std::size_t kMaxJsonDepth = 128;

// Parses `text` (RFC 8259, an optional UTF-8 byte order mark skipped) in one
// pass of nlohmann's SAX parser that builds the tree. Nesting deeper than
// kMaxJsonDepth is an error with the line it reaches that depth on. With
// `refuse_duplicate_keys`, a document that is valid JSON but has a key twice
// in one object is an error too: "objects[2]: duplicate key 'mesh'", on the
// line of the key's last occurrence (without it, the last one wins, as in
// nlohmann). Lines are looked up in the text only for the error reported.
// Never throws but std::bad_alloc: nlohmann's exceptions become `error`,
// and a tree left half-built by running out of memory is dismantled before
// the exception leaves. Cost: linear.
JsonParse parse_json(std::string_view text, bool refuse_duplicate_keys = false);

// Empties `value` without allocating, bottom-up, so that destroying it
// cannot throw. nlohmann's destructor allocates a stack as long as the
// widest container it frees; when the tree is being destroyed because
// memory ran out, that allocation throws inside a destructor, which
// terminates the program. Recursion depth is the tree's depth (at most
// kMaxJsonDepth + 1 for a parsed document).
void dismantle(Json& value) noexcept;

// Dismantles a tree when it goes out of scope, before its own destructor
// runs: declare it right after the tree (`Json doc; JsonGuard g(doc);`).
class JsonGuard {
 public:
  explicit JsonGuard(Json& value) : value_(&value) {}
  explicit JsonGuard(std::optional<Json>& value) : optional_(&value) {}
  ~JsonGuard() {
    if (value_ != nullptr) dismantle(*value_);
    if (optional_ != nullptr && optional_->has_value()) dismantle(**optional_);
  }
  JsonGuard(const JsonGuard&) = delete;
  JsonGuard& operator=(const JsonGuard&) = delete;

 private:
  Json* value_ = nullptr;
  std::optional<Json>* optional_ = nullptr;
};

// The 1-based line on which the value at `path` starts in `text`, which
// must be the valid JSON `parse_json` accepted. When the path leads nowhere
// (a key that is missing), the line of the deepest value on the way that
// exists. Duplicate keys resolve to the last one, as in nlohmann's document.
// Cost: linear in the text before the value.
std::size_t line_of_path(std::string_view text, const JsonPath& path);

// ---------------------------------------------------------------------------
// Typed reads. Each throws JsonError naming `path` and what was expected.

// "a string", "an array", "the number 3.5", ... for messages.
std::string describe(const Json& value);

const Json& require_object(const Json& value, const JsonPath& path);
const Json& require_array(const Json& value, const JsonPath& path);
std::string require_string(const Json& value, const JsonPath& path);
bool require_bool(const Json& value, const JsonPath& path);
// Any JSON number; never NaN or infinite (JSON cannot spell them).
double require_number(const Json& value, const JsonPath& path);
// A number that is finite once rounded to float.
float require_float(const Json& value, const JsonPath& path);
// A non-negative integer no larger than `max`; 3.0 counts as 3.
std::uint64_t require_uint(const Json& value, const JsonPath& path,
                           std::uint64_t max);
// An array of exactly `n` numbers, each finite as a float, read as doubles.
std::vector<double> require_floats(const Json& value, const JsonPath& path,
                                   std::size_t n);

// Throws for the first key of `object` not in `allowed`: "unknown key
// 'eulr' (expected quat or euler_deg)".
void check_keys(const Json& object, const JsonPath& path,
                std::initializer_list<std::string_view> allowed);

// The member `key` of `object`, or nullptr.
const Json* find_member(const Json& object, std::string_view key);

}  // namespace raypick::detail
