#include "phantora/simcore/engine.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace phantora::sim {

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::kKernel:
      return "kernel";
    case OpKind::kCopy:
      return "memcpy";
    case OpKind::kMemset:
      return "memset";
    case OpKind::kEventRecord:
      return "event-record";
    case OpKind::kWaitEvent:
      return "wait-event";
    case OpKind::kGraph:
      return "graph";
    case OpKind::kHostFunc:
      return "host-func";
  }
  return "?";
}

const char* to_string(CostSource s) {
  switch (s) {
    case CostSource::kMeasured:
      return "measured";
    case CostSource::kPinned:
      return "pinned";
    case CostSource::kModelled:
      return "modelled";
    case CostSource::kDefault:
      return "default";
    case CostSource::kNone:
      return "none";
  }
  return "?";
}

Engine::Engine(EngineConfig config, Observer* observer) : config_(config), observer_(observer) {}

void Engine::create_stream(ClientId client, StreamId stream, int device, bool non_blocking) {
  auto [it, inserted] = streams_.try_emplace(StreamKey{client, stream});
  if (!inserted) {
    throw std::invalid_argument(fmt::format("client {} created stream {} twice", client, stream));
  }
  it->second.device = device;
  it->second.non_blocking = non_blocking;
  device_streams_[DeviceKey{client, device}].push_back(stream);
}

void Engine::ensure_legacy_stream(ClientId client, StreamId stream, int device) {
  if (streams_.contains(StreamKey{client, stream})) return;
  create_stream(client, stream, device, /*non_blocking=*/false);
  streams_[StreamKey{client, stream}].legacy = true;
  legacy_of_[DeviceKey{client, device}] = stream;
}

void Engine::destroy_stream(ClientId client, StreamId stream) {
  // cudaStreamDestroy returns at once and lets queued work finish, so the stream's work
  // still counts for device synchronisation: keep the record and just stop accepting work.
  // Ids are never reused by the shim, so nothing else is needed.
  stream_ref(client, stream);
}

Engine::Stream& Engine::stream_ref(ClientId client, StreamId stream) {
  auto it = streams_.find(StreamKey{client, stream});
  if (it == streams_.end()) {
    throw std::invalid_argument(fmt::format("client {} used unknown stream {}", client, stream));
  }
  return it->second;
}

SimTime Engine::legacy_barrier(ClientId client, const Stream& s) const {
  if (s.non_blocking) return SimTime::zero();
  auto dev = device_streams_.find(DeviceKey{client, s.device});
  if (dev == device_streams_.end()) return SimTime::zero();
  SimTime barrier = SimTime::zero();
  if (s.legacy) {
    // Legacy stream waits for every blocking stream of its device.
    for (StreamId other : dev->second) {
      const Stream& o = streams_.at(StreamKey{client, other});
      if (!o.non_blocking) barrier = std::max(barrier, o.tail);
    }
  } else if (auto legacy = legacy_of_.find(DeviceKey{client, s.device});
             legacy != legacy_of_.end()) {
    barrier = streams_.at(StreamKey{client, legacy->second}).tail;
  }
  return barrier;
}

SimTime Engine::place(ClientId client, StreamId, Stream& s, SimTime host_time, SimTime cost) {
  const SimTime start =
      std::max({host_time + config_.launch_latency, s.tail, legacy_barrier(client, s)});
  s.tail = start + cost;
  horizon_ = std::max(horizon_, s.tail);
  return start;
}

SimTime Engine::submit(ClientId client, StreamId stream, SimTime host_time, const OpDesc& op) {
  Stream& s = stream_ref(client, stream);
  const SimTime start = place(client, stream, s, host_time, op.cost);
  if (observer_ != nullptr) {
    observer_->on_op(CompletedOp{client, s.device, stream, op, host_time, start, s.tail});
  }
  return s.tail;
}

void Engine::record_event(ClientId client, EventId event, StreamId stream, SimTime host_time) {
  Stream& s = stream_ref(client, stream);
  place(client, stream, s, host_time, SimTime::zero());
  events_[{client, event}] = s.tail;
}

void Engine::wait_event(ClientId client, StreamId stream, EventId event, SimTime host_time) {
  Stream& s = stream_ref(client, stream);
  // Waiting on an event that was never recorded is a no-op in CUDA.
  auto it = events_.find({client, event});
  const SimTime start = place(client, stream, s, host_time, SimTime::zero());
  if (it != events_.end()) s.tail = std::max(start, it->second);
}

std::optional<SimTime> Engine::stream_done(ClientId client, StreamId stream) const {
  auto it = streams_.find(StreamKey{client, stream});
  if (it == streams_.end()) return std::nullopt;
  // A legacy-stream sync also covers the blocking streams it is ordered after only for work
  // submitted to it; CUDA's cudaStreamSynchronize(0) waits for the legacy stream alone.
  return it->second.tail;
}

std::optional<SimTime> Engine::event_done(ClientId client, EventId event) const {
  auto it = events_.find({client, event});
  if (it == events_.end()) return std::nullopt;
  return it->second;
}

SimTime Engine::device_done(ClientId client, int device) const {
  SimTime done = SimTime::zero();
  auto dev = device_streams_.find(DeviceKey{client, device});
  if (dev == device_streams_.end()) return done;
  for (StreamId s : dev->second) done = std::max(done, streams_.at(StreamKey{client, s}).tail);
  return done;
}

SimTime Engine::client_done(ClientId client) const {
  SimTime done = SimTime::zero();
  for (auto it = streams_.lower_bound(StreamKey{client, 0});
       it != streams_.end() && it->first.client == client; ++it) {
    done = std::max(done, it->second.tail);
  }
  return done;
}

}  // namespace phantora::sim
