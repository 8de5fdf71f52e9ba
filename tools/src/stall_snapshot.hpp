// What a run stopped by its wall-clock limit (--timeout) was waiting for. The simulation's own
// account (Simulation::stall_report) is taken on the daemon's thread once a second while the
// job runs; the last one before the stop goes into the run's message, since stopping the job
// changes what it describes.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

#include "daemon.hpp"

namespace phantora::tools {

class StallSnapshot {
 public:
  // Asks the daemon for a new account when the last one is a second old. Launcher's thread.
  void refresh(Daemon& daemon);
  // The last account, one indented line per item ("" before the first). Any thread.
  std::string last() const;

 private:
  std::chrono::steady_clock::time_point asked_;
  mutable std::mutex mu_;
  std::string text_;
};

}  // namespace phantora::tools
