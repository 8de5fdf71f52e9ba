// Streams, events and synchronisation (CUDA Runtime API "Stream Management" and
// "Event Management").
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "capture.hpp"
#include "context.hpp"
#include "pt_variants.hpp"

using namespace phantora;
using namespace phantora::shim;

namespace {

// cudaDeviceGetStreamPriorityRange on Hopper: 0 (least) to -5 (greatest).
constexpr int kLeastPriority = 0;
constexpr int kGreatestPriority = -5;

cudaError_t create_stream(cudaStream_t* out, unsigned flags, int priority) {
  if (out == nullptr) return set_error(cudaErrorInvalidValue);
  if (flags & ~static_cast<unsigned>(cudaStreamNonBlocking))
    return set_error(cudaErrorInvalidValue);
  auto* s = new CUstream_st();
  s->id = Runtime::get().next_stream_id();
  s->ordinal = current_device();
  s->device = physical_device(s->ordinal);
  s->flags = flags;
  s->priority = std::clamp(priority, kGreatestPriority, kLeastPriority);
  wire::StreamCreate c{
      s->id, s->device,
      (flags & cudaStreamNonBlocking) ? wire::kStreamNonBlocking : wire::kStreamBlocking,
      s->priority, 0};
  Runtime::get().submit(wire::RecordType::kStreamCreate, &c, sizeof(c));
  *out = s;
  return cudaSuccess;
}

// A query that finds work unfinished answers cudaErrorNotReady. A thread that queries streams or
// events in turn with no other CUDA call in between, and comes back to one it found unfinished,
// is polling: the real loop would spin until the first of them completes, so the thread's clock
// moves to that time (nccl-tests waits on each GPU's stream this way). A single query
// (PyTorch's allocator checks events this way) costs no wait.
//
// A loop with other calls between its queries is still a spin when none of them submits work
// or waits: PyTorch's NCCL watchdog, once its process group is shut down, re-queries each
// unfinished collective's end event behind a device guard (cudaSetDevice) without sleeping. In
// `model` and `zero` mode such a loop costs no simulated time and would never end; so the
// kQuerySpin-th query that finds one object unfinished (other objects' queries may come
// between), with no work submitted or waited for by the thread since the first, moves the
// clock to its completion, and so does every later unfinished answer until the thread submits
// or waits again. A count, not real time, keeps model mode deterministic; a thousand is far
// more than an allocator's re-checks of one event between launches.
constexpr int kQuerySpin = 1000;

// The spin rule above: counts this thread's unfinished answers per object since it last
// submitted or waited; true once the loop spins, after moving the clock to `done`.
bool spin_waits(const void* what, bool finished, SimTime done) {
  struct Spun {
    const void* what;
    int queries;  // unfinished answers since the thread's work count was spin_work
  };
  thread_local std::vector<Spun> spun;  // the objects a watchdog cycles through, one by one
  thread_local uint64_t spin_work = 0;
  thread_local bool spinning = false;  // since spin_work: every unfinished answer moves the clock
  if (finished) {
    // No longer counted: a watchdog that never submits keeps the list short.
    std::erase_if(spun, [&](const Spun& s) { return s.what == what; });
    return false;
  }
  const uint64_t work = Runtime::thread_work_count();
  if (work != spin_work) {
    spun.clear();
    spin_work = work;
    spinning = false;
  }
  auto it = std::find_if(spun.begin(), spun.end(), [&](const Spun& s) { return s.what == what; });
  if (it == spun.end()) it = spun.insert(spun.end(), Spun{what, 0});
  // Once the loop is known to spin, each object it finds unfinished is waited for in turn, as
  // the real loop would cycle until the last of them completes (a watchdog holds hundreds).
  if (!spinning && ++it->queries < kQuerySpin) return false;
  spinning = true;
  Runtime::get().advance_clock_to(done);
  return true;
}

// `done` is when the object's work ends, or with `exact` false a time it ends after (the query
// went on before the daemon knew the end: Runtime::query).
cudaError_t answer_poll(const void* what, SimTime done, bool exact) {
  struct Polled {
    const void* what;
    SimTime done;
  };
  thread_local std::vector<Polled> unfinished;  // since the thread's last other CUDA call
  thread_local uint64_t last_poll_call = 0;
  const uint64_t call_index = Runtime::thread_call_count();
  if (last_poll_call + 1 != call_index) unfinished.clear();
  last_poll_call = call_index;
  const auto finished = [&] { return exact && done <= now(); };
  if (spin_waits(what, finished(), done)) {
    unfinished.clear();
    return finished() ? cudaSuccess : cudaErrorNotReady;
  }
  if (finished()) return cudaSuccess;
  auto again = std::find_if(unfinished.begin(), unfinished.end(),
                            [&](const Polled& p) { return p.what == what; });
  if (again == unfinished.end()) {
    unfinished.push_back(Polled{what, done});
    return cudaErrorNotReady;
  }
  again->done = done;  // the latest word on it (a time it ends after moves on)
  SimTime first = done;
  for (const Polled& p : unfinished) first = std::min(first, p.done);
  unfinished.clear();
  // The first end, or as far as the daemon could say: no object is done before it.
  Runtime::get().advance_clock_to(first);
  return finished() ? cudaSuccess : cudaErrorNotReady;
}

wire::StreamRef ref(const CUstream_st* s) {
  return wire::StreamRef{s->id, s->device, 0};
}

cudaError_t capture_blocks_sync(const CUstream_st* s) {
  return s->capture != nullptr ? set_error(cudaErrorStreamCaptureUnsupported) : cudaSuccess;
}

cudaError_t cudaStreamSynchronize_impl(bool pt, cudaStream_t stream) {
  ApiCall call;
  CUstream_st* s = resolve_stream(stream, pt);
  if (cudaError_t e = capture_blocks_sync(s)) return e;
  const wire::StreamRef r = ref(s);
  Runtime::get().request(wire::RecordType::kStreamSync, &r, sizeof(r));
  return cudaSuccess;
}

cudaError_t cudaStreamQuery_impl(bool pt, cudaStream_t stream) {
  ApiCall call;
  CUstream_st* s = resolve_stream(stream, pt);
  if (s->capture != nullptr) return set_error(cudaErrorStreamCaptureUnsupported);
  const wire::StreamRef r = ref(s);
  // Ask when the stream drains without moving the host clock: the query itself does not wait.
  const auto done = Runtime::get().query(wire::RecordType::kStreamSync, &r, sizeof(r));
  return answer_poll(s, done.time, done.exact);
}

cudaError_t cudaEventRecord_impl(bool pt, cudaEvent_t event, cudaStream_t stream) {
  ApiCall call;
  if (event == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  CUstream_st* s = resolve_stream(stream, pt);
  if (s->capture != nullptr) {
    capture_event_record(event, s);
    return cudaSuccess;
  }
  event->capture = nullptr;
  event->recorded = true;
  event->device = s->device;
  wire::EventOp op{event->id, s->id, s->device, 0};
  Runtime::get().submit(wire::RecordType::kEventRecord, &op, sizeof(op));
  return cudaSuccess;
}

cudaError_t cudaEventRecordWithFlags_impl(bool pt, cudaEvent_t event, cudaStream_t stream,
                                          unsigned int /*flags: external only*/) {
  return cudaEventRecord_impl(pt, event, stream);
}

cudaError_t cudaStreamWaitEvent_impl(bool pt, cudaStream_t stream, cudaEvent_t event,
                                     unsigned int /*flags*/) {
  ApiCall call;
  if (event == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  CUstream_st* s = resolve_stream(stream, pt);
  if (event->capture != nullptr) {
    capture_wait_event(s, event);
    return cudaSuccess;
  }
  if (s->capture != nullptr)
    return cudaSuccess;  // an outside event is already complete for the graph
  wire::EventOp op{event->id, s->id, s->device, 0};
  Runtime::get().submit(wire::RecordType::kStreamWaitEvent, &op, sizeof(op));
  return cudaSuccess;
}

cudaError_t cudaStreamGetPriority_impl(bool pt, cudaStream_t stream, int* priority) {
  if (priority == nullptr) return set_error(cudaErrorInvalidValue);
  *priority = resolve_stream(stream, pt)->priority;
  return cudaSuccess;
}

cudaError_t cudaStreamGetFlags_impl(bool pt, cudaStream_t stream, unsigned int* flags) {
  if (flags == nullptr) return set_error(cudaErrorInvalidValue);
  *flags = resolve_stream(stream, pt)->flags;
  return cudaSuccess;
}

cudaError_t cudaStreamGetId_impl(bool pt, cudaStream_t stream, unsigned long long* id) {
  if (id == nullptr) return set_error(cudaErrorInvalidValue);
  *id = resolve_stream(stream, pt)->id;
  return cudaSuccess;
}

cudaError_t cudaStreamGetDevice_impl(bool pt, cudaStream_t stream, int* device) {
  if (device == nullptr) return set_error(cudaErrorInvalidValue);
  *device = resolve_stream(stream, pt)->ordinal;
  return cudaSuccess;
}

cudaError_t cudaLaunchHostFunc_impl(bool pt, cudaStream_t stream, cudaHostFn_t fn, void* data) {
  ApiCall call;
  if (fn == nullptr) return set_error(cudaErrorInvalidValue);
  CUstream_st* s = resolve_stream(stream, pt);
  if (s->capture != nullptr) return set_error(cudaErrorStreamCaptureUnsupported);
  const wire::StreamRef r = ref(s);
  Runtime::get().submit(wire::RecordType::kHostFunc, &r, sizeof(r));
  // The callback's stream position is simulated; the function itself runs now, on the calling
  // thread, since no GPU work it could wait for exists in real time. It must not call CUDA
  // (the CUDA documentation forbids that), so running it here cannot re-enter the shim.
  fn(data);
  return cudaSuccess;
}

}  // namespace

extern "C" {

cudaError_t cudaStreamCreate(cudaStream_t* stream) {
  ApiCall call;
  return create_stream(stream, cudaStreamDefault, 0);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
  ApiCall call;
  return create_stream(stream, flags, 0);
}

cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
  ApiCall call;
  return create_stream(stream, flags, priority);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int* least, int* greatest) {
  if (least != nullptr) *least = kLeastPriority;
  if (greatest != nullptr) *greatest = kGreatestPriority;
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  ApiCall call;
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) {
    return set_error(cudaErrorInvalidResourceHandle);
  }
  const wire::StreamRef r = ref(stream);
  Runtime::get().submit(wire::RecordType::kStreamDestroy, &r, sizeof(r));
  delete stream;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  ApiCall call;
  const int device = physical_device(current_device());
  wire::DeviceRef r{device, 0};
  Runtime::get().request(wire::RecordType::kDeviceSync, &r, sizeof(r));
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  ApiCall call;
  if (event == nullptr) return set_error(cudaErrorInvalidValue);
  auto* e = new CUevent_st();
  e->id = Runtime::get().next_event_id();
  e->flags = flags;
  e->device = physical_device(current_device());
  *event = e;
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (event == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  ApiCall call;
  if (event == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  if (!event->recorded) return cudaSuccess;
  wire::EventOp op{event->id, 0, event->device, 0};
  Runtime::get().request(wire::RecordType::kEventSync, &op, sizeof(op));
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  ApiCall call;
  if (event == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  if (!event->recorded) return cudaSuccess;
  wire::EventOp op{event->id, 0, event->device, 0};
  const auto done = Runtime::get().query(wire::RecordType::kEventSync, &op, sizeof(op));
  return answer_poll(event, done.time, done.exact);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  ApiCall call;
  if (ms == nullptr) return set_error(cudaErrorInvalidValue);
  if (start == nullptr || end == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  if ((start->flags | end->flags) & cudaEventDisableTiming)
    return set_error(cudaErrorInvalidResourceHandle);
  if (!start->recorded || !end->recorded) return set_error(cudaErrorInvalidResourceHandle);
  wire::EventOp a{start->id, 0, start->device, 0};
  wire::EventOp b{end->id, 0, end->device, 0};
  const SimTime ta = Runtime::get().request(wire::RecordType::kEventSync, &a, sizeof(a), false);
  const SimTime tb = Runtime::get().request(wire::RecordType::kEventSync, &b, sizeof(b), false);
  if (ta > now() || tb > now()) return set_error(cudaErrorNotReady);
  *ms = static_cast<float>((tb - ta).as_ms());
  return cudaSuccess;
}

}  // extern "C"

PHANTORA_DEFINE_PT(cudaStreamSynchronize, _ptsz, (cudaStream_t stream), (stream))
PHANTORA_DEFINE_PT(cudaStreamQuery, _ptsz, (cudaStream_t stream), (stream))
PHANTORA_DEFINE_PT(cudaEventRecord, _ptsz, (cudaEvent_t event, cudaStream_t stream),
                   (event, stream))
PHANTORA_DEFINE_PT(cudaEventRecordWithFlags, _ptsz,
                   (cudaEvent_t event, cudaStream_t stream, unsigned int flags),
                   (event, stream, flags))
PHANTORA_DEFINE_PT(cudaStreamWaitEvent, _ptsz,
                   (cudaStream_t stream, cudaEvent_t event, unsigned int flags),
                   (stream, event, flags))
PHANTORA_DEFINE_PT(cudaStreamGetPriority, _ptsz, (cudaStream_t stream, int* priority),
                   (stream, priority))
PHANTORA_DEFINE_PT(cudaStreamGetFlags, _ptsz, (cudaStream_t stream, unsigned int* flags),
                   (stream, flags))
PHANTORA_DEFINE_PT(cudaStreamGetId, _ptsz, (cudaStream_t stream, unsigned long long* id),
                   (stream, id))
PHANTORA_DEFINE_PT(cudaStreamGetDevice, _ptsz, (cudaStream_t stream, int* device), (stream, device))
PHANTORA_DEFINE_PT(cudaLaunchHostFunc, _ptsz, (cudaStream_t stream, cudaHostFn_t fn, void* data),
                   (stream, fn, data))
