#include "phantora/profiler/measure.hpp"

#include <algorithm>
#include <stdexcept>

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

std::vector<double> time_replay(const CudaApi& api, Replay& replay, const MeasureOptions& o) {
  Timer t(api);
  for (unsigned i = 0; i < o.warmup; ++i) replay.launch(t.stream);
  check(api, api.stream_synchronize(t.stream), "cudaStreamSynchronize (after warm-up)");
  std::vector<double> samples;
  samples.reserve(o.repetitions);
  for (unsigned i = 0; i < o.repetitions; ++i) {
    check(api, api.event_record(t.start, t.stream), "cudaEventRecord");
    replay.launch(t.stream);
    check(api, api.event_record(t.stop, t.stream), "cudaEventRecord");
    check(api, api.event_synchronize(t.stop), "cudaEventSynchronize");
    float ms = 0;
    check(api, api.event_elapsed_time(&ms, t.start, t.stop), "cudaEventElapsedTime");
    samples.push_back(static_cast<double>(ms) * 1000.0);
  }
  return samples;
}

}  // namespace

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  return n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

ProfileReport measure_signatures(const CudaApi& api, const std::vector<std::string>& signatures,
                                 const std::string& gpu_key, const MeasureOptions& options) {
  if (options.repetitions == 0) throw std::invalid_argument("repetitions must be at least 1");
  check(api, api.set_device(options.device), "cudaSetDevice");
  const kernels::Provenance provenance = read_provenance(api, options.device);
  ProfileReport report;
  for (const std::string& sig : signatures) {
    try {
      ReplayChoice choice = make_replay(api, sig);
      if (!choice.replay) {
        report.unsupported.push_back({sig, choice.not_measurable});
        continue;
      }
      std::vector<double> samples = time_replay(api, *choice.replay, options);
      kernels::DbEntry row;
      row.gpu = gpu_key;
      row.signature = sig;
      row.stats = kernels::DurationStats::of_samples(samples);
      row.source = kernels::EntrySource::kMeasured;
      row.provenance = provenance;
      report.rows.push_back(std::move(row));
      const double med = median(samples);
      report.measured.push_back({sig, std::move(samples), med});
    } catch (const std::runtime_error& e) {
      report.failed.push_back({sig, e.what()});
    }
  }
  return report;
}

}  // namespace phantora::profiler
