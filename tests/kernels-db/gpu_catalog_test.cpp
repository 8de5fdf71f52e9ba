#include "phantora/kernels/gpu_catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "phantora/kernels/data_error.hpp"

namespace phantora::kernels {
namespace {

std::string error_of(auto&& fn) {
  try {
    fn();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GpuCatalog, BuiltinHasTheEightPresets) {
  const auto names = GpuCatalog::builtin().names();
  EXPECT_EQ(names, (std::vector<std::string>{"a100-80gb", "a100-40gb", "a100-80gb-330w", "h100",
                                             "h100-500w", "h100-96gb-500w", "h200", "b200"}));
}

// Meta's A100 board (gpus.toml, [pg509]): the 80 GB part's GA100, memory and links, under a
// 330 W limit. It reports its own name ("NVIDIA PG509-210", which TorchTitan's peak-FLOPS table
// does not know, so its MFU falls back to the A100's 312) and the 79.14 GiB its logs print; its
// sustained clock is the line through the GA100's 1326 MHz at 300 W (an A100 PCIe, measured) and
// the 400 W part's 1410 MHz, at 330 W.
TEST(GpuCatalog, MetasA100BoardIsTheEightyGigabytePartAt330Watts) {
  const GpuCatalog& c = GpuCatalog::builtin();
  const GpuPreset& board = c.find("PG509-210");
  const GpuPreset& a80 = c.find("a100-80gb");
  EXPECT_EQ(board.key, "a100-80gb-330w");
  EXPECT_EQ(board.device_name(), "NVIDIA PG509-210");
  EXPECT_EQ(board.device.total_global_mem, 81039ull << 20);
  EXPECT_NEAR(board.device.total_global_mem / double(1ull << 30), 79.14, 0.005);
  EXPECT_NEAR(42.12 / (board.device.total_global_mem / double(1ull << 30)) * 100, 53.23, 0.01);
  EXPECT_EQ(board.device.pci_device_id, a80.device.pci_device_id);
  EXPECT_EQ(board.device.pci_subsystem_id, 0x1625);
  EXPECT_EQ(board.device.multiprocessor_count, a80.device.multiprocessor_count);
  EXPECT_EQ(board.device.clock_khz, a80.device.clock_khz);
  EXPECT_DOUBLE_EQ(board.perf.bf16_tflops, a80.perf.bf16_tflops);
  EXPECT_DOUBLE_EQ(board.perf.hbm.as_gbytes_per_s(), a80.perf.hbm.as_gbytes_per_s());
  EXPECT_DOUBLE_EQ(board.perf.nvlink.as_gbytes_per_s(), a80.perf.nvlink.as_gbytes_per_s());
  EXPECT_DOUBLE_EQ(board.perf.tensor_peak_clock_mhz, a80.perf.tensor_peak_clock_mhz);
  const double at_300w = 1326.0, at_400w = a80.perf.sustained_clock_mhz;
  EXPECT_NEAR(board.perf.sustained_clock_mhz,
              at_300w + (330.0 - 300.0) / 100.0 * (at_400w - at_300w), 0.5);
}

// The 40 GB A100 is the 80 GB part's GA100 with HBM2: every compute figure and link the same,
// its memory as the part reports it (PaddlePaddle's printout: 40536 MiB) and 1,555 GB/s, which
// its memory clock and bus give (1215 MHz × 2 × 5120 bit / 8).
TEST(GpuCatalog, A100FortyGigabytesIsTheEightyWithHbm2) {
  const GpuCatalog& c = GpuCatalog::builtin();
  const GpuPreset& a40 = c.find("a100-40gb");
  const GpuPreset& a80 = c.find("a100-80gb");
  EXPECT_EQ(c.find("A100-SXM4-40GB").key, "a100-40gb");
  EXPECT_EQ(a40.device_name(), "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(a40.device.total_global_mem, 40536ull << 20);
  EXPECT_EQ(a40.device.pci_device_id, 0x20b0);
  EXPECT_DOUBLE_EQ(a40.perf.hbm.as_gbytes_per_s(), 1555.0);
  EXPECT_NEAR(a40.device.memory_clock_khz * 1e3 * 2 * a40.device.memory_bus_width_bits / 8 / 1e9,
              a40.perf.hbm.as_gbytes_per_s(), 0.5);
  EXPECT_EQ(a40.device.multiprocessor_count, a80.device.multiprocessor_count);
  EXPECT_EQ(a40.device.clock_khz, a80.device.clock_khz);
  EXPECT_EQ(a40.perf.bf16_tflops, a80.perf.bf16_tflops);
  EXPECT_EQ(a40.perf.tf32_tflops, a80.perf.tf32_tflops);
  EXPECT_EQ(a40.perf.sustained_clock_mhz, a80.perf.sustained_clock_mhz);
  EXPECT_EQ(a40.perf.nvlink.as_gbytes_per_s(), a80.perf.nvlink.as_gbytes_per_s());
  EXPECT_EQ(a40.perf.pcie.as_gbytes_per_s(), a80.perf.pcie.as_gbytes_per_s());
}

// Figures from the vendor datasheets and public deviceQuery output (kernels-db/data/gpus.toml).
TEST(GpuCatalog, H100MatchesTheReferenceFigures) {
  const GpuPreset& h100 = GpuCatalog::builtin().find("h100");
  EXPECT_EQ(h100.device_name(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.device.multiprocessor_count, 132);
  EXPECT_EQ(h100.device.cc_major, 9);
  EXPECT_EQ(h100.device.cc_minor, 0);
  // "80 GB" is marketing: deviceQuery prints "81079 MBytes (85017755648 bytes)".
  EXPECT_EQ(h100.device.total_global_mem, 85017755648ull);
  EXPECT_EQ(h100.device.total_global_mem >> 20, 81079u);
  EXPECT_EQ(h100.device.shared_mem_per_block_optin, 227u * 1024);
  EXPECT_EQ(h100.device.l2_cache_bytes, 50 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(h100.perf.hbm.as_gbytes_per_s(), 3350.0);
  EXPECT_NEAR(h100.perf.bf16_tflops, 989, 1);
  EXPECT_NEAR(h100.perf.fp8_tflops, 1979, 1);
}

TEST(GpuCatalog, OtherPartsMatchTheReferenceFigures) {
  const GpuCatalog& c = GpuCatalog::builtin();
  const GpuPreset& a100 = c.find("a100-80gb");
  EXPECT_EQ(a100.device.multiprocessor_count, 108);
  EXPECT_EQ(a100.device.cc_major * 10 + a100.device.cc_minor, 80);
  EXPECT_EQ(a100.device.shared_mem_per_block_optin, 163u * 1024);
  EXPECT_EQ(a100.device.cluster_launch, 0);
  EXPECT_EQ(a100.perf.fp8_tflops, 0.0);
  EXPECT_NEAR(a100.perf.bf16_tflops, 312, 1);

  const GpuPreset& h200 = c.find("h200");
  EXPECT_EQ(h200.device.multiprocessor_count, 132);
  EXPECT_EQ(h200.device.cc_major * 10 + h200.device.cc_minor, 90);
  EXPECT_DOUBLE_EQ(h200.perf.hbm.as_gbytes_per_s(), 4800.0);
  // 141 GB HBM3e; torch prints total_memory=143156MB (MiB), a little under 140 GiB.
  EXPECT_EQ(h200.device.total_global_mem >> 20, 143156u);

  const GpuPreset& b200 = c.find("b200");
  EXPECT_EQ(b200.device.multiprocessor_count, 148);
  EXPECT_EQ(b200.device.cc_major * 10 + b200.device.cc_minor, 100);
  // torch prints total_memory=182642MB; a public device query "178.35 GB" (GiB).
  EXPECT_EQ(b200.device.total_global_mem >> 20, 182642u);
}

TEST(GpuCatalog, TensorPeaksFollowTheirRatedClock) {
  // Dense FP16/BF16 FLOP per SM per clock: 2048 on Ampere (A100 whitepaper), 4096 on Hopper;
  // SMs x that x the rated clock gives the datasheet peak.
  const GpuCatalog& c = GpuCatalog::builtin();
  for (const char* key : {"h100", "h100-500w", "h200"}) {
    const GpuPreset& p = c.find(key);
    EXPECT_NEAR(132 * 4096 * p.perf.tensor_peak_clock_mhz * 1e6 / 1e12, p.perf.bf16_tflops, 0.5)
        << key;
  }
  const GpuPreset& a100 = c.find("a100");
  EXPECT_NEAR(108 * 2048 * a100.perf.tensor_peak_clock_mhz * 1e6 / 1e12, a100.perf.bf16_tflops,
              0.5);
}

TEST(GpuCatalog, PowerLimitedH100DiffersOnlyInItsSustainedClock) {
  const GpuCatalog& c = GpuCatalog::builtin();
  const GpuPreset& full = c.find("h100");
  const GpuPreset& capped = c.find("H100-SXM-500W");
  EXPECT_EQ(capped.key, "h100-500w");
  // What the program sees is the same part.
  EXPECT_EQ(capped.device_name(), full.device_name());
  EXPECT_EQ(capped.device.total_global_mem, full.device.total_global_mem);
  EXPECT_EQ(capped.device.clock_khz, full.device.clock_khz);
  EXPECT_EQ(capped.device.multiprocessor_count, full.device.multiprocessor_count);
  EXPECT_EQ(capped.device.pci_device_id, full.device.pci_device_id);
  EXPECT_DOUBLE_EQ(capped.perf.bf16_tflops, full.perf.bf16_tflops);
  EXPECT_DOUBLE_EQ(capped.perf.hbm.as_gbytes_per_s(), full.perf.hbm.as_gbytes_per_s());
  // 700 W: 1575 MHz under load (DeepGEMM #120); 500 W: 1410 MHz (gpus.toml's derivation).
  EXPECT_DOUBLE_EQ(full.perf.sustained_clock_mhz, 1575.0);
  EXPECT_DOUBLE_EQ(capped.perf.sustained_clock_mhz, 1410.0);
}

TEST(GpuCatalog, TorchTitansPublishedPartIsTheCappedH100WithHbm2e) {
  // pytorch/torchtitan benchmarks/llama3_h100_202412_torchtitan.md: "96GB HBM2e with 2.4
  // TB/sec peak memory bandwidth", "the default 500W power limit".
  const GpuCatalog& c = GpuCatalog::builtin();
  const GpuPreset& capped = c.find("h100-500w");
  const GpuPreset& part = c.find("grand-teton-h100");
  EXPECT_EQ(part.key, "h100-96gb-500w");
  EXPECT_DOUBLE_EQ(part.perf.hbm.as_gbytes_per_s(), 2400.0);
  // 96 GiB of six stacks, less the share the 80 GB part reserves (81079 of 81920 MiB).
  EXPECT_EQ(part.device.total_global_mem >> 20, (98304ull * 81079 + 81920 / 2) / 81920);  // rounded
  EXPECT_EQ(part.device.memory_bus_width_bits, 6144);
  // The same chip at the same limit: tensor cores, SMs and clocks as h100-500w's.
  EXPECT_DOUBLE_EQ(part.perf.bf16_tflops, capped.perf.bf16_tflops);
  EXPECT_DOUBLE_EQ(part.perf.sustained_clock_mhz, capped.perf.sustained_clock_mhz);
  EXPECT_DOUBLE_EQ(part.perf.tensor_peak_clock_mhz, capped.perf.tensor_peak_clock_mhz);
  EXPECT_EQ(part.device.multiprocessor_count, capped.device.multiprocessor_count);
  EXPECT_EQ(part.device.l2_cache_bytes, capped.device.l2_cache_bytes);
}

TEST(GpuCatalog, EveryPresetIsInternallyConsistent) {
  for (const GpuPreset& p : GpuCatalog::builtin().presets()) {
    SCOPED_TRACE(p.key);
    // Under load a part never runs above its boost clock.
    EXPECT_LE(p.perf.sustained_clock_mhz * 1000, p.device.clock_khz);
    EXPECT_LE(p.perf.tensor_peak_clock_mhz * 1000, p.device.clock_khz);
    const DeviceLimits& d = p.device;
    // Opt-in per block = per SM minus the driver's reserved part (programming guide).
    EXPECT_EQ(d.shared_mem_per_block_optin + d.reserved_shared_mem_per_block,
              d.shared_mem_per_multiprocessor);
    EXPECT_LE(d.shared_mem_per_block, d.shared_mem_per_block_optin);
    EXPECT_LE(d.persisting_l2_cache_max_bytes, d.l2_cache_bytes);
    // Peak HBM bandwidth = memory clock × 2 (DDR) × bus width: within 5 % of the datasheet.
    const double hbm = d.memory_clock_khz * 1e3 * 2 * d.memory_bus_width_bits / 8 / 1e9;
    EXPECT_NEAR(hbm / p.perf.hbm.as_gbytes_per_s(), 1.0, 0.05);
  }
}

TEST(GpuCatalog, AliasesResolveCaseInsensitively) {
  const GpuCatalog& c = GpuCatalog::builtin();
  for (const char* name : {"h100", "H100", "H100-SXM", "h100-sxm5", "H100-SXM5-80GB"}) {
    EXPECT_EQ(c.find(name).key, "h100") << name;
  }
  EXPECT_EQ(c.find("A100").key, "a100-80gb");
  EXPECT_EQ(c.try_find("h300"), nullptr);
}

TEST(GpuCatalog, UnknownGpuListsTheKnownOnes) {
  const std::string msg = error_of([] { GpuCatalog::builtin().find("v100"); });
  EXPECT_NE(msg.find("unknown GPU 'v100'"), std::string::npos) << msg;
  for (const char* name : {"a100-80gb", "h100", "h200", "b200"}) {
    EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
}

TEST(GpuCatalog, ToDeviceSpecCarriesEveryField) {
  const GpuPreset& h100 = GpuCatalog::builtin().find("h100");
  const wire::DeviceSpec spec = to_device_spec(h100);
  EXPECT_STREQ(spec.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(spec.pci_device_id, 0x2330);
  EXPECT_EQ(spec.clock_khz, 1980000);
  EXPECT_EQ(spec.memory_clock_khz, 2619000);
  EXPECT_EQ(spec.cluster_launch, 1);
  // Every preset, every field: the wire carries exactly the preset's limits.
  for (const GpuPreset& p : GpuCatalog::builtin().presets()) {
    const wire::DeviceSpec w = to_device_spec(p);
    const DeviceLimits& d = p.device;
    EXPECT_EQ(std::string(w.name), d.name);
    EXPECT_EQ(w.total_global_mem, d.total_global_mem) << p.key;
    EXPECT_EQ(w.cc_major, d.cc_major) << p.key;
    EXPECT_EQ(w.cc_minor, d.cc_minor) << p.key;
    EXPECT_EQ(w.multiprocessor_count, d.multiprocessor_count) << p.key;
    EXPECT_EQ(w.max_threads_per_block, d.max_threads_per_block) << p.key;
    EXPECT_EQ(w.max_threads_per_multiprocessor, d.max_threads_per_multiprocessor) << p.key;
    EXPECT_EQ(w.max_blocks_per_multiprocessor, d.max_blocks_per_multiprocessor) << p.key;
    EXPECT_EQ(w.regs_per_block, d.regs_per_block) << p.key;
    EXPECT_EQ(w.regs_per_multiprocessor, d.regs_per_multiprocessor) << p.key;
    EXPECT_EQ(w.shared_mem_per_block, d.shared_mem_per_block) << p.key;
    EXPECT_EQ(w.shared_mem_per_block_optin, d.shared_mem_per_block_optin) << p.key;
    EXPECT_EQ(w.shared_mem_per_multiprocessor, d.shared_mem_per_multiprocessor) << p.key;
    EXPECT_EQ(w.reserved_shared_mem_per_block, d.reserved_shared_mem_per_block) << p.key;
    EXPECT_EQ(w.l2_cache_bytes, d.l2_cache_bytes) << p.key;
    EXPECT_EQ(w.persisting_l2_cache_max_bytes, d.persisting_l2_cache_max_bytes) << p.key;
    EXPECT_EQ(w.memory_bus_width_bits, d.memory_bus_width_bits) << p.key;
    EXPECT_EQ(w.memory_clock_khz, d.memory_clock_khz) << p.key;
    EXPECT_EQ(w.clock_khz, d.clock_khz) << p.key;
    EXPECT_EQ(w.async_engine_count, d.async_engine_count) << p.key;
    EXPECT_EQ(w.pci_device_id, d.pci_device_id) << p.key;
    EXPECT_EQ(w.pci_subsystem_id, d.pci_subsystem_id) << p.key;
    EXPECT_EQ(w.cooperative_launch, d.cooperative_launch) << p.key;
    EXPECT_EQ(w.cluster_launch, d.cluster_launch) << p.key;
  }
}

// A valid one-preset file, edited by the error tests below.
std::string minimal_file() {
  std::string body = R"([gpu.test]
aliases = ["t"]
description = "test"
[gpu.test.device]
name = "Test GPU"
)";
  for (const char* key : {"total_global_mem",
                          "cc_major",
                          "cc_minor",
                          "multiprocessor_count",
                          "max_threads_per_block",
                          "max_threads_per_multiprocessor",
                          "max_blocks_per_multiprocessor",
                          "regs_per_block",
                          "regs_per_multiprocessor",
                          "shared_mem_per_block",
                          "shared_mem_per_block_optin",
                          "shared_mem_per_multiprocessor",
                          "reserved_shared_mem_per_block",
                          "l2_cache_bytes",
                          "persisting_l2_cache_max_bytes",
                          "memory_bus_width_bits",
                          "memory_clock_khz",
                          "clock_khz",
                          "async_engine_count",
                          "pci_device_id",
                          "pci_subsystem_id",
                          "cooperative_launch",
                          "cluster_launch"}) {
    body += std::string(key) + " = 8\n";
  }
  body += "[gpu.test.perf]\n";
  for (const char* key : {"bf16_tflops", "fp16_tflops", "fp8_tflops", "tf32_tflops", "fp32_tflops",
                          "hbm_gbytes_per_s", "pcie_gbytes_per_s", "nvlink_gbytes_per_s",
                          "nvlink_links", "tensor_peak_clock_mhz", "sustained_clock_mhz"}) {
    body += std::string(key) + " = 1\n";
  }
  return body;
}

TEST(GpuCatalog, MinimalFileLoads) {
  const GpuCatalog c = GpuCatalog::from_string(minimal_file(), "mini.toml");
  EXPECT_EQ(c.find("T").device.multiprocessor_count, 8);
}

TEST(GpuCatalog, UnknownKeyNamesFileLineAndKey) {
  std::string text = minimal_file();
  text.insert(text.find("[gpu.test.perf]"), "sm_count = 3\n");
  const int line =
      1 + static_cast<int>(std::count(text.begin(), text.begin() + text.find("sm_count"), '\n'));
  const std::string msg = error_of([&] { GpuCatalog::from_string(text, "bad.toml"); });
  EXPECT_EQ(msg,
            "bad.toml:" + std::to_string(line) + ": key 'gpu.test.device.sm_count': unknown key");
}

TEST(GpuCatalog, WrongTypeAndMissingKeyAreNamed) {
  std::string text = minimal_file();
  text.replace(text.find("cc_major = 8"), 12, "cc_major = \"9\"");
  EXPECT_EQ(error_of([&] { GpuCatalog::from_string(text, "bad.toml"); }),
            "bad.toml:7: key 'gpu.test.device.cc_major': expected an integer");

  text = minimal_file();
  text.erase(text.find("clock_khz = 8\n", text.find("memory_clock_khz") + 20), 14);
  const std::string msg = error_of([&] { GpuCatalog::from_string(text, "bad.toml"); });
  EXPECT_NE(msg.find("key 'gpu.test.device.clock_khz': missing"), std::string::npos) << msg;
}

TEST(GpuCatalog, SyntaxErrorNamesLine) {
  std::string text = minimal_file() + "broken = = 1\n";
  const int line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  const std::string msg = error_of([&] { GpuCatalog::from_string(text, "bad.toml"); });
  EXPECT_EQ(msg.rfind("bad.toml:" + std::to_string(line) + ":", 0), 0u) << msg;
}

TEST(GpuCatalog, DuplicateAliasIsRejected) {
  std::string second = minimal_file();
  second.replace(second.find("[gpu.test]"), 10, "[gpu.other]");
  for (size_t pos; (pos = second.find("gpu.test.")) != std::string::npos;) {
    second.replace(pos, 9, "gpu.other.");
  }
  const std::string msg =
      error_of([&] { GpuCatalog::from_string(minimal_file() + second, "dup.toml"); });
  EXPECT_NE(msg.find("alias 't' is used by another preset"), std::string::npos) << msg;
}

TEST(GpuCatalog, MissingFileIsAnError) {
  const std::string msg = error_of([] { GpuCatalog::from_file("/nonexistent/gpus.toml"); });
  EXPECT_NE(msg.find("/nonexistent/gpus.toml"), std::string::npos);
}

}  // namespace
}  // namespace phantora::kernels
