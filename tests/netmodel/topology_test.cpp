// Topology: presets, the TOML format and its errors, routing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "phantora/netmodel/topology.hpp"

namespace phantora::net {
namespace {

// A small valid description; tests break one line of it at a time.
std::string small_toml(const std::string& extra_nic = "", const std::string& spine = "") {
  return R"(name = "tiny"
[cluster]
hosts = 4
gpus_per_host = 2
gpu_model = "h100"
[intra]
fabric = "nvswitch"
bandwidth_gbytes_per_s = 100.0
latency_ns = 25
nvls = false
[nic]
per_host = 2
bandwidth_gbytes_per_s = 10.0
latency_ns = 500
)" + extra_nic +
         R"([leaf]
kind = "rail"
hosts_per_leaf = 2
latency_ns = 300
[spine]
)" +
         (spine.empty() ? "count = 4\noversubscription = 1.0\nlatency_ns = 300\necmp = true\n"
                        : spine) +
         R"([nccl]
arch = "hopper"
channels = 4
nvls_channels = 4
)";
}

std::string error_of(const std::string& text) {
  try {
    Topology::from_toml_string(text, "tiny.toml");
  } catch (const TopologyError& e) {
    return e.what();
  }
  return "";
}

TEST(Topology, AllPresetsLoad) {
  const auto names = Topology::preset_names();
  for (const char* want : {"dgx-a100", "dgx-h100", "dgx-h200", "ethernet-2tier"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const auto& name : names) {
    const Topology t = Topology::preset(name, 4);
    EXPECT_EQ(t.hosts(), 4) << name;
    EXPECT_EQ(t.gpus_per_host(), 8) << name;
    // Links: 2 per GPU (to and from the switch), 2 per NIC, 2 per leaf-spine pair.
    const size_t expect = 2 * 32 + 2 * 4 * t.nics_per_host() +
                          2 * static_cast<size_t>(t.num_leaves()) * t.spec().spines;
    EXPECT_EQ(t.links().size(), expect) << name;
    EXPECT_NE(t.describe().find("4 hosts x 8"), std::string::npos) << t.describe();
  }
  EXPECT_THROW(Topology::preset("dgx-z9000", 2), TopologyError);
}

TEST(Topology, H100PresetCarriesTheReferenceFigures) {
  const Topology t = Topology::preset("dgx-h100", 2);
  // 18 links x 20.6 GB/s = 370.8 GB/s; ConnectX-7 48.5 GB/s effective.
  EXPECT_DOUBLE_EQ(t.spec().intra_bandwidth.as_gbytes_per_s(), 370.8);
  EXPECT_DOUBLE_EQ(t.spec().nic_bandwidth.as_gbytes_per_s(), 48.5);
  EXPECT_TRUE(t.has_nvls());
  EXPECT_EQ(t.nics_per_host(), 8);
  for (int g = 0; g < 8; ++g) EXPECT_EQ(t.nic_of(g), g);  // one NIC per GPU, rail g
}

TEST(Topology, ForClusterPicksThePresetOfTheModel) {
  EXPECT_EQ(Topology::for_cluster(3, 8, "H100").spec().name, "dgx-h100");
  EXPECT_EQ(Topology::for_cluster(3, 8, "h200").spec().name, "dgx-h200");
  EXPECT_EQ(Topology::for_cluster(3, 8, "a100").spec().name, "dgx-a100");
  const Topology half = Topology::for_cluster(2, 4, "h100");
  EXPECT_EQ(half.gpus_per_host(), 4);
  EXPECT_EQ(half.nics_per_host(), 4);  // keeps one NIC per GPU
  const Topology other = Topology::for_cluster(2, 8, "mi300x");
  EXPECT_EQ(other.gpu_model(), "mi300x");
  EXPECT_EQ(other.spec().name, "ethernet-2tier");
  EXPECT_FALSE(other.has_nvls());
}

TEST(Topology, RoutesInsideAHostCrossTheSwitch) {
  const Topology t = Topology::preset("dgx-h100", 2);
  EXPECT_EQ(t.route(1, 5, 0), (std::vector<LinkId>{t.gpu_tx(1), t.gpu_rx(5)}));
  EXPECT_TRUE(t.route(3, 3, 0).empty());
}

TEST(Topology, RoutesBetweenHostsUseTheRailNic) {
  const Topology t = Topology::from_toml_string(small_toml(), "tiny.toml");
  // hosts 0 and 1 share leaves (2 hosts per leaf); GPU 1 of each is on NIC 1.
  EXPECT_EQ(t.route(t.gpu(0, 1), t.gpu(1, 1), 0),
            (std::vector<LinkId>{t.nic_tx(0, 1), t.nic_rx(1, 1)}));
  // hosts 0 and 2 sit under different leaves: leaf -> spine -> leaf.
  const auto path = t.route(t.gpu(0, 0), t.gpu(2, 0), 12345);
  ASSERT_EQ(path.size(), 4u);
  EXPECT_EQ(path.front(), t.nic_tx(0, 0));
  EXPECT_EQ(path.back(), t.nic_rx(2, 0));
  EXPECT_EQ(t.link(path[1]).kind, LinkKind::LeafToSpine);
  EXPECT_EQ(t.link(path[2]).kind, LinkKind::SpineToLeaf);
}

TEST(Topology, EcmpHashesDeterministicallyOverSpines) {
  const Topology t = Topology::from_toml_string(small_toml(), "tiny.toml");
  std::set<LinkId> uplinks;
  for (uint64_t h = 0; h < 64; ++h) {
    const auto p = t.route(0, t.gpu(2, 0), h);
    EXPECT_EQ(p, t.route(0, t.gpu(2, 0), h));  // same hash, same spine
    uplinks.insert(p[1]);
  }
  EXPECT_EQ(uplinks.size(), 4u);  // 64 hashes reach all 4 spines
  const Topology no_ecmp = Topology::from_toml_string(
      small_toml("", "count = 4\noversubscription = 1.0\nlatency_ns = 300\necmp = false\n"),
      "tiny.toml");
  for (uint64_t h = 0; h < 16; ++h)
    EXPECT_EQ(no_ecmp.route(0, no_ecmp.gpu(2, 0), h)[1], no_ecmp.leaf_to_spine(0, 0));
}

TEST(Topology, OversubscriptionDividesUplinks) {
  const Topology t = Topology::from_toml_string(
      small_toml("", "count = 2\noversubscription = 4.0\nlatency_ns = 300\necmp = true\n"),
      "tiny.toml");
  // A rail leaf serves 2 hosts x 10 GB/s = 20 GB/s; over 2 spines at 4:1 each uplink is
  // 20 / (2 x 4) = 2.5 GB/s.
  EXPECT_DOUBLE_EQ(t.link(t.leaf_to_spine(0, 1)).capacity.as_gbytes_per_s(), 2.5);
}

TEST(Topology, LinksAreDirectional) {
  const Topology t = Topology::preset("dgx-h100", 2);
  EXPECT_NE(t.gpu_tx(0), t.gpu_rx(0));
  EXPECT_EQ(t.link(t.gpu_tx(0)).kind, LinkKind::GpuToSwitch);
  EXPECT_EQ(t.link(t.gpu_rx(0)).kind, LinkKind::SwitchToGpu);
  EXPECT_EQ(t.link(t.nic_tx(1, 3)).name, "h1/nic3->leaf3");
  EXPECT_EQ(t.link(t.nic_rx(1, 3)).name, "leaf3->h1/nic3");
}

TEST(TopologyToml, UnknownKeyNamesFileLineAndKey) {
  const std::string err = error_of(small_toml("speed = 7\n"));
  // The unknown key is on line 15 of the text (after the 14 lines up to [nic]'s latency).
  EXPECT_NE(err.find("tiny.toml:15:"), std::string::npos) << err;
  EXPECT_NE(err.find("key 'nic.speed'"), std::string::npos) << err;
  EXPECT_NE(err.find("unknown key"), std::string::npos) << err;
}

TEST(TopologyToml, WrongTypeNamesLineAndKey) {
  std::string text = small_toml();
  text.replace(text.find("\nper_host = 2"), 13, "\nper_host = \"two\"");
  const std::string err = error_of(text);
  EXPECT_NE(err.find("tiny.toml:12:"), std::string::npos) << err;
  EXPECT_NE(err.find("key 'nic.per_host': expected an integer"), std::string::npos) << err;
}

TEST(TopologyToml, MissingKeyNamesItsTable) {
  std::string text = small_toml();
  text.erase(text.find("nvls = false\n"), 13);
  const std::string err = error_of(text);
  EXPECT_NE(err.find("key 'intra.nvls': missing"), std::string::npos) << err;
  EXPECT_NE(err.find("tiny.toml:6:"), std::string::npos) << err;  // [intra] header
}

TEST(TopologyToml, BadValuesAreRejected) {
  std::string text = small_toml();
  text.replace(text.find("kind = \"rail\""), 13, "kind = \"ring\"");
  EXPECT_NE(error_of(text).find("key 'leaf.kind': \"ring\" is not one of"), std::string::npos);
  EXPECT_NE(error_of(small_toml("rails = [[0], [0]]\n")).find("GPU 0 is on two rails"),
            std::string::npos);
  EXPECT_NE(error_of(small_toml("",
                                "count = 1\noversubscription = 0.5\nlatency_ns = 1\n"
                                "ecmp = true\n"))
                .find("key 'spine.oversubscription'"),
            std::string::npos);
  EXPECT_NE(error_of(small_toml("",
                                "count = 0\noversubscription = 1.0\nlatency_ns = 1\n"
                                "ecmp = true\n"))
                .find("need at least one spine"),
            std::string::npos);
}

TEST(TopologyToml, SyntaxErrorNamesTheLine) {
  std::string text = small_toml();
  text.replace(text.find("hosts = 4"), 9, "hosts = = 4");
  const std::string err = error_of(text);
  EXPECT_NE(err.find("tiny.toml:3:"), std::string::npos) << err;
  EXPECT_NE(err.find("syntax error"), std::string::npos) << err;
}

TEST(TopologyToml, ExplicitRailsAreHonoured) {
  const Topology t = Topology::from_toml_string(small_toml("rails = [[1], [0]]\n"), "tiny.toml");
  EXPECT_EQ(t.nic_of(0), 1);
  EXPECT_EQ(t.nic_of(1), 0);
}

TEST(TopologyToml, FromFile) {
  const auto path = std::filesystem::temp_directory_path() / "phantora_netmodel_tiny.toml";
  std::ofstream(path) << small_toml();
  const Topology t = Topology::from_file(path);
  EXPECT_EQ(t.num_gpus(), 8);
  EXPECT_EQ(t.spec().name, "tiny");
  std::filesystem::remove(path);
  EXPECT_THROW(Topology::from_file(path), TopologyError);
}

}  // namespace
}  // namespace phantora::net
