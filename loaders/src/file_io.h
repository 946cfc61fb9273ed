// Reading whole files, shared by the loaders. Private to loaders/.
#pragma once

#include <optional>
#include <string>

namespace raypick::detail {

// Reads the whole file at `path`, or says why it cannot (strerror's words,
// e.g. "cannot open file: No such file or directory"). Regular files only: a
// directory is refused before it is opened (it opens on POSIX and fails only
// on read), and so are devices and FIFOs, so a scene cannot make a loader
// read /dev/zero forever.
std::optional<std::string> read_file(const std::string& path, std::string& why);

}  // namespace raypick::detail
