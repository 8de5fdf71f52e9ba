#include "db_profile.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_db.hpp"
#include "phantora/kernels/op_desc.hpp"
#include "phantora/profiler/launch_records.hpp"
#include "phantora/profiler/measure.hpp"

namespace phantora::tools {
namespace {

// The preset whose device name is exactly what the GPU reports; null when none is.
const kernels::GpuPreset* preset_of_device(const std::string& device_name) {
  for (const auto& p : kernels::GpuCatalog::builtin().presets()) {
    if (p.device_name() == device_name) return &p;
  }
  return nullptr;
}

// Rows are keyed by the GPU that measured them, never by a model it is not: --gpu may name the
// preset of a device the catalog does not know by name, and must agree with one it does.
std::string gpu_key_for(const std::string& device_name, const std::string& requested) {
  const kernels::GpuPreset* found = preset_of_device(device_name);
  if (requested.empty()) {
    if (found == nullptr) {
      throw kernels::DataError(fmt::format(
          "the GPU reports itself as '{}', which no preset has as its device name; say which "
          "preset it is with --gpu (see `phantora gpus`)",
          device_name));
    }
    return found->key;
  }
  const std::string key = kernels::GpuCatalog::builtin().find(requested).key;
  if (found != nullptr && found->key != key) {
    throw kernels::DataError(fmt::format(
        "--gpu {} disagrees with the GPU, which reports itself as '{}' ({}); measured rows of "
        "one GPU model never stand for another (use `db merge --rescale-from` for that)",
        requested, device_name, found->key));
  }
  return key;
}

std::string launches_dir(const ProfileRequest& r) {
  return recorded_launches_dir(r.db);
}

// Signatures whose replay left the device unusable, one per line, appended by each profile.
std::string lost_device_file(const ProfileRequest& r) {
  return r.db + ".profile-lost-device.txt";
}

std::set<std::string> read_lost_device(const ProfileRequest& r) {
  std::set<std::string> out;
  std::ifstream in(lost_device_file(r));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.insert(line);
  }
  return out;
}

// Runs the job under `phantora run --kernel-db DB`, so that what it launches and the database
// lacks is recorded in the database's missing table. Returns the run's exit status.
int run_job(const ProfileRequest& r, const std::string& gpu_key) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string out = r.db + ".profile-run";
  std::vector<std::string> args{self,
                                "run",
                                "--gpu",
                                gpu_key,
                                "--hosts",
                                std::to_string(r.hosts),
                                "--gpus-per-host",
                                std::to_string(r.gpus_per_host),
                                "--kernel-db",
                                r.db,
                                "--out",
                                out,
                                "--"};
  args.insert(args.end(), r.job.begin(), r.job.end());
  fmt::print(stderr, "phantora: running the job under the simulator to list its launches: {}\n",
             fmt::join(args, " "));
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed for the profiled job");
  if (pid == 0) {
    // The job's launches, with their arguments, for replaying the ones the database lacks.
    setenv("PHANTORA_RECORD_LAUNCHES", launches_dir(r).c_str(), 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Canonical signatures, one per line; blank lines and lines starting with # are skipped.
std::vector<std::string> read_signatures(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw kernels::DataError(fmt::format("{}: cannot read", path));
  std::vector<std::string> out;
  size_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (!kernels::is_canonical_signature(line)) {
      throw kernels::DataError(fmt::format(
          "{}:{}: '{}' is not a canonical signature (docs/kernels-db.md, \"Signatures\")", path,
          line_no, line));
    }
    out.push_back(line);
  }
  return out;
}

void print_report(const profiler::ProfileReport& r) {
  for (const auto& m : r.measured) {
    const auto& s = r.rows[&m - r.measured.data()].stats;
    const double b2b = m.back_to_back_us.empty() ? 0 : profiler::median(m.back_to_back_us);
    fmt::print(
        "measured  median {:>10.3f} us  min {:>10.3f}  max {:>10.3f}  n {:>3}  back to back "
        "{:>10.3f} us  {}\n",
        m.median_us, s.min_us, s.max_us, s.count, b2b, m.signature);
  }
  // Unsupported signatures grouped by reason: a job has many kernels of one family.
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& u : r.unsupported) by_reason[u.reason].push_back(u.signature);
  for (const auto& [reason, sigs] : by_reason) {
    fmt::print("not measured ({} signatures): {}\n  e.g. {}\n", sigs.size(), reason, sigs.front());
  }
  for (const auto& f : r.failed) fmt::print("FAILED    {}\n  {}\n", f.signature, f.reason);
}

}  // namespace

// Beside the profiled run's outputs.
std::string recorded_launches_dir(const std::string& db) {
  return db + ".profile-run/launches";
}

int run_db_profile(const ProfileRequest& r) {
  profiler::CudaApi api;
  try {
    api = profiler::load_cuda_api(r.cuda_library ? profiler::CudaLibraries::single(*r.cuda_library)
                                                 : profiler::CudaLibraries{});
  } catch (const std::runtime_error& e) {
    fmt::print(stderr,
               "phantora: db profile needs a real NVIDIA GPU and its CUDA libraries: {}\n"
               "Run it where a GPU is present; replaying a database needs no GPU.\n",
               e.what());
    return 3;
  }
  kernels::Provenance device;
  try {
    device = profiler::read_provenance(api, r.device);
  } catch (const std::runtime_error& e) {
    fmt::print(stderr, "phantora: db profile found no usable GPU: {}\n", e.what());
    return 3;
  }
  const std::string gpu = gpu_key_for(device.device_name, r.gpu);
  fmt::print(stderr, "phantora: measuring on {} ({}; {}), recorded as {}\n", device.device_name,
             device.driver_version, device.library_versions, gpu);

  std::vector<profiler::LaunchRecord> launches;
  if (!r.job.empty()) {
    std::filesystem::remove_all(launches_dir(r));  // this job's launches, not a previous one's
    const int status = run_job(r, gpu);
    if (status != 0) {
      fmt::print(stderr,
                 "phantora: the job failed under the simulator (status {}); nothing "
                 "was measured\n",
                 status);
      return status;
    }
  }
  // The last profiled job's launches (this one's, or an earlier one's when only the missing
  // table is measured again).
  if (std::filesystem::is_directory(launches_dir(r))) {
    launches = profiler::read_launch_records(launches_dir(r));
    fmt::print(stderr, "phantora: the job's launches recorded in {}: {} distinct\n",
               launches_dir(r), launches.size());
  }
  if (r.job.empty() && r.signatures_file.empty() && !std::filesystem::exists(r.db)) {
    throw kernels::DataError(fmt::format(
        "{}: no such kernel database, so nothing is known to be missing; give the job after -- "
        "(`phantora db profile --db {} -- COMMAND`) or shapes with --signatures FILE",
        r.db, r.db));
  }
  std::vector<std::string> signatures;
  // Signatures whose replay made the device unusable in an earlier profile are not tried again.
  std::set<std::string> seen = read_lost_device(r);
  if (!seen.empty()) {
    fmt::print(stderr, "phantora: skipping {} signatures listed in {} (delete it to retry them)\n",
               seen.size(), lost_device_file(r));
  }
  if (!r.signatures_file.empty()) {
    for (std::string& sig : read_signatures(r.signatures_file)) {
      if (seen.insert(sig).second) signatures.push_back(std::move(sig));
    }
  }
  {
    // Signatures are the same operation on every GPU: whichever GPU a run simulated, what it
    // had to model is measured here, and stored for this GPU only.
    const auto db = kernels::KernelDb::open(r.db, r.job.empty() && r.signatures_file.empty()
                                                      ? kernels::KernelDb::Mode::kReadOnly
                                                      : kernels::KernelDb::Mode::kCreate);
    for (const auto& m : db.missing()) {
      if (seen.insert(m.signature).second && !db.lookup(gpu, m.signature)) {
        signatures.push_back(m.signature);
      }
    }
  }
  fmt::print(stderr,
             "phantora: {} signatures to measure ({} ms sustained, {} warm-up + {} timed "
             "launches each)\n",
             signatures.size(), r.sustain_ms, r.warmup, r.repetitions);
  const profiler::MeasureOptions options{.sustain_ms = r.sustain_ms,
                                         .warmup = r.warmup,
                                         .repetitions = r.repetitions,
                                         .device = r.device,
                                         .sequence_length = r.sequence_length,
                                         .sequences = r.sequences};
  const profiler::ProfileReport report =
      profiler::measure_signatures(api, signatures, gpu, options, launches);
  print_report(report);
  auto db = kernels::KernelDb::open(r.db, kernels::KernelDb::Mode::kReadWrite);
  // The idle GPU's launch round trip: `phantora run --kernel-db` takes it as the launch latency.
  try {
    const kernels::DeviceFact trip = profiler::measure_launch_round_trip(api, gpu, options);
    db.put_fact(trip);
    fmt::print("launch round trip (idle GPU) {:.3f} us, mean of {} (min {:.3f}, max {:.3f})\n",
               trip.stats.mean_us, trip.stats.count, trip.stats.min_us, trip.stats.max_us);
  } catch (const std::runtime_error& e) {
    fmt::print("launch round trip not measured: {}\n", e.what());
  }
  const size_t written = db.put(report.rows, kernels::OnConflict::kCombine);
  const size_t pruned = db.prune_missing();
  fmt::print(
      "{}: {} rows written for {}; {} signatures no longer missing; {} not measurable; "
      "{} failed\n",
      r.db, written, gpu, pruned, report.unsupported.size(), report.failed.size());
  if (!report.context_lost.empty()) {
    std::ofstream(lost_device_file(r), std::ios::app) << report.context_lost << "\n";
    fmt::print(
        "the device was unusable after {} failed; {} signatures were not tried. It is listed in "
        "{} and skipped from now on: run the same `db profile` again (without the job) to "
        "measure the rest.\n",
        report.context_lost, report.not_attempted.size(), lost_device_file(r));
    return 6;
  }
  return report.failed.empty() ? 0 : 5;
}

}  // namespace phantora::tools
