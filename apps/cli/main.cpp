// raypick: the command line. Makes the commands (one file each; see
// command.h), parses, and runs the one chosen; the work lives in the
// libraries and in apps/reference, apps/bench and apps/common.
#include "command.h"
#include "common.h"

#include "raypick/core/text.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

using namespace raypick;
using cli::fail;
using cli::finish_output;
using cli::kExitBadInput;
using cli::kExitUsage;

// CLI11 writes help and version to std::cout: checked like any output.
int help_written(int status) {
  if (!std::cout.flush()) {
    return fail(kExitBadInput, "cannot write to standard output");
  }
  return finish_output(status);
}

// "raypick: COMMAND: out of memory (SCENE)", exit 1. Building that line
// allocates; should that fail too, a fixed line is written instead.
int out_of_memory(const char* command, const std::string& scene) noexcept {
  try {
    std::string message = command;
    if (!message.empty()) message += ": ";
    message += "out of memory";
    if (!scene.empty()) message += " (" + scene + ")";
    return fail(kExitBadInput, message);
  } catch (...) {
    std::fputs("raypick: out of memory\n", stderr);
    return kExitBadInput;
  }
}

int run_main(int argc, char** argv) {
  CLI::App app{"raypick: pick objects in 3D scenes by ray casting, checked "
               "against Embree"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "raypick 0.1.0");

  // In the order `raypick --help` lists them.
  std::vector<std::unique_ptr<cli::Command>> commands;
  for (auto add : {cli::add_pick, cli::add_validate, cli::add_info, cli::add_bench,
                   cli::add_select, cli::add_render, cli::add_nearest}) {
    commands.push_back(add(app));
  }

  // CLI11 says "A subcommand is required" both when none is given and when
  // the first word is no command at all.
  if (argc < 2 || argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || (argc >= 2 && sub->get_name() == argv[1]);
    }
    if (!known) {
      return fail(kExitUsage,
                  (argc < 2 ? std::string("no command given")
                            : "unknown command '" + printable(argv[1], 40) +
                                  "'") +
                      " (commands: " + names + "; see raypick --help)");
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return help_written(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return help_written(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return help_written(app.exit(e));
  } catch (const CLI::ParseError& e) {
    // One line, like every other error (CLI11's own exit() adds a second).
    return fail(kExitUsage, std::string(e.what()) + " (see raypick --help)");
  }
  for (const auto& command : commands) {
    if (!command->chosen()) continue;
    // Whatever a command throws ends as one message, exit 1.
    const std::string& name = command->name();
    try {
      return command->run();
    } catch (const std::bad_alloc&) {
      return out_of_memory(name.c_str(), command->scene());
    } catch (const std::exception& e) {
      return fail(kExitBadInput, name + ": " + e.what());
    }
  }
  return kExitUsage;
}

}  // namespace

// Nothing may leave main as an exception (that would be std::terminate and
// SIGABRT): an allocation failure while the command line itself is set up or
// parsed, or while an error is reported, still ends in one line and exit 1.
int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {
    return out_of_memory("", "");
  } catch (...) {
    std::fputs("raypick: unexpected error\n", stderr);
    return kExitBadInput;
  }
}
