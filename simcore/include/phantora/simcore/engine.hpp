// The discrete-event core: virtual GPU streams, events and their dependencies.
//
// Time semantics (design.md, "Time"): every stream is a FIFO; an operation starts at
//   max(host clock at submission + launch latency, end of the previous op on its stream,
//       every event the stream waits on, the legacy-default-stream barrier)
// and ends at start + cost. Event records and stream-wait-event are zero-cost operations of
// their stream, so they order against later work exactly as CUDA orders them.
//
// Legacy default stream (CUDA Runtime API, "stream synchronization behavior"): work on a
// device's legacy stream waits for all earlier work on that device's blocking streams, and work
// on a blocking stream waits for earlier work on the legacy stream. Non-blocking streams
// (cudaStreamNonBlocking) do neither.
//
// Most operations have a known cost, so their times are computed the moment they arrive. A
// deferred operation's end is decided outside the engine — a collective's by other ranks and the
// network, a kernel's that shares its GPU with a collective by that collective's time
// (gpu_sharing.hpp): it holds its stream until complete_deferred() is called, and everything
// behind it — later ops on the stream, events recorded after it, streams waiting on those
// events, blocking calls — waits in order and is placed as soon as what it depends on is known.
//
// The engine knows nothing of sockets, names or cost models: callers hand it costs, it hands
// back times and reports each placed operation to an Observer.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "phantora/kernels/cost_source.hpp"
#include "phantora/units.hpp"

namespace phantora::sim {

using ClientId = uint32_t;
using StreamId = uint64_t;
using EventId = uint64_t;

enum class OpKind : uint8_t {
  kKernel,
  kCopy,
  kMemset,
  kEventRecord,
  kWaitEvent,
  kGraph,
  kHostFunc,
  kCollective,
};

const char* to_string(OpKind k);

// Where an operation's cost came from (kernels-db's vocabulary); the report shows the share of
// each. Operations the cost model does not price (event records, host functions, graphs as a
// whole, collectives) have none.
using kernels::CostSource;
// The source's name, or "none" for an operation without one (trace.json's `source`).
std::string_view source_name(std::optional<CostSource> s);

struct OpDesc {
  OpKind kind = OpKind::kKernel;
  SimTime cost;
  std::optional<CostSource> source;  // none: not priced by the cost model
  uint32_t label = 0;  // caller-defined (kernel name id); the engine only passes it through
  uint64_t bytes = 0;  // copies and memsets
};

struct CompletedOp {
  ClientId client = 0;
  int device = 0;  // the client's device index
  StreamId stream = 0;
  OpDesc desc;
  SimTime submitted;  // host clock at submission
  SimTime start;
  SimTime end;
  uint64_t token = 0;  // deferred operations: the caller's token
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_op(const CompletedOp& op) = 0;
  // A deferred operation reached the head of its stream: it may start at `ready` (a collective
  // once its peers can).
  virtual void on_deferred_ready(ClientId client, StreamId stream, uint64_t token,
                                 SimTime ready) = 0;
};

struct EngineConfig {
  SimTime launch_latency = SimTime::us(2);
};

class Engine {
 public:
  using Callback = std::function<void(SimTime)>;

  Engine(EngineConfig config, Observer* observer);

  // Streams are keyed by (client, stream id). A device's legacy default stream is created with
  // ensure_legacy_stream; every other stream is announced before use.
  void create_stream(ClientId client, StreamId stream, int device, bool non_blocking);
  void destroy_stream(ClientId client, StreamId stream);
  void ensure_legacy_stream(ClientId client, StreamId stream, int device);
  bool has_stream(ClientId client, StreamId stream) const;
  int stream_device(ClientId client, StreamId stream) const;

  // Enqueues an operation; returns its end time, or SimTime::infinite() while it waits behind
  // a deferred one.
  SimTime submit(ClientId client, StreamId stream, SimTime host_time, const OpDesc& op);
  // A deferred operation holds its stream from when it is ready until complete_deferred(),
  // which places it as `op` from `start` to `end`.
  void submit_deferred(ClientId client, StreamId stream, SimTime host_time, uint64_t token);
  void complete_deferred(ClientId client, StreamId stream, uint64_t token, SimTime start,
                         SimTime end, const OpDesc& op);

  void record_event(ClientId client, EventId event, StreamId stream, SimTime host_time);
  void wait_event(ClientId client, StreamId stream, EventId event, SimTime host_time);

  // Blocking calls: `done` runs (possibly at once) with the time the awaited work completes.
  void when_stream_done(ClientId client, StreamId stream, Callback done);
  void when_event_done(ClientId client, EventId event, Callback done);
  void when_device_done(ClientId client, int device, Callback done);
  void when_client_done(ClientId client, Callback done);

  // Immediate answers, for work that is already placed. nullopt: unknown or still waiting.
  std::optional<SimTime> stream_done(ClientId client, StreamId stream) const;
  std::optional<SimTime> event_done(ClientId client, EventId event) const;
  SimTime device_done(ClientId client, int device) const;
  SimTime client_done(ClientId client) const;

  // Latest end of any operation so far.
  SimTime horizon() const { return horizon_; }
  // Operations queued behind unfinished deferred ones, over all streams.
  size_t waiting_items() const;

 private:
  using Version = uint64_t;  // one recording of an event; internal, never reused
  enum class ItemKind : uint8_t { kOp, kRecord, kWait, kDeferred };
  struct Item {
    ItemKind kind = ItemKind::kOp;
    bool implicit = false;  // added by the engine itself: no launch latency, no own trace
    bool arrived = false;   // deferred: on_deferred_ready already called
    SimTime host_time;
    SimTime barrier;  // legacy-stream dependency known at submission
    OpDesc desc;
    Version version = 0;  // record / wait
    uint64_t token = 0;   // deferred
  };
  struct Stream {
    ClientId client = 0;
    StreamId id = 0;
    int device = 0;
    bool non_blocking = false;
    bool legacy = false;
    SimTime tail;  // end of the last placed item
    std::deque<Item> queue;
  };
  struct EventState {
    bool resolved = false;
    SimTime time;
    int refs = 0;  // queued waits that name this version
    bool latest = true;
    std::vector<Stream*> blocked;  // streams whose head waits on this version
    std::vector<Callback> waiters;
  };
  struct DeviceKey {
    ClientId client;
    int device;
    auto operator<=>(const DeviceKey&) const = default;
  };
  struct StreamKey {
    ClientId client;
    StreamId stream;
    auto operator<=>(const StreamKey&) const = default;
  };

  Stream& stream_ref(ClientId client, StreamId stream);
  const Stream* find_stream(ClientId client, StreamId stream) const;
  // Adds the legacy-stream dependency of an item about to be pushed onto `s`.
  void add_legacy_dependency(Stream& s, Item& item);
  Version implicit_record(Stream& s);
  void push(Stream& s, Item item);
  void drain(Stream& s);
  void run_ready();
  void resolve(Version v, SimTime t);
  void release_ref(Version v);
  void maybe_forget(Version v);

  EngineConfig config_;
  Observer* observer_;
  std::map<StreamKey, Stream> streams_;
  std::map<DeviceKey, std::vector<Stream*>> device_streams_;
  std::map<DeviceKey, Stream*> legacy_of_;
  std::map<std::pair<ClientId, EventId>, Version> user_events_;
  std::unordered_map<Version, EventState> versions_;
  Version next_version_ = 1;
  std::vector<Stream*> ready_;  // streams to drain
  bool draining_ = false;
  SimTime horizon_;
};

}  // namespace phantora::sim
