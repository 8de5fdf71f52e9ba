#include "run_accounting.hpp"

#include <algorithm>
#include <map>

namespace phantora::sim {

RunAccounting::RunAccounting(size_t gpus)
    : comm_time_(gpus), compute_time_(gpus), compute_sum_(gpus) {
  stats_.gpus.resize(gpus);
}

void RunAccounting::on_op(const CompletedOp& op, int gpu) {
  const SimTime duration = op.end - op.start;
  stats_.op_counts[op.desc.kind]++;
  stats_.simulated_end = std::max(stats_.simulated_end, op.end);
  stats_.gpus[gpu].busy += duration;
  if (op.desc.kind == OpKind::kCollective) {
    comm_time_[gpu].add(op.start, op.end);
    return;  // its time and bytes are the collectives' own statistics
  }
  if (op.desc.kind == OpKind::kKernel || op.desc.kind == OpKind::kGraph) {
    compute_time_[gpu].add(op.start, op.end);
    compute_sum_[gpu] += duration;
  }
  if (op.desc.source) stats_.gpu_time_by_source[*op.desc.source] += duration;
  if (op.desc.kind == OpKind::kKernel) {
    // A kernel beside a collective keeps its time alone as its cost (gpu_sharing.hpp).
    if (duration > op.desc.cost) {
      stats_.shared_with_nccl += duration - op.desc.cost;
      stats_.kernels_shared_with_nccl++;
    }
    KernelTally& k = kernels_[key(op.client, op.desc.label)];
    k.count++;
    k.total += duration;
    k.source = op.desc.source;
  }
}

void RunAccounting::finish(
    const std::function<const std::string&(ClientId, uint32_t)>& kernel_name) {
  // In client and label order, so that the merge does not depend on the hash table's.
  const std::map<uint64_t, KernelTally> ordered(kernels_.begin(), kernels_.end());
  for (const auto& [k, tally] : ordered) {
    KernelStats& total = stats_.kernels[kernel_name(static_cast<ClientId>(k >> 32),
                                                    static_cast<uint32_t>(k & 0xffffffffu))];
    total.count += tally.count;
    total.total += tally.total;
    total.source = tally.source;
  }
  for (size_t g = 0; g < stats_.gpus.size(); ++g) {
    stats_.gpus[g].communication = comm_time_[g].total();
    stats_.gpus[g].exposed_communication = comm_time_[g].minus(compute_time_[g]);
    stats_.gpus[g].streams_overlap = compute_sum_[g] - compute_time_[g].total();
  }
}

}  // namespace phantora::sim
