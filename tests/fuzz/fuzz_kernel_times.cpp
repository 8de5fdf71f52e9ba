// libFuzzer target: the pinned kernel-times CSV (kernels::KernelTimes::from_csv_text, the
// --kernel-times file). A DataError is the parser's answer to bad input; anything else is a
// finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/kernel_times.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    (void)phantora::kernels::KernelTimes::from_csv_text(text, "fuzz.csv");
  } catch (const phantora::kernels::DataError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_kernel_times: unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
