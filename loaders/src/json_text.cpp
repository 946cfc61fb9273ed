#include "json_text.h"

#include "raypick/core/text.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <iterator>
#include <limits>
#include <new>
#include <set>
#include <string>
#include <utility>

namespace raypick::detail {

// ---------------------------------------------------------------------------
// Paths and errors

JsonPath JsonPath::operator/(std::string key) const {
  JsonPath out = *this;
  out.elements_.emplace_back(std::move(key));
  return out;
}

JsonPath JsonPath::operator[](std::size_t index) const {
  JsonPath out = *this;
  out.elements_.emplace_back(index);
  return out;
}

std::string JsonPath::to_string() const {
  if (elements_.empty()) return "(top level)";
  std::string out;
  for (const Element& e : elements_) {
    if (const std::string* key = std::get_if<std::string>(&e)) {
      if (!out.empty()) out += '.';
      out += printable(*key, 60);
    } else {
      out += '[' + std::to_string(std::get<std::size_t>(e)) + ']';
    }
  }
  return out;
}

std::string JsonError::to_string() const {
  if (path.elements().empty()) return message;
  return path.to_string() + ": " + message;
}

void fail(const JsonPath& path, std::string message) {
  throw JsonError{path, std::move(message), std::nullopt, false};
}

void fail_at(const JsonPath& path, const JsonPath& at, std::string message) {
  throw JsonError{path, std::move(message), at, false};
}

std::size_t line_of_offset(std::string_view text, std::size_t offset) {
  if (offset > text.size()) offset = text.size();
  std::size_t line = 1;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
    } else if (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n')) {
      ++line;
    }
  }
  return line;
}

// ---------------------------------------------------------------------------
// Parsing

namespace {

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at
// line 3, column 7: syntax error while parsing value - invalid literal; last
// read: 'x'": keep what follows the position, which the caller reports as a
// line of its own.
std::string parse_error_text(const std::string& what) {
  std::size_t at = what.find("parse error");
  at = at == std::string::npos ? std::string::npos : what.find(": ", at);
  return printable(at == std::string::npos ? what : what.substr(at + 2), 240);
}

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// The offset of the bracket at which arrays and objects first nest deeper
// than kMaxJsonDepth, or npos. Strings are skipped (with their escapes); the
// text need not be valid JSON.
std::size_t too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

// nlohmann's tree builder, which also refuses nesting past kMaxJsonDepth
// (stopping the parse) and, when asked, notes the first key repeated in an
// object, with its path. sax_parse calls these members by the static type,
// so they stand in for the base's.
class CheckingBuilder : public nlohmann::detail::json_sax_dom_parser<Json> {
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;

 public:
  CheckingBuilder(Json& tree, bool check_keys)
      : Base(tree, true), check_keys_(check_keys) {}

  bool null() { return element() && Base::null(); }
  bool boolean(bool v) { return element() && Base::boolean(v); }
  bool number_integer(Json::number_integer_t v) {
    return element() && Base::number_integer(v);
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return element() && Base::number_unsigned(v);
  }
  bool number_float(Json::number_float_t v, const Json::string_t& s) {
    return element() && Base::number_float(v, s);
  }
  bool string(Json::string_t& v) { return element() && Base::string(v); }
  bool binary(Json::binary_t& v) { return element() && Base::binary(v); }
  bool start_object(std::size_t n) {
    return open(true) && Base::start_object(n);
  }
  bool end_object() {
    open_.pop_back();
    return Base::end_object();
  }
  bool start_array(std::size_t n) { return open(false) && Base::start_array(n); }
  bool end_array() {
    open_.pop_back();
    return Base::end_array();
  }
  bool key(Json::string_t& k) {
    if (check_keys_) {
      Frame& top = open_.back();
      top.key = k;
      if (!duplicate_ && !top.keys.insert(k).second) duplicate_ = path();
    }
    return Base::key(k);
  }

  const std::optional<JsonPath>& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool object = false;
    std::size_t next = 0;  // an array's index of the next element
    std::string key;       // an object's current key (when checking keys)
    std::set<std::string> keys;
  };

  // A value begins: it is the next element of an enclosing array.
  bool element() {
    if (!open_.empty() && !open_.back().object) ++open_.back().next;
    return true;
  }

  bool open(bool object) {
    element();
    if (open_.size() >= kMaxJsonDepth) return false;
    open_.push_back(Frame{object, 0, {}, {}});
    return true;
  }

  // Where the parser is: every open container's current member.
  JsonPath path() const {
    JsonPath p;
    for (const Frame& f : open_) {
      if (f.object) {
        p.push_back(f.key);
      } else {
        p.push_back(f.next - 1);
      }
    }
    return p;
  }

  bool check_keys_;
  std::vector<Frame> open_;
  std::optional<JsonPath> duplicate_;
};

}  // namespace

void dismantle(Json& value) noexcept {
  if (value.is_array()) {
    Json::array_t& array = value.get_ref<Json::array_t&>();
    while (!array.empty()) {
      dismantle(array.back());
      array.pop_back();  // an empty container or a scalar: frees, no stack
    }
  } else if (value.is_object()) {
    Json::object_t& object = value.get_ref<Json::object_t&>();
    while (!object.empty()) {
      const auto last = std::prev(object.end());
      dismantle(last->second);
      object.erase(last);
    }
  }
}

JsonParse parse_json(std::string_view text, bool refuse_duplicate_keys) {
  JsonParse out;
  std::optional<JsonPath> duplicate;
  try {
    // Json::parse, into a tree of our own that a guard dismantles should
    // memory run out half-way (Json::parse would destroy its partial tree
    // with nlohmann's allocating destructor).
    Json value;
    JsonGuard guard(value);
    CheckingBuilder builder(value, refuse_duplicate_keys);
    if (!Json::sax_parse(text.begin(), text.end(), &builder)) {
      // Only the depth cap stops the parse without an exception.
      out.error = "invalid JSON: arrays and objects nested more than " +
                  std::to_string(kMaxJsonDepth) +
                  " deep (raypick reads no deeper)";
      out.line = line_of_offset(text, too_deep_at(text));
      return out;
    }
    duplicate = builder.duplicate();
    if (!duplicate) out.value.emplace(std::move(value));  // allocates nothing
  } catch (const Json::parse_error& e) {
    out.error = "invalid JSON: " + parse_error_text(e.what());
    // e.byte is the 1-based position of the last byte read.
    out.line = line_of_offset(text, e.byte == 0 ? 0 : e.byte - 1);
  } catch (const Json::out_of_range& e) {
    // "number overflow parsing '1e999'": a number beyond double. No position
    // comes with it; the first place the number is spelled is the line.
    std::string what = e.what();
    const std::size_t open = what.find('\'');
    const std::size_t close =
        open == std::string::npos ? open : what.find('\'', open + 1);
    if (close != std::string::npos) {
      const std::string number = what.substr(open + 1, close - open - 1);
      const std::size_t at = text.find(number);
      out.line = at == std::string_view::npos ? 0 : line_of_offset(text, at);
      out.error = "invalid JSON: number " + printable(number, 120) +
                  " is too large for a double";
    } else {
      out.error = "invalid JSON: " + printable(what, 120);
    }
  } catch (const std::bad_alloc&) {
    throw;  // the loader boundary reports it
  } catch (const std::exception& e) {
    out.error = std::string("invalid JSON: ") + printable(e.what(), 120);
  }
  if (duplicate) {
    const auto& elements = duplicate->elements();
    JsonPath parent = *duplicate;
    parent.pop_back();
    // The line of the last occurrence: the one the path finds.
    out.line = line_of_path(text, *duplicate);
    out.error = (elements.size() > 1 ? parent.to_string() + ": " : "") +
                "duplicate key '" + std::get<std::string>(elements.back()) +
                "'";
  }
  return out;
}

// ---------------------------------------------------------------------------
// Locating values in the text

namespace {

// A cursor over text that nlohmann accepted, so every token is well formed
// and the scanner need not check syntax; it only has to stay in bounds.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : s_(text) {
    if (s_.substr(0, kBom.size()) == kBom) i_ = kBom.size();
  }

  std::size_t pos() const { return i_; }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void advance() {
    if (i_ < s_.size()) ++i_;
  }
  void seek(std::size_t pos) { i_ = pos; }

  void skip_ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' ||
                              s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }

  // At '"': the decoded string; the cursor moves past the closing quote.
  std::string read_string() {
    const std::size_t start = i_;
    advance();
    bool escaped = false;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') {
        escaped = true;
        ++i_;
      }
      ++i_;
    }
    advance();
    const std::string_view token = s_.substr(start, i_ - start);
    if (!escaped) return std::string(token.substr(1, token.size() - 2));
    // Rare: let the parser decode the escapes.
    try {
      return Json::parse(token).get<std::string>();
    } catch (const std::exception&) {
      return std::string(token);
    }
  }

  // Skips one value of any kind, without recursion.
  void skip_value() {
    skip_ws();
    const char c = peek();
    if (c == '"') {
      read_raw_string();
      return;
    }
    if (c == '{' || c == '[') {
      std::size_t depth = 0;
      while (!at_end()) {
        const char d = peek();
        if (d == '"') {
          read_raw_string();
          continue;
        }
        advance();
        if (d == '{' || d == '[') ++depth;
        if (d == '}' || d == ']') {
          if (--depth == 0) return;
        }
      }
      return;
    }
    while (!at_end()) {
      const char d = peek();
      if (d == ',' || d == '}' || d == ']' || d == ' ' || d == '\t' ||
          d == '\n' || d == '\r') {
        return;
      }
      advance();
    }
  }

 private:
  void read_raw_string() {
    advance();
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\') ++i_;
      ++i_;
    }
    advance();
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

constexpr std::size_t kNotFound = std::numeric_limits<std::size_t>::max();

// The offset of member `key` of the object at the cursor (the last one if
// the key repeats), or kNotFound.
std::size_t find_key(Scanner& sc, const std::string& key) {
  sc.skip_ws();
  if (sc.peek() != '{') return kNotFound;
  sc.advance();
  std::size_t found = kNotFound;
  for (;;) {
    sc.skip_ws();
    if (sc.at_end() || sc.peek() == '}') break;
    const std::string name = sc.read_string();
    sc.skip_ws();
    sc.advance();  // ':'
    sc.skip_ws();
    if (name == key) found = sc.pos();
    sc.skip_value();
    sc.skip_ws();
    if (sc.peek() == ',') sc.advance();
  }
  return found;
}

// The offset of element `index` of the array at the cursor, or kNotFound.
std::size_t find_index(Scanner& sc, std::size_t index) {
  sc.skip_ws();
  if (sc.peek() != '[') return kNotFound;
  sc.advance();
  for (std::size_t k = 0;; ++k) {
    sc.skip_ws();
    if (sc.at_end() || sc.peek() == ']') return kNotFound;
    if (k == index) return sc.pos();
    sc.skip_value();
    sc.skip_ws();
    if (sc.peek() == ',') sc.advance();
  }
}

}  // namespace

std::size_t line_of_path(std::string_view text, const JsonPath& path) {
  Scanner sc(text);
  sc.skip_ws();
  std::size_t pos = sc.pos();
  for (const JsonPath::Element& e : path.elements()) {
    sc.seek(pos);
    const std::size_t next =
        std::holds_alternative<std::string>(e)
            ? find_key(sc, std::get<std::string>(e))
            : find_index(sc, std::get<std::size_t>(e));
    if (next == kNotFound) break;
    pos = next;
  }
  return line_of_offset(text, pos);
}

// ---------------------------------------------------------------------------
// Typed reads

namespace {

std::string number_text(const Json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v.get<double>());
  return buf;
}

}  // namespace

std::string describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case Json::value_t::string: {
      const std::string& s = value.get_ref<const std::string&>();
      return "the string \"" + printable(s, 40) + "\"";
    }
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return number_text(value);
    default:
      return "an unexpected value";
  }
}

const Json& require_object(const Json& value, const JsonPath& path) {
  if (!value.is_object()) fail(path, "expected an object, got " + describe(value));
  return value;
}

const Json& require_array(const Json& value, const JsonPath& path) {
  if (!value.is_array()) fail(path, "expected an array, got " + describe(value));
  return value;
}

std::string require_string(const Json& value, const JsonPath& path) {
  if (!value.is_string()) fail(path, "expected a string, got " + describe(value));
  return value.get<std::string>();
}

bool require_bool(const Json& value, const JsonPath& path) {
  if (!value.is_boolean()) {
    fail(path, "expected true or false, got " + describe(value));
  }
  return value.get<bool>();
}

double require_number(const Json& value, const JsonPath& path) {
  if (!value.is_number()) fail(path, "expected a number, got " + describe(value));
  const double d = value.get<double>();
  if (!std::isfinite(d)) fail(path, "number is not finite");
  return d;
}

float require_float(const Json& value, const JsonPath& path) {
  const double d = require_number(value, path);
  if (std::fabs(d) > static_cast<double>(std::numeric_limits<float>::max())) {
    fail(path, describe(value) + " does not fit a float");
  }
  return static_cast<float>(d);
}

std::uint64_t require_uint(const Json& value, const JsonPath& path,
                           std::uint64_t max) {
  std::uint64_t u = 0;
  bool ok = false;
  if (value.is_number_unsigned()) {
    u = value.get<std::uint64_t>();
    ok = true;
  } else if (value.is_number_float()) {
    const double d = value.get<double>();
    // Integral values below 2^64 only; 3.0 is 3.
    if (d >= 0.0 && d < 18446744073709551616.0 && std::floor(d) == d) {
      u = static_cast<std::uint64_t>(d);
      ok = true;
    }
  }
  if (!ok) {
    fail(path, "expected a non-negative integer, got " + describe(value));
  }
  if (u > max) {
    fail(path, std::to_string(u) + " is too large (at most " +
                   std::to_string(max) + ")");
  }
  return u;
}

std::vector<double> require_floats(const Json& value, const JsonPath& path,
                                   std::size_t n) {
  if (!value.is_array() || value.size() != n) {
    fail(path, "expected an array of " + std::to_string(n) + " numbers, got " +
                   (value.is_array() ? "an array of " +
                                           std::to_string(value.size())
                                     : describe(value)));
  }
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    require_float(value[i], path[i]);  // it must fit a float
    out[i] = value[i].get<double>();    // and is kept as given
  }
  return out;
}

void check_keys(const Json& object, const JsonPath& path,
                std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const std::string_view a : allowed) known = known || key == a;
    if (known) continue;
    std::string expected;
    std::size_t i = 0;
    for (const std::string_view a : allowed) {
      if (i > 0) expected += i + 1 == allowed.size() ? " or " : ", ";
      expected += a;
      ++i;
    }
    fail_at(path, path / key,
            "unknown key '" + printable(key, 60) + "' (expected " + expected +
                ")");
  }
}

const Json* find_member(const Json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

}  // namespace raypick::detail
