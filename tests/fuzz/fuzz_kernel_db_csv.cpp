// libFuzzer target: the kernel database's CSV import (kernels::entries_from_csv, as `phantora
// db import` reads it), then the rows into an in-memory snapshot as a run would load them.
// A DataError is the answer to bad input; anything else is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "phantora/kernels/data_error.hpp"
#include "phantora/kernels/kernel_db.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto rows = phantora::kernels::entries_from_csv(text, "fuzz.csv");
    (void)phantora::kernels::DbSnapshot::from_entries("h100", std::move(rows));
  } catch (const phantora::kernels::DataError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_kernel_db_csv: unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
