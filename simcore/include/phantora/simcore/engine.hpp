// The discrete-event core: virtual GPU streams, events and memory of every client.
//
// Time semantics (design.md, "Time"): every stream is a FIFO; an operation starts at
//   max(host clock at submission + launch latency, end of the previous op on its stream,
//       every event the stream waits on, and the legacy-default-stream barrier)
// and ends at start + cost. Event records and stream-wait-event are zero-cost operations of
// their stream, so they order against later work exactly as CUDA orders them.
//
// Legacy default stream (CUDA Runtime API, "stream synchronization behavior"): work on a
// device's legacy stream waits for all earlier work on that device's blocking streams, and work
// on a blocking stream waits for earlier work on the legacy stream. Non-blocking streams
// (cudaStreamNonBlocking) do neither.
//
// The engine knows nothing of sockets, names or cost models: callers hand it costs, it hands
// back start/end times and reports each completed operation to an Observer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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
  kHostFunc
};

const char* to_string(OpKind k);

// Where an operation's cost came from; the report shows the share of each.
enum class CostSource : uint8_t { kMeasured, kPinned, kModelled, kDefault, kNone };

const char* to_string(CostSource s);

struct OpDesc {
  OpKind kind = OpKind::kKernel;
  SimTime cost;
  CostSource source = CostSource::kNone;
  uint32_t label = 0;  // caller-defined (kernel name id); the engine only passes it through
  uint64_t bytes = 0;  // copies and memsets
};

struct CompletedOp {
  ClientId client = 0;
  int device = 0;  // the client's device ordinal
  StreamId stream = 0;
  OpDesc desc;
  SimTime submitted;  // host clock at submission
  SimTime start;
  SimTime end;
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_op(const CompletedOp& op) = 0;
};

struct EngineConfig {
  SimTime launch_latency = SimTime::us(2);
};

class Engine {
 public:
  Engine(EngineConfig config, Observer* observer);

  // Streams are keyed by (client, stream id). A device's legacy default stream exists
  // implicitly; every other stream is announced before use.
  void create_stream(ClientId client, StreamId stream, int device, bool non_blocking);
  void destroy_stream(ClientId client, StreamId stream);
  void ensure_legacy_stream(ClientId client, StreamId stream, int device);

  // Enqueues an operation; returns its end time.
  SimTime submit(ClientId client, StreamId stream, SimTime host_time, const OpDesc& op);

  void record_event(ClientId client, EventId event, StreamId stream, SimTime host_time);
  void wait_event(ClientId client, StreamId stream, EventId event, SimTime host_time);

  // When the work a blocking call waits for is done. nullopt: the stream/event is unknown.
  std::optional<SimTime> stream_done(ClientId client, StreamId stream) const;
  std::optional<SimTime> event_done(ClientId client, EventId event) const;
  SimTime device_done(ClientId client, int device) const;
  SimTime client_done(ClientId client) const;

  // Latest end of any operation so far.
  SimTime horizon() const { return horizon_; }

 private:
  struct Stream {
    int device = 0;
    bool non_blocking = false;
    bool legacy = false;
    SimTime tail;  // end of the last operation, including zero-cost records and waits
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
  SimTime legacy_barrier(ClientId client, const Stream& s) const;
  SimTime place(ClientId client, StreamId id, Stream& s, SimTime host_time, SimTime cost);

  EngineConfig config_;
  Observer* observer_;
  std::map<StreamKey, Stream> streams_;
  // Streams per (client, device), to apply legacy-stream semantics and device synchronisation.
  std::map<DeviceKey, std::vector<StreamId>> device_streams_;
  std::map<DeviceKey, StreamId> legacy_of_;
  std::map<std::pair<ClientId, EventId>, SimTime> events_;
  SimTime horizon_;
};

}  // namespace phantora::sim
