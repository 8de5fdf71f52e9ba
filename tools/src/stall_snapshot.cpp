#include "stall_snapshot.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace phantora::tools {

void StallSnapshot::refresh(Daemon& daemon) {
  const auto now = std::chrono::steady_clock::now();
  if (now - asked_ < std::chrono::seconds(1)) return;
  asked_ = now;
  daemon.post([this](const sim::Simulation& simulation) {
    std::string text = fmt::format("  {}", fmt::join(simulation.stall_report(), "\n  "));
    std::lock_guard lock(mu_);
    text_ = std::move(text);
  });
}

std::string StallSnapshot::last() const {
  std::lock_guard lock(mu_);
  return text_;
}

}  // namespace phantora::tools
