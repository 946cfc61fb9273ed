// Running the raypick binary from tests, as a user runs it.
#pragma once

#include "temp_dir.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

// RAYPICK_TEST_ASAN: defined under AddressSanitizer, where a memory cap
// (run_raypick_in_memory) means nothing.
#if defined(__SANITIZE_ADDRESS__)
#define RAYPICK_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RAYPICK_TEST_ASAN 1
#endif
#endif

namespace raypick::test {

struct Run {
  int status;
  std::string out;
  std::string err;
};

// Writes `text` to the file `name` in temp_dir(); returns its path.
inline std::filesystem::path write(const std::string& name, const std::string& text) {
  return process_dir().write(name, text);
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Requires `r` to be a refusal: exit status `status`, nothing on standard
// output and exactly `err` on standard error.
inline void check_refused(const Run& r, int status, const std::string& err) {
  CHECK(r.status == status);
  CHECK(r.out.empty());
  CHECK(r.err == err);
}

// Requires exit status `status` and each of `parts` somewhere on standard
// output.
inline void check_out_has(const Run& r, int status, std::initializer_list<std::string> parts) {
  CHECK(r.status == status);
  for (const std::string& part : parts) {
    CHECK_MESSAGE(r.out.find(part) != std::string::npos, "'" << part << "' not in:\n" << r.out);
  }
}

// Runs `raypick ARGS` through the shell (args are trusted test strings)
// with `stdin_text` on standard input; returns the exit status and both
// outputs. `redirects` are shell redirections applied after the default
// ones, so they win: "<&-" closes standard input, "< /" makes it a
// directory, "> /dev/full" a full device (stdout is then empty).
// `pipe_from`, when given, is a shell command whose output is piped in
// instead of `stdin_text`, e.g. "printf '0 0 0 1 0 0'".
inline Run run_raypick(const std::string& args,
                       const std::string& stdin_text = "",
                       const std::string& redirects = "",
                       const std::string& pipe_from = "") {
  const auto out = temp_dir() / "out.txt", err = temp_dir() / "err.txt",
             in = temp_dir() / "in.txt";
  std::ofstream(in) << stdin_text;
  std::filesystem::remove(out);
  const std::string cmd =
      (pipe_from.empty() ? std::string() : pipe_from + " | ") + "'" +
      RAYPICK_EXE + "' " + args +
      (pipe_from.empty() ? " < '" + in.string() + "'" : std::string()) +
      " > '" + out.string() + "' 2> '" + err.string() + "' " + redirects;
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}

// Runs `raypick ARGS` expecting a usage error: checks exit 2 and nothing on
// standard output, and returns standard error for the caller to check.
inline std::string usage_error(const std::string& args) {
  const Run r = run_raypick(args);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  return r.err;
}

// Runs `raypick ARGS` with its address space capped at `kib` KiB (ulimit
// -v), so that a large allocation fails as it would on a loaded machine.
// Meaningless under AddressSanitizer, which reserves terabytes up front.
inline Run run_raypick_in_memory(const std::string& args, long kib) {
  return run_raypick(args, "", "", "ulimit -v " + std::to_string(kib) + "; true");
}

}  // namespace raypick::test
