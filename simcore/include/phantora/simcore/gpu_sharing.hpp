// Kernels that share their GPU with NCCL's.
//
// NCCL runs a collective as one kernel with one CTA per channel, and each CTA stays resident on
// its SM from the moment the kernel starts on that GPU — spinning while it waits for its peers —
// until the collective ends (NVIDIA/nccl, src/include/device.h, src/enqueue.cc). Compute launched
// while it runs gets the other SMs: a kernel that would fill the GPU alone runs on
// `SMs - channels` of them, a kernel small enough to fit beside NCCL's CTAs is not slowed.
// While the collective moves its data, its CTAs also read and write the GPU's HBM
// (netmodel's hbm_traffic.hpp): a kernel beside it gets the bandwidth that leaves, which slows
// memory-bound kernels and leaves GEMMs, which ask little of HBM, alone.
//
// Which kernels: those a process launches on a GPU after a collective on that GPU and before the
// collective has ended — FSDP's and DDP's overlap, where the collective is launched first and the
// compute it hides behind follows. A kernel launched before the collective is priced alone
// (approximation: on a real GPU NCCL's CTAs take SMs as its CTAs retire). The choice depends on
// the process's own order of calls only, so runs stay deterministic.
//
// When: a collective's time on a GPU is known only once the network has simulated it, so such a
// kernel is a deferred operation of the engine (engine.hpp). It is placed once the simulation's
// clock has passed its end: the SMs and bandwidth it had are then known over its whole run,
// from every collective it shares the GPU with (its ready time on this GPU, its channels, its
// data movement, its end). Each kernel's end is the same whenever the simulation learns it, so
// the order in which processes reach the daemon does not matter.
//
// Not modelled: the collective's own slowdown by the compute beside it (docs/cost-model.md,
// "Sharing the GPU with NCCL").
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "phantora/simcore/engine.hpp"
#include "phantora/units.hpp"

namespace phantora::sim {

// What a collective takes from one GPU from `from` to `to` (infinite: still running): SMs,
// and HBM bandwidth in bytes per second.
struct Hold {
  SimTime from;
  SimTime to = SimTime::infinite();
  int sms = 0;
  double hbm_bytes_per_s = 0;
};

// What a kernel asks of its GPU: its time on an idle GPU, its CTAs (0: fills the GPU) and the
// bytes it moves to and from HBM in that time (0: unknown; HBM then never limits it).
struct KernelNeeds {
  SimTime alone;
  uint32_t ctas = 0;
  double hbm_bytes = 0;
};

// What the GPU has: its SMs (0: sharing off) and the HBM bandwidth its kernels reach (the
// memory-bound model's plateau; 0: HBM never limits).
struct GpuCapacity {
  int sms = 0;
  double hbm_bytes_per_s = 0;
};

// When a kernel that starts at `start` ends beside the holds. In each span it progresses at
// the least of 1, free SMs / SMs it would use alone (free = SMs - held, at least 1), and HBM
// left / HBM it draws alone (left = the GPU's bandwidth - what the holds draw, at least 0;
// drawn alone = hbm_bytes / alone). Rounded up to the picosecond.
SimTime shared_end(SimTime start, const KernelNeeds& kernel, const GpuCapacity& gpu,
                   std::span<const Hold> holds);

class GpuSharing {
 public:
  // gpu.sms == 0 turns sharing off (every kernel is priced alone).
  explicit GpuSharing(GpuCapacity gpu);
  ~GpuSharing();

  // Collectives, as the engine and the network see them. `submitted` comes first, before the
  // collective can be ready.
  void collective_submitted(uint64_t token, ClientId client, int device);
  void collective_ready(uint64_t token, SimTime at, int channels);
  void collective_finished(uint64_t token, SimTime end);
  // The collective moves data through this GPU's HBM at `bytes_per_s` from `from` to `to` (one
  // call per transfer of its plan that touches the GPU; they add up).
  void collective_moving(uint64_t token, SimTime from, SimTime to, double bytes_per_s);

  // Whether a kernel a process launches now on its `device` shares the GPU with a collective
  // (one it launched earlier has not ended): it must then be deferred.
  bool shares(ClientId client, int device) const;
  // Takes such a kernel (op.cost: its time alone; `ctas`, `hbm_bytes`: as in KernelNeeds);
  // returns the engine token to submit it under.
  uint64_t defer(ClientId client, StreamId stream, int device, const OpDesc& op, uint32_t ctas,
                 double hbm_bytes = 0);
  static bool is_kernel_token(uint64_t token) { return (token & kKernelTokenBit) != 0; }
  // From the engine: the kernel reached the head of its stream at `start`.
  void kernel_ready(uint64_t token, SimTime start);

  // The earliest end among started kernels, from what is known now (infinite: none). Exact once
  // nothing the simulation learns later can be earlier: the caller processes it only when it
  // is before every pending network event and the time causality allows.
  SimTime next_end() const;
  struct Placed {
    ClientId client = 0;
    StreamId stream = 0;
    uint64_t token = 0;
    SimTime start, end;
    OpDesc op;  // op.cost stays the kernel's time alone
  };
  // Takes the kernel next_end() named.
  Placed place_next();

  // Kernels deferred and not placed yet.
  size_t deferred() const { return kernels_.size(); }

 private:
  static constexpr uint64_t kKernelTokenBit = uint64_t{1} << 63;
  struct DeviceKey {
    ClientId client;
    int device;
    auto operator<=>(const DeviceKey&) const = default;
  };
  struct Collective {
    DeviceKey device;  // the launching process and its device
    std::optional<SimTime> ready;
    SimTime end = SimTime::infinite();
    int channels = 0;
    std::vector<Hold> moving;  // its data movement through HBM (no SMs: those are `channels`)
  };
  struct Kernel {
    ClientId client = 0;
    StreamId stream = 0;
    OpDesc op;
    uint32_t ctas = 0;
    double hbm_bytes = 0;
    std::optional<SimTime> start;
    std::vector<std::shared_ptr<const Collective>> beside;  // launched before it, not ended
  };
  SimTime provisional_end(const Kernel& k) const;
  // The started kernel that ends first and its end, from what is known now; kept until
  // something it depends on changes (next_end and place_next ask in turn for every kernel).
  struct Earliest {
    size_t at = 0;  // index in started_
    SimTime end = SimTime::infinite();
  };
  const Earliest& earliest() const;

  GpuCapacity gpu_;
  uint64_t next_kernel_ = 1;
  std::map<uint64_t, std::shared_ptr<Collective>> collectives_;  // by token, until ended
  std::map<DeviceKey, std::vector<uint64_t>> open_;              // tokens of unended ones
  std::map<uint64_t, Kernel> kernels_;                           // by token, until placed
  std::vector<uint64_t> started_;             // those at the head of their stream (one per stream)
  mutable std::optional<Earliest> earliest_;  // reset by every change
};

}  // namespace phantora::sim
