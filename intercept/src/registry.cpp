#include "registry.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <set>

#include "../runtime_abi.hpp"
#include "address_space.hpp"

namespace phantora::shim {
namespace {

struct Registry {
  std::mutex mu;
  std::map<const void*, KernelInfo*> by_host_fun;
  std::set<const KernelInfo*> handles;
  std::map<const void*, SymbolInfo> symbols;
  // Device variables live in their own address range: they exist on every device and are
  // part of the module image, not of the memory cudaMalloc hands out.
  uint64_t next_symbol = 0;
};

Registry& registry() {
  static Registry* r = new Registry();
  return *r;
}

}  // namespace

KernelInfo* register_kernel(const void* host_fun, const char* device_name, const void* image,
                            size_t image_bytes) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto [it, inserted] = r.by_host_fun.try_emplace(host_fun, nullptr);
  if (inserted) {
    it->second = new KernelInfo();
    it->second->name = device_name != nullptr ? device_name : "<unnamed>";
    it->second->image = image;
    it->second->image_bytes = image_bytes;
    r.handles.insert(it->second);
  }
  return it->second;
}

KernelInfo* find_kernel(const void* func) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (auto it = r.by_host_fun.find(func); it != r.by_host_fun.end()) return it->second;
  auto* as_handle = static_cast<const KernelInfo*>(func);
  if (r.handles.contains(as_handle)) return const_cast<KernelInfo*>(as_handle);
  return nullptr;
}

void register_symbol(const void* host_var, uint64_t size) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.symbols.contains(host_var)) return;
  r.symbols[host_var] = SymbolInfo{AddressSpace::get().symbol_region() + r.next_symbol, size};
  r.next_symbol +=
      (size + AddressSpace::kAlignment - 1) / AddressSpace::kAlignment * AddressSpace::kAlignment;
}

std::optional<SymbolInfo> find_symbol(const void* host_var) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.symbols.find(host_var);
  if (it == r.symbols.end()) return std::nullopt;
  return it->second;
}

}  // namespace phantora::shim

namespace phantora::shim {

namespace {

// PyTorch sizes its multi-tensor metadata by the CUDA major it was built with
// (torch_multi_tensor.hpp): that of the runtime it links.
MultiTensorLimits process_multi_tensor_limits() {
  MultiTensorLimits l;
  l.large_kernel_args = intercept::linked_cudart_major() >= 13;
  return l;
}

}  // namespace

const TorchKernel& torch_kernel(KernelInfo& k) {
  std::call_once(k.classified, [&k] {
    const std::string demangled = demangle(k.name.c_str());
    k.torch = classify_torch_kernel(demangled);
    if (k.torch.family == TorchFamily::kMultiTensor) {
      k.torch.multi_tensor_limits = process_multi_tensor_limits();
    }
    if (k.torch.family == TorchFamily::kUnknown) k.llmc = classify_llmc(demangled);
  });
  return k.torch;
}

const std::optional<LlmcKernel>& llmc_kernel(KernelInfo& k) {
  torch_kernel(k);
  return k.llmc;
}

}  // namespace phantora::shim
