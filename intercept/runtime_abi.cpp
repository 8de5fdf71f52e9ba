#include "runtime_abi.hpp"

#include <link.h>

#include <cstdlib>
#include <cstring>

namespace phantora::intercept {

int linked_cudart_major() {
  static const int major = [] {
    int found = 0;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
          const char* at =
              info->dlpi_name != nullptr ? std::strstr(info->dlpi_name, "libcudart.so.") : nullptr;
          if (at != nullptr)
            *static_cast<int*>(data) = std::atoi(at + std::strlen("libcudart.so."));
          return *static_cast<int*>(data) > 0 ? 1 : 0;
        },
        &found);
    return found > 0 ? found : CUDART_VERSION / 1000;
  }();
  return major;
}

std::size_t pointer_attributes_size(int cudart_major) {
  static_assert(offsetof(cudaPointerAttributes, reserved) == 24,
                "CUDA 12's cudaPointerAttributes: type, device, devicePointer, hostPointer");
  return cudart_major >= 13 ? sizeof(cudaPointerAttributes)
                            : offsetof(cudaPointerAttributes, reserved);
}

void write_pointer_attributes(void* out, const cudaPointerAttributes& attributes,
                              int cudart_major) {
  std::memcpy(out, &attributes, pointer_attributes_size(cudart_major));
}

}  // namespace phantora::intercept
