#include <gtest/gtest.h>

#include <stdexcept>

#include "step_times.hpp"

using phantora::tools::StepTimeScanner;
using phantora::tools::summarize_steps;

TEST(StepTimes, BuiltInPatternsReadPerStepLinesOnly) {
  const StepTimeScanner s;
  // examples/gpt.py's per-step line: 35.5 ms.
  EXPECT_DOUBLE_EQ(*s.scan("step    3/5 | loss 0.0000 | step time 35.5 ms | tokens/s/GPU 1,000"),
                   0.0355);
  EXPECT_DOUBLE_EQ(*s.scan("Step 12: step time = 1.25 s"), 1.25);
  EXPECT_DOUBLE_EQ(*s.scan("step 7 step time 1,576.5 ms"), 1.5765);  // thousands separator
  // Its summary line is not a step.
  EXPECT_FALSE(s.scan("average over 3 step(s): step time 35.5 ms | tokens/s 1").has_value());
  // Megatron-LM: " iteration 10/100 | ... | elapsed time per iteration (ms): 812.3 | ..."
  EXPECT_DOUBLE_EQ(*s.scan(" iteration       10/     100 | consumed samples: 640 | elapsed time "
                           "per iteration (ms): 812.3 | learning rate"),
                   0.8123);
  EXPECT_FALSE(s.scan("loss 1.0").has_value());
}

TEST(StepTimes, UserPattern) {
  const StepTimeScanner s(R"(iter_time=([0-9.]+)(s|ms)?)");
  EXPECT_DOUBLE_EQ(*s.scan("it 3 iter_time=0.25s"), 0.25);
  EXPECT_DOUBLE_EQ(*s.scan("it 3 iter_time=40"), 0.040);  // no unit: ms
  EXPECT_THROW(StepTimeScanner("no group"), std::invalid_argument);
  EXPECT_THROW(StepTimeScanner("(unclosed"), std::invalid_argument);
}

TEST(StepTimes, SummaryLeavesOutTheFirstStep) {
  // 50 (warm-up), 10, 14, 12: median of {10, 12, 14} = 12, mean 12.
  const auto s = summarize_steps({0.050, 0.010, 0.014, 0.012});
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->skipped_first);
  EXPECT_DOUBLE_EQ(s->median_s, 0.012);
  EXPECT_DOUBLE_EQ(s->mean_s, 0.012);
  // One step: kept. Two kept steps: the median is their mean.
  EXPECT_DOUBLE_EQ(summarize_steps({0.3})->median_s, 0.3);
  EXPECT_DOUBLE_EQ(summarize_steps({9, 0.010, 0.020})->median_s, 0.015);
  EXPECT_FALSE(summarize_steps({}).has_value());
}
