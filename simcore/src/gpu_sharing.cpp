#include "phantora/simcore/gpu_sharing.hpp"

#include <algorithm>
#include <stdexcept>

namespace phantora::sim {

SimTime shared_end(SimTime start, SimTime alone, uint32_t ctas, int sms,
                   std::span<const SmHold> holds) {
  if (sms <= 0) return start + alone;
  const int64_t wide = ctas == 0 ? sms : std::min<int64_t>(ctas, sms);  // SMs it uses alone
  // The times at which the held SMs change, after the start.
  std::vector<SimTime> changes;
  for (const SmHold& h : holds) {
    if (h.from > start) changes.push_back(h.from);
    if (!h.to.is_infinite() && h.to > start) changes.push_back(h.to);
  }
  std::sort(changes.begin(), changes.end());
  changes.push_back(SimTime::infinite());

  SimTime t = start;
  int64_t left = alone.as_ps();  // work left, in picoseconds of the kernel alone
  for (const SimTime next : changes) {
    if (next <= t) continue;
    int64_t held = 0;
    for (const SmHold& h : holds) {
      if (h.from <= t && t < h.to) held += h.sms;
    }
    const int64_t free = std::max<int64_t>(1, sms - held);
    // Time to finish at this span's rate, rounded up: left * wide / free when it is squeezed.
    const int64_t need = free >= wide ? left : (left * wide + free - 1) / free;
    if (next.is_infinite() || need <= (next - t).as_ps()) return t + SimTime::ps(need);
    const int64_t span = (next - t).as_ps();
    left -= free >= wide ? span : span * free / wide;
    t = next;
  }
  return t;  // unreachable: the last span is unbounded
}

GpuSharing::GpuSharing(int sms) : sms_(sms) {}
GpuSharing::~GpuSharing() = default;

void GpuSharing::collective_submitted(uint64_t token, ClientId client, int device) {
  if (sms_ <= 0) return;
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

bool GpuSharing::shares(ClientId client, int device) const {
  return open_.contains({client, device});
}

uint64_t GpuSharing::defer(ClientId client, StreamId stream, int device, const OpDesc& op,
                           uint32_t ctas) {
  Kernel k{client, stream, op, ctas, std::nullopt, {}};
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
  std::vector<SmHold> holds;
  for (const auto& c : k.beside) {
    if (c->ready && c->end > *k.start) holds.push_back({*c->ready, c->end, c->channels});
  }
  return shared_end(*k.start, k.op.cost, k.ctas, sms_, holds);
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
