// `phantora db`: inspect, import, export, merge and (on a real GPU) fill the kernel database.
// docs/kernels-db.md describes every subcommand.
#pragma once

#include <memory>

#include <CLI/CLI.hpp>

namespace phantora::tools {

class DbCommand {
 public:
  // Adds the `db` subcommand and its own subcommands to `app`.
  explicit DbCommand(CLI::App& app);
  ~DbCommand();

  bool chosen() const;  // after parsing: was `phantora db ...` given?
  // Runs the chosen subcommand; throws DataError (printed by main) on bad input.
  int run() const;

  struct Options;

 private:
  CLI::App* cmd_;
  std::unique_ptr<Options> options_;
};

}  // namespace phantora::tools
