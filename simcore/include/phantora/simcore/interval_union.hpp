// A union of time intervals that stays small: intervals are buffered and folded into a sorted,
// disjoint list whenever the buffer grows, so that a long run keeps memory proportional to the
// number of gaps, not the number of operations. Used for "exposed communication": the time a
// GPU spends in collectives while no computation runs on it.
#pragma once

#include <utility>
#include <vector>

#include "phantora/units.hpp"

namespace phantora::sim {

class IntervalUnion {
 public:
  void add(SimTime start, SimTime end);
  // Sorted, disjoint, non-adjacent intervals.
  const std::vector<std::pair<SimTime, SimTime>>& intervals();
  SimTime total();
  // Length of the part of this union not covered by `other`.
  SimTime minus(IntervalUnion& other);

 private:
  void fold();
  std::vector<std::pair<SimTime, SimTime>> merged_;
  std::vector<std::pair<SimTime, SimTime>> pending_;
};

}  // namespace phantora::sim
