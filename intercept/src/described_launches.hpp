// Launches described from the host program's side, for kernels whose launch says nothing the
// shim can read: inductor's Triton kernels carry their shapes as constants in compiled code. A
// start-up hook of `phantora run` (tools/python/phantora_inductor_launches.py) calls
// phantora_describe_next_attention() with FlexAttention's shapes, or
// phantora_describe_memory_op() with a pointwise or reduction kernel's bytes, just before
// such a launch; the description applies to the calling thread's next launch of that kernel and
// only to it.
#pragma once

#include <optional>
#include <string_view>

#include "torch_kernel_args.hpp"

namespace phantora::shim {

// Whether a launch of `kernel` (the name its module gives it) is of the function a description
// names `described`: the same name, or Triton 2's name for a specialization of it.
bool names_described_kernel(std::string_view kernel, std::string_view described);

// The work of this thread's pending description if it names `kernel`, which uses it up; a
// launch of another kernel leaves it pending (the hook describes each launch again).
std::optional<LaunchWork> take_described_work(std::string_view kernel);

}  // namespace phantora::shim
