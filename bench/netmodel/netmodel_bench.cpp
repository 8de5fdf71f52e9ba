// Wall time of the network model at cluster scale (128 hosts x 8 H100 = 1,024 GPUs) and of one
// incremental solver update as the number of active flows grows.
#include <benchmark/benchmark.h>

#include <numeric>
#include <random>
#include <vector>

#include "phantora/netmodel/maxmin.hpp"
#include "phantora/netmodel/network_sim.hpp"

namespace phantora::net {
namespace {

std::vector<GpuId> all_gpus(const Topology& t) {
  std::vector<GpuId> v(t.num_gpus());
  std::iota(v.begin(), v.end(), 0);
  return v;
}

SimTime run_to_completion(NetworkSimulator& sim) {
  SimTime last = sim.now();
  while (sim.active_transfers() > 0)
    for (const Completion& c : sim.advance_to(sim.next_event_time())) last = c.end;
  return last;
}

// Plan (tuner + flows) and simulate one 1 GiB all-reduce over 1,024 GPUs. Target: < 1 s.
void BM_AllReduce1GiB_1024Gpus(benchmark::State& state) {
  const Topology topo = Topology::preset("dgx-h100", 128);
  const auto ranks = all_gpus(topo);
  SimTime simulated;
  size_t flows = 0;
  for (auto _ : state) {
    NetworkSimulator sim(topo);
    const TransferId id = sim.start(
        CollectiveRequest{CollOp::AllReduce, ranks, Bytes(1ull << 30), 0, {}}, SimTime::zero());
    flows = sim.transfer(id).flows;
    simulated = run_to_completion(sim);
  }
  state.counters["flows"] = static_cast<double>(flows);
  state.counters["simulated_ms"] = simulated.as_ms();
}
BENCHMARK(BM_AllReduce1GiB_1024Gpus)->Unit(benchmark::kMillisecond);

// 100 back-to-back 64 MiB all-reduces over 1,024 GPUs, each starting when the previous ends.
// Target: < 10 s.
void BM_BackToBack64MiB_1024Gpus(benchmark::State& state) {
  const Topology topo = Topology::preset("dgx-h100", 128);
  const auto ranks = all_gpus(topo);
  SimTime simulated;
  for (auto _ : state) {
    NetworkSimulator sim(topo);
    for (int i = 0; i < 100; ++i) {
      sim.start(CollectiveRequest{CollOp::AllReduce, ranks, Bytes(64ull << 20), 0, {}}, sim.now());
      run_to_completion(sim);
    }
    simulated = sim.now();
  }
  state.counters["simulated_ms"] = simulated.as_ms();
}
BENCHMARK(BM_BackToBack64MiB_1024Gpus)->Unit(benchmark::kMillisecond)->Iterations(1);

// One flow starts and ends (add, solve, remove, solve) among N active flows spread over
// N / 8 independent components of 8 flows on 4 links, like many small communicators. The
// incremental solver touches one component: the cost should not grow with N.
void BM_SolverUpdate_IndependentComponents(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int components = n / 8;
  MaxMinSolver s;
  std::mt19937 rng(7);
  for (int c = 0; c < components; ++c) {
    ConstraintId links[4];
    for (auto& l : links) l = s.add_constraint(100.0);
    for (int f = 0; f < 8; ++f) {
      const ConstraintId path[] = {links[f % 4], links[(f + 1) % 4]};
      s.add_flow(path);
    }
  }
  s.solve();
  std::uniform_int_distribution<ConstraintId> pick(0,
                                                   static_cast<ConstraintId>(4 * components - 1));
  for (auto _ : state) {
    const ConstraintId path[] = {pick(rng)};
    const FlowId f = s.add_flow(path);
    benchmark::DoNotOptimize(s.solve().size());
    s.remove_flow(f);
    benchmark::DoNotOptimize(s.solve().size());
  }
  state.counters["active_flows"] = static_cast<double>(s.active_flows());
}
BENCHMARK(BM_SolverUpdate_IndependentComponents)->RangeMultiplier(4)->Range(1 << 10, 1 << 20);

// The same update when all N flows share links in one component (one huge collective): the
// whole component is re-solved, so this grows with N (O(N log N)); shown for honesty.
void BM_SolverUpdate_OneComponent(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  MaxMinSolver s;
  const int links = std::max(4, n / 4);
  for (int l = 0; l < links; ++l) s.add_constraint(100.0 + l);
  for (int f = 0; f < n; ++f) {
    const ConstraintId path[] = {static_cast<ConstraintId>(f % links),
                                 static_cast<ConstraintId>((f + 1) % links)};
    s.add_flow(path);
  }
  s.solve();
  for (auto _ : state) {
    const ConstraintId path[] = {0};
    const FlowId f = s.add_flow(path);
    benchmark::DoNotOptimize(s.solve().size());
    s.remove_flow(f);
    benchmark::DoNotOptimize(s.solve().size());
  }
}
BENCHMARK(BM_SolverUpdate_OneComponent)->RangeMultiplier(4)->Range(1 << 10, 1 << 16);

}  // namespace
}  // namespace phantora::net

BENCHMARK_MAIN();
