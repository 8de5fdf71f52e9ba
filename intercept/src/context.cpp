#include "context.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

namespace phantora::shim {
namespace {

// CUDA_VISIBLE_DEVICES: a comma-separated list of indices or GPU UUID prefixes; parsing stops at
// the first invalid entry, as the real driver does.
std::vector<int> parse_visible(int gpus_per_host, int host) {
  std::vector<int> visible;
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (env == nullptr) {
    for (int i = 0; i < gpus_per_host; ++i) visible.push_back(i);
    return visible;
  }
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    int index = -1;
    if (item.rfind("GPU-", 0) == 0) {
      // Our UUIDs end with the host and device index (see device_props.cpp); match by prefix.
      for (int i = 0; i < gpus_per_host && index < 0; ++i) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), "GPU-%08x",
                      0x50480000u | static_cast<unsigned>(host << 8) | static_cast<unsigned>(i));
        if (std::strncmp(buf, item.c_str(), std::min(item.size(), std::strlen(buf))) == 0)
          index = i;
      }
    } else {
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (end != item.c_str() && *end == '\0') index = static_cast<int>(v);
    }
    if (index < 0 || index >= gpus_per_host) break;
    visible.push_back(index);
  }
  return visible;
}

const std::vector<int>& visible() {
  static const std::vector<int> v = [] {
    const auto& w = Runtime::get().welcome();
    return parse_visible(w.gpus_per_host, Runtime::get().host());
  }();
  return v;
}

struct ThreadState {
  int device = 0;
  cudaError_t last_error = cudaSuccess;
  CUstream_st* per_thread[wire::kMaxDevicesPerHost] = {};
};
thread_local ThreadState t_state;

CUstream_st* legacy_stream(int ordinal) {
  static CUstream_st streams[wire::kMaxDevicesPerHost];
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < wire::kMaxDevicesPerHost; ++i) {
      streams[i].ordinal = i;
      streams[i].legacy = true;
    }
  });
  CUstream_st* s = &streams[ordinal];
  s->device = physical_device(ordinal);
  s->id = wire::kLegacyStreamBase + static_cast<uint64_t>(s->device);
  return s;
}

CUstream_st* per_thread_stream(int ordinal) {
  CUstream_st*& s = t_state.per_thread[ordinal];
  if (s == nullptr) {
    // A per-thread default stream is a blocking stream of its own: it synchronises with the
    // legacy default stream but not with other threads' streams.
    s = new CUstream_st();
    s->id = Runtime::get().next_stream_id();
    s->ordinal = ordinal;
    s->device = physical_device(ordinal);
    wire::StreamCreate c{s->id, s->device, wire::kStreamBlocking, 0, 0};
    Runtime::get().submit(wire::RecordType::kStreamCreate, &c, sizeof(c));
  }
  return s;
}

}  // namespace

int visible_device_count() {
  return static_cast<int>(visible().size());
}

int physical_device(int ordinal) {
  const auto& v = visible();
  if (ordinal < 0 || ordinal >= static_cast<int>(v.size())) return -1;
  return v[ordinal];
}

int current_device() {
  return t_state.device;
}
void set_current_device(int ordinal) {
  t_state.device = ordinal;
}

CUstream_st* resolve_stream(cudaStream_t stream, bool per_thread_default) {
  if (stream == nullptr) {
    return per_thread_default ? per_thread_stream(current_device())
                              : legacy_stream(current_device());
  }
  if (stream == cudaStreamLegacy) return legacy_stream(current_device());
  if (stream == cudaStreamPerThread) return per_thread_stream(current_device());
  return stream;
}

CUstream_st* resolve_stream_on(int ordinal, cudaStream_t stream) {
  const int saved = current_device();
  set_current_device(ordinal);
  CUstream_st* s = resolve_stream(stream, false);
  set_current_device(saved);
  return s;
}

cudaError_t set_error(cudaError_t e) {
  if (e != cudaSuccess) t_state.last_error = e;
  return e;
}

cudaError_t take_last_error() {
  const cudaError_t e = t_state.last_error;
  t_state.last_error = cudaSuccess;
  return e;
}

cudaError_t peek_last_error() {
  return t_state.last_error;
}

}  // namespace phantora::shim
