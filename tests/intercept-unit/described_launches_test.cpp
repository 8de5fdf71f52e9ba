// Launches described from the host program's side (intercept/src/described_launches.hpp): which
// launch a description names, and that a memory-op description holds until cleared.
#include <gtest/gtest.h>

#include <cstdint>

#include "described_launches.hpp"

extern "C" int phantora_describe_memory_op(const char* kernel, int reduction, uint64_t bytes_read,
                                           uint64_t bytes_written);
extern "C" void phantora_describe_clear();

using namespace phantora::shim;

TEST(DescribedLaunches, NamesTheFunctionOrTriton2sSpecialisationOfIt) {
  EXPECT_TRUE(names_described_kernel("_rms_norm_fwd_kernel", "_rms_norm_fwd_kernel"));
  // Triton 2.3's name for the specialisation with parameters 0-3 and 5 divisible by 16, 5 by 8.
  EXPECT_TRUE(names_described_kernel("_rms_norm_fwd_kernel_0d1d2d3d45de6", "_rms_norm_fwd_kernel"));
  EXPECT_TRUE(names_described_kernel("copy_0c1", "copy"));
  // Another function whose name starts the same, and names that are not a specialisation.
  EXPECT_FALSE(names_described_kernel("_rms_norm_fwd_kernel_bwd", "_rms_norm_fwd_kernel"));
  EXPECT_FALSE(names_described_kernel("copy_1d2d", "copy"));  // the suffix counts from 0
  EXPECT_FALSE(names_described_kernel("copy_", "copy"));
  EXPECT_FALSE(names_described_kernel("copy0d", "copy"));
  EXPECT_FALSE(names_described_kernel("cop", "copy"));
  EXPECT_FALSE(names_described_kernel("copy", ""));
}

TEST(DescribedLaunches, AMemoryOpHoldsForEveryLaunchOfItsKernelUntilCleared) {
  ASSERT_EQ(phantora_describe_memory_op("scale", 1, 4096, 2048), 0);
  EXPECT_FALSE(take_described_work("other").has_value());
  for (int launch = 0; launch < 3; ++launch) {  // autotuning launches it once per configuration
    const std::optional<LaunchWork> w = take_described_work("scale_0d1d2");
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->kind, phantora::wire::WorkKind::kReduce);
    EXPECT_EQ(w->bytes_read, 4096u);
    EXPECT_EQ(w->bytes_written, 2048u);
  }
  phantora_describe_clear();
  EXPECT_FALSE(take_described_work("scale").has_value());
  EXPECT_EQ(phantora_describe_memory_op("scale", 0, 0, 0), -1);  // moves no bytes
}
