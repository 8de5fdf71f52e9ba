// Running PyTorch kernels on tiny tensors, on the shadow store (shadow.hpp). Kernels are not
// executed in general, but control flow in frameworks sometimes depends on a few values computed
// on the GPU: torch.distributed's object collectives concatenate and sum the pickled sizes
// (`torch.cat`, `torch.sum(...).item()`), step counters are incremented with `+=`. For the
// families whose arguments torch_kernel_args.hpp decodes, a launch over at most
// kMaxEmulatedElements elements whose operation is known (fill, add, multiply, copy/cast,
// comparisons, == and !=; sum, product, max, min, any, all; concatenation; arange; cumsum
// through cub's scan) computes its result from the shadow bytes of its inputs. Any other launch
// of a decoded family forgets what its output held, so stale bytes of an earlier host write are
// not read back as if the kernel had kept them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "torch_kernel_args.hpp"
#include "torch_kernel_name.hpp"

namespace phantora::shim {

inline constexpr uint64_t kMaxEmulatedElements = 1 << 16;
// Elementwise launches and reductions over more elements, up to this many, are computed only
// where an input holds stored bytes (shadow.hpp): a host-written tensor such as a tokenizer's
// attention mask, which transformers reduces to decide whether SDPA needs a mask at all. Over
// inputs nothing wrote they forget their output, so large activations cost no host work.
inline constexpr uint64_t kMaxEmulatedKnownElements = 1 << 20;

struct ByteRange {
  uint64_t addr = 0;
  uint64_t bytes = 0;
};

struct SmallKernelPlan {
  std::vector<ByteRange> inputs;   // what the kernel reads (wait for pending payloads first)
  std::vector<ByteRange> outputs;  // what it writes
  std::function<void()> run;       // computes the outputs; empty: the outputs are forgotten
};

// What to do for this launch on the shadow store, from its decoded arguments
// (torch_kernel_args.hpp); nullopt when the family or its arguments are not known (nothing is
// touched then).
std::optional<SmallKernelPlan> plan_small_kernel(const TorchKernel& k, const DecodedArgs& decoded);
// Decodes and plans in one call.
std::optional<SmallKernelPlan> plan_small_kernel(const TorchKernel& k, void* const* args,
                                                 const std::array<uint32_t, 3>& grid);

// Carries out a plan: forgets the outputs when it cannot compute them.
void run_small_kernel(const SmallKernelPlan& plan);

}  // namespace phantora::shim
