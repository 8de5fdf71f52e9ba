// Topology: presets, the TOML format and its errors, routing.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "phantora/netmodel/gpu_systems.hpp"
#include "phantora/netmodel/nccl_model.hpp"
#include "phantora/netmodel/topology.hpp"
#include "phantora/netmodel/topology_figures.hpp"

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
  for (const char* want :
       {"dgx-a100", "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "ethernet-2tier"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  for (const auto& name : names) {
    const Topology t = Topology::preset(name, 4);
    const int g = t.gpus_per_host();  // 8, or 4 on a GB200 compute tray
    EXPECT_EQ(t.hosts(), 4) << name;
    EXPECT_EQ(g, name == "gb200-nvl72" ? 4 : 8) << name;
    // Links: 2 per GPU (to and from the switch), 2 per NIC, 2 per leaf-spine pair.
    const size_t expect = 2 * 4 * g + 2 * 4 * t.nics_per_host() +
                          2 * static_cast<size_t>(t.num_leaves()) * t.spec().spines;
    EXPECT_EQ(t.links().size(), expect) << name;
    EXPECT_NE(t.describe().find(fmt::format("4 hosts x {}", g)), std::string::npos) << t.describe();
  }
  EXPECT_THROW(Topology::preset("dgx-z9000", 2), TopologyError);
}

// Every figure of every preset names where it came from: the preset's [sources] table, or the
// --hosts flag for the host count the preset leaves open.
TEST(Topology, EveryPresetFigureHasASource) {
  for (const auto& name : Topology::preset_names()) {
    for (const TopologyFigure& f : figures(Topology::preset(name, 2).spec())) {
      EXPECT_FALSE(f.source.empty()) << name << " " << f.key;
      EXPECT_EQ(f.source.find("no source given"), std::string::npos) << name << " " << f.key;
      EXPECT_EQ(f.source.find("shared/"), std::string::npos) << name << " " << f.key;
    }
  }
  const auto a100 = figures(Topology::preset("dgx-a100", 2).spec());
  const auto nic = std::find_if(a100.begin(), a100.end(), [](const auto& f) {
    return f.key == "nic.bandwidth_gbytes_per_s";
  });
  ASSERT_NE(nic, a100.end());
  EXPECT_EQ(std::get<double>(nic->value), 23.5);
  EXPECT_NE(nic->source.find("CX6_BW"), std::string::npos) << nic->source;
}

TEST(Topology, SourcesNameKnownFiguresOnly) {
  const std::string ok = small_toml() + "[sources.nic]\nbandwidth_gbytes_per_s = \"measured\"\n";
  const Topology t = Topology::from_toml_string(ok, "tiny.toml");
  EXPECT_EQ(t.spec().sources.at("nic.bandwidth_gbytes_per_s"), "measured");
  // A figure without an entry says so, naming the file.
  for (const auto& f : figures(t.spec())) {
    if (f.key == "nic.latency_ns") {
      EXPECT_EQ(f.source, "tiny.toml: no source given");
    }
  }
  EXPECT_NE(error_of(small_toml() + "[sources.nic]\nspeed = \"x\"\n")
                .find("key 'sources.nic.speed': names no figure"),
            std::string::npos);
  EXPECT_NE(error_of(small_toml() + "[sources.nic]\nper_host = 8\n").find("expected a string"),
            std::string::npos);
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

// The GPU catalog's keys (kernels-db/data/gpus.toml) get the DGX their GPU ships in, with the
// NVLink bandwidth NCCL sees there: the datasheet's link count x NCCL's per-link figure
// (src/graph/topo.h: SM80 20.0, SM90 20.6, SM100 40.1 GB/s). tests/tools checks that every
// catalog GPU has a row of gpu_systems().
TEST(Topology, ForClusterPicksTheSystemTheGpuShipsIn) {
  struct Case {
    const char* gpu;
    const char* preset;
    double nvlink;  // GB/s per GPU per direction
    double nic;     // GB/s per NIC
  };
  for (const Case& c : {Case{"a100-80gb", "dgx-a100", 12 * 20.0, 23.5},  // 12 NVLink3, CX-6 HDR
                        Case{"h100", "dgx-h100", 18 * 20.6, 48.5},       // 18 NVLink4, CX-7 NDR
                        Case{"h200", "dgx-h200", 18 * 20.6, 48.5},
                        Case{"b200", "dgx-b200", 18 * 40.1, 48.5}}) {  // 18 NVLink5, CX-7 NDR
    const Topology t = Topology::for_cluster(3, 8, c.gpu);
    EXPECT_EQ(t.spec().name, c.preset) << c.gpu;
    EXPECT_EQ(t.gpu_model(), c.gpu);
    EXPECT_NEAR(t.spec().intra_bandwidth.as_gbytes_per_s(), c.nvlink, 1e-9) << c.gpu;
    EXPECT_NEAR(t.spec().nic_bandwidth.as_gbytes_per_s(), c.nic, 1e-9) << c.gpu;
    EXPECT_EQ(t.nics_per_host(), 8) << c.gpu;  // one 200/400 Gb/s NIC per GPU
    ASSERT_NE(system_of_gpu(c.gpu), nullptr);
    EXPECT_EQ(system_of_gpu(c.gpu)->topology, c.preset);
  }
  // Aliases are the catalog's business: netmodel takes its keys only.
  EXPECT_EQ(system_of_gpu("a100"), nullptr);
  const Topology half = Topology::for_cluster(2, 4, "h100");
  EXPECT_EQ(half.gpus_per_host(), 4);
  EXPECT_EQ(half.nics_per_host(), 4);  // keeps one NIC per GPU
  const Topology other = Topology::for_cluster(2, 8, "mi300x");
  EXPECT_EQ(other.gpu_model(), "mi300x");
  EXPECT_EQ(other.spec().name, "ethernet-2tier");
  EXPECT_FALSE(other.has_nvls());
  EXPECT_NE(figures(other.spec())[2].source.find("no system of its own"), std::string::npos);
}

// GB200 NVL72: a host is a compute tray of 4 GPUs; 18 trays (72 GPUs) share one NVLink domain.
TEST(Topology, Nvl72RoutesInsideTheRackOverNvlink) {
  const Topology t = Topology::preset("gb200-nvl72", 36);  // two racks
  EXPECT_EQ(t.spec().gpus_per_domain(), 72);
  EXPECT_NEAR(t.spec().intra_bandwidth.as_gbytes_per_s(), 18 * 40.1, 1e-9);
  // GPU 0 (tray 0) to GPU 71 (tray 17): the same rack, so NVLink, no NIC.
  EXPECT_EQ(t.route(0, 71, 0), (std::vector<LinkId>{t.gpu_tx(0), t.gpu_rx(71)}));
  // GPU 0 to GPU 72 (rack 1, tray 18, local 0): out of NIC 0 of tray 0 into NIC 0 of tray 18.
  const auto path = t.route(0, 72, 0);
  EXPECT_EQ(path.front(), t.nic_tx(0, 0));
  EXPECT_EQ(path.back(), t.nic_rx(18, 0));
  // NCCL sees one node per rack: an all-reduce over a rack is one NVLS node (NVLink SHARP).
  std::vector<GpuId> rack(72);
  for (int g = 0; g < 72; ++g) rack[g] = g;
  const auto p =
      plan_collective(t, CollectiveRequest{CollOp::AllReduce, rack, Bytes(1ull << 30), 0, {}});
  EXPECT_EQ(p.n_nodes, 1);
  EXPECT_EQ(p.algorithm, Algorithm::Nvls);
  std::vector<GpuId> both(144);
  for (int g = 0; g < 144; ++g) both[g] = g;
  EXPECT_EQ(plan_collective(t, CollectiveRequest{CollOp::AllReduce, both, Bytes(1ull << 30), 0, {}})
                .n_nodes,
            2);
}

TEST(Topology, DomainMustBeWholeHostsOfAnNvswitchFabric) {
  auto with = [](const std::string& intra_extra, const char* fabric = "nvswitch") {
    std::string t = small_toml();
    const std::string from = "nvls = false\n";
    t.replace(t.find(from), from.size(), from + intra_extra);
    t.replace(t.find("\"nvswitch\""), 10, fmt::format("\"{}\"", fabric));
    return t;
  };
  EXPECT_EQ(Topology::from_toml_string(with("domain_gpus = 4\n"), "tiny.toml").domain_of(5), 1);
  EXPECT_NE(error_of(with("domain_gpus = 3\n")).find("key 'intra.domain_gpus': must be a multiple"),
            std::string::npos);
  EXPECT_NE(error_of(with("domain_gpus = 4\n", "pcie")).find("only an NVSwitch fabric"),
            std::string::npos);
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
