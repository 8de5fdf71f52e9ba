// libFuzzer target: the topology TOML parser (net::Topology::from_toml_string), which also
// validates and builds the topology. A TopologyError is the parser's answer to bad input;
// anything else (another exception, a sanitizer report, a crash) is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "phantora/netmodel/topology.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto topo = phantora::net::Topology::from_toml_string(text, "fuzz.toml");
    (void)topo.hosts();
  } catch (const phantora::net::TopologyError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_topology: unexpected exception: %s\n", e.what());
    std::abort();
  }
  return 0;
}
