// `raypick nearest SCENE --point X,Y,Z | --points FILE|- ...`: the object
// nearest to each point (docs/contract.md, "raypick nearest").
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace raypick::cli {

struct NearestArgs;

class NearestCommand {
 public:
  explicit NearestCommand(CLI::App& app);
  ~NearestCommand();
  explicit operator bool() const;
  const std::string& scene() const;
  int run() const;

 private:
  CLI::App* cmd_;
  std::unique_ptr<NearestArgs> args_;
};

}  // namespace raypick::cli
