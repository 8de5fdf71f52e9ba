#include "module_image.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace phantora::shim {
namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;         // the fat binary's own header
constexpr uint32_t kFatbinWrapperMagic = 0x466243b1u;  // nvcc's registration wrapper

}  // namespace

size_t image_size(const void* image) {
  const auto* p = static_cast<const unsigned char*>(image);
  if (std::memcmp(p,
                  "\x7f"
                  "ELF",
                  4) == 0 &&
      p[4] == 2 /* ELFCLASS64 */) {
    uint64_t phoff = 0, shoff = 0;
    uint16_t phentsize = 0, phnum = 0, shentsize = 0, shnum = 0;
    std::memcpy(&phoff, p + 0x20, 8);
    std::memcpy(&shoff, p + 0x28, 8);
    std::memcpy(&phentsize, p + 0x36, 2);
    std::memcpy(&phnum, p + 0x38, 2);
    std::memcpy(&shentsize, p + 0x3a, 2);
    std::memcpy(&shnum, p + 0x3c, 2);
    return std::max<uint64_t>(phoff + uint64_t{phentsize} * phnum,
                              shoff + uint64_t{shentsize} * shnum);
  }
  uint32_t magic = 0;
  std::memcpy(&magic, p, 4);
  if (magic == kFatbinMagic) {  // u32 magic, u16 version, u16 header size, u64 size after it
    uint16_t header = 0;
    uint64_t size = 0;
    std::memcpy(&header, p + 6, 2);
    std::memcpy(&size, p + 8, 8);
    return header + size;
  }
  return std::strlen(reinterpret_cast<const char*>(p));
}

const void* fatbin_of_wrapper(const void* wrapper) {
  if (wrapper == nullptr) return nullptr;
  uint32_t magic = 0;
  std::memcpy(&magic, wrapper, 4);
  if (magic != kFatbinWrapperMagic) return nullptr;
  const void* data = nullptr;
  std::memcpy(&data, static_cast<const char*>(wrapper) + 8, sizeof(data));
  if (data == nullptr) return nullptr;
  std::memcpy(&magic, data, 4);
  return magic == kFatbinMagic ? data : nullptr;
}

}  // namespace phantora::shim
