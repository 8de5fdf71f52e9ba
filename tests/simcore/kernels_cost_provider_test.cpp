// The daemon's kernel pricing through kernels-db: a launch priced again from the provider's
// cache still counts as an occurrence of its signature in the missing list, which orders what
// `phantora db profile` measures and what `db missing` lists first.
#include <gtest/gtest.h>

#include "phantora/kernels/gpu_catalog.hpp"
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

}  // namespace
}  // namespace phantora::sim
