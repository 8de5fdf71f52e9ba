#include "phantora/simcore/gpu_sharing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace phantora::sim {

SimTime shared_end(SimTime start, const KernelNeeds& kernel, const GpuCapacity& gpu,
                   std::span<const Hold> holds) {
  if (gpu.sms <= 0) return start + kernel.alone;
  const int64_t sms = gpu.sms;
  const int64_t wide = kernel.ctas == 0 ? sms : std::min<int64_t>(kernel.ctas, sms);  // alone
  // The HBM bandwidth it draws alone; 0: unknown, HBM never slows it.
  const double draws = kernel.hbm_bytes > 0 && gpu.hbm_bytes_per_s > 0 && kernel.alone.as_ps() > 0
                           ? kernel.hbm_bytes / kernel.alone.as_seconds()
                           : 0.0;
  // The times at which what is held changes, after the start.
  std::vector<SimTime> changes;
  for (const Hold& h : holds) {
    if (h.from > start) changes.push_back(h.from);
    if (!h.to.is_infinite() && h.to > start) changes.push_back(h.to);
  }
  std::sort(changes.begin(), changes.end());
  changes.push_back(SimTime::infinite());

  SimTime t = start;
  int64_t left = kernel.alone.as_ps();  // work left, in picoseconds of the kernel alone
  for (const SimTime next : changes) {
    if (next <= t) continue;
    int64_t held = 0;
    double drawn = 0;
    for (const Hold& h : holds) {
      if (h.from <= t && t < h.to) {
        held += h.sms;
        drawn += h.hbm_bytes_per_s;
      }
    }
    const int64_t free = std::max<int64_t>(1, sms - held);
    const double sm_rate = free >= wide ? 1.0 : static_cast<double>(free) / wide;
    const double hbm_rate = draws > 0 && drawn > 0
                                ? std::max(0.0, gpu.hbm_bytes_per_s - drawn) / draws
                                : std::numeric_limits<double>::infinity();
    const int64_t span = next.is_infinite() ? 0 : (next - t).as_ps();
    if (hbm_rate >= sm_rate) {
      // Bound by SMs: exact integer arithmetic, left * wide / free when it is squeezed.
      const int64_t need = free >= wide ? left : (left * wide + free - 1) / free;
      if (next.is_infinite() || need <= span) return t + SimTime::ps(need);
      left -= free >= wide ? span : span * free / wide;
    } else {
      // Bound by HBM: the collectives' traffic leaves it hbm_rate of what it draws alone.
      if (hbm_rate > 0) {
        const double need = std::ceil(static_cast<double>(left) / hbm_rate);
        // A trickle left for ever (a collective drawing all but a few bytes/s of the plateau,
        // with no end) would end the kernel past the last time SimTime can hold.
        const double room =
            static_cast<double>(std::numeric_limits<int64_t>::max() - 1 - t.as_ps());
        if (next.is_infinite() && need >= room)
          throw std::logic_error("shared_end: HBM all but held in full with no end");
        if (next.is_infinite() || need <= static_cast<double>(span))
          return t + SimTime::ps(static_cast<int64_t>(need));
        left -= static_cast<int64_t>(static_cast<double>(span) * hbm_rate);
      } else if (next.is_infinite()) {
        throw std::logic_error("shared_end: HBM held in full with no end");
      }
    }
    t = next;
  }
  return t;  // unreachable: the last span is unbounded
}

GpuSharing::GpuSharing(GpuCapacity gpu) : gpu_(gpu) {}
GpuSharing::~GpuSharing() = default;

void GpuSharing::collective_submitted(uint64_t token, ClientId client, int device) {
  if (gpu_.sms <= 0) return;
  auto c = std::make_shared<Collective>();
  c->device = {client, device};
  collectives_[token] = std::move(c);
  open_[{client, device}].push_back(token);
}

void GpuSharing::collective_ready(uint64_t token, SimTime at, int channels) {
  auto it = collectives_.find(token);
  if (it == collectives_.end()) return;
  it->second->ready = at;
  it->second->channels = channels;
  earliest_.reset();
}

void GpuSharing::collective_finished(uint64_t token, SimTime end) {
  auto it = collectives_.find(token);
  if (it == collectives_.end()) return;
  it->second->end = end;
  if (!it->second->ready) it->second->ready = end;  // never held an SM
  earliest_.reset();
  const DeviceKey device = it->second->device;
  collectives_.erase(it);  // kernels launched beside it keep their reference
  auto& open = open_.at(device);
  open.erase(std::find(open.begin(), open.end(), token));
  if (open.empty()) open_.erase(device);
}

void GpuSharing::collective_moving(uint64_t token, SimTime from, SimTime to, double bytes_per_s) {
  auto it = collectives_.find(token);
  if (it == collectives_.end() || bytes_per_s <= 0 || to <= from) return;
  it->second->moving.push_back(Hold{from, to, 0, bytes_per_s});
  earliest_.reset();
}

bool GpuSharing::shares(ClientId client, int device) const {
  return open_.contains({client, device});
}

uint64_t GpuSharing::defer(ClientId client, StreamId stream, int device, const OpDesc& op,
                           uint32_t ctas, double hbm_bytes) {
  Kernel k{client, stream, op, ctas, hbm_bytes, std::nullopt, {}};
  for (const uint64_t token : open_.at({client, device}))
    k.beside.push_back(collectives_.at(token));
  const uint64_t token = kKernelTokenBit | next_kernel_++;
  kernels_.emplace(token, std::move(k));
  return token;
}

void GpuSharing::kernel_ready(uint64_t token, SimTime start) {
  kernels_.at(token).start = start;
  started_.push_back(token);
  earliest_.reset();
}

SimTime GpuSharing::provisional_end(const Kernel& k) const {
  // A collective not yet ready on this GPU will be ready no earlier than the simulation's
  // next event: it holds nothing before then.
  // Data movement not yet started begins at a network event, which comes first.
  std::vector<Hold> holds;
  for (const auto& c : k.beside) {
    if (c->ready && c->end > *k.start) holds.push_back({*c->ready, c->end, c->channels, 0});
    for (const Hold& m : c->moving) {
      const SimTime to = std::min(m.to, c->end);
      if (to > *k.start && to > m.from) holds.push_back({m.from, to, 0, m.hbm_bytes_per_s});
    }
  }
  return shared_end(*k.start, KernelNeeds{k.op.cost, k.ctas, k.hbm_bytes}, gpu_, holds);
}

const GpuSharing::Earliest& GpuSharing::earliest() const {
  if (earliest_) return *earliest_;
  // The earliest end; among equal ends the lowest token, so that the choice is deterministic.
  Earliest e;
  for (size_t i = 0; i < started_.size(); ++i) {
    const SimTime end = provisional_end(kernels_.at(started_[i]));
    if (end < e.end || (end == e.end && started_[i] < started_[e.at])) e = Earliest{i, end};
  }
  earliest_ = e;
  return *earliest_;
}

SimTime GpuSharing::next_end() const {
  return earliest().end;
}

GpuSharing::Placed GpuSharing::place_next() {
  if (started_.empty()) throw std::logic_error("GpuSharing::place_next: no started kernel");
  const Earliest e = earliest();
  const uint64_t token = started_[e.at];
  started_.erase(started_.begin() + static_cast<std::ptrdiff_t>(e.at));
  earliest_.reset();
  auto node = kernels_.extract(token);
  const Kernel& k = node.mapped();
  return Placed{k.client, k.stream, token, *k.start, e.end, k.op};
}

}  // namespace phantora::sim
