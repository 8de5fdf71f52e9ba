// The launches a run recorded (launch_records.hpp), by the signature each stands for, and the
// modules their images were loaded into: shared by the signatures of one profile, so that an
// image is loaded once however many of its kernels are measured.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "phantora/profiler/cuda_api.hpp"
#include "phantora/profiler/launch_records.hpp"

namespace phantora::profiler {

class RecordedLaunches {
 public:
  RecordedLaunches(const CudaApi& api, const std::vector<LaunchRecord>& records);
  ~RecordedLaunches();
  RecordedLaunches(const RecordedLaunches&) = delete;
  RecordedLaunches& operator=(const RecordedLaunches&) = delete;

  // The launch recorded first for `signature`; null when none was.
  const LaunchRecord* find(const std::string& signature) const;
  // The record's kernel on the current device, loading its image on first use; throws
  // std::runtime_error when the image cannot be read or the driver refuses it.
  CUfunction function(const LaunchRecord& r);

 private:
  const CudaApi& api_;
  std::map<std::string, const LaunchRecord*> by_signature_;
  std::map<std::string, CUmodule> modules_;  // image path -> loaded module
};

}  // namespace phantora::profiler
