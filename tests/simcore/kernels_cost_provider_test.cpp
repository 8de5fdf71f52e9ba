// The daemon's kernel pricing through kernels-db: a launch priced again from the provider's
// cache still counts as an occurrence of its signature in the missing list, which orders what
// `phantora db profile` measures and what `db missing` lists first.
#include <gtest/gtest.h>

#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/kernels/kernel_times.hpp"
#include "phantora/simcore/kernels_cost_provider.hpp"

namespace phantora::sim {
namespace {

TEST(KernelsCostProvider, EveryLaunchOfAModelledKernelIsAnOccurrence) {
  const kernels::GpuPreset& h100 = kernels::GpuCatalog::builtin().find("h100");
  KernelsCostProvider provider(kernels::CostModel{}, h100);
  KernelLaunch unknown;
  unknown.mangled_name = "_Z6customv";
  unknown.grid = {132, 1, 1};
  unknown.block = {256, 1, 1};
  KernelLaunch copy_like = unknown;
  copy_like.mangled_name = "_Z4copyv";
  copy_like.work.kind = wire::WorkKind::kElementwise;
  copy_like.work.bytes_read = copy_like.work.bytes_written = 1 << 20;
  for (int i = 0; i < 3; ++i) provider.kernel(unknown);
  for (int i = 0; i < 2; ++i) provider.kernel(copy_like);
  const std::vector<kernels::MissingEntry> missing = provider.model().missing().entries();
  ASSERT_EQ(missing.size(), 2u);
  std::map<std::string, uint64_t> occurrences;
  for (const auto& m : missing) occurrences[m.signature] = m.occurrences;
  EXPECT_EQ(occurrences.at("kernel:name=_Z6customv,grid=132x1x1,block=256x1x1,smem=0"), 3u);
  EXPECT_EQ(occurrences.at("mem:op=elementwise,read=1048576,write=1048576"), 2u);
}

// What a kernel asks of HBM beside a collective (gpu_sharing.hpp) comes with its price: the
// bytes of its description, whatever priced it; none for a launch that says nothing.
TEST(KernelsCostProvider, KernelsCarryTheHbmBytesOfTheirDescription) {
  const kernels::GpuPreset& h100 = kernels::GpuCatalog::builtin().find("h100");
  KernelsCostProvider provider(
      kernels::CostModel{
          kernels::CostParams::builtin(),
          kernels::KernelTimes::from_csv_text("kernel,duration_us\n_Z6pinnedv,42\n", "t.csv")},
      h100);
  KernelLaunch unknown;
  unknown.mangled_name = "_Z6customv";
  unknown.grid = {132, 1, 1};
  unknown.block = {256, 1, 1};
  EXPECT_EQ(provider.kernel(unknown).hbm_bytes, 0.0);
  // 1 MiB read and 1 MiB written, modelled; the second launch comes from the provider's cache.
  KernelLaunch copy_like = unknown;
  copy_like.mangled_name = "_Z4copyv";
  copy_like.work.kind = wire::WorkKind::kElementwise;
  copy_like.work.bytes_read = copy_like.work.bytes_written = 1 << 20;
  for (int i = 0; i < 2; ++i) EXPECT_EQ(provider.kernel(copy_like).hbm_bytes, 2.0 * (1 << 20));
  // Pinned by name: its time from the table, its bytes still from what the launch says.
  KernelLaunch pinned = copy_like;
  pinned.mangled_name = "_Z6pinnedv";
  const Cost p = provider.kernel(pinned);
  EXPECT_EQ(p.source, CostSource::kPinned);
  EXPECT_EQ(p.hbm_bytes, 2.0 * (1 << 20));
  // A 4096³ bf16 GEMM reads A and B and writes C once: 3 × 4096² × 2 bytes; with beta != 0 it
  // also reads C: 4 × 4096² × 2.
  wire::Gemm g{};
  g.m = g.n = g.k = 4096;
  g.a_type = g.b_type = g.c_type = wire::DataType::kBF16;
  g.compute_type = wire::DataType::kF32;
  EXPECT_EQ(provider.gemm(g).hbm_bytes, 3.0 * 4096 * 4096 * 2);
  g.accumulate = 1;
  EXPECT_EQ(provider.gemm(g).hbm_bytes, 4.0 * 4096 * 4096 * 2);
}

}  // namespace
}  // namespace phantora::sim
