// Measuring signatures on a GPU: each replayed on scratch buffers, timed with CUDA events after
// warm-up launches, one event pair per repetition. docs/kernels-db.md, "Measuring".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "phantora/kernels/kernel_db.hpp"
#include "phantora/profiler/cuda_api.hpp"
#include "phantora/profiler/launch_records.hpp"

namespace phantora::profiler {

struct MeasureOptions {
  // First, launches back to back for this much GPU time (0: none): the part settles at the
  // clock its power limit allows under this work, as in a training step, instead of being timed
  // in a burst at its boost clock (docs/kernels-db.md, "Measuring").
  unsigned sustain_ms = 0;
  unsigned warmup = 5;        // untimed launches first: clocks ramp up, caches and cuBLAS warm
  unsigned repetitions = 20;  // timed launches, each between its own pair of events
  int device = 0;
  // Then `sequences` runs of `sequence_length` launches back to back between one pair of events
  // (DbEntry::back_to_back); 0 sequences: none.
  unsigned sequence_length = 10;
  unsigned sequences = 3;
};

struct Measured {
  std::string signature;
  std::vector<double> samples_us;  // in launch order
  double median_us = 0;
  std::vector<double> back_to_back_us;  // per launch, one value per sequence
};

struct NotMeasured {
  std::string signature;
  std::string reason;
};

struct ProfileReport {
  std::vector<kernels::DbEntry> rows;  // one per measured signature, source `measured`
  std::vector<Measured> measured;
  std::vector<NotMeasured> unsupported;  // families or shapes the measurer cannot replay
  std::vector<NotMeasured> failed;       // replay attempted, the library reported an error
  // A failure after which the device is unusable (a replayed kernel faulted: CUDA errors such
  // as an illegal address are sticky for the process): the signature, and those left untried.
  std::string context_lost;
  std::vector<std::string> not_attempted;
};

// The device and software that measured: device name, driver API version, runtime and cuBLAS
// versions and the SM and memory clocks, recorded now (UTC).
kernels::Provenance read_provenance(const CudaApi& api, int device);

// Measures each signature on `options.device`, those replayed by a library call (GEMMs, copies,
// memsets) first; rows are keyed by `gpu_key`. Attention,
// memory-bound and kernel signatures are measured by replaying the launch `launches` recorded
// for them (launch_records.hpp); the others need no recording.
ProfileReport measure_signatures(const CudaApi& api, const std::vector<std::string>& signatures,
                                 const std::string& gpu_key, const MeasureOptions& options,
                                 const std::vector<LaunchRecord>& launches = {});

double median(std::vector<double> samples);

// GEMMs, copies and memsets: replayed by a library call of their shape; every other signature
// needs a recorded launch (launch_records.hpp).
bool replayed_by_library_call(std::string_view signature);

// The launch round trip of the idle GPU (kernels::kLaunchRoundTrip): `repetitions` times, after
// 1 ms of host idleness, one 4-byte cudaMemsetAsync between two events on a fresh stream, timed
// on the host from the call to cudaStreamSynchronize's return, less the events' time for it.
kernels::DeviceFact measure_launch_round_trip(const CudaApi& api, const std::string& gpu_key,
                                              const MeasureOptions& options);

}  // namespace phantora::profiler
