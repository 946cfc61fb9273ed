// `raypick bench`: raypick and Embree's best configuration side by side on
// generated scenes (boxes-N, crowd-N; tools/bench_scenes.h) and scene files,
// with their answers checked against each other.
// docs/performance.md documents the command and its columns.
#pragma once

#include <memory>

namespace CLI {
class App;
}

namespace raypick::cli {

struct BenchArgs;

// Registers the `bench` subcommand and its options on `app`; after
// app.parse(), `if (bench) return bench.run();`.
class BenchCommand {
 public:
  explicit BenchCommand(CLI::App& app);
  ~BenchCommand();
  BenchCommand(const BenchCommand&) = delete;
  BenchCommand& operator=(const BenchCommand&) = delete;

  // True when the command line chose `bench`.
  explicit operator bool() const;

  // Runs the benchmark and prints the table on stdout (progress on
  // stderr). Exit status: 0 when every row's answers match, 1 when a row
  // is VOID (raypick and Embree disagree) or a file cannot be read or
  // written, 2 for a bad option value.
  int run() const;

 private:
  CLI::App* cmd_;
  std::unique_ptr<BenchArgs> args_;
};

}  // namespace raypick::cli
