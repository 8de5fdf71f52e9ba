// Data-parallel replicas represented once (`phantora run --represent-dp N`): the job that runs is
// one slice of the cluster; N-1 more slices are its copies. A copy's GPUs are the live GPUs
// shifted by one slice of hosts; its compute and memory are the live slice's, and only its
// network traffic is simulated. Each communicator the job creates is one of two kinds:
//   - data-parallel: its members stand for themselves and their counterparts in every copy, so
//     the collective runs once over N x its ranks, with the same total array (an all-gather's
//     output, a reduce-scatter's input), each rank's share N times smaller;
//   - within a slice (tensor, pipeline, expert parallel): every copy runs the same collective on
//     its own GPUs, at the same time, on the shared network.
// Which communicators are data-parallel is the user's statement (DpCommRule). docs/scale.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "phantora/netmodel/collective.hpp"

namespace phantora::sim {

// Which of the job's communicators are data-parallel.
struct DpCommRule {
  enum class Kind { kAll, kSizes };
  Kind kind = Kind::kAll;
  std::vector<int> sizes;  // kSizes: communicators with one of these rank counts

  // "all" or "size:K[,K...]"; throws std::invalid_argument naming the accepted forms.
  static DpCommRule parse(std::string_view text);
  bool matches(int nranks) const;
  std::string describe() const;
};

class Replicas {
 public:
  Replicas() = default;
  // `copies` slices in all (1: nothing is represented), each of `gpus_per_slice` GPUs.
  Replicas(int copies, int gpus_per_slice, DpCommRule rule);

  int copies() const { return copies_; }
  bool active() const { return copies_ > 1; }
  const DpCommRule& rule() const { return rule_; }
  // Whether a communicator of `nranks` live ranks stands for its members in every copy.
  bool spans(int nranks) const { return active() && rule_.matches(nranks); }
  // How many ranks a communicator of `nranks` live ranks has in the represented cluster.
  int represented_ranks(int nranks, bool spanning) const {
    return spanning ? nranks * copies_ : nranks;
  }
  // The network transfers that stand for one live transfer: one over every copy's members for a
  // spanning collective (point-to-point stays within a slice), else one per copy.
  std::vector<net::CollectiveRequest> expand(const net::CollectiveRequest& live,
                                             bool spanning) const;

 private:
  int copies_ = 1;
  int gpus_per_slice_ = 0;
  DpCommRule rule_;
};

}  // namespace phantora::sim
