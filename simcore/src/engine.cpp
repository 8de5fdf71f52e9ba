#include "phantora/simcore/engine.hpp"

#include <algorithm>
#include <memory>
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
    case OpKind::kCollective:
      return "collective";
  }
  return "?";
}

std::string_view source_name(std::optional<CostSource> s) {
  return s ? kernels::to_string(*s) : "none";
}

Engine::Engine(EngineConfig config, Observer* observer) : config_(config), observer_(observer) {}

void Engine::create_stream(ClientId client, StreamId stream, int device, bool non_blocking) {
  auto [it, inserted] = streams_.try_emplace(StreamKey{client, stream});
  if (!inserted) {
    throw std::invalid_argument(fmt::format("client {} created stream {} twice", client, stream));
  }
  Stream& s = it->second;
  s.client = client;
  s.id = stream;
  s.device = device;
  s.non_blocking = non_blocking;
  device_streams_[DeviceKey{client, device}].push_back(&s);
}

void Engine::ensure_legacy_stream(ClientId client, StreamId stream, int device) {
  if (streams_.contains(StreamKey{client, stream})) return;
  create_stream(client, stream, device, /*non_blocking=*/false);
  Stream& s = streams_.at(StreamKey{client, stream});
  s.legacy = true;
  legacy_of_[DeviceKey{client, device}] = &s;
}

void Engine::destroy_stream(ClientId client, StreamId stream) {
  // cudaStreamDestroy returns at once and lets queued work finish, so the stream's work
  // still counts for device synchronisation: keep the record. Ids are never reused.
  stream_ref(client, stream);
}

bool Engine::has_stream(ClientId client, StreamId stream) const {
  return find_stream(client, stream) != nullptr;
}

int Engine::stream_device(ClientId client, StreamId stream) const {
  const Stream* s = find_stream(client, stream);
  return s == nullptr ? -1 : s->device;
}

Engine::Stream& Engine::stream_ref(ClientId client, StreamId stream) {
  auto it = streams_.find(StreamKey{client, stream});
  if (it == streams_.end()) {
    throw std::invalid_argument(fmt::format("client {} used unknown stream {}", client, stream));
  }
  return it->second;
}

const Engine::Stream* Engine::find_stream(ClientId client, StreamId stream) const {
  auto it = streams_.find(StreamKey{client, stream});
  return it == streams_.end() ? nullptr : &it->second;
}

Engine::Version Engine::implicit_record(Stream& s) {
  const Version v = next_version_++;
  EventState& e = versions_[v];
  e.latest = false;  // no user event names it
  Item item;
  item.kind = ItemKind::kRecord;
  item.implicit = true;
  item.version = v;
  s.queue.push_back(item);
  return v;
}

void Engine::add_legacy_dependency(Stream& s, Item& item) {
  if (s.non_blocking || item.implicit) return;
  auto depend_on = [&](Stream& other) {
    if (&other == &s || other.non_blocking) return;
    if (other.queue.empty()) {
      // Everything submitted to `other` so far is placed: its tail is final for them.
      item.barrier = std::max(item.barrier, other.tail);
      return;
    }
    Item wait;
    wait.kind = ItemKind::kWait;
    wait.implicit = true;
    wait.version = implicit_record(other);
    versions_[wait.version].refs++;
    s.queue.push_back(wait);
  };
  if (s.legacy) {
    for (Stream* other : device_streams_[DeviceKey{s.client, s.device}]) depend_on(*other);
  } else if (auto legacy = legacy_of_.find(DeviceKey{s.client, s.device});
             legacy != legacy_of_.end()) {
    depend_on(*legacy->second);
  }
}

void Engine::push(Stream& s, Item item) {
  add_legacy_dependency(s, item);
  s.queue.push_back(item);
  ready_.push_back(&s);
  run_ready();
}

void Engine::run_ready() {
  if (draining_) return;  // the outer loop picks up what was added
  draining_ = true;
  while (!ready_.empty()) {
    Stream* s = ready_.back();
    ready_.pop_back();
    drain(*s);
  }
  draining_ = false;
}

void Engine::drain(Stream& s) {
  while (!s.queue.empty()) {
    Item& item = s.queue.front();
    const SimTime launch =
        item.implicit ? SimTime::zero() : item.host_time + config_.launch_latency;
    const SimTime start = std::max({launch, s.tail, item.barrier});
    switch (item.kind) {
      case ItemKind::kOp: {
        s.tail = start + item.desc.cost;
        horizon_ = std::max(horizon_, s.tail);
        if (observer_ != nullptr) {
          observer_->on_op(
              CompletedOp{s.client, s.device, s.id, item.desc, item.host_time, start, s.tail, 0});
        }
        break;
      }
      case ItemKind::kRecord:
        s.tail = start;
        resolve(item.version, start);
        break;
      case ItemKind::kWait: {
        EventState& e = versions_.at(item.version);
        if (!e.resolved) {
          e.blocked.push_back(&s);
          return;
        }
        s.tail = std::max(start, e.time);
        release_ref(item.version);
        break;
      }
      case ItemKind::kDeferred:
        if (!item.arrived) {
          item.arrived = true;
          s.tail = start;
          if (observer_ != nullptr) observer_->on_deferred_ready(s.client, s.id, item.token, start);
        }
        return;  // holds the stream until complete_deferred()
    }
    s.queue.pop_front();
  }
}

void Engine::resolve(Version v, SimTime t) {
  auto it = versions_.find(v);
  if (it == versions_.end()) return;
  EventState& e = it->second;
  e.resolved = true;
  e.time = t;
  for (Stream* s : e.blocked) ready_.push_back(s);
  e.blocked.clear();
  std::vector<Callback> waiters = std::move(e.waiters);
  e.waiters.clear();
  maybe_forget(v);
  for (auto& w : waiters) w(t);
}

void Engine::release_ref(Version v) {
  auto it = versions_.find(v);
  if (it == versions_.end()) return;
  it->second.refs--;
  maybe_forget(v);
}

void Engine::maybe_forget(Version v) {
  auto it = versions_.find(v);
  const EventState& e = it->second;
  if (e.resolved && e.refs <= 0 && !e.latest && e.waiters.empty() && e.blocked.empty())
    versions_.erase(it);
}

SimTime Engine::submit(ClientId client, StreamId stream, SimTime host_time, const OpDesc& op) {
  Stream& s = stream_ref(client, stream);
  Item item;
  item.kind = ItemKind::kOp;
  item.host_time = host_time;
  item.desc = op;
  push(s, item);
  return s.queue.empty() ? s.tail : SimTime::infinite();
}

void Engine::submit_deferred(ClientId client, StreamId stream, SimTime host_time, uint64_t token) {
  Stream& s = stream_ref(client, stream);
  Item item;
  item.kind = ItemKind::kDeferred;
  item.host_time = host_time;
  item.token = token;
  push(s, item);
}

void Engine::complete_deferred(ClientId client, StreamId stream, uint64_t token, SimTime start,
                               SimTime end, const OpDesc& op) {
  Stream& s = stream_ref(client, stream);
  if (s.queue.empty() || s.queue.front().kind != ItemKind::kDeferred ||
      s.queue.front().token != token || !s.queue.front().arrived) {
    throw std::logic_error(fmt::format(
        "deferred operation {} completed but is not at the head of stream {}", token, stream));
  }
  const Item item = s.queue.front();
  s.queue.pop_front();
  s.tail = std::max(s.tail, end);
  horizon_ = std::max(horizon_, s.tail);
  if (observer_ != nullptr) {
    observer_->on_op(CompletedOp{s.client, s.device, s.id, op, item.host_time, start, end, token});
  }
  ready_.push_back(&s);
  run_ready();
}

void Engine::record_event(ClientId client, EventId event, StreamId stream, SimTime host_time) {
  Stream& s = stream_ref(client, stream);
  const Version v = next_version_++;
  auto [slot, inserted] = user_events_.try_emplace({client, event}, v);
  if (!inserted) {
    const Version old = slot->second;
    slot->second = v;
    if (auto it = versions_.find(old); it != versions_.end()) {
      it->second.latest = false;
      maybe_forget(old);
    }
  }
  versions_[v];
  Item item;
  item.kind = ItemKind::kRecord;
  item.host_time = host_time;
  item.version = v;
  push(s, item);
}

void Engine::wait_event(ClientId client, StreamId stream, EventId event, SimTime host_time) {
  Stream& s = stream_ref(client, stream);
  auto it = user_events_.find({client, event});
  Item item;
  item.host_time = host_time;
  if (it == user_events_.end()) {
    // Waiting on an event never recorded is a no-op in CUDA; it still is a stream operation.
    item.kind = ItemKind::kOp;
    item.desc = OpDesc{OpKind::kWaitEvent, SimTime::zero(), std::nullopt, 0, 0};
  } else {
    item.kind = ItemKind::kWait;
    item.version = it->second;
    versions_.at(item.version).refs++;
  }
  push(s, item);
}

void Engine::when_stream_done(ClientId client, StreamId stream, Callback done) {
  Stream& s = stream_ref(client, stream);
  if (s.queue.empty()) return done(s.tail);
  const Version v = implicit_record(s);
  versions_.at(v).waiters.push_back(std::move(done));
}

void Engine::when_event_done(ClientId client, EventId event, Callback done) {
  auto it = user_events_.find({client, event});
  if (it == user_events_.end()) return done(SimTime::zero());  // never recorded: complete
  EventState& e = versions_.at(it->second);
  if (e.resolved) return done(e.time);
  e.waiters.push_back(std::move(done));
}

void Engine::when_device_done(ClientId client, int device, Callback done) {
  // Joins the ends of every stream of the device: replies when the last one is known.
  struct Join {
    size_t remaining = 1;  // one for this function itself, released at the end
    SimTime latest;
    Callback done;
  };
  auto join = std::make_shared<Join>();
  join->done = std::move(done);
  auto arrive = [join](SimTime t) {
    join->latest = std::max(join->latest, t);
    if (--join->remaining == 0) join->done(join->latest);
  };
  for (Stream* s : device_streams_[DeviceKey{client, device}]) {
    join->remaining++;
    when_stream_done(client, s->id, arrive);
  }
  arrive(SimTime::zero());
}

void Engine::when_client_done(ClientId client, Callback done) {
  std::vector<int> devices;
  for (const auto& [key, streams] : device_streams_) {
    if (key.client == client) devices.push_back(key.device);
  }
  auto remaining =
      std::make_shared<std::pair<size_t, SimTime>>(devices.size() + 1, SimTime::zero());
  auto arrive = [remaining, done = std::move(done)](SimTime t) {
    remaining->second = std::max(remaining->second, t);
    if (--remaining->first == 0) done(remaining->second);
  };
  for (int d : devices) when_device_done(client, d, arrive);
  arrive(SimTime::zero());
}

std::optional<SimTime> Engine::stream_done(ClientId client, StreamId stream) const {
  const Stream* s = find_stream(client, stream);
  if (s == nullptr || !s->queue.empty()) return std::nullopt;
  return s->tail;
}

std::optional<SimTime> Engine::event_done(ClientId client, EventId event) const {
  auto it = user_events_.find({client, event});
  if (it == user_events_.end()) return std::nullopt;
  const EventState& e = versions_.at(it->second);
  if (!e.resolved) return std::nullopt;
  return e.time;
}

SimTime Engine::device_done(ClientId client, int device) const {
  SimTime done = SimTime::zero();
  auto dev = device_streams_.find(DeviceKey{client, device});
  if (dev == device_streams_.end()) return done;
  for (const Stream* s : dev->second) done = std::max(done, s->tail);
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

size_t Engine::waiting_items() const {
  size_t n = 0;
  for (const auto& [key, s] : streams_) n += s.queue.size();
  return n;
}

}  // namespace phantora::sim
