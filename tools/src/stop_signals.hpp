// SIGINT and SIGTERM caught while an object of this class lives, the previous handlers restored
// when it goes: a loop that supervises child processes polls caught(), stops its children and
// still writes its outputs, instead of dying with them. One at a time (the flag is global, as a
// signal handler's must be).
#pragma once

namespace phantora::tools {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Whether SIGINT or SIGTERM arrived since construction.
  bool caught() const;
};

}  // namespace phantora::tools
