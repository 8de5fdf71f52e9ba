#include "torch_grouped_mm.hpp"

#include <array>
#include <vector>

#include "byte_reads.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {
namespace {

// CUTLASS's element types as the set-up kernel's template arguments name them.
struct CutlassType {
  std::string_view name;
  wire::DataType type;
};
constexpr CutlassType kCutlassTypes[] = {
    {"cutlass::bfloat16_t", wire::DataType::kBF16},
    {"cutlass::half_t", wire::DataType::kF16},
    {"float", wire::DataType::kF32},
    {"cutlass::float_e4m3_t", wire::DataType::kFP8E4M3},
    {"cutlass::float_e5m2_t", wire::DataType::kFP8E5M2},
};

wire::DataType cutlass_type(std::string_view name) {
  for (const CutlassType& t : kCutlassTypes) {
    if (t.name == name) return t.type;
  }
  return wire::DataType::kUnknown;
}

// Parameter positions of the 27-parameter layout (GroupMMCommon.cuh): A, B, output, two scales,
// five pointer arrays, problem sizes, three CUTLASS strides, then these.
constexpr int kOffs = 14;
constexpr int kM = 15, kN = 16, kK = 17;
constexpr int kShapeA = 21, kShapeB = 22;  // after the strides of A, B and the output
constexpr int kARowMajor = 25, kBRowMajor = 26;
constexpr size_t kParams = 27;

constexpr int64_t kMaxDim = int64_t{1} << 31;
constexpr uint32_t kMaxGroups = 1024;  // one thread per group, one block

}  // namespace

std::optional<GroupedMmSetup> classify_grouped_mm_setup(std::string_view base,
                                                        std::string_view demangled) {
  if (base != kGroupedMmSetupKernel) return std::nullopt;
  const std::vector<std::string_view> t = template_args(demangled);
  const std::vector<std::string_view> p = parameter_types(demangled);
  if (t.size() < 3 || p.size() != kParams || p[kOffs] != "int const*") return std::nullopt;
  for (int i : {kM, kN, kK}) {
    if (p[i] != "int") return std::nullopt;
  }
  for (int i = kK + 1; i <= kShapeB; ++i) {
    if (p[i] != "std::array<long, 3ul>") return std::nullopt;
  }
  if (p[kARowMajor] != "bool" || p[kBRowMajor] != "bool") return std::nullopt;
  GroupedMmSetup s{cutlass_type(t[0]), cutlass_type(t[1]), cutlass_type(t[2])};
  if (s.a == wire::DataType::kUnknown || s.b == wire::DataType::kUnknown ||
      s.out == wire::DataType::kUnknown) {
    return std::nullopt;
  }
  return s;
}

std::optional<GroupedMm> read_grouped_mm(const GroupedMmSetup& setup, void* const* args,
                                         uint32_t groups) {
  if (args == nullptr || groups == 0 || groups > kMaxGroups) return std::nullopt;
  auto int_at = [&](int i) { return int64_t{load<int32_t>(static_cast<uint8_t*>(args[i]), 0)}; };
  auto sizes_at = [&](int i) {
    return load<std::array<int64_t, 3>>(static_cast<uint8_t*>(args[i]), 0);
  };
  GroupedMm g;
  g.types = setup;
  g.groups = groups;
  g.m = int_at(kM), g.n = int_at(kN), g.k = int_at(kK);
  g.a_row_major = load<bool>(static_cast<uint8_t*>(args[kARowMajor]), 0);
  g.b_row_major = load<bool>(static_cast<uint8_t*>(args[kBRowMajor]), 0);
  const std::array<int64_t, 3> shape_a = sizes_at(kShapeA), shape_b = sizes_at(kShapeB);
  // Which dimension the offsets split, and that dimension's extent in the 2-D operand:
  // M rows of A (2-D A, 3-D B), N columns of B (3-D A, 2-D B), K columns of A (both 2-D).
  int64_t* varying = nullptr;
  if (g.m < 0) {
    g.split = 'm', varying = &g.m, g.split_total = shape_a[0];
  } else if (g.n < 0) {
    g.split = 'n', varying = &g.n, g.split_total = shape_b[1];
  } else if (g.k < 0) {
    g.split = 'k', varying = &g.k, g.split_total = shape_a[1];
  }
  if (varying != nullptr) {
    if (g.split_total <= 0 || g.split_total >= kMaxDim) return std::nullopt;
    *varying = (g.split_total + g.groups - 1) / g.groups;
  }
  for (int64_t d : {g.m, g.n, g.k}) {
    if (d <= 0 || d >= kMaxDim) return std::nullopt;
  }
  return g;
}

bool is_grouped_gemm_kernel(std::string_view mangled) {
  constexpr std::string_view kDeviceKernel = "_ZN7cutlass13device_kernelI";
  return mangled.substr(0, kDeviceKernel.size()) == kDeviceKernel &&
         mangled.find("GroupProblemShape") != std::string_view::npos;
}

}  // namespace phantora::shim
