// The fuzz targets' main in builds without libFuzzer (GCC's ASan + UBSan
// build, which setup.sh's test command makes anyway): runs the target once
// on every file named on the command line, as libFuzzer does when it is
// given files instead of a corpus folder, each input in a buffer of
// exactly its size (so ASan sees a read past its end). Of libFuzzer's
// options it keeps the two that tests/fuzz/run_regressions.sh passes,
// -timeout=SECONDS (per input; 0: none) and -rss_limit_mb=MB (the
// process's peak resident memory, checked after each input, so a report
// names the first input after which the peak was over it); it ignores the
// rest. libFuzzer's malloc limit (one allocation over the RSS limit, 2048
// MB by default) is ASan's max_allocation_size_mb below. Exit status 0
// when every input ran, 1 otherwise; the target's own checks abort, and
// the sanitizers stop the process on what they find.
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

// As libFuzzer's default -malloc_limit_mb: an allocation over 2048 MB
// stops the process with ASan's report (the environment's ASAN_OPTIONS
// still win, flag by flag).
extern "C" const char* __asan_default_options() {
  return "max_allocation_size_mb=2048:allocator_may_return_null=0";
}

namespace {

const char* volatile g_current = "";  // the input being run, for the alarm's message

void on_alarm(int) {
  // Only async-signal-safe calls here.
  const char head[] = "fuzz replay: timeout on ";
  (void)!write(STDERR_FILENO, head, sizeof head - 1);
  (void)!write(STDERR_FILENO, g_current, std::strlen(g_current));
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(1);
}

// The value of "-name=value" as a non-negative integer, or `fallback`.
long option(const std::string& arg, const std::string& name, long fallback) {
  const std::string prefix = "-" + name + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return fallback;
  const long value = std::strtol(arg.c_str() + prefix.size(), nullptr, 10);
  return value >= 0 ? value : fallback;
}

}  // namespace

int main(int argc, char** argv) {
  long timeout_s = 1200;  // libFuzzer's defaults
  long rss_limit_mb = 2048;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.empty() || arg[0] != '-') {
      files.push_back(arg);
      continue;
    }
    timeout_s = option(arg, "timeout", timeout_s);
    rss_limit_mb = option(arg, "rss_limit_mb", rss_limit_mb);
  }
  std::signal(SIGALRM, on_alarm);
  for (const std::string& file : files) {
    std::error_code error;
    std::ifstream in(file, std::ios::binary);
    const auto size = std::filesystem::file_size(file, error);
    if (!in || error || !std::filesystem::is_regular_file(file, error)) {
      std::fprintf(stderr, "fuzz replay: cannot read %s (not a regular file)\n", file.c_str());
      return 1;
    }
    // Exactly size bytes (new[] of 0 is a valid, non-null pointer).
    const std::unique_ptr<std::uint8_t[]> bytes(new std::uint8_t[size]);
    if (!in.read(reinterpret_cast<char*>(bytes.get()), static_cast<std::streamsize>(size))) {
      std::fprintf(stderr, "fuzz replay: cannot read %s\n", file.c_str());
      return 1;
    }
    g_current = file.c_str();
    if (timeout_s > 0) alarm(static_cast<unsigned>(timeout_s));
    LLVMFuzzerTestOneInput(bytes.get(), size);
    alarm(0);
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const long peak_mb = usage.ru_maxrss / 1024;  // ru_maxrss is in KiB on Linux
    if (peak_mb > rss_limit_mb) {
      std::fprintf(stderr, "fuzz replay: %s: peak RSS %ld MB over the limit of %ld MB\n",
                   file.c_str(), peak_mb, rss_limit_mb);
      return 1;
    }
  }
  return 0;
}
