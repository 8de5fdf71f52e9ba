// sim::Engine: stream FIFO order, events, cross-stream waits, the legacy default stream and
// synchronisation answers. Every expected time is worked out by hand next to the assertion,
// from the rule in engine.hpp:
//   start = max(host clock + launch latency, end of the previous op on the stream,
//               events waited on, legacy-stream barrier);   end = start + cost.
#include "phantora/simcore/engine.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace phantora::sim {
namespace {

constexpr SimTime us(double v) {
  return SimTime::us(v);
}

// Launch latency of every test below: 4 µs, the `phantora run` default.
constexpr SimTime kLatency = SimTime::us(4);

constexpr StreamId kLegacy0 = 1;  // wire::kLegacyStreamBase + device 0
constexpr StreamId kLegacy1 = 2;  // ... + device 1
constexpr StreamId kS1 = 1u << 16;
constexpr StreamId kS2 = kS1 + 1;
constexpr StreamId kS3 = kS1 + 2;

class Recorder : public Observer {
 public:
  void on_op(const CompletedOp& op) override { ops.push_back(op); }
  // No deferred operations in these tests.
  void on_deferred_ready(ClientId, StreamId, uint64_t, SimTime) { ADD_FAILURE(); }
  std::vector<CompletedOp> ops;
};

OpDesc kernel(double cost_us, uint32_t label = 0) {
  return OpDesc{OpKind::kKernel, us(cost_us), CostSource::kPinned, label, 0};
}

class EngineTest : public ::testing::Test {
 protected:
  Recorder rec;
  Engine engine{EngineConfig{kLatency}, &rec};
};

TEST_F(EngineTest, StreamIsFifoAndStartsAfterLaunchLatency) {
  engine.create_stream(0, kS1, 0, false);
  // Host clock 0: first op starts at 0 + 4 = 4, ends 4 + 10 = 14.
  EXPECT_EQ(engine.submit(0, kS1, us(0), kernel(10)), us(14));
  // Submitted at host 1 µs: host bound 1 + 4 = 5 < previous end 14, so it queues: 14 → 34.
  EXPECT_EQ(engine.submit(0, kS1, us(1), kernel(20)), us(34));
  // Submitted late, at host 100 µs: the stream is idle, so it starts at 104 and ends at 109.
  EXPECT_EQ(engine.submit(0, kS1, us(100), kernel(5)), us(109));
  ASSERT_EQ(rec.ops.size(), 3u);
  EXPECT_EQ(rec.ops[0].start, us(4));
  EXPECT_EQ(rec.ops[1].start, us(14));
  EXPECT_EQ(rec.ops[1].submitted, us(1));
  EXPECT_EQ(rec.ops[2].start, us(104));
  EXPECT_EQ(engine.stream_done(0, kS1), us(109));
  EXPECT_EQ(engine.horizon(), us(109));
}

TEST_F(EngineTest, IndependentStreamsOverlap) {
  engine.create_stream(0, kS1, 0, false);
  engine.create_stream(0, kS2, 0, false);
  // Both submitted at host 0 on different streams: both start at 4.
  EXPECT_EQ(engine.submit(0, kS1, us(0), kernel(100)), us(104));
  EXPECT_EQ(engine.submit(0, kS2, us(0), kernel(250)), us(254));
  EXPECT_EQ(rec.ops[1].start, us(4));
  // Device synchronisation waits for the later of the two: 254.
  EXPECT_EQ(engine.device_done(0, 0), us(254));
}

TEST_F(EngineTest, ZeroCostOpsStillObeyLaunchLatency) {
  engine.create_stream(0, kS1, 0, false);
  // An event record is a zero-cost op: it completes at host 7 + 4 = 11 on an idle stream.
  engine.record_event(0, 42, kS1, us(7));
  EXPECT_EQ(engine.event_done(0, 42), us(11));
  EXPECT_EQ(engine.stream_done(0, kS1), us(11));
}

TEST_F(EngineTest, EventRecordMarksEndOfEarlierWork) {
  engine.create_stream(0, kS1, 0, false);
  engine.record_event(0, 1, kS1, us(0));     // at 4
  engine.submit(0, kS1, us(0), kernel(30));  // 4 → 34
  engine.submit(0, kS1, us(0), kernel(20));  // 34 → 54
  engine.record_event(0, 2, kS1, us(0));     // 54
  EXPECT_EQ(engine.event_done(0, 1), us(4));
  EXPECT_EQ(engine.event_done(0, 2), us(54));
  // Elapsed between the events = 30 + 20 = 50 µs exactly.
  EXPECT_EQ(*engine.event_done(0, 2) - *engine.event_done(0, 1), us(50));
}

TEST_F(EngineTest, ReRecordingAnEventMovesIt) {
  engine.create_stream(0, kS1, 0, false);
  engine.submit(0, kS1, us(0), kernel(10));  // 4 → 14
  engine.record_event(0, 5, kS1, us(0));     // 14
  engine.submit(0, kS1, us(0), kernel(10));  // 14 → 24
  engine.record_event(0, 5, kS1, us(0));     // 24: the latest record wins
  EXPECT_EQ(engine.event_done(0, 5), us(24));
}

TEST_F(EngineTest, UnknownEventAndStreamAnswerNullopt) {
  EXPECT_EQ(engine.event_done(0, 99), std::nullopt);
  EXPECT_EQ(engine.stream_done(0, kS1), std::nullopt);
  EXPECT_EQ(engine.device_done(0, 0), SimTime::zero());
}

TEST_F(EngineTest, CrossStreamWaitEvent) {
  engine.create_stream(0, kS1, 0, false);
  engine.create_stream(0, kS2, 0, false);
  engine.submit(0, kS1, us(0), kernel(100));  // s1: 4 → 104
  engine.record_event(0, 1, kS1, us(0));      // event at 104
  engine.wait_event(0, kS2, 1, us(0));        // s2 waits for 104
  // s2's kernel cannot start before 104 although its own host bound is 4: 104 → 114.
  EXPECT_EQ(engine.submit(0, kS2, us(0), kernel(10)), us(114));
  EXPECT_EQ(rec.ops.back().start, us(104));
}

TEST_F(EngineTest, WaitOnEventCapturesRecordAtWaitTime) {
  engine.create_stream(0, kS1, 0, false);
  engine.create_stream(0, kS2, 0, false);
  engine.submit(0, kS1, us(0), kernel(100));  // s1: 4 → 104
  engine.record_event(0, 1, kS1, us(0));      // 104
  engine.wait_event(0, kS2, 1, us(0));        // s2 waits for 104
  // Re-recording the event later does not move a wait that was already enqueued (CUDA waits
  // for the record that was most recent when cudaStreamWaitEvent was called).
  engine.submit(0, kS1, us(0), kernel(500));  // s1: 104 → 604
  engine.record_event(0, 1, kS1, us(0));      // 604
  EXPECT_EQ(engine.submit(0, kS2, us(0), kernel(10)), us(114));
}

TEST_F(EngineTest, WaitOnNeverRecordedEventIsNoOp) {
  engine.create_stream(0, kS1, 0, false);
  engine.wait_event(0, kS1, 77, us(0));  // zero-cost op at 4; no dependency
  EXPECT_EQ(engine.submit(0, kS1, us(0), kernel(10)), us(14));
}

TEST_F(EngineTest, WaitEventOnEarlierEventDoesNotDelay) {
  engine.create_stream(0, kS1, 0, false);
  engine.create_stream(0, kS2, 0, false);
  engine.record_event(0, 1, kS1, us(0));     // 4
  engine.submit(0, kS2, us(0), kernel(50));  // s2: 4 → 54
  engine.wait_event(0, kS2, 1, us(0));       // already satisfied: tail stays 54
  EXPECT_EQ(engine.submit(0, kS2, us(0), kernel(1)), us(55));
}

// --- legacy default stream --------------------------------------------------------------

TEST_F(EngineTest, LegacyStreamWaitsForEarlierBlockingStreamWork) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, false);
  engine.create_stream(0, kS2, 0, false);
  engine.submit(0, kS1, us(0), kernel(100));  // 4 → 104
  engine.submit(0, kS2, us(0), kernel(250));  // 4 → 254
  // Legacy work waits for both blocking streams: starts at 254, ends 304 (the two_streams
  // program's figure).
  EXPECT_EQ(engine.submit(0, kLegacy0, us(0), kernel(50)), us(304));
  EXPECT_EQ(rec.ops.back().start, us(254));
}

TEST_F(EngineTest, BlockingStreamWaitsForEarlierLegacyWork) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, false);
  engine.submit(0, kLegacy0, us(0), kernel(80));  // 4 → 84
  // A blocking stream's next op waits for the legacy stream: 84 → 94.
  EXPECT_EQ(engine.submit(0, kS1, us(0), kernel(10)), us(94));
  EXPECT_EQ(rec.ops.back().start, us(84));
}

TEST_F(EngineTest, LegacyBarrierOnlyCoversEarlierWork) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, false);
  engine.submit(0, kLegacy0, us(0), kernel(10));  // legacy: 4 → 14
  engine.submit(0, kS1, us(0), kernel(10));       // s1 waits: 14 → 24
  // Work put on s1 *after* the legacy op does not hold the legacy op back, and later legacy
  // work waits for it: the next legacy op starts at 24 (s1's tail), ends 29.
  EXPECT_EQ(engine.submit(0, kLegacy0, us(0), kernel(5)), us(29));
}

TEST_F(EngineTest, NonBlockingStreamIgnoresLegacyStreamBothWays) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, /*non_blocking=*/true);
  engine.submit(0, kLegacy0, us(0), kernel(80));  // legacy 4 → 84
  // The non-blocking stream does not wait for legacy work: 4 → 14.
  EXPECT_EQ(engine.submit(0, kS1, us(0), kernel(10)), us(14));
  engine.submit(0, kS1, us(0), kernel(1000));  // s1: 14 → 1014
  // And legacy work does not wait for the non-blocking stream: 84 → 94.
  EXPECT_EQ(engine.submit(0, kLegacy0, us(0), kernel(10)), us(94));
  // Device synchronisation still covers the non-blocking stream.
  EXPECT_EQ(engine.device_done(0, 0), us(1014));
}

TEST_F(EngineTest, LegacyStreamsOfOtherDevicesAreIndependent) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.ensure_legacy_stream(0, kLegacy1, 1);
  engine.create_stream(0, kS1, 1, false);
  engine.submit(0, kS1, us(0), kernel(500));  // device 1 stream: 4 → 504
  // Device 0's legacy stream does not wait for device 1's work: 4 → 14.
  EXPECT_EQ(engine.submit(0, kLegacy0, us(0), kernel(10)), us(14));
  // Device 1's legacy stream does: 504 → 514.
  EXPECT_EQ(engine.submit(0, kLegacy1, us(0), kernel(10)), us(514));
  EXPECT_EQ(engine.device_done(0, 0), us(14));
  EXPECT_EQ(engine.device_done(0, 1), us(514));
}

TEST_F(EngineTest, LegacyEventRecordWaitsForBlockingStreams) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, false);
  engine.submit(0, kS1, us(0), kernel(40));  // 4 → 44
  // A record on the legacy stream is legacy work too: it completes at 44, not 4.
  engine.record_event(0, 9, kLegacy0, us(0));
  EXPECT_EQ(engine.event_done(0, 9), us(44));
}

TEST_F(EngineTest, EnsureLegacyStreamIsIdempotent) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.submit(0, kLegacy0, us(0), kernel(10));  // 4 → 14
  engine.ensure_legacy_stream(0, kLegacy0, 0);    // must not reset the stream
  EXPECT_EQ(engine.stream_done(0, kLegacy0), us(14));
  EXPECT_EQ(engine.submit(0, kLegacy0, us(0), kernel(10)), us(24));
}

TEST_F(EngineTest, ClientsAreIsolated) {
  // The same stream and event ids in two processes are different objects.
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.ensure_legacy_stream(1, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, false);
  engine.create_stream(1, kS1, 0, false);
  engine.submit(0, kS1, us(0), kernel(100));  // client 0: 4 → 104
  engine.record_event(0, 1, kS1, us(0));      // client 0 event 1 at 104
  // Client 1's legacy stream does not wait for client 0's blocking stream: 4 → 14.
  EXPECT_EQ(engine.submit(1, kLegacy0, us(0), kernel(10)), us(14));
  // Client 1's event 1 was never recorded.
  EXPECT_EQ(engine.event_done(1, 1), std::nullopt);
  engine.wait_event(1, kS1, 1, us(0));
  // s1 of client 1: legacy barrier 14, so 14 → 15; unaffected by client 0's event at 104.
  EXPECT_EQ(engine.submit(1, kS1, us(0), kernel(1)), us(15));
  EXPECT_EQ(engine.client_done(0), us(104));
  EXPECT_EQ(engine.client_done(1), us(15));
}

// --- synchronisation answers ------------------------------------------------------------

TEST_F(EngineTest, StreamSyncOnLegacyStreamIsItsOwnTail) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, false);
  engine.submit(0, kLegacy0, us(0), kernel(10));  // 4 → 14
  engine.submit(0, kS1, us(0), kernel(100));      // 14 → 114
  // cudaStreamSynchronize(0) waits for the legacy stream's own work: 14.
  EXPECT_EQ(engine.stream_done(0, kLegacy0), us(14));
  EXPECT_EQ(engine.stream_done(0, kS1), us(114));
  EXPECT_EQ(engine.device_done(0, 0), us(114));
}

TEST_F(EngineTest, DestroyedStreamStillCountsForDeviceSync) {
  engine.create_stream(0, kS1, 0, false);
  engine.create_stream(0, kS2, 0, false);
  engine.submit(0, kS1, us(0), kernel(300));  // 4 → 304
  engine.submit(0, kS2, us(0), kernel(10));   // 4 → 14
  engine.destroy_stream(0, kS1);
  // cudaStreamDestroy lets queued work finish: device sync still waits until 304.
  EXPECT_EQ(engine.device_done(0, 0), us(304));
  EXPECT_EQ(engine.client_done(0), us(304));
}

TEST_F(EngineTest, DestroyedBlockingStreamStillHoldsBackLegacyWork) {
  engine.ensure_legacy_stream(0, kLegacy0, 0);
  engine.create_stream(0, kS1, 0, false);
  engine.submit(0, kS1, us(0), kernel(300));  // 4 → 304
  engine.destroy_stream(0, kS1);
  // Its work was submitted before the legacy op, so the legacy op waits: 304 → 314.
  EXPECT_EQ(engine.submit(0, kLegacy0, us(0), kernel(10)), us(314));
}

TEST_F(EngineTest, UnknownOrDuplicateStreamsAreRejected) {
  EXPECT_THROW(engine.submit(0, kS3, us(0), kernel(1)), std::invalid_argument);
  EXPECT_THROW(engine.destroy_stream(0, kS3), std::invalid_argument);
  EXPECT_THROW(engine.record_event(0, 1, kS3, us(0)), std::invalid_argument);
  engine.create_stream(0, kS3, 0, false);
  EXPECT_THROW(engine.create_stream(0, kS3, 0, false), std::invalid_argument);
}

TEST_F(EngineTest, ObserverSeesEveryOpWithItsDevice) {
  engine.create_stream(3, kS1, 2, false);
  engine.submit(3, kS1, us(10), OpDesc{OpKind::kCopy, us(7), CostSource::kModelled, 0, 4096});
  ASSERT_EQ(rec.ops.size(), 1u);
  const CompletedOp& op = rec.ops[0];
  EXPECT_EQ(op.client, 3u);
  EXPECT_EQ(op.device, 2);
  EXPECT_EQ(op.stream, kS1);
  EXPECT_EQ(op.desc.kind, OpKind::kCopy);
  EXPECT_EQ(op.desc.bytes, 4096u);
  EXPECT_EQ(op.submitted, us(10));
  EXPECT_EQ(op.start, us(14));  // 10 + 4
  EXPECT_EQ(op.end, us(21));    // 14 + 7
}

TEST(EngineConfigTest, LaunchLatencyIsConfigurable) {
  Engine engine(EngineConfig{SimTime::ns(1500)}, nullptr);
  engine.create_stream(0, kS1, 0, false);
  // 0 + 1.5 + 2 = 3.5 µs; also checks a null observer is allowed.
  EXPECT_EQ(engine.submit(0, kS1, us(0), kernel(2)), SimTime::ns(3500));
}

}  // namespace
}  // namespace phantora::sim
