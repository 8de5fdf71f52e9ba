// Daemon throughput: Simulation::batch applying a large batch of kernel-launch records, the
// bulk of what a training rank sends. Target: more than 2 million records per second on one
// core (design.md, "Scale": one daemon serves every rank).
//
// Variants: the cost of each launch from a fixed-cost provider (decoding + engine + stats),
// from the real kernels-db CostModel with pinned times (what `phantora run` wires in), and
// with the Chrome trace written (every op becomes a JSON span).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "phantora/kernels/cost_model.hpp"
#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_times.hpp"
#include "phantora/simcore/kernels_cost_provider.hpp"
#include "phantora/simcore/simulation.hpp"

namespace phantora::sim {
namespace {

constexpr int kKernels = 8;
constexpr int kStreams = 4;             // the legacy stream of device 0 plus three user streams
constexpr int kLaunchesPerBatch = 800;  // ~64 KiB of records: the shim's flush size

class FixedCosts : public CostProvider {
 public:
  // Each kernel's HBM bytes (0: unknown); 15 MB in 5 µs draws all of an H100's 3 TB/s.
  double hbm_bytes = 0;
  Cost kernel(const KernelLaunch&) override {
    return Cost{SimTime::us(5), CostSource::kPinned, {}, hbm_bytes};
  }
  Cost copy(wire::CopyKind, uint64_t, bool) override {
    return Cost{SimTime::us(10), CostSource::kModelled};
  }
  Cost memset(uint64_t) override { return Cost{SimTime::us(1), CostSource::kModelled}; }
  Cost gemm(const wire::Gemm&) { return Cost{SimTime::us(20), CostSource::kModelled}; }
};

std::string kernel_name(int k) {
  return "_ZN2ns6kernelILi" + std::to_string(k) + "EEEvPfS1_i";  // ns::kernel<k>(float*, ...)
}

template <typename T>
void append(std::vector<std::byte>& out, wire::RecordType type, const T& body, int64_t host_ps,
            const void* tail = nullptr, size_t tail_size = 0) {
  wire::RecordHeader h;
  h.type = type;
  h.size = static_cast<uint32_t>(sizeof(T) + tail_size);
  h.host_time_ps = host_ps;
  h.bound_ps = host_ps;  // one thread, never blocked
  const size_t at = out.size();
  out.resize(at + sizeof(h) + sizeof(T) + tail_size);
  std::memcpy(out.data() + at, &h, sizeof(h));
  std::memcpy(out.data() + at + sizeof(h), &body, sizeof(T));
  if (tail_size > 0) std::memcpy(out.data() + at + sizeof(h) + sizeof(T), tail, tail_size);
}

// The set-up batch (kernel names, streams) and one batch of launches. Host times within the
// launch batch are relative; each iteration shifts them forward so the clock never goes back.
std::vector<std::byte> setup_batch() {
  std::vector<std::byte> b;
  for (int k = 0; k < kKernels; ++k) {
    const std::string name = kernel_name(k);
    append(b, wire::RecordType::kDefineKernel,
           wire::DefineKernel{static_cast<uint32_t>(k + 1), static_cast<uint32_t>(name.size())}, 0,
           name.data(), name.size());
  }
  for (int s = 1; s < kStreams; ++s) {
    append(b, wire::RecordType::kStreamCreate,
           wire::StreamCreate{wire::kFirstUserStream + s, 0, wire::kStreamBlocking, 0, 0}, 0);
  }
  return b;
}

uint64_t stream_of(int i) {
  const int s = i % kStreams;
  return s == 0 ? wire::kLegacyStreamBase : wire::kFirstUserStream + s;
}

std::vector<std::byte> launch_batch() {
  std::vector<std::byte> b;
  for (int i = 0; i < kLaunchesPerBatch; ++i) {
    wire::Launch l{};
    l.stream = stream_of(i);
    l.kernel = static_cast<uint32_t>(i % kKernels + 1);
    l.grid[0] = 1024, l.grid[1] = l.grid[2] = 1;
    l.block[0] = 256, l.block[1] = l.block[2] = 1;
    append(b, wire::RecordType::kLaunch, l, int64_t{i} * 1'000'000);
  }
  return b;
}

void shift_host_times(std::vector<std::byte>& b, int64_t delta) {
  for (size_t at = 0; at < b.size();) {
    wire::RecordHeader h;
    std::memcpy(&h, b.data() + at, sizeof(h));
    h.host_time_ps += delta;
    h.bound_ps += delta;
    std::memcpy(b.data() + at, &h, sizeof(h));
    at += sizeof(h) + h.size;
  }
}

void run_batches(benchmark::State& state, CostProvider& costs, const std::string& trace) {
  SimulationConfig config;
  config.hosts = 1;
  config.gpus_per_host = 8;
  config.token = "bench";
  config.trace_path = trace;
  Simulation sim(config, costs);
  wire::Hello hello;
  std::memcpy(hello.token, "bench", 5);
  const ClientId id = sim.hello(hello).client_id;
  std::vector<wire::Reply> replies;
  sim.batch(id, setup_batch(), replies);
  std::vector<std::byte> batch = launch_batch();
  const int64_t span = int64_t{kLaunchesPerBatch} * 1'000'000;
  for (auto _ : state) {
    sim.batch(id, batch, replies);
    state.PauseTiming();
    shift_host_times(batch, span);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kLaunchesPerBatch);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(batch.size()));
  benchmark::DoNotOptimize(sim.finish().simulated_end);
}

void BM_BatchFixedCosts(benchmark::State& state) {
  FixedCosts costs;
  run_batches(state, costs, "");
}
BENCHMARK(BM_BatchFixedCosts);

void BM_BatchKernelsDb(benchmark::State& state) {
  // Half the kernels pinned by a CSV (looked up by demangled base name), half on the default
  // model by grid size: the daemon's real cost path.
  std::string csv = "kernel,duration_us\n";
  for (int k = 0; k < kKernels; k += 2) csv += "ns::kernel<" + std::to_string(k) + ">,7.5\n";
  const kernels::GpuPreset& gpu = kernels::GpuCatalog::builtin().find("h100");
  KernelsCostProvider costs(kernels::CostModel(kernels::CostParams::builtin(),
                                               kernels::KernelTimes::from_csv_text(csv, "bench")),
                            gpu);
  run_batches(state, costs, "");
}
BENCHMARK(BM_BatchKernelsDb);

void BM_BatchWithTrace(benchmark::State& state) {
  FixedCosts costs;
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string trace =
      (dir / ("simcore_bench_trace_" + std::to_string(::getpid()) + ".json")).string();
  run_batches(state, costs, trace);
  std::error_code ignored;
  std::filesystem::remove(trace, ignored);
  std::filesystem::remove(trace + ".partial", ignored);
}
BENCHMARK(BM_BatchWithTrace)->MinTime(0.3);

// Launches beside a collective (gpu_sharing.hpp): two ranks on one host each launch an
// all-reduce of 64 MiB per batch, and rank 0 then its 800 kernels, every one of them deferred
// until the network has simulated the all-reduce past it. What a deferred launch costs; the
// first argument is the GPU's SMs, 0 turning sharing off (the same records, no kernel
// deferred); the second, 1: the kernels move HBM bytes and share bandwidth with the
// all-reduce's copies too.
void BM_BatchBesideCollective(benchmark::State& state) {
  FixedCosts costs;
  SimulationConfig config;
  config.hosts = 1;
  config.gpus_per_host = 2;
  config.gpu_name = "h100";
  config.device.multiprocessor_count = static_cast<int32_t>(state.range(0));
  if (state.range(1) != 0) {
    costs.hbm_bytes = 15e6;
    config.hbm_bytes_per_s = 3e12;
  }
  config.token = "bench";
  Simulation sim(config, costs);
  std::vector<wire::Reply> replies;
  ClientId ids[2];
  // NCCL's stream, non-blocking as PyTorch's stream pool creates it.
  constexpr uint64_t kCommStream = wire::kFirstUserStream + kStreams;
  for (int rank = 0; rank < 2; ++rank) {
    wire::Hello hello;
    std::memcpy(hello.token, "bench", 5);
    hello.pid = 100 + rank;
    ids[rank] = sim.hello(hello).client_id;
    std::vector<std::byte> b = setup_batch();
    append(b, wire::RecordType::kStreamCreate,
           wire::StreamCreate{kCommStream, rank, wire::kStreamNonBlocking, 0, 0}, 0);
    wire::CommInit init{};
    init.comm = 1;
    init.nranks = 2;
    init.rank = rank;
    init.device = rank;
    append(b, wire::RecordType::kCommInit, init, 0);
    // The init is a request (id 1): its thread does not bound the network until answered.
    wire::RecordHeader h;
    const size_t at = b.size() - sizeof(init) - sizeof(h);
    std::memcpy(&h, b.data() + at, sizeof(h));
    h.request = 1;
    h.bound_ps = wire::kNoBound;
    std::memcpy(b.data() + at, &h, sizeof(h));
    sim.batch(ids[rank], b, replies);
  }
  // Both inits are answered now; each thread says it runs again.
  for (const ClientId id : ids) {
    std::vector<std::byte> b;
    append(b, wire::RecordType::kHostClock, wire::HostClock{1, wire::kHostResumed, 0}, 0);
    sim.batch(id, b, replies);
  }
  struct {
    wire::CollectiveHeader head;
    wire::CollectiveOp op;
  } all_reduce{};
  all_reduce.head = wire::CollectiveHeader{kCommStream, 0, 1};
  all_reduce.op.comm = 1;
  all_reduce.op.kind = wire::CollKind::kAllReduce;
  all_reduce.op.dtype = wire::DataType::kBF16;
  all_reduce.op.count = 32u << 20;
  std::vector<std::byte> batch0, batch1;
  append(batch0, wire::RecordType::kCollective, all_reduce, 0);
  const std::vector<std::byte> launches = launch_batch();
  batch0.insert(batch0.end(), launches.begin(), launches.end());
  all_reduce.head.device = 1;
  append(batch1, wire::RecordType::kCollective, all_reduce, 0);
  const int64_t span = int64_t{kLaunchesPerBatch} * 1'000'000;
  int64_t shift = 1'000'000'000;  // after the set-up
  shift_host_times(batch0, shift);
  shift_host_times(batch1, shift);
  for (auto _ : state) {
    sim.batch(ids[0], batch0, replies);
    sim.batch(ids[1], batch1, replies);
    state.PauseTiming();
    shift_host_times(batch0, span);
    shift_host_times(batch1, span);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kLaunchesPerBatch);
  benchmark::DoNotOptimize(sim.finish().simulated_end);
}
BENCHMARK(BM_BatchBesideCollective)
    ->ArgNames({"sms", "hbm"})
    ->Args({0, 0})
    ->Args({132, 0})
    ->Args({132, 1});

}  // namespace
}  // namespace phantora::sim

BENCHMARK_MAIN();
