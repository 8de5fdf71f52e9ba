// What a GPU operation costs. The daemon asks here for every launch, GEMM, attention call,
// copy and memset; each answer carries its source and the operation's signature.
// Resolution order (docs/cost-model.md): the user's pinned kernel times, then the kernel
// database for this GPU and signature, then an analytical model, then the default by grid size.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "phantora/kernels/analytical_model.hpp"
#include "phantora/kernels/cost_source.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_db.hpp"
#include "phantora/kernels/kernel_times.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "phantora/protocol.hpp"
#include "phantora/units.hpp"

namespace phantora::kernels {

struct KernelLaunchInfo {
  std::string_view mangled_name;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint64_t shared_mem = 0;  // dynamic shared memory per block, bytes
};

struct KernelCost {
  SimTime duration;
  CostSource source = CostSource::kDefault;
  std::string signature;  // canonical (op_desc.hpp); for trace.json and the report
  // Bytes it moves to and from HBM by its description (hbm_bytes in analytical_model.hpp),
  // however it was priced; 0 where the launch says nothing of its data (default-priced).
  double hbm_bytes = 0;
};

// The signature of a launch as the database keys it (no decoded size arguments).
std::string kernel_signature(const KernelLaunchInfo& launch);

// Signatures a run had to model or default because the database lacked them, with how often
// they occurred; written to the database's `missing` table (or a CSV) at the end of a run.
class MissingLog {
 public:
  void note(std::string_view gpu, const std::string& signature, SimTime modelled);
  std::vector<MissingEntry> entries() const;  // most total modelled time first
  size_t size() const { return by_key_.size(); }

 private:
  struct Seen {
    std::string gpu;
    uint64_t occurrences = 0;
    SimTime modelled;
  };
  std::unordered_map<std::string, Seen> by_key_;  // gpu + '\n' + signature
};

// Constants of the default model, from kernels-db/data/cost_model.toml (reasoning there).
struct CostParams {
  SimTime kernel_floor;
  SimTime kernel_per_wave;
  SimTime host_device_latency;
  SimTime device_local_latency;
  double pageable_factor = 0;
  Bandwidth host_to_host;

  static const CostParams& builtin();
  static CostParams from_file(const std::filesystem::path& path);
  static CostParams from_string(std::string_view toml_text, std::string_view source);
};

// Blocks of this launch that fit on one SM at once: limited by the SM's block slots, its
// threads and its shared memory (registers are unknown here, so ignored). At least 1.
uint64_t resident_blocks_per_sm(const KernelLaunchInfo& launch, const DeviceLimits& device);
// ceil(blocks / (SMs × resident blocks per SM)), at least 1.
uint64_t waves(const KernelLaunchInfo& launch, const DeviceLimits& device);
// floor + per-wave cost × waves: never zero, grows with the grid.
SimTime default_kernel_cost(const KernelLaunchInfo& launch, const GpuPreset& gpu,
                            const CostParams& params);

// Not thread-safe: the cost_of_* calls record missing signatures (the daemon's event loop is
// single-threaded).
class CostModel {
 public:
  explicit CostModel(CostParams params = CostParams::builtin(), KernelTimes pinned = {},
                     ModelParams models = ModelParams::builtin());

  // Measured rows to consult first; only rows of the snapshot's GPU are used, for a preset
  // whose key equals DbSnapshot::gpu(). Null detaches.
  void set_database(std::shared_ptr<const DbSnapshot> db) { db_ = std::move(db); }
  const DbSnapshot* database() const { return db_.get(); }

  // pinned (by kernel name) → database (kernel signature) → the attention model when the
  // launch is an attention call whose shape was decoded (`attention`), or the memory-bound
  // model when its memory work was (`work`; either may be null) → default by grid size.
  KernelCost cost_of_kernel(const KernelLaunchInfo& launch, const GpuPreset& gpu,
                            const MemoryOpDesc* work = nullptr,
                            const AttentionDesc* attention = nullptr,
                            const ConvDesc* conv = nullptr) const;
  // database → GEMM model.
  KernelCost cost_of_gemm(const GemmDesc& gemm, const GpuPreset& gpu) const;
  // database → attention model.
  KernelCost cost_of_attention(const AttentionDesc& attention, const GpuPreset& gpu) const;
  // database → convolution model (a cuDNN convolution the shim decoded).
  KernelCost cost_of_conv(const ConvDesc& conv, const GpuPreset& gpu) const;
  // database → memory-bound model (a kernel whose family decoder found its byte counts).
  KernelCost cost_of_memory_op(const MemoryOpDesc& op, const GpuPreset& gpu) const;
  // database → copy_cost below (tagged modelled).
  KernelCost cost_of_copy(const CopyDesc& copy, const GpuPreset& gpu) const;
  // database → memset_cost below. A memset is the memory operation `memset` that writes
  // `bytes` and reads nothing (memset_desc), so it shares the mem: signatures.
  KernelCost cost_of_memset(Bytes bytes, const GpuPreset& gpu) const;

  // What a run charges for the operation a canonical signature names, by the calls above (a
  // memset's mem: signature by cost_of_memset, as the daemon prices cudaMemset*); nullopt for
  // text that is not a canonical signature and for kernels known only by name, whose price
  // without a row depends on the launch (decoded arguments, grid), not on the signature alone.
  std::optional<KernelCost> cost_of_signature(std::string_view sig, const GpuPreset& gpu) const;
  // The same for an operation already parsed (parse_signature).
  std::optional<KernelCost> cost_of(const OpDesc& op, const GpuPreset& gpu) const;

  // H2D/D2H over PCIe (pageable host memory at pageable_factor of the pinned rate); D2D reads
  // and writes HBM (2 × bytes at the achieved HBM rate, HBM × memory_efficiency); peer over
  // NVLink; host-to-host at a memcpy rate. Each plus a fixed latency.
  SimTime copy_cost(wire::CopyKind kind, Bytes bytes, bool pinned_host, const GpuPreset& gpu) const;
  // bytes at the achieved HBM rate + the device-local latency.
  SimTime memset_cost(Bytes bytes, const GpuPreset& gpu) const;

  const CostParams& params() const { return params_; }
  const ModelParams& model_params() const { return models_; }
  // Signatures answered by a model or the default so far (all of them, database or not).
  const MissingLog& missing() const { return missing_; }
  // A cost a caller answered again from its own cache: another occurrence of its signature in
  // missing() when a model or the default priced it, so that occurrences count launches.
  void note_repeat(const std::string& signature, SimTime duration, CostSource source,
                   const GpuPreset& gpu) const;

 private:
  const DbEntry* lookup(const std::string& signature, const GpuPreset& gpu) const;
  // HBM as streaming work reaches it: the datasheet rate × the part's memory_efficiency.
  Bandwidth achieved_hbm(const GpuPreset& gpu) const;
  KernelCost modelled(std::string signature, SimTime duration, CostSource source,
                      const GpuPreset& gpu, double hbm_bytes = 0) const;

  CostParams params_;
  KernelTimes pinned_;
  ModelParams models_;
  std::shared_ptr<const DbSnapshot> db_;
  mutable MissingLog missing_;
};

// Helpers for `phantora run --kernel-db PATH`: the rows of one GPU (the file is created with
// the schema when absent), and, at the end of the run, the missing signatures added to the
// file's `missing` table in one transaction.
std::shared_ptr<const DbSnapshot> load_kernel_db(const std::filesystem::path& path,
                                                 std::string_view gpu_key);
void record_missing(const std::filesystem::path& path, const MissingLog& missing);

}  // namespace phantora::kernels
