// What a collective asks of one member GPU's memory (HBM) while it moves its data: NCCL's CTAs
// read every byte the GPU sends from its HBM and write every byte it receives into it, and a
// reduction step also reads the local operand it adds a received chunk to. Kernels running
// beside the collective get the HBM bandwidth this leaves (simcore's gpu_sharing.hpp).
//
// A lower bound: staging through NCCL's intermediate buffers (when a peer cannot write into the
// destination directly) moves each byte once more, and is not counted.
#pragma once

#include <span>
#include <vector>

#include "phantora/netmodel/nccl_model.hpp"

namespace phantora::net {

// The share of a GPU's received bytes that a reduction adds to a local operand: ring and tree
// all-reduce reduce on the way in and forward results on the way out (half), reduce-scatter and
// reduce reduce everything they receive, NVLS reduces in the switch (none), the others copy.
double reduced_share(CollOp op, Algorithm algorithm);

// Bytes the plan reads from and writes to `gpu`'s HBM: sent + received + reduced_share ×
// received, summed over the plan's flows (payload bytes, as NCCL's CTAs copy them).
double hbm_traffic_bytes(const CollectivePlan& plan, GpuId gpu);
// The same for each of `gpus`, in one pass over the flows (a plan of a large communicator has
// tens of thousands).
std::vector<double> hbm_traffic_bytes(const CollectivePlan& plan, std::span<const GpuId> gpus);

}  // namespace phantora::net
