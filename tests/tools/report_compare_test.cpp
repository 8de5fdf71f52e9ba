#include <gtest/gtest.h>

#include <stdexcept>

#include "memory_gate.hpp"
#include "report_compare.hpp"

using namespace phantora::tools;
using nlohmann::json;

namespace {

json report(double simulated, double step_median, double kernel_a, double kernel_b) {
  json r = {{"schema", "phantora.report/1"},
            {"simulated_time_s", simulated},
            {"gpu_time", {{"total_s", kernel_a + kernel_b}}},
            {"communication",
             {{"time_s", 0.5},
              {"exposed_time_s", 0.1},
              {"operations", {{"ncclAllReduce", {{"count", 3}, {"bytes", 3000.0}}}}}}},
            {"gpus", json::array({{{"peak_memory_bytes", 100}}, {{"peak_memory_bytes", 300}}})},
            {"top_kernels",
             json::array({{{"kernel", "a"}, {"mangled", "_Z1a"}, {"total_s", kernel_a}},
                          {{"kernel", "b"}, {"mangled", "_Z1b"}, {"total_s", kernel_b}}})}};
  if (step_median > 0) r["steps"] = {{"median_s", step_median}};
  return r;
}

}  // namespace

TEST(ReportCompare, HeadlineIsTheStepTimeWhenBothRunsPrintedOne) {
  const auto c = compare_reports(report(10, 0.100, 1.0, 2.0), report(10, 0.105, 1.0, 2.5));
  EXPECT_EQ(c.headline.name, "step time (median)");
  EXPECT_NEAR(c.headline.relative(), 0.05, 1e-12);  // 105 / 100 - 1
  // The kernel that changed most comes first: b (+0.5 s); a did not change.
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(c.kernels[0].name, "b");
  EXPECT_DOUBLE_EQ(c.kernels[0].current - c.kernels[0].base, 0.5);
  // Peak memory is the largest GPU's.
  EXPECT_DOUBLE_EQ(c.totals.back().base, 300);
}

TEST(ReportCompare, HeadlineFallsBackToSimulatedTime) {
  const auto c = compare_reports(report(10, 0, 1, 1), report(12, 0.2, 1, 1));
  EXPECT_EQ(c.headline.name, "simulated time");
  EXPECT_NEAR(c.headline.relative(), 0.2, 1e-12);
  const std::string text = format_comparison(c, "old", "new");
  EXPECT_NE(text.find("+20.0%"), std::string::npos) << text;
}

TEST(ReportCompare, Percentages) {
  EXPECT_DOUBLE_EQ(parse_percent("2%"), 0.02);
  EXPECT_DOUBLE_EQ(parse_percent("0.5 %"), 0.005);
  EXPECT_DOUBLE_EQ(parse_percent("10"), 0.10);
  EXPECT_THROW(parse_percent("abc"), std::invalid_argument);
  EXPECT_THROW(parse_percent("-1%"), std::invalid_argument);
  EXPECT_THROW(parse_percent("2%%"), std::invalid_argument);
}

namespace {

// A report with these peak memories, GPU i on host i / 2, device i % 2.
json with_peaks(std::initializer_list<double> peaks) {
  json gpus = json::array();
  int i = 0;
  for (double p : peaks) {
    gpus.push_back({{"gpu", i}, {"host", i / 2}, {"device", i % 2}, {"peak_memory_bytes", p}});
    ++i;
  }
  return {{"schema", "phantora.report/1"}, {"gpus", gpus}};
}

}  // namespace

TEST(MemoryGate, NamesTheGpusThatGrewPastTheLimit) {
  const double gib = 1 << 30;
  // GPU 1: 8 -> 9 GiB is +12.5 %; GPU 3: 4 -> 4.3 GiB is +7.5 %; GPU 2 shrank; GPU 0 the same.
  const json base = with_peaks({8 * gib, 8 * gib, 6 * gib, 4 * gib});
  const json cur = with_peaks({8 * gib, 9 * gib, 5 * gib, 4.3 * gib});
  const MemoryGate gate = check_memory_growth(base, cur, 0.05);
  ASSERT_EQ(gate.gpus.size(), 4u);
  ASSERT_EQ(gate.grown.size(), 2u);
  EXPECT_EQ(gate.grown[0].name, "GPU 1 (host 0, device 1)");  // the largest growth first
  EXPECT_EQ(gate.grown[1].name, "GPU 3 (host 1, device 1)");
  const std::string text = format_memory_gate(gate, 0.05);
  EXPECT_EQ(text,
            "peak memory per GPU: +12.50% on GPU 1 (host 0, device 1) (limit +5.00%): REGRESSION\n"
            "  GPU 1 (host 0, device 1): 8.000 GiB -> 9.000 GiB (+12.50%)\n"
            "  GPU 3 (host 1, device 1): 4.000 GiB -> 4.300 GiB (+7.50%)\n");
  // A 10 % limit lets GPU 3 through but not GPU 1; 12.5 % exactly is not above a 12.5 % limit.
  EXPECT_EQ(check_memory_growth(base, cur, 0.10).grown.size(), 1u);
  EXPECT_FALSE(check_memory_growth(base, cur, 0.125).regression());
}

TEST(MemoryGate, IdenticalRunsPassAndNewGpusFail) {
  const json base = with_peaks({100, 300});
  const MemoryGate same = check_memory_growth(base, base, 0);
  EXPECT_FALSE(same.regression());
  EXPECT_EQ(format_memory_gate(same, 0),
            "peak memory per GPU: +0.00% on GPU 0 (host 0, device 0) (limit +0.00%): ok\n");
  // A GPU the baseline did not have (another cluster shape) grew from nothing: past any limit.
  const MemoryGate wider = check_memory_growth(base, with_peaks({100, 300, 50}), 10.0);
  ASSERT_EQ(wider.grown.size(), 1u);
  EXPECT_EQ(wider.grown[0].name, "GPU 2 (host 1, device 0)");
  EXPECT_NE(format_memory_gate(wider, 10.0).find("new on GPU 2"), std::string::npos);
}
