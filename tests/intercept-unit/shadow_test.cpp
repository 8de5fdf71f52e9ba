// The shadow store's reads: known bytes come back as written, unknown ones as zero, and a
// destination that already holds zeros is not written (so a fresh host buffer stays unbacked).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "shadow.hpp"

namespace {

using phantora::shim::ShadowStore;

// Device addresses no other test of this program writes.
constexpr uint64_t kBase = 0x7a00'0000'0000ull;

// The process's resident anonymous memory (RssAnon of /proc/self/status), in bytes.
uint64_t rss_anon() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("RssAnon:", 0) == 0) return std::stoull(line.substr(8)) * 1024;
  }
  return 0;
}

TEST(ShadowStore, ReadGivesWrittenBytesAndZerosElsewhere) {
  const std::vector<uint8_t> known = {1, 2, 3};
  ShadowStore::get().write(kBase + 5000, known.data(), known.size());
  std::vector<uint8_t> out(10000, 0xab);  // garbage where zeros must appear
  ShadowStore::get().read(kBase, out.data(), out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t want = i >= 5000 && i < 5003 ? known[i - 5000] : 0;
    ASSERT_EQ(out[i], want) << "byte " << i;
  }
}

TEST(ShadowStore, UnknownBytesIntoAFreshBufferTakeNoMemory) {
  // 256 MiB of device memory nothing wrote, copied into a fresh anonymous mapping: every byte
  // must read zero, and the mapping must stay (almost) unbacked. Written page by page it would
  // add 256 MiB of resident memory.
  constexpr uint64_t kBytes = 256ull << 20;
  void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* buf = static_cast<uint8_t*>(p);
  const uint64_t before = rss_anon();
  ShadowStore::get().read(kBase + (1ull << 32), buf, kBytes);
  const uint64_t after = rss_anon();
  EXPECT_LT(after, before + (16ull << 20))
      << "resident anonymous memory grew by " << (after - before) / (1 << 20) << " MiB";
  // Zero where it was never written...
  EXPECT_EQ(buf[0], 0);
  EXPECT_EQ(std::memcmp(buf, buf + 1, kBytes - 1), 0);
  // ...and where the buffer held something, the unknown bytes still overwrite it with zeros.
  std::memset(buf + 12345, 0x5a, 100);
  ShadowStore::get().read(kBase + (1ull << 32), buf, kBytes);
  EXPECT_EQ(buf[12345], 0);
  EXPECT_EQ(std::memcmp(buf + 12345, buf + 12346, 99), 0);
  munmap(p, kBytes);
}

}  // namespace
