#include "phantora/simcore/interval_union.hpp"

#include <algorithm>

namespace phantora::sim {
namespace {

constexpr size_t kFoldEvery = 1 << 16;

}  // namespace

void IntervalUnion::add(SimTime start, SimTime end) {
  if (end <= start) return;
  pending_.emplace_back(start, end);
  if (pending_.size() >= kFoldEvery) fold();
}

void IntervalUnion::fold() {
  if (pending_.empty()) return;
  pending_.insert(pending_.end(), merged_.begin(), merged_.end());
  std::sort(pending_.begin(), pending_.end());
  merged_.clear();
  for (const auto& [s, e] : pending_) {
    if (!merged_.empty() && s <= merged_.back().second) {
      merged_.back().second = std::max(merged_.back().second, e);
    } else {
      merged_.emplace_back(s, e);
    }
  }
  pending_.clear();
}

const std::vector<std::pair<SimTime, SimTime>>& IntervalUnion::intervals() {
  fold();
  return merged_;
}

SimTime IntervalUnion::total() {
  SimTime t;
  for (const auto& [s, e] : intervals()) t += e - s;
  return t;
}

SimTime IntervalUnion::minus(IntervalUnion& other) {
  const auto& a = intervals();
  const auto& b = other.intervals();
  SimTime uncovered;
  size_t j = 0;
  for (const auto& [s, e] : a) {
    SimTime cursor = s;
    while (j < b.size() && b[j].second <= cursor) ++j;
    for (size_t k = j; k < b.size() && b[k].first < e; ++k) {
      if (b[k].first > cursor) uncovered += b[k].first - cursor;
      cursor = std::max(cursor, b[k].second);
      if (cursor >= e) break;
    }
    if (cursor < e) uncovered += e - cursor;
  }
  return uncovered;
}

}  // namespace phantora::sim
