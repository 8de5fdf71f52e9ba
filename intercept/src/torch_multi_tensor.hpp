// PyTorch's horizontally fused kernels: `multi_tensor_apply_kernel<Metadata, Functor, ...>`
// (ATen/native/cuda/MultiTensorApply.cuh), behind the `_foreach_*` ops, gradient-norm clipping
// and the fused Adam / AdamW / Adagrad optimizers. One launch walks chunks of up to 65,536
// elements of several tensors; its first parameter, passed by value, lists for every block the
// tensor and chunk it handles and every tensor's element count. Reading those gives the exact
// number of elements the launch touches, and the functor's name how many tensor lists it reads
// and writes.
//
// The metadata's array sizes are compile-time constants of the PyTorch build: builds against
// CUDA 13 and later use the 32 KiB kernel-parameter limit (770 / 448 / 336 / 252 / 210 tensors
// by depth, 2,240 blocks, 16-bit block-to-tensor indices), older ones the 4 KiB limit (110 / 64 /
// 48 / 36 / 30 tensors, 320 blocks, 8-bit indices). Pure string and byte work: which one a
// process uses is the caller's to say.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace phantora::shim {

enum class MultiTensorMetadata : uint8_t {
  kTensorList,      // TensorListMetadata<depth>
  kScalarList,      // TensorListScalarListMetadata<scalar, depth>: a scalar per tensor
  kFusedOptimizer,  // FusedOptimizerTensorListMetadata<depth>: a step-count pointer per tensor
};

// What classify_multi_tensor() reads from the kernel's name.
struct MultiTensorKernel {
  MultiTensorMetadata metadata = MultiTensorMetadata::kTensorList;
  int depth = 0;         // tensor lists the metadata carries (1..5)
  int scalar_bytes = 0;  // kScalarList: size of each per-tensor scalar
  // Bytes read and written per element of the walked tensors, summed over the lists the
  // functor reads and writes (a list read and written in place counts in both).
  int read_bytes_per_element = 0;
  int written_bytes_per_element = 0;
};

// From the template arguments of a multi_tensor_apply_kernel (the metadata type and the
// functor's text, as demangled); nullopt when the functor is not one whose lists are known.
std::optional<MultiTensorKernel> classify_multi_tensor(std::string_view metadata,
                                                       std::string_view functor);

// The two builds' array sizes.
struct MultiTensorLimits {
  bool large_kernel_args = true;  // PyTorch built with CUDA >= 13 (not every such release)
  int max_tensors(const MultiTensorKernel& k) const;
  int max_blocks() const { return large_kernel_args ? 2240 : 320; }
  int index_bytes() const { return large_kernel_args ? 2 : 1; }
  // The other build's sizes: PyTorch 2.11's CUDA 13 wheel still passes the 4 KB metadata.
  MultiTensorLimits other() const { return MultiTensorLimits{!large_kernel_args}; }
  // The metadata's size up to the end of its block map (what multi_tensor_elements reads).
  size_t metadata_bytes(const MultiTensorKernel& k) const;
};

// Elements the launch's `blocks` blocks walk, summed over the chunks they were given; nullopt
// when the metadata is implausible (an index past the tensors, a chunk past its tensor's end,
// chunks of a tensor out of order, more blocks than the metadata holds), so a misread launch —
// or metadata read with the other build's layout — is never priced. `metadata` holds at least
// limits.metadata_bytes(k) bytes.
std::optional<uint64_t> multi_tensor_elements(const MultiTensorKernel& k,
                                              const MultiTensorLimits& limits, const void* metadata,
                                              uint32_t blocks);

}  // namespace phantora::shim
