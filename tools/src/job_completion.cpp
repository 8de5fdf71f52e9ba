#include "job_completion.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace phantora::tools {

void JobCompletion::joined(uint32_t client, int host, int global_rank, int world_size,
                           Clock::time_point now) {
  if (!anyone_) first_joined_ = now;
  anyone_ = true;
  connected_.insert(client);
  hosts_seen_.insert(host);
  if (world_size > 0 && global_rank >= 0) {
    world_size_ = std::max(world_size_, world_size);
    ranks_seen_.insert(global_rank);
  }
  last_change_ = now;
}

void JobCompletion::left(uint32_t client, Clock::time_point now) {
  connected_.erase(client);
  last_change_ = now;
}

bool JobCompletion::done(Clock::time_point now) const {
  return anyone_ && connected_.empty() && static_cast<int>(hosts_seen_.size()) >= hosts_ &&
         static_cast<int>(ranks_seen_.size()) >= world_size_ && now - last_change_ >= settle_;
}

std::string JobCompletion::waiting_for() const {
  std::vector<std::string> parts;
  std::vector<int> hosts;
  for (int h = 0; h < hosts_; ++h) {
    if (!hosts_seen_.contains(h)) hosts.push_back(h);
  }
  if (!hosts.empty()) {
    const bool one = hosts.size() == 1;
    parts.push_back(fmt::format("{} {} {} not connected", one ? "host" : "hosts",
                                fmt::join(hosts, ", "), one ? "has" : "have"));
  }
  if (static_cast<int>(ranks_seen_.size()) < world_size_) {
    parts.push_back(fmt::format("{} of {} ranks have connected", ranks_seen_.size(), world_size_));
  }
  if (!connected_.empty()) parts.push_back(fmt::format("{} still connected", connected_.size()));
  return parts.empty() ? "nothing" : fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace phantora::tools
