#include <gtest/gtest.h>

#include <stdexcept>

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
