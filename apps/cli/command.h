// One command of the `raypick` binary. Each command is one file of the
// same shape: a class that registers its subcommand, options and help on
// CLI11 when constructed, and runs after app.parse(). main.cpp only makes
// them, in the order `raypick --help` lists them, and runs the one chosen.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace raypick::cli {

class Command {
 public:
  virtual ~Command() = default;

  // True when the command line chose this command.
  bool chosen() const { return cmd_->parsed(); }

  // The subcommand's name ("pick"), for messages.
  const std::string& name() const { return cmd_->get_name(); }

  // The scene file the command reads (its SCENE), named by an
  // out-of-memory message; "" when there is none.
  const std::string& scene() const { return scene_; }

  // Runs the command once the command line is parsed. The exit status: 0,
  // kExitBadInput (1) or kExitUsage (2); every failure already reported by
  // fail(). May throw; main turns that into one message, exit 1.
  virtual int run() const = 0;

 protected:
  // `cmd`: the subcommand that the constructor added.
  explicit Command(CLI::App* cmd) : cmd_(cmd) {}
  CLI::App* const cmd_;
  std::string scene_;  // bound to SCENE by the command's options
};

// The commands, each adding its subcommand to `app` (pick.cpp, validate.cpp,
// info.cpp, bench.cpp, select.cpp, render.cpp, nearest.cpp).
std::unique_ptr<Command> add_pick(CLI::App& app);
std::unique_ptr<Command> add_validate(CLI::App& app);
std::unique_ptr<Command> add_info(CLI::App& app);
std::unique_ptr<Command> add_bench(CLI::App& app);
std::unique_ptr<Command> add_select(CLI::App& app);
std::unique_ptr<Command> add_render(CLI::App& app);
std::unique_ptr<Command> add_nearest(CLI::App& app);

}  // namespace raypick::cli
