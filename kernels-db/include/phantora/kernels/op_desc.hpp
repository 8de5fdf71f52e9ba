// Plain descriptions of the GPU operations the cost model knows by shape, and their canonical
// signature strings: the key of the kernel database (docs/kernels-db.md, "Signatures").
//
// A signature is `<family>:<key>=<value>,<key>=<value>,...` with a fixed key order per family,
// integers in decimal without sign or leading zeros, booleans as 0/1 and enumerations as lower
// case tokens. Rendering is the only way to build one; parsing re-renders and rejects any text
// that differs, so two spellings of the same operation cannot both exist in a database.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "phantora/protocol.hpp"

namespace phantora::kernels {

enum class DType : uint8_t { kF16, kBF16, kF32, kTF32, kF64, kF8E4M3, kF8E5M2, kI8, kI32 };
std::string_view to_string(DType t);  // f16, bf16, f32, tf32, f64, f8e4m3, f8e5m2, i8, i32
std::optional<DType> parse_dtype(std::string_view name);
uint64_t dtype_bytes(DType t);  // storage size of one element (tf32 is stored as f32)
// The cost model's type for a library call's element type (protocol.hpp says why the two stay
// apart). u8 is priced as i8 (same size, same integer tensor-core path); the types no GEMM takes
// (i64, u32, u64) and kUnknown as f32.
DType dtype_of(wire::DataType t);

// One cuBLAS/cuBLASLt matrix multiply: C = op(A) · op(B) (+ C when beta != 0), `batch` times.
// m, n, k are the dimensions after the transposes (C is m×n, the inner dimension is k).
struct GemmDesc {
  uint64_t m = 0, n = 0, k = 0;
  uint64_t batch = 1;
  DType a = DType::kBF16, b = DType::kBF16, c = DType::kBF16;
  DType compute = DType::kF32;  // accumulation type (tf32 for CUBLAS_COMPUTE_32F_FAST_TF32)
  bool trans_a = false, trans_b = false;
  bool accumulate = false;        // beta != 0: C is read as well as written
  std::string epilogue = "none";  // cuBLASLt epilogue, lower case: none, bias, relu, gelu, ...
};

// Which kernel family runs it: FlashAttention 2 (PyTorch SDPA's flash backend), 3,
// FlexAttention's Triton kernels (inductor's flex_attention templates), PyTorch's
// memory-efficient kernels (SDPA's EFFICIENT_ATTENTION backend) or cuDNN's attention.
// The protocol's vocabulary: the shim names the implementation on the wire.
using AttentionImpl = wire::AttentionImpl;
std::string_view to_string(AttentionImpl impl);  // fa2, fa3, flex, mem_efficient, cudnn
std::optional<AttentionImpl> parse_attention_impl(std::string_view name);

// One fused (flash / SDPA) attention call, forward or backward.
struct AttentionDesc {
  uint64_t batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_k = 0, head_dim = 0;
  bool causal = false;
  bool backward = false;
  DType dtype = DType::kBF16;
  AttentionImpl impl = AttentionImpl::kFlash2;
};

// One cuDNN convolution kernel: the protocol's shape (wire::ConvShape says what each field is)
// and which of its three products it computes.
struct ConvDesc {
  uint64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, p = 0, q = 0;
  uint64_t groups = 1, stride_h = 1, stride_w = 1;
  wire::ConvPass pass = wire::ConvPass::kForward;
  bool channels_first = false;  // NCHW activations (signature layout=nchw), else NHWC
  DType dtype = DType::kBF16;
};
std::string_view to_string(wire::ConvPass pass);  // fprop, dgrad, wgrad

// A memory-bound kernel known by its family and the bytes it moves (elementwise, reduction,
// norm, softmax, embedding, foreach, cast, ...). `op` is a lower case token.
struct MemoryOpDesc {
  std::string op = "elementwise";
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
};

// A copy by the copy engines (cudaMemcpy*): its kind, size and, for host copies, whether the
// host memory is page-locked.
struct CopyDesc {
  wire::CopyKind kind = wire::CopyKind::kDeviceToDevice;
  uint64_t bytes = 0;
  bool pinned_host = true;
};

// A kernel known only by its launch: the mangled name and the launch configuration. (How much
// work a launch of it does is not part of it: kernels whose work the shim decodes are priced
// and measured by their attention or memory-bound signature instead.)
struct KernelDesc {
  std::string name;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint64_t shared_mem = 0;
};

// The memory-bound work the shim decoded from a launch (wire::Launch::work and its byte
// counts), named by the family token of its signature; nullopt for kNone and the attention
// kinds, which are priced by shape (AttentionDesc).
std::optional<MemoryOpDesc> memory_op_desc(wire::WorkKind kind, uint64_t bytes_read,
                                           uint64_t bytes_written);

// The attention call the shim decoded from a launch (wire::KernelWork's attention kinds);
// nullopt for every other kind.
std::optional<AttentionDesc> attention_desc(const wire::KernelWork& work);

// The convolution the shim decoded from a launch (wire::WorkKind::kConvolution); nullopt for
// every other kind.
std::optional<ConvDesc> conv_desc(const wire::KernelWork& work);

// cudaMemset*: the memory operation `memset`, writing `bytes` and reading nothing.
MemoryOpDesc memset_desc(uint64_t bytes);
// Whether `d` is one (the profiler replays those with cudaMemsetAsync).
bool is_memset(const MemoryOpDesc& d);

std::string signature(const GemmDesc& d);
std::string signature(const AttentionDesc& d);
std::string signature(const ConvDesc& d);
std::string signature(const MemoryOpDesc& d);
std::string signature(const CopyDesc& d);
std::string signature(const KernelDesc& d);

// The family of a signature: "gemm", "attn", "conv", "mem", "copy", "kernel"; empty when
// malformed.
std::string_view signature_family(std::string_view sig);

// Parse a canonical signature; nullopt for another family or any non-canonical text.
std::optional<GemmDesc> parse_gemm_signature(std::string_view sig);
std::optional<AttentionDesc> parse_attention_signature(std::string_view sig);
std::optional<ConvDesc> parse_conv_signature(std::string_view sig);
std::optional<MemoryOpDesc> parse_memory_signature(std::string_view sig);
std::optional<CopyDesc> parse_copy_signature(std::string_view sig);
std::optional<KernelDesc> parse_kernel_signature(std::string_view sig);

// Any operation a signature can name: one parse for every family, so a caller that treats the
// families differently does it with std::visit on the type rather than by the family's name.
using OpDesc = std::variant<GemmDesc, AttentionDesc, ConvDesc, MemoryOpDesc, CopyDesc, KernelDesc>;
// The operation a canonical signature names; nullopt for any other text.
std::optional<OpDesc> parse_signature(std::string_view sig);

// True when `sig` is the canonical rendering of an operation of one of the families above.
bool is_canonical_signature(std::string_view sig);

}  // namespace phantora::kernels
