// The shadow store's reads: known bytes come back as written, unknown ones as zero, and a
// destination that already holds zeros is not written (so a fresh host buffer stays unbacked);
// zeros written where nothing is stored take no memory, and over stored bytes clear them.
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

TEST(ShadowStore, ZerosTakeNoMemoryAndClearWhatTheyCover) {
  // 64 MiB of zero fills and zero writes in 1 MiB pieces (the largest a write keeps) over
  // device memory nothing wrote: a page per 4 KiB would be 64 MiB of host memory.
  const uint64_t base = kBase + (2ull << 32);
  const std::vector<uint8_t> zeros(ShadowStore::kMaxWrite, 0);
  const uint64_t before = rss_anon();
  for (uint64_t i = 0; i < 32; ++i) {
    ShadowStore::get().fill(base + i * ShadowStore::kMaxWrite, 0, ShadowStore::kMaxWrite);
    ShadowStore::get().write(base + (32 + i) * ShadowStore::kMaxWrite, zeros.data(), zeros.size());
  }
  const uint64_t after = rss_anon();
  EXPECT_LT(after, before + (8ull << 20))
      << "resident anonymous memory grew by " << (after - before) / (1 << 20) << " MiB";
  // Over stored bytes, zeros (written or filled, across a page boundary) replace them and
  // leave their neighbours.
  const uint64_t at = base + (100ull << 20) + 4090;
  const std::vector<uint8_t> ones(20, 1);
  ShadowStore::get().write(at, ones.data(), ones.size());
  ShadowStore::get().write(at + 2, zeros.data(), 4);
  ShadowStore::get().fill(at + 10, 0, 4);
  std::vector<uint8_t> out(20, 0xab);
  ShadowStore::get().read(at, out.data(), out.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const bool cleared = (i >= 2 && i < 6) || (i >= 10 && i < 14);
    ASSERT_EQ(out[i], cleared ? 0 : 1) << "byte " << i;
  }
}

}  // namespace
