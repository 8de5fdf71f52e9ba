#include "phantora/kernels/cost_model.hpp"

#include <gtest/gtest.h>

#include "phantora/kernels/data_error.hpp"

namespace phantora::kernels {
namespace {

const GpuPreset& h100() {
  return GpuCatalog::builtin().find("h100");
}

KernelLaunchInfo launch(uint32_t blocks, uint32_t threads, uint64_t shared = 0) {
  return {"_Z4busyPfi", {blocks, 1, 1}, {threads, 1, 1}, shared};
}

TEST(CostModel, ResidentBlocksFollowThreadsAndSharedMemory) {
  const DeviceLimits& d = h100().device;
  // 2048 threads per SM: 256-thread blocks → 8; 64-thread blocks → 32 (the block-slot limit).
  EXPECT_EQ(resident_blocks_per_sm(launch(1, 256), d), 8u);
  EXPECT_EQ(resident_blocks_per_sm(launch(1, 32), d), 32u);
  // 100 KB of shared memory (+1 KB reserved) per block: floor(228 KB / 101 KB) = 2.
  EXPECT_EQ(resident_blocks_per_sm(launch(1, 128, 100 * 1024), d), 2u);
  // A launch that could not fit still counts as one block per SM.
  EXPECT_EQ(resident_blocks_per_sm(launch(1, 128, 1 << 20), d), 1u);
}

TEST(CostModel, WavesAreCeilOfBlocksOverSlots) {
  const DeviceLimits& d = h100().device;
  // 132 SMs × 8 blocks of 256 threads = 1056 blocks per wave.
  EXPECT_EQ(waves(launch(1, 256), d), 1u);
  EXPECT_EQ(waves(launch(1056, 256), d), 1u);
  EXPECT_EQ(waves(launch(1057, 256), d), 2u);
  EXPECT_EQ(waves(launch(10560, 256), d), 10u);
}

TEST(CostModel, DefaultCostIsFloorPlusWaves) {
  const CostParams& p = CostParams::builtin();
  const CostModel model;
  const KernelCost one = model.cost_of_kernel(launch(1, 256), h100());
  EXPECT_EQ(one.source, CostSource::kDefault);
  EXPECT_EQ(one.duration, p.kernel_floor + p.kernel_per_wave);
  EXPECT_EQ(model.cost_of_kernel(launch(10560, 256), h100()).duration,
            p.kernel_floor + p.kernel_per_wave * 10);
}

TEST(CostModel, DefaultCostIsNeverZeroAndMonotoneInGridSize) {
  const CostModel model;
  for (const GpuPreset& gpu : GpuCatalog::builtin().presets()) {
    SimTime previous = SimTime::zero();
    for (uint32_t blocks = 1; blocks < 2'000'000; blocks = blocks * 3 + 1) {
      const SimTime t = model.cost_of_kernel(launch(blocks, 512), gpu).duration;
      EXPECT_GT(t, SimTime::zero());
      EXPECT_GE(t, previous) << gpu.key << " blocks " << blocks;
      previous = t;
    }
    // An empty grid (rejected by CUDA) still costs something.
    EXPECT_GT(model.cost_of_kernel(launch(0, 0), gpu).duration, SimTime::zero());
  }
}

TEST(CostModel, PinnedTimeWins) {
  const CostModel model(CostParams::builtin(),
                        KernelTimes::from_csv_text("kernel,duration_us\nbusy,42\n", "t.csv"));
  const KernelCost c = model.cost_of_kernel(launch(100000, 256), h100());
  EXPECT_EQ(c.source, CostSource::kPinned);
  EXPECT_EQ(c.duration, SimTime::us(42));
  EXPECT_EQ(to_string(c.source), "pinned");
}

// Expected times within one picosecond: transfer_time rounds a double up to the next ps.
void expect_ps(SimTime actual, SimTime latency, int64_t transfer_ps) {
  EXPECT_NEAR(static_cast<double>((actual - latency).as_ps()), static_cast<double>(transfer_ps),
              1.0);
}

TEST(CostModel, CopyCostsMatchHandComputation) {
  const CostModel model;
  const CostParams& p = model.params();
  const GpuPreset& gpu = h100();
  const Bytes gib(1ull << 30);
  // 1 GiB over PCIe Gen5 at 50 GB/s: 1073741824 B / 50e9 B/s = 21474.83648 µs.
  expect_ps(model.copy_cost(wire::CopyKind::kHostToDevice, gib, true, gpu), p.host_device_latency,
            21'474'836'480);
  // Pageable at half the rate: twice the time.
  expect_ps(model.copy_cost(wire::CopyKind::kDeviceToHost, gib, false, gpu), p.host_device_latency,
            42'949'672'960);
  // D2D reads and writes: 2 GiB through 3350 GB/s HBM at the H100's memory efficiency, 0.90
  // (models.toml [hbm-probe]: D2D copies reach 3.02 TB/s), = 2147483648 / 3.015e12 s =
  // 712.266550 µs.
  expect_ps(model.copy_cost(wire::CopyKind::kDeviceToDevice, gib, true, gpu),
            p.device_local_latency, 712'266'550);
  // Memset writes once: 1 GiB / 3.015e12 B/s = 356.133275 µs.
  expect_ps(model.memset_cost(gib, gpu), p.device_local_latency, 356'133'275);
  // Peer over NVLink at 450 GB/s: 2386.092942 µs.
  expect_ps(model.copy_cost(wire::CopyKind::kPeer, gib, true, gpu), p.device_local_latency,
            2'386'092'942);
  // Host to host at 10 GB/s, no device latency: 107374.1824 µs.
  expect_ps(model.copy_cost(wire::CopyKind::kHostToHost, gib, true, gpu), SimTime::zero(),
            107'374'182'400);
  // A zero-byte copy costs its latency, nothing more.
  EXPECT_EQ(model.copy_cost(wire::CopyKind::kHostToDevice, Bytes(0), true, gpu),
            p.host_device_latency);
  EXPECT_EQ(p.host_device_latency, SimTime::us(5));
  EXPECT_EQ(p.device_local_latency, SimTime::us(2));
}

// A signature is priced by the same call the daemon makes for its operation: a memset's mem:
// signature as cudaMemset* (the device-local latency, not the memory-bound kernels' floor),
// a copy by its kind, a GEMM by the GEMM model; a kernel known by name and grid has no price
// from its signature alone.
TEST(CostModel, SignaturesArePricedByTheDaemonsCalls) {
  const CostModel model;
  const GpuPreset& gpu = h100();
  const Bytes gib(1ull << 30);
  const auto memset = model.cost_of_signature(signature(memset_desc(gib.count())), gpu);
  ASSERT_TRUE(memset.has_value());
  expect_ps(memset->duration, model.params().device_local_latency, 356'133'275);
  MemoryOpDesc fill;
  fill.op = "fill";
  fill.bytes_written = gib.count();
  const auto kernel_fill = model.cost_of_signature(signature(fill), gpu);
  ASSERT_TRUE(kernel_fill.has_value());
  EXPECT_EQ(kernel_fill->duration, model.cost_of_memory_op(fill, gpu).duration);
  EXPECT_NE(kernel_fill->duration, memset->duration);  // a kernel's floor, not a DMA's latency
  const auto h2d = model.cost_of_signature("copy:kind=h2d,bytes=1073741824,host=pageable", gpu);
  ASSERT_TRUE(h2d.has_value());
  expect_ps(h2d->duration, model.params().host_device_latency, 42'949'672'960);
  GemmDesc g;
  g.m = g.n = g.k = 4096;
  const auto gemm = model.cost_of_signature(signature(g), gpu);
  ASSERT_TRUE(gemm.has_value());
  EXPECT_EQ(gemm->duration, model.cost_of_gemm(g, gpu).duration);
  EXPECT_EQ(gemm->signature, signature(g));
  EXPECT_FALSE(model.cost_of_signature("kernel:name=_Z4busyPfi,grid=1x1x1,block=32x1x1,smem=0", gpu)
                   .has_value());
  EXPECT_FALSE(model.cost_of_signature("gemm:m=4096", gpu).has_value());
}

TEST(CostParams, BuiltinValuesAreThoseOfTheDataFile) {
  const CostParams& p = CostParams::builtin();
  EXPECT_EQ(p.kernel_floor, SimTime::us(3));
  EXPECT_EQ(p.kernel_per_wave, SimTime::us(2.5));
  EXPECT_DOUBLE_EQ(p.pageable_factor, 0.5);
}

TEST(CostParams, UnknownKeyIsRejected) {
  const std::string text =
      "[default_kernel]\nfloor_us = 1\nper_wave_us = 1\nfudge = 0.92\n"
      "[copy]\nhost_device_latency_us = 1\ndevice_local_latency_us = 1\n"
      "pageable_factor = 0.5\nhost_to_host_gbytes_per_s = 10\n";
  try {
    CostParams::from_string(text, "cost.toml");
    FAIL() << "accepted an unknown key";
  } catch (const DataError& e) {
    EXPECT_STREQ(e.what(), "cost.toml:4: key 'default_kernel.fudge': unknown key");
  }
}

}  // namespace
}  // namespace phantora::kernels
