#include "phantora/profiler/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include "recorded_launches.hpp"
#include "replay.hpp"

namespace phantora::profiler {
namespace {

// A stream and two events, destroyed with their owner.
struct Timer {
  const CudaApi& api;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;

  explicit Timer(const CudaApi& a) : api(a) {
    check(api, api.stream_create(&stream), "cudaStreamCreate");
    check(api, api.event_create(&start), "cudaEventCreate");
    check(api, api.event_create(&stop), "cudaEventCreate");
  }
  ~Timer() {
    api.event_destroy(stop);
    api.event_destroy(start);
    api.stream_destroy(stream);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
};

// GPU time of `launches` launches back to back between the timer's pair of events, in µs.
double time_launches(const CudaApi& api, Replay& replay, const Timer& t, uint64_t launches) {
  check(api, api.event_record(t.start, t.stream), "cudaEventRecord");
  for (uint64_t i = 0; i < launches; ++i) replay.launch(t.stream);
  check(api, api.event_record(t.stop, t.stream), "cudaEventRecord");
  check(api, api.event_synchronize(t.stop), "cudaEventSynchronize");
  float ms = 0;
  check(api, api.event_elapsed_time(&ms, t.start, t.stop), "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1000.0;
}

// Launches back to back until `ms` of GPU time has passed, in batches between two events that
// double in size, each at most what the time left needs at the rate measured so far.
void sustain(const CudaApi& api, Replay& replay, const Timer& t, unsigned ms) {
  const double target_us = ms * 1000.0;
  double elapsed_us = 0;
  uint64_t launched = 0, batch = 1;
  while (elapsed_us < target_us) {
    const double batch_us = time_launches(api, replay, t, batch);
    if (batch_us <= 0) return;  // takes no measurable time: nothing to sustain
    elapsed_us += batch_us;
    launched += batch;
    const double needed = std::ceil((target_us - elapsed_us) / (elapsed_us / launched));
    batch = std::max<uint64_t>(1, std::min<uint64_t>(2 * batch, static_cast<uint64_t>(needed)));
  }
}

std::vector<double> time_replay(const CudaApi& api, Replay& replay, const MeasureOptions& o) {
  Timer t(api);
  if (o.sustain_ms > 0) sustain(api, replay, t, o.sustain_ms);
  for (unsigned i = 0; i < o.warmup; ++i) replay.launch(t.stream);
  check(api, api.stream_synchronize(t.stream), "cudaStreamSynchronize (after warm-up)");
  std::vector<double> samples;
  samples.reserve(o.repetitions);
  for (unsigned i = 0; i < o.repetitions; ++i) samples.push_back(time_launches(api, replay, t, 1));
  return samples;
}

// Per-launch time of `sequence_length` launches between one pair of events, once per sequence.
std::vector<double> time_sequences(const CudaApi& api, Replay& replay, const MeasureOptions& o) {
  Timer t(api);
  std::vector<double> per_launch;
  for (unsigned s = 0; s < o.sequences; ++s)
    per_launch.push_back(time_launches(api, replay, t, o.sequence_length) / o.sequence_length);
  return per_launch;
}

// Whether the device still takes work after a failure: a one-byte allocation fails once a
// kernel's fault has made the context unusable.
bool device_usable(const CudaApi& api) {
  void* p = nullptr;
  if (api.malloc(&p, 1) != cudaSuccess) return false;
  api.free(p);
  return true;
}

}  // namespace

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

ProfileReport measure_signatures(const CudaApi& api, const std::vector<std::string>& signatures,
                                 const std::string& gpu_key, const MeasureOptions& options,
                                 const std::vector<LaunchRecord>& launches) {
  if (options.repetitions == 0) throw std::invalid_argument("repetitions must be at least 1");
  check(api, api.set_device(options.device), "cudaSetDevice");
  const kernels::Provenance provenance = read_provenance(api, options.device);
  RecordedLaunches recorded(api, launches);
  ProfileReport report;
  // Library calls before recorded kernels: a kernel replayed with zeroed inputs may fault and
  // take the device with it, and what was measured by then is kept.
  std::vector<std::string> order(signatures);
  std::stable_partition(order.begin(), order.end(),
                        [](const std::string& sig) { return replayed_by_library_call(sig); });
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& sig = order[i];
    try {
      ReplayChoice choice = make_replay(api, sig, &recorded);
      if (!choice.replay) {
        report.unsupported.push_back({sig, choice.not_measurable});
        continue;
      }
      std::vector<double> samples = time_replay(api, *choice.replay, options);
      std::vector<double> sequences;
      if (options.sequences > 0 && options.sequence_length > 0)
        sequences = time_sequences(api, *choice.replay, options);
      kernels::DbEntry row;
      row.gpu = gpu_key;
      row.signature = sig;
      row.stats = kernels::DurationStats::of_samples(samples);
      row.source = kernels::EntrySource::kMeasured;
      row.provenance = provenance;
      if (!sequences.empty()) {
        row.back_to_back = kernels::SequenceStats{options.sequence_length,
                                                  kernels::DurationStats::of_samples(sequences)};
      }
      report.rows.push_back(std::move(row));
      const double med = median(samples);
      report.measured.push_back({sig, std::move(samples), med, std::move(sequences)});
    } catch (const std::runtime_error& e) {
      report.failed.push_back({sig, e.what()});
      if (!device_usable(api)) {
        report.context_lost = sig;
        report.not_attempted.assign(order.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                    order.end());
        break;
      }
    }
  }
  return report;
}

kernels::DeviceFact measure_launch_round_trip(const CudaApi& api, const std::string& gpu_key,
                                              const MeasureOptions& options) {
  if (options.repetitions == 0) throw std::invalid_argument("repetitions must be at least 1");
  check(api, api.set_device(options.device), "cudaSetDevice");
  DeviceBuffer scratch(api, 4);
  check(api, api.stream_synchronize(nullptr), "cudaStreamSynchronize (scratch buffer)");
  Timer t(api);
  std::vector<double> samples;
  for (unsigned i = 0; i < options.warmup + options.repetitions; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the GPU goes idle
    const auto t0 = std::chrono::steady_clock::now();
    check(api, api.event_record(t.start, t.stream), "cudaEventRecord");
    check(api, api.memset_async(scratch.get(), 0, 4, t.stream), "cudaMemsetAsync");
    check(api, api.event_record(t.stop, t.stream), "cudaEventRecord");
    check(api, api.stream_synchronize(t.stream), "cudaStreamSynchronize");
    const auto t1 = std::chrono::steady_clock::now();
    float ms = 0;
    check(api, api.event_elapsed_time(&ms, t.start, t.stop), "cudaEventElapsedTime");
    const double host_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    if (i >= options.warmup) samples.push_back(std::max(0.0, host_us - ms * 1000.0));
  }
  kernels::DeviceFact f;
  f.gpu = gpu_key;
  f.name = std::string(kernels::kLaunchRoundTrip);
  f.stats = kernels::DurationStats::of_samples(samples);
  f.provenance = read_provenance(api, options.device);
  return f;
}

}  // namespace phantora::profiler
