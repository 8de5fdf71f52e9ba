// torch._grouped_mm on Hopper (aten/src/ATen/native/cuda/GroupMM.cu): one launch of the set-up
// kernel at::cuda::detail::prepare_grouped_gemm_data (GroupMMCommon.cuh, one thread per group)
// writes every group's pointers and problem size to the device, then one CUTLASS grouped GEMM
// kernel (cutlass::device_kernel<... GroupProblemShape ...>) computes all groups. The GEMM's
// own arguments are device pointers; the set-up kernel's are the problem: M, N, K (one of them
// negative when it varies by group, its offsets then on the device), the tensors' sizes and
// whether A and B are row-major. The shim reads them from the set-up launch and sends the GEMM
// that follows as a GEMM record, priced by the GEMM model. Pure string and byte work.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "phantora/protocol.hpp"

namespace phantora::shim {

// The set-up kernel's qualified name (no template arguments).
inline constexpr std::string_view kGroupedMmSetupKernel =
    "at::cuda::detail::prepare_grouped_gemm_data";

// A set-up kernel whose parameters the shim can read, and its element types.
struct GroupedMmSetup {
  wire::DataType a = wire::DataType::kUnknown;
  wire::DataType b = wire::DataType::kUnknown;
  wire::DataType out = wire::DataType::kUnknown;
};
// From the set-up kernel's demangled name: its element types and the parameter list of the
// releases that pass M, N, K as integers and both tensors' sizes (27 parameters); nullopt for
// another layout (older releases without the sizes, newer ones with a GroupCountInfo struct).
std::optional<GroupedMmSetup> classify_grouped_mm_setup(std::string_view base,
                                                        std::string_view demangled);

// One grouped GEMM as priced: `groups` GEMMs of m x n x k. Where a dimension varies by group
// (`split` names it: 'm', 'n' or 'k'; 0 when every operand is 3-D and none varies), the group
// sizes are on the device: the tensor's whole extent of that dimension (`split_total`, an upper
// bound of the groups' sum) is taken as split evenly, each group the rounded-up share.
struct GroupedMm {
  int64_t groups = 0;
  int64_t m = 0, n = 0, k = 0;
  char split = 0;
  int64_t split_total = 0;
  bool a_row_major = true, b_row_major = false;
  GroupedMmSetup types;
};
// From a set-up launch's arguments (`args`: one pointer per parameter) and its block size (one
// thread per group); nullopt when the values are implausible.
std::optional<GroupedMm> read_grouped_mm(const GroupedMmSetup& setup, void* const* args,
                                         uint32_t groups);

// Whether a kernel, by its mangled name, is a CUTLASS grouped GEMM (cutlass::device_kernel of a
// GemmUniversal over a GroupProblemShape). The mangled name, because these names are too deep
// for the demangler.
bool is_grouped_gemm_kernel(std::string_view mangled);

}  // namespace phantora::shim
