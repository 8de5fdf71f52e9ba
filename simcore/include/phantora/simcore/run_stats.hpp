// The figures a run accumulates for its summary and report.json.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "phantora/netmodel/network_sim.hpp"
#include "phantora/simcore/collectives.hpp"
#include "phantora/simcore/engine.hpp"
#include "phantora/units.hpp"

namespace phantora::sim {

struct ClientInfo {
  ClientId id = 0;
  int host = 0;
  int pid = 0;
  int global_rank = -1;
  int local_rank = -1;
  SimTime host_clock;            // latest host clock the client reported
  std::string end = "running";   // "running", "exited" (said goodbye), "disconnected: <why>"
  bool used_gpu = false;         // submitted GPU work or memory; other clients only asked questions
  uint64_t lapsed_handoffs = 0;  // from its goodbye (wire::Bye)
};

struct GpuStats {
  int64_t memory_in_use = 0;
  int64_t peak_memory = 0;
  SimTime busy;                   // sum of operation durations on this GPU
  SimTime communication;          // time with a collective in flight
  SimTime exposed_communication;  // ... while no kernel ran: what overlap did not hide
  // Kernel time that ran while a kernel of another stream also ran on this GPU, beyond the
  // first stream: each is priced as if it had the SMs alone (compute beside compute is not
  // shared, docs/cost-model.md), so serialising them could add at most this much busy time.
  SimTime streams_overlap;
};

struct KernelStats {
  uint64_t count = 0;
  SimTime total;
  std::optional<CostSource> source;  // of its last launch
};

struct RunStats {
  std::vector<ClientInfo> clients;
  std::vector<GpuStats> gpus;  // index: global GPU = host * gpus_per_host + device
  std::map<CostSource, SimTime> gpu_time_by_source;
  // Time kernels took beyond their time alone because NCCL's CTAs held SMs and its copies HBM
  // bandwidth (gpu_sharing.hpp).
  SimTime shared_with_nccl;
  uint64_t kernels_shared_with_nccl = 0;
  std::map<OpKind, uint64_t> op_counts;
  std::map<std::string, KernelStats> kernels;  // by mangled name
  SimTime simulated_end;
  CommStats communication;
  std::vector<net::LinkStats> links;
  std::vector<std::string> unfinished;  // work still waiting when the run ended
  uint64_t late_collective_starts = 0;
  net::NetworkCounters network;  // the network model's work, for the simulator's own figures
};

}  // namespace phantora::sim
