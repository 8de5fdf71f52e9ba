#include "runtime_abi.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>

namespace phantora::intercept {
namespace {

// CUDA 12.x's struct cudaPointerAttributes (driver_types.h of the 12.8 runtime): four fields,
// no reserved tail.
struct Cuda12PointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
};

TEST(RuntimeAbi, PointerAttributesHaveEachRuntimesSize) {
  EXPECT_EQ(pointer_attributes_size(12), sizeof(Cuda12PointerAttributes));
  EXPECT_EQ(pointer_attributes_size(12), 24u);
  EXPECT_EQ(pointer_attributes_size(13), sizeof(cudaPointerAttributes));
  EXPECT_EQ(pointer_attributes_size(13), 24u + 8 * sizeof(long));
}

// A CUDA 12 caller's struct gets its four fields and not a byte past them (the bytes after it
// are the caller's stack); a CUDA 13 caller's gets the whole struct, reserved tail zeroed.
TEST(RuntimeAbi, PointerAttributesWriteOnlyTheCallersLayout) {
  int device_word = 0;
  cudaPointerAttributes a{};
  a.type = cudaMemoryTypeHost;
  a.device = 1;
  a.devicePointer = &device_word;
  a.hostPointer = &device_word;

  constexpr std::uint8_t kCanary = 0xAB;
  alignas(cudaPointerAttributes) std::array<std::uint8_t, sizeof(cudaPointerAttributes)> buf;
  buf.fill(kCanary);
  write_pointer_attributes(buf.data(), a, 12);
  Cuda12PointerAttributes v12;
  std::memcpy(&v12, buf.data(), sizeof v12);
  EXPECT_EQ(v12.type, cudaMemoryTypeHost);
  EXPECT_EQ(v12.device, 1);
  EXPECT_EQ(v12.devicePointer, &device_word);
  EXPECT_EQ(v12.hostPointer, &device_word);
  for (std::size_t i = sizeof v12; i < buf.size(); ++i) EXPECT_EQ(buf[i], kCanary) << i;

  buf.fill(kCanary);
  write_pointer_attributes(buf.data(), a, 13);
  cudaPointerAttributes v13;
  std::memcpy(&v13, buf.data(), sizeof v13);
  EXPECT_EQ(v13.hostPointer, &device_word);
  for (long r : v13.reserved) EXPECT_EQ(r, 0);
}

// This test program links no CUDA runtime: it gets the toolkit's.
TEST(RuntimeAbi, AProcessWithoutARuntimeGetsTheToolkits) {
  EXPECT_EQ(linked_cudart_major(), CUDART_VERSION / 1000);
}

}  // namespace
}  // namespace phantora::intercept
