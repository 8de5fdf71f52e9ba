#include "phantora/kernels/kernel_times.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "phantora/kernels/data_error.hpp"

namespace phantora::kernels {
namespace {

std::string error_of(std::string_view csv) {
  try {
    KernelTimes::from_csv_text(csv, "times.csv");
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KernelTimes, MatchesMangledAndDemangledNames) {
  const KernelTimes t = KernelTimes::from_csv_text(
      "kernel,duration_us\n"
      "busy,12.5\n"                   // demangled plain function
      "ns::fill<float>,3\n"           // namespaced template (return type stripped)
      "_ZNK2ns1SclEi,7.25\n"          // mangled operator()
      "\"ns::pair<int, float>\",1\n"  // quoted: the name contains a comma
      "extern_c_kernel,0.5\n",
      "times.csv");
  EXPECT_EQ(t.size(), 5u);
  EXPECT_EQ(t.lookup("_Z4busyPfi"), SimTime::us(12.5));
  EXPECT_EQ(t.lookup("_ZN2ns4fillIfEEvPT_i"), SimTime::us(3));
  EXPECT_EQ(t.lookup("_ZNK2ns1SclEi"), SimTime::us(7.25));
  EXPECT_EQ(t.lookup("extern_c_kernel"), SimTime::us(0.5));
  // ns::pair<int, float>(int) mangled: _ZN2ns4pairIifEEvi -> "void ns::pair<int, float>(int)"
  EXPECT_EQ(t.lookup("_ZN2ns4pairIifEEvi"), SimTime::us(1));
  // Another instantiation is another kernel.
  EXPECT_EQ(t.lookup("_ZN2ns4fillIdEEvPT_i"), std::nullopt);
  EXPECT_EQ(t.lookup("_Z5otherv"), std::nullopt);
}

TEST(KernelTimes, MangledEntryWinsOverDemangled) {
  const KernelTimes t =
      KernelTimes::from_csv_text("kernel,duration_us\nbusy,1\n_Z4busyPfi,2\n", "times.csv");
  EXPECT_EQ(t.lookup("_Z4busyPfi"), SimTime::us(2));
}

TEST(KernelTimes, BlankLinesAndCrlfAreAccepted) {
  const KernelTimes t =
      KernelTimes::from_csv_text("kernel,duration_us\r\n\r\nbusy, 4 \r\n\n", "times.csv");
  EXPECT_EQ(t.lookup("_Z4busyPfi"), SimTime::us(4));
}

TEST(KernelTimes, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of("name,us\nbusy,1\n"),
            "times.csv:1: bad header 'name,us': expected exactly 'kernel,duration_us'");
  EXPECT_EQ(error_of(""), "times.csv:1: empty file: expected the header 'kernel,duration_us'");
  EXPECT_EQ(error_of("kernel,duration_us\nbusy,1\nfoo\n"),
            "times.csv:3: expected 2 fields (kernel,duration_us), found 1");
  EXPECT_EQ(error_of("kernel,duration_us\nbusy,\n"), "times.csv:2: missing duration for 'busy'");
  EXPECT_EQ(error_of("kernel,duration_us\n,3\n"), "times.csv:2: missing kernel name");
  EXPECT_EQ(error_of("kernel,duration_us\nbusy,-1\n"),
            "times.csv:2: duration of 'busy' is negative (-1)");
  EXPECT_EQ(error_of("kernel,duration_us\nbusy,nan\n"),
            "times.csv:2: duration of 'busy' is not finite (nan)");
  EXPECT_EQ(error_of("kernel,duration_us\nbusy,inf\n"),
            "times.csv:2: duration of 'busy' is not finite (inf)");
  EXPECT_EQ(error_of("kernel,duration_us\nbusy,12us\n"),
            "times.csv:2: duration '12us' of 'busy' is not a number");
  EXPECT_EQ(error_of("kernel,duration_us\nbusy,1\n\nbusy,2\n"),
            "times.csv:4: kernel 'busy' is listed twice (first on line 2)");
  EXPECT_EQ(error_of("kernel,duration_us\n\"busy,1\n"), "times.csv:2: unterminated quoted field");
}

TEST(KernelTimes, FromFile) {
  const std::string path = ::testing::TempDir() + "/kernel_times_test.csv";
  std::ofstream(path) << "kernel,duration_us\nbusy,9\n";
  EXPECT_EQ(KernelTimes::from_csv(path).lookup("_Z4busyPfi"), SimTime::us(9));
  std::remove(path.c_str());
  EXPECT_THROW(KernelTimes::from_csv(path), DataError);
}

}  // namespace
}  // namespace phantora::kernels
