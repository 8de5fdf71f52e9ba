// resolve_cluster: every --gpu gets the network of the DGX it ships in, with the NVLink
// bandwidth NCCL sees there; --topology gb200-nvl72 gets racks of 4-GPU trays on one NVLink
// domain; flags that change a figure become its source.
#include <gtest/gtest.h>

#include <string>

#include "phantora/kernels/gpu_catalog.hpp"
#include "phantora/netmodel/gpu_systems.hpp"
#include "phantora/netmodel/topology_figures.hpp"
#include "run_setup.hpp"

namespace t = phantora::tools;
namespace net = phantora::net;

namespace {

std::string source_of(const net::TopologySpec& spec, const std::string& key) {
  for (const auto& f : net::figures(spec))
    if (f.key == key) return f.source;
  return "(no such figure)";
}

// No GPU of the catalog falls back to the generic Ethernet cluster: each has a system, whose
// preset holds that GPU or, for a variant (h100-500w's power limit, h100-96gb-500w's memory),
// the same chip (the run's --gpu then replaces the preset's GPU, run_setup.cpp).
TEST(Cluster, EveryCatalogGpuShipsInASystem) {
  const auto& catalog = phantora::kernels::GpuCatalog::builtin();
  for (const auto& gpu : catalog.presets()) {
    const net::GpuSystem* system = net::system_of_gpu(gpu.key);
    ASSERT_NE(system, nullptr) << gpu.key << " has no row in netmodel/src/gpu_systems.cpp";
    const std::string model = net::Topology::preset(system->topology, 1).spec().gpu_model;
    if (model != gpu.key) {
      const auto& shipped = catalog.find(model).device;
      EXPECT_EQ(shipped.cc_major * 10 + shipped.cc_minor,
                gpu.device.cc_major * 10 + gpu.device.cc_minor)
          << gpu.key;
      EXPECT_EQ(shipped.multiprocessor_count, gpu.device.multiprocessor_count) << gpu.key;
    }
  }
  EXPECT_EQ(net::system_of_gpu("h100-500w")->topology, "dgx-h100");
  EXPECT_EQ(net::system_of_gpu("h100-96gb-500w")->topology, "dgx-h100");
}

// Each --gpu spelling resolves to its DGX preset. NVLink per GPU and direction is the link count
// of the datasheet (A100 12 x NVLink3, H100/H200 18 x NVLink4, B200 18 x NVLink5: 600, 900,
// 900, 1800 GB/s both ways) times NCCL's effective per-link figure (src/graph/topo.h: 20.0,
// 20.6, 20.6, 40.1 GB/s), which is 80-82 % of the datasheet's per-direction rate.
TEST(Cluster, EachGpuGetsItsDgxNetwork) {
  struct Case {
    const char* flag;
    const char* key;
    const char* preset;
    int links;
    double datasheet_both_ways;  // GB/s
    double nccl_per_link;        // GB/s
    double nic;                  // GB/s effective per NIC
  };
  for (const Case& c : {Case{"a100-80gb", "a100-80gb", "dgx-a100", 12, 600, 20.0, 23.5},
                        Case{"a100", "a100-80gb", "dgx-a100", 12, 600, 20.0, 23.5},
                        Case{"A100-SXM4-80GB", "a100-80gb", "dgx-a100", 12, 600, 20.0, 23.5},
                        Case{"a100-40gb", "a100-40gb", "dgx-a100", 12, 600, 20.0, 23.5},
                        Case{"A100-SXM4-40GB", "a100-40gb", "dgx-a100", 12, 600, 20.0, 23.5},
                        Case{"h100", "h100", "dgx-h100", 18, 900, 20.6, 48.5},
                        Case{"h200", "h200", "dgx-h200", 18, 900, 20.6, 48.5},
                        Case{"b200", "b200", "dgx-b200", 18, 1800, 40.1, 48.5},
                        Case{"hgx-b200", "b200", "dgx-b200", 18, 1800, 40.1, 48.5}}) {
    t::RunOptions o;
    o.hosts = 2;
    o.gpu = c.flag;
    const t::Cluster cl = t::resolve_cluster(o);
    ASSERT_TRUE(cl.topology) << c.flag;
    const net::TopologySpec& s = cl.topology->spec();
    EXPECT_EQ(cl.gpu, c.key) << c.flag;
    EXPECT_EQ(s.name, c.preset) << c.flag;
    EXPECT_EQ(s.gpu_model, c.key) << c.flag;
    EXPECT_EQ(cl.gpus_per_host, 8);
    EXPECT_EQ(s.nics_per_host, 8) << c.flag;  // one 200/400 Gb/s NIC per GPU
    EXPECT_NEAR(s.nic_bandwidth.as_gbytes_per_s(), c.nic, 1e-9) << c.flag;
    const double nvlink = s.intra_bandwidth.as_gbytes_per_s();
    EXPECT_NEAR(nvlink, c.links * c.nccl_per_link, 1e-9) << c.flag;
    // The catalog carries the datasheet figure, per direction, and the link count.
    const auto& perf = phantora::kernels::GpuCatalog::builtin().find(c.key).perf;
    EXPECT_NEAR(perf.nvlink.as_gbytes_per_s(), c.datasheet_both_ways / 2, 1e-9) << c.flag;
    EXPECT_EQ(perf.nvlink_links, c.links) << c.flag;
    EXPECT_GT(nvlink / (c.datasheet_both_ways / 2), 0.79) << c.flag;
    EXPECT_LT(nvlink / (c.datasheet_both_ways / 2), 0.83) << c.flag;
    EXPECT_NE(source_of(s, "intra.bandwidth_gbytes_per_s").find("topo.h"), std::string::npos);
  }
}

TEST(Cluster, Nvl72PresetBringsItsTraysAndGpu) {
  t::RunOptions o;
  o.hosts = 18;  // one rack
  o.topology = "gb200-nvl72";
  const t::Cluster cl = t::resolve_cluster(o);
  EXPECT_EQ(cl.gpus_per_host, 4);
  EXPECT_EQ(cl.gpu, "b200");
  EXPECT_EQ(cl.topology->spec().gpus_per_domain(), 72);
  EXPECT_EQ(cl.topology->domain_of(71), 0);
  EXPECT_NEAR(cl.topology->spec().intra_bandwidth.as_gbytes_per_s(), 18 * 40.1, 1e-9);
  // A host size that does not divide the 72-GPU domain is refused, saying why.
  o.gpus_per_host = 5;
  try {
    t::resolve_cluster(o);
    ADD_FAILURE() << "5 GPUs per host accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("domain_gpus = 72 must be a multiple"), std::string::npos)
        << e.what();
  }
}

TEST(Cluster, FlagsThatChangeAFigureAreItsSource) {
  t::RunOptions o;
  o.hosts = 2;
  o.gpu = "h100";
  o.nic_gbytes_per_s = 25.0;
  o.oversubscription = 2.0;
  const t::Cluster cl = t::resolve_cluster(o);
  const auto& s = cl.topology->spec();
  EXPECT_EQ(s.nic_bandwidth.as_gbytes_per_s(), 25.0);
  EXPECT_EQ(source_of(s, "nic.bandwidth_gbytes_per_s"), "--nic-gbytes-per-s");
  EXPECT_EQ(source_of(s, "spine.oversubscription"), "--oversubscription");
  EXPECT_EQ(source_of(s, "cluster.hosts"), "--hosts");
  EXPECT_NE(source_of(s, "nic.latency_ns").find("SimAI"), std::string::npos);
}

}  // namespace
