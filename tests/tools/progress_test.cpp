// The progress line of `phantora run` on a terminal: its text, the estimate of time left, and
// the rules for keeping it under the job's output (status_line.hpp).
#include <gtest/gtest.h>

#include "progress_line.hpp"
#include "status_line.hpp"

using namespace phantora::tools;

TEST(ProgressLine, SaysEverythingItKnows) {
  ProgressFigures f;
  f.wall_s = 3.9;  // shown rounded down
  f.simulated_s = 1.254e-3;
  f.steps = 2;
  f.last_step_s = 1.25e-3;
  f.expect_steps = 3;
  f.ranks_alive = 4;
  f.world_size = 4;
  f.remaining_s = 125.0;
  EXPECT_EQ(format_progress(f),
            "phantora: sim 1.254 ms | steps 2/3 (last 1.250 ms) | ranks 4/4 | wall 0:03 | "
            "ETA 2:05");
}

TEST(ProgressLine, LeavesOutWhatItDoesNotKnow) {
  ProgressFigures f;
  f.simulated_s = 12.3456;
  f.ranks_alive = 1;
  f.wall_s = 3723;  // 1 h 2 min 3 s
  EXPECT_EQ(format_progress(f), "phantora: sim 12.346 s | steps 0 | ranks 1 | wall 1:02:03");
}

TEST(ProgressLine, Units) {
  EXPECT_EQ(duration_text(0), "0 ns");
  EXPECT_EQ(duration_text(850e-9), "850 ns");
  EXPECT_EQ(duration_text(12.5e-6), "12.500 us");
  EXPECT_EQ(duration_text(0.5), "500.000 ms");
  EXPECT_EQ(clock_text(59.99), "0:59");
  EXPECT_EQ(clock_text(600), "10:00");
  EXPECT_EQ(clock_text(-1), "0:00");
}

TEST(ProgressLine, TimeLeftFromTheIntervalsBetweenStepLines) {
  // Lines seen at 10, 12 and 16 s: 3 s per step after the first; 7 of 10 steps to come: 21 s.
  EXPECT_DOUBLE_EQ(*estimate_remaining({10, 12, 16}, 10), 21.0);
  // The first line alone says nothing about the pace (it comes after start-up and warm-up).
  EXPECT_FALSE(estimate_remaining({10}, 10));
  EXPECT_FALSE(estimate_remaining({}, 10));
  // Every expected step seen (or more): nothing to estimate.
  EXPECT_FALSE(estimate_remaining({1, 2, 3}, 3));
  EXPECT_FALSE(estimate_remaining({1, 2, 3, 4}, 3));
}

TEST(StatusLine, DrawnOnlyAtTheStartOfALine) {
  StatusLine s;
  const std::string clear(StatusLine::kClear);
  EXPECT_EQ(s.update("one", 80), clear + "one");
  // The job's output first clears the line, then the status comes back under it.
  EXPECT_EQ(s.before_output(), clear);
  EXPECT_EQ(s.after_output("step 1\n", 80), clear + "one");
  // Output that stops mid-line (a prompt, a \r progress bar) is not drawn over ...
  EXPECT_EQ(s.before_output(), clear);
  EXPECT_EQ(s.after_output("50% [###   ]\r", 80), "");
  EXPECT_EQ(s.update("two", 80), "");
  // ... and nothing is cleared that was not drawn.
  EXPECT_EQ(s.before_output(), "");
  EXPECT_EQ(s.after_output("100%\n", 80), clear + "two");
  EXPECT_EQ(s.finish(), clear);
  EXPECT_EQ(s.finish(), "");
}

TEST(StatusLine, NeverWiderThanTheTerminal) {
  // One column is left free: a line that fills the width wraps on some terminals, and a
  // wrapped line cannot be cleared with a carriage return.
  StatusLine s;
  EXPECT_EQ(s.update("0123456789", 8), std::string(StatusLine::kClear) + "0123456");
  EXPECT_EQ(s.update("", 8), std::string(StatusLine::kClear));  // empty: cleared
  EXPECT_EQ(s.before_output(), "");
}
