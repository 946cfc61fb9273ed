// Bytes of a picker's saved trees (PickerCore::save_trees, WideBvh's
// shape): little-endian values appended to a string, and a reader over a
// string_view that stops at the first short read. Private to the library.
#pragma once

#include <bit>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace raypick::saved {

static_assert(std::endian::native == std::endian::little,
              "saved trees are little-endian, as this host must be");

template <class T>
void append(std::string& out, const T* values, std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (n != 0) out.append(reinterpret_cast<const char*>(values), n * sizeof(T));
}
template <class T>
void append(std::string& out, const T& value) {
  append(out, &value, 1);
}

// Reads values front to back; after a read past the end, ok() is false and
// every later read gives zeros.
class Bytes {
 public:
  explicit Bytes(std::string_view in) : in_(in) {}
  template <class T>
  bool read(T* values, std::size_t n) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (!ok_ || n > (in_.size() - at_) / sizeof(T)) {
      ok_ = false;
      if (n != 0) std::memset(static_cast<void*>(values), 0, n * sizeof(T));
      return false;
    }
    if (n != 0) std::memcpy(static_cast<void*>(values), in_.data() + at_, n * sizeof(T));
    at_ += n * sizeof(T);
    return true;
  }
  template <class T>
  T read() {
    T v;
    read(&v, 1);
    return v;
  }
  // Whether n items of `size` bytes each can still be read (a count's
  // check before anything is allocated for it).
  bool holds(std::size_t n, std::size_t size) const {
    return ok_ && n <= (in_.size() - at_) / size;
  }
  bool ok() const { return ok_; }
  bool done() const { return ok_ && at_ == in_.size(); }

 private:
  std::string_view in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace raypick::saved
