#include "capture.hpp"

#include <algorithm>
#include <cstring>

namespace phantora::shim {
namespace {

// A node names at most kMaxGraphNodeDeps predecessors on the wire; wider joins go through
// empty nodes, which cost nothing and keep the longest path unchanged.
std::vector<uint32_t> narrow(CaptureState* cap, std::vector<uint32_t> deps) {
  while (deps.size() > static_cast<size_t>(wire::kMaxGraphNodeDeps)) {
    wire::GraphNode join{};
    join.kind = wire::GraphNodeKind::kEmpty;
    join.dep_count = wire::kMaxGraphNodeDeps;
    std::copy_n(deps.begin(), wire::kMaxGraphNodeDeps, join.deps);
    deps.erase(deps.begin(), deps.begin() + wire::kMaxGraphNodeDeps);
    deps.push_back(static_cast<uint32_t>(cap->nodes.size()));
    cap->nodes.push_back(join);
  }
  return deps;
}

}  // namespace

void capture_launch(CUstream_st* stream, const wire::Launch& launch) {
  wire::GraphNode n{};
  n.kind = wire::GraphNodeKind::kKernel;
  n.kernel = launch.kernel;
  std::memcpy(n.grid, launch.grid, sizeof(n.grid));
  std::memcpy(n.block, launch.block, sizeof(n.block));
  n.shared_mem = launch.shared_mem;
  n.work = launch.work;
  capture_node(stream, n);
}

void capture_node(CUstream_st* stream, wire::GraphNode node) {
  CaptureState* cap = stream->capture;
  std::vector<uint32_t> deps = narrow(cap, cap->frontier[stream]);
  node.dep_count = static_cast<uint8_t>(deps.size());
  std::copy(deps.begin(), deps.end(), node.deps);
  const auto index = static_cast<uint32_t>(cap->nodes.size());
  cap->nodes.push_back(node);
  cap->frontier[stream] = {index};
}

void capture_event_record(CUevent_st* event, CUstream_st* stream) {
  event->capture = stream->capture;
  event->capture_nodes = stream->capture->frontier[stream];
}

void capture_wait_event(CUstream_st* stream, CUevent_st* event) {
  CaptureState* cap = event->capture;
  stream->capture = cap;
  auto& f = cap->frontier[stream];
  for (uint32_t n : event->capture_nodes) {
    if (std::find(f.begin(), f.end(), n) == f.end()) f.push_back(n);
  }
}

}  // namespace phantora::shim
