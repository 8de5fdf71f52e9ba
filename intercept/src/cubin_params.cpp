#include "cubin_params.hpp"

#include <cstring>
#include <map>
#include <string>

namespace phantora::shim {
namespace {

// Attribute formats of .nv.info (EIFMT_*) and the one attribute read (EIATTR_KPARAM_INFO),
// as NVIDIA's cuobjdump names them; the layout below was checked against nvcc 13's output.
constexpr uint8_t kFormatNone = 1, kFormatByte = 2, kFormatHalf = 3, kFormatSized = 4;
// Two layouts are read, the second in newer toolkits' cubins (seen for kernels with large
// parameter structs): 0x17, u32 index, u16 ordinal, u16 offset, u32 whose top 14 bits are the
// size; 0x45, the same with the whole u32 the size.
constexpr uint8_t kKparamInfo = 0x17;
constexpr uint8_t kKparamInfoPlainSize = 0x45;

template <typename T>
bool read(const unsigned char* base, size_t bytes, uint64_t at, T& out) {
  if (at > bytes || bytes - at < sizeof(T)) return false;
  std::memcpy(&out, base + at, sizeof(T));
  return true;
}

}  // namespace

std::optional<std::vector<uint32_t>> cubin_param_sizes(const void* image, size_t bytes,
                                                       std::string_view kernel) {
  const auto* p = static_cast<const unsigned char*>(image);
  if (bytes < 0x40 ||
      std::memcmp(p,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      p[4] != 2)
    return std::nullopt;
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0, shstrndx = 0;
  if (!read(p, bytes, 0x28, shoff) || !read(p, bytes, 0x3a, shentsize) ||
      !read(p, bytes, 0x3c, shnum) || !read(p, bytes, 0x3e, shstrndx) || shentsize < 0x40 ||
      shstrndx >= shnum) {
    return std::nullopt;
  }
  // Elf64_Shdr: name at 0 (u32), offset at 0x18 and size at 0x20 (u64).
  auto section = [&](uint16_t i, uint32_t& name, uint64_t& offset, uint64_t& size) {
    const uint64_t at = shoff + uint64_t{i} * shentsize;
    return read(p, bytes, at, name) && read(p, bytes, at + 0x18, offset) &&
           read(p, bytes, at + 0x20, size) && offset <= bytes && bytes - offset >= size;
  };
  uint32_t ignored = 0;
  uint64_t strtab = 0, strtab_size = 0;
  if (!section(shstrndx, ignored, strtab, strtab_size)) return std::nullopt;
  const std::string wanted = ".nv.info." + std::string(kernel);
  for (uint16_t i = 0; i < shnum; ++i) {
    uint32_t name = 0;
    uint64_t offset = 0, size = 0;
    if (!section(i, name, offset, size) || name >= strtab_size) continue;
    const char* n = reinterpret_cast<const char*>(p + strtab + name);
    if (strnlen(n, strtab_size - name) != wanted.size() || wanted.compare(n) != 0) continue;
    std::map<uint16_t, uint32_t> by_ordinal;
    for (uint64_t at = offset; at + 2 <= offset + size;) {
      const uint8_t format = p[at], attribute = p[at + 1];
      if (format == kFormatSized) {
        uint16_t length = 0;
        if (!read(p, bytes, at + 2, length) || at + 4 + length > offset + size) break;
        if ((attribute == kKparamInfo || attribute == kKparamInfoPlainSize) && length == 12) {
          uint16_t ordinal = 0;
          uint32_t packed = 0;
          read(p, bytes, at + 8, ordinal);
          read(p, bytes, at + 12, packed);
          by_ordinal[ordinal] = attribute == kKparamInfo ? packed >> 18 : packed;
        }
        at += 4 + length;
      } else if (format == kFormatByte || format == kFormatHalf) {
        at += 4;
      } else if (format == kFormatNone) {
        at += 2;
      } else {
        return std::nullopt;  // an attribute format this reader does not know
      }
    }
    // No parameter table (or a kernel without parameters): the caller's other ways decide.
    if (by_ordinal.empty()) return std::nullopt;
    std::vector<uint32_t> sizes;
    for (const auto& [ordinal, bytes_of] : by_ordinal) {
      if (ordinal != sizes.size() || bytes_of == 0) return std::nullopt;  // a gap: incomplete
      sizes.push_back(bytes_of);
    }
    return sizes;
  }
  return std::nullopt;
}

}  // namespace phantora::shim
