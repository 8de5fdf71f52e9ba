// `phantora db profile`: measure signatures on this machine's GPU and write them to the kernel
// database, optionally running a job under `phantora run` first to learn what it launches.
// docs/kernels-db.md, "Measuring".
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace phantora::tools {

struct ProfileRequest {
  std::string db;
  std::string gpu;  // the preset the GPU is recorded as; must agree with the device when known
  unsigned sustain_ms = 500;  // GPU time of back-to-back launches before each is timed
  unsigned warmup = 5;
  unsigned repetitions = 20;
  unsigned sequences = 3;         // back-to-back sequences per signature (0: none)
  unsigned sequence_length = 10;  // launches in each
  int device = 0;
  std::optional<std::string> cuda_library;  // one library standing for runtime, cuBLAS, driver
  std::vector<std::string> job;             // run under `phantora run` first, when given
  std::string signatures_file;              // more signatures to measure, one per line
  unsigned hosts = 1, gpus_per_host = 1;    // the job's simulated cluster
};

// Where `db profile -- COMMAND` records the job's launches for the database file `db`.
std::string recorded_launches_dir(const std::string& db);

// Exit status: 0 every replayable signature measured; 3 no GPU (nothing could be loaded);
// 5 some measurements failed (the others were written); 6 a replay left the device unusable
// (what was measured is written; the signature is skipped by later profiles, which measure
// the rest); the job's status when it failed.
int run_db_profile(const ProfileRequest& request);

}  // namespace phantora::tools
