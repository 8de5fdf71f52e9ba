#include "phantora/kernels/cost_model.hpp"

#include <algorithm>
#include <tuple>

#include "phantora/overloaded.hpp"

namespace phantora::kernels {

std::string_view to_string(CostSource source) {
  switch (source) {
    case CostSource::kPinned:
      return "pinned";
    case CostSource::kMeasured:
      return "measured";
    case CostSource::kModelled:
      return "modelled";
    case CostSource::kDefault:
      return "default";
  }
  return "unknown";
}

uint64_t resident_blocks_per_sm(const KernelLaunchInfo& launch, const DeviceLimits& device) {
  const uint64_t threads = std::max<uint64_t>(
      1, uint64_t{launch.block[0]} * uint64_t{launch.block[1]} * uint64_t{launch.block[2]});
  uint64_t fit = static_cast<uint64_t>(device.max_blocks_per_multiprocessor);
  fit = std::min(fit, static_cast<uint64_t>(device.max_threads_per_multiprocessor) / threads);
  if (launch.shared_mem > 0) {
    // Each resident block also holds the driver's reserved shared memory.
    const uint64_t per_block = launch.shared_mem + device.reserved_shared_mem_per_block;
    fit = std::min(fit, device.shared_mem_per_multiprocessor / per_block);
  }
  return std::max<uint64_t>(1, fit);
}

uint64_t waves(const KernelLaunchInfo& launch, const DeviceLimits& device) {
  const uint64_t blocks =
      uint64_t{launch.grid[0]} * uint64_t{launch.grid[1]} * uint64_t{launch.grid[2]};
  const uint64_t per_wave =
      std::max<uint64_t>(1, static_cast<uint64_t>(device.multiprocessor_count) *
                                resident_blocks_per_sm(launch, device));
  return std::max<uint64_t>(1, (blocks + per_wave - 1) / per_wave);
}

SimTime default_kernel_cost(const KernelLaunchInfo& launch, const GpuPreset& gpu,
                            const CostParams& params) {
  return params.kernel_floor +
         params.kernel_per_wave * static_cast<int64_t>(waves(launch, gpu.device));
}

std::string kernel_signature(const KernelLaunchInfo& launch) {
  KernelDesc d;
  d.name = std::string(launch.mangled_name);
  d.grid = launch.grid;
  d.block = launch.block;
  d.shared_mem = launch.shared_mem;
  return signature(d);
}

void MissingLog::note(std::string_view gpu, const std::string& signature, SimTime modelled) {
  std::string key;
  key.reserve(gpu.size() + 1 + signature.size());
  key.append(gpu).append(1, '\n').append(signature);
  Seen& seen = by_key_[key];
  if (seen.occurrences == 0) seen.gpu = std::string(gpu);
  ++seen.occurrences;
  seen.modelled = modelled;
}

std::vector<MissingEntry> MissingLog::entries() const {
  std::vector<MissingEntry> out;
  out.reserve(by_key_.size());
  for (const auto& [key, seen] : by_key_) {
    out.push_back(
        {seen.gpu, key.substr(seen.gpu.size() + 1), seen.occurrences, seen.modelled.as_us()});
  }
  std::sort(out.begin(), out.end(), [](const MissingEntry& a, const MissingEntry& b) {
    const double ta = a.modelled_us * static_cast<double>(a.occurrences);
    const double tb = b.modelled_us * static_cast<double>(b.occurrences);
    if (ta != tb) return ta > tb;
    return std::tie(a.gpu, a.signature) < std::tie(b.gpu, b.signature);
  });
  return out;
}

CostModel::CostModel(CostParams params, KernelTimes pinned, ModelParams models)
    : params_(params), pinned_(std::move(pinned)), models_(std::move(models)) {}

const DbEntry* CostModel::lookup(const std::string& signature, const GpuPreset& gpu) const {
  if (db_ == nullptr || db_->gpu() != gpu.key) return nullptr;
  return db_->find(signature);
}

namespace {

// A row prices its operation by its back-to-back time where it has one: a training step runs
// its kernels back to back, and the event pair around a lone launch adds its own overhead to a
// short kernel (docs/kernels-db.md, "Back to back").
KernelCost from_db(const DbEntry& e, std::string signature, double hbm_bytes = 0) {
  const CostSource source =
      e.source == EntrySource::kPinned ? CostSource::kPinned : CostSource::kMeasured;
  const double us = e.back_to_back ? e.back_to_back->per_launch.mean_us : e.stats.mean_us;
  // Never zero: a measured duration rounds up to at least one picosecond.
  const SimTime t = std::max(SimTime::us(us), SimTime::ps(1));
  return {t, source, std::move(signature), hbm_bytes};
}

}  // namespace

void CostModel::note_repeat(const std::string& signature, SimTime duration, CostSource source,
                            const GpuPreset& gpu) const {
  if (source == CostSource::kModelled || source == CostSource::kDefault) {
    missing_.note(gpu.key, signature, duration);
  }
}

KernelCost CostModel::modelled(std::string signature, SimTime duration, CostSource source,
                               const GpuPreset& gpu, double hbm_bytes) const {
  missing_.note(gpu.key, signature, duration);
  return {duration, source, std::move(signature), hbm_bytes};
}

KernelCost CostModel::cost_of_kernel(const KernelLaunchInfo& launch, const GpuPreset& gpu,
                                     const MemoryOpDesc* work, const AttentionDesc* attention,
                                     const ConvDesc* conv) const {
  std::string sig = kernel_signature(launch);
  const double bytes = attention != nullptr ? hbm_bytes(*attention)
                       : conv != nullptr    ? hbm_bytes(*conv)
                       : work != nullptr    ? hbm_bytes(*work)
                                            : 0.0;
  if (const std::optional<SimTime> t = pinned_.lookup(launch.mangled_name)) {
    return {*t, CostSource::kPinned, std::move(sig), bytes};
  }
  if (const DbEntry* e = lookup(sig, gpu)) return from_db(*e, std::move(sig), bytes);
  if (attention != nullptr) return cost_of_attention(*attention, gpu);
  if (conv != nullptr) return cost_of_conv(*conv, gpu);
  if (work != nullptr) return cost_of_memory_op(*work, gpu);
  return modelled(std::move(sig), default_kernel_cost(launch, gpu, params_), CostSource::kDefault,
                  gpu);
}

KernelCost CostModel::cost_of_gemm(const GemmDesc& gemm, const GpuPreset& gpu) const {
  std::string sig = signature(gemm);
  if (const DbEntry* e = lookup(sig, gpu)) return from_db(*e, std::move(sig), hbm_bytes(gemm));
  const Estimate est = gemm_estimate(gemm, gpu, models_);
  return modelled(std::move(sig), est.duration, CostSource::kModelled, gpu, est.bytes);
}

KernelCost CostModel::cost_of_attention(const AttentionDesc& attention,
                                        const GpuPreset& gpu) const {
  std::string sig = signature(attention);
  if (const DbEntry* e = lookup(sig, gpu)) return from_db(*e, std::move(sig), hbm_bytes(attention));
  const Estimate est = attention_estimate(attention, gpu, models_);
  return modelled(std::move(sig), est.duration, CostSource::kModelled, gpu, est.bytes);
}

KernelCost CostModel::cost_of_conv(const ConvDesc& conv, const GpuPreset& gpu) const {
  std::string sig = signature(conv);
  if (const DbEntry* e = lookup(sig, gpu)) return from_db(*e, std::move(sig), hbm_bytes(conv));
  const Estimate est = conv_estimate(conv, gpu, models_);
  return modelled(std::move(sig), est.duration, CostSource::kModelled, gpu, est.bytes);
}

KernelCost CostModel::cost_of_memory_op(const MemoryOpDesc& op, const GpuPreset& gpu) const {
  std::string sig = signature(op);
  if (const DbEntry* e = lookup(sig, gpu)) return from_db(*e, std::move(sig), hbm_bytes(op));
  const Estimate est = memory_op_estimate(op, gpu, models_);
  return modelled(std::move(sig), est.duration, CostSource::kModelled, gpu, est.bytes);
}

KernelCost CostModel::cost_of_copy(const CopyDesc& copy, const GpuPreset& gpu) const {
  std::string sig = signature(copy);
  if (const DbEntry* e = lookup(sig, gpu)) return from_db(*e, std::move(sig));
  return modelled(std::move(sig), copy_cost(copy.kind, Bytes(copy.bytes), copy.pinned_host, gpu),
                  CostSource::kModelled, gpu);
}

KernelCost CostModel::cost_of_memset(Bytes bytes, const GpuPreset& gpu) const {
  std::string sig = signature(memset_desc(bytes.count()));
  if (const DbEntry* e = lookup(sig, gpu)) return from_db(*e, std::move(sig));
  return modelled(std::move(sig), memset_cost(bytes, gpu), CostSource::kModelled, gpu);
}

std::optional<KernelCost> CostModel::cost_of_signature(std::string_view sig,
                                                       const GpuPreset& gpu) const {
  const std::optional<OpDesc> op = parse_signature(sig);
  return op ? cost_of(*op, gpu) : std::nullopt;
}

std::optional<KernelCost> CostModel::cost_of(const OpDesc& op, const GpuPreset& gpu) const {
  return std::visit(
      Overloaded{
          [&](const GemmDesc& d) -> std::optional<KernelCost> { return cost_of_gemm(d, gpu); },
          [&](const AttentionDesc& d) -> std::optional<KernelCost> {
            return cost_of_attention(d, gpu);
          },
          [&](const ConvDesc& d) -> std::optional<KernelCost> { return cost_of_conv(d, gpu); },
          [&](const MemoryOpDesc& d) -> std::optional<KernelCost> {
            return is_memset(d) ? cost_of_memset(Bytes(d.bytes_written), gpu)
                                : cost_of_memory_op(d, gpu);
          },
          [&](const CopyDesc& d) -> std::optional<KernelCost> { return cost_of_copy(d, gpu); },
          [](const KernelDesc&) -> std::optional<KernelCost> { return std::nullopt; },
      },
      op);
}

std::shared_ptr<const DbSnapshot> load_kernel_db(const std::filesystem::path& path,
                                                 std::string_view gpu_key) {
  const KernelDb db = KernelDb::open(path, KernelDb::Mode::kCreate);
  return DbSnapshot::load(db, gpu_key);
}

void record_missing(const std::filesystem::path& path, const MissingLog& missing) {
  if (missing.size() == 0) return;
  KernelDb db = KernelDb::open(path, KernelDb::Mode::kReadWrite);
  db.add_missing(missing.entries());
}

SimTime CostModel::copy_cost(wire::CopyKind kind, Bytes bytes, bool pinned_host,
                             const GpuPreset& gpu) const {
  const std::optional<Bandwidth> link = copy_link(kind, gpu.perf);
  if (!link) return params_.host_to_host.transfer_time(bytes);
  switch (kind) {
    case wire::CopyKind::kHostToDevice:
    case wire::CopyKind::kDeviceToHost: {
      const double factor = pinned_host ? 1.0 : params_.pageable_factor;
      const Bandwidth bw = Bandwidth::bytes_per_s(link->as_bytes_per_s() * factor);
      return params_.host_device_latency + bw.transfer_time(bytes);
    }
    case wire::CopyKind::kDeviceToDevice:
      // Every byte is read from and written back to HBM, at the rate streaming kernels reach
      // (copies are the [hbm-probe] measurement that rate comes from), not at the link's peak.
      return params_.device_local_latency + achieved_hbm(gpu).transfer_time(bytes + bytes);
    case wire::CopyKind::kPeer:
    case wire::CopyKind::kHostToHost:  // no link: priced above
      break;
  }
  return params_.device_local_latency + link->transfer_time(bytes);
}

SimTime CostModel::memset_cost(Bytes bytes, const GpuPreset& gpu) const {
  return params_.device_local_latency + achieved_hbm(gpu).transfer_time(bytes);
}

Bandwidth CostModel::achieved_hbm(const GpuPreset& gpu) const {
  return Bandwidth::bytes_per_s(hbm_plateau_bytes_per_s(gpu, models_));
}

}  // namespace phantora::kernels
