// Reading a PyTorch kernel's launch arguments (the `void** args` of cudaLaunchKernel: one
// pointer per parameter) by the family torch_kernel_name.hpp found. The layouts are PyTorch's
// parameter structs (ReduceOp and OffsetCalculator in Reduce.cuh / OffsetCalculator.cuh,
// CatArrInputTensorMetadata in Shape.cu) as compiled for CUDA (MAX_DIMS 25, 32-bit indices);
// every read is checked for plausibility, and a launch whose arguments do not fit is treated
// as an unknown kernel rather than misread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "torch_kernel_name.hpp"

namespace phantora::shim {

// Maps a linear index to byte offsets of NARGS operands, like PyTorch's OffsetCalculator.
struct OffsetCalc {
  int dims = 0;
  int nargs = 0;
  std::array<uint32_t, 25> sizes{};
  std::array<std::array<uint32_t, 2>, 25> strides{};  // bytes, per dim and operand
  std::array<uint64_t, 2> offsets(uint64_t linear) const;
};

struct ReduceArgs {
  int element_size = 0;      // ReduceConfig::element_size_bytes: sizeof the accumulator (arg_t)
  uint64_t num_inputs = 0;   // elements reduced into each output
  uint64_t num_outputs = 0;  // outputs
  OffsetCalc input_calc, output_calc;
  uint64_t src = 0;
  uint64_t dst = 0;
  int noutputs = 0;  // 2 for reductions that also write an index (not emulated)
  bool accumulate = false;
  bool final_output = true;
  std::array<uint8_t, 16> ident{};  // the accumulator's identity, raw
};
std::optional<ReduceArgs> read_reduce(const TorchKernel& k, void* const* args);

struct CatInput {
  uint64_t data = 0;
  uint32_t offset = 0, dim_size = 0, elements = 0;
  bool contiguous = true;
  std::array<uint32_t, 4> size{}, stride{};
};
struct CatArgs {
  uint64_t output = 0;
  std::vector<CatInput> inputs;  // gridDim.y of them
  std::array<uint32_t, 4> out_size{}, out_stride{};
  int concat_dim = 0;
  uint32_t dim_stride = 0;
};
std::optional<CatArgs> read_cat(const TorchKernel& k, void* const* args, uint32_t grid_y);

// Elementwise launches: element count and the operands' base addresses (output first).
struct ElementwiseArgs {
  uint64_t n = 0;
  std::vector<uint64_t> data;  // empty for kStrided (addresses are inside a lambda)
  const void* functor = nullptr;
  bool contiguous = false;  // every operand dense from its base address
  // Casting loads (TorchKernel::unrolled_cast): c10::ScalarType of the output, then the inputs.
  std::vector<int8_t> scalar_types;
};
// Element size of a c10::ScalarType code; 0 for codes the shim does not compute with.
int scalar_type_bytes(int8_t code);
// The demangled name of a c10::ScalarType code's C++ type ("" if not computed with).
const char* scalar_type_name(int8_t code);
std::optional<ElementwiseArgs> read_elementwise(const TorchKernel& k, void* const* args);

// What a launch moves through memory, for the memory-bound cost model, or the shape of an
// attention call, for the attention model: the wire's typed description, sent as decoded.
using LaunchWork = wire::KernelWork;
// elementwise_kernel_with_index(N, f, out) (arange, linspace): the count, the lambda's bytes
// (its captures) and the output's address.
struct IndexedFillArgs {
  uint64_t n = 0;
  const void* functor = nullptr;
  uint64_t out = 0;
};
// cub's DeviceScanKernel(in, out, tile state, start tile, scan op, init value, num_items).
struct ScanArgs {
  uint64_t in = 0, out = 0, n = 0;
  int32_t start_tile = 0;
};
// The structured arguments of a launch of the elementwise, reduce or cat families (and of the
// index fills and scans small_kernels.hpp computes), read once per launch and shared by
// launch_work() and plan_small_kernel() (small_kernels.hpp).
struct DecodedArgs {
  std::optional<ElementwiseArgs> elementwise;
  std::optional<ReduceArgs> reduce;
  std::optional<CatArgs> cat;
  std::optional<IndexedFillArgs> indexed_fill;
  std::optional<ScanArgs> scan;
};
DecodedArgs decode_args(const TorchKernel& k, void* const* args,
                        const std::array<uint32_t, 3>& grid);

// `decoded` from decode_args() of the same launch; the other families read `args` directly.
std::optional<LaunchWork> launch_work(const TorchKernel& k, const DecodedArgs& decoded,
                                      void* const* args, const std::array<uint32_t, 3>& grid);
// Decodes and prices in one call (for callers that do not also plan the launch).
std::optional<LaunchWork> launch_work(const TorchKernel& k, void* const* args,
                                      const std::array<uint32_t, 3>& grid);

}  // namespace phantora::shim
