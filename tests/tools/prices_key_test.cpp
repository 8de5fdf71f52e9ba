#include "prices_key.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "phantora/fnv1a.hpp"
#include "phantora/kernels/builtin_key.hpp"

namespace t = phantora::tools;

TEST(Fnv1a, PublishedTestVectors) {
  // The FNV reference's 64-bit FNV-1a vectors (the empty string is the offset basis).
  EXPECT_EQ(phantora::fnv1a(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(phantora::fnv1a("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(phantora::fnv1a("foobar"), 0x85944171f73967e8ull);
  // Continuing from a hash is hashing the concatenation.
  EXPECT_EQ(phantora::fnv1a("bar", phantora::fnv1a("foo")), phantora::fnv1a("foobar"));
}

TEST(PricesKey, PresetThenTheConstantsAndFilesThatPriceKernels) {
  const std::string builtin = phantora::kernels::builtin_data_key();
  ASSERT_EQ(builtin.size(), 16u);
  EXPECT_EQ(builtin.find_first_not_of("0123456789abcdef"), std::string::npos);
  const std::string h100 = t::prices_key("h100", std::nullopt, std::nullopt);
  // The same inputs, the same key; another preset (the same device name: h100-500w) another.
  EXPECT_EQ(h100, t::prices_key("h100", std::nullopt, std::nullopt));
  ASSERT_EQ(h100.size(), std::string("h100-").size() + 16);
  EXPECT_EQ(h100.rfind("h100-", 0), 0u);
  EXPECT_NE(h100, t::prices_key("h100-500w", std::nullopt, std::nullopt));

  // Pinned times or a database change the key; so does the file changing in place.
  const std::filesystem::path csv =
      std::filesystem::path(testing::TempDir()) / "prices_key_times.csv";
  std::ofstream(csv) << "name,us\nk,1\n";
  const std::string pinned = t::prices_key("h100", std::nullopt, csv);
  EXPECT_NE(pinned, h100);
  EXPECT_EQ(pinned, t::prices_key("h100", std::nullopt, csv));
  EXPECT_NE(pinned, t::prices_key("h100", csv, std::nullopt));  // the same file as a database
  std::ofstream(csv) << "name,us\nk,2.5\n";
  EXPECT_NE(pinned, t::prices_key("h100", std::nullopt, csv));
  std::filesystem::remove(csv);
}
