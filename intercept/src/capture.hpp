// Stream capture into CUDA graphs. While a stream captures, the work submitted to it becomes
// graph nodes instead of running; the node dependencies follow the stream order and the
// event record / stream-wait-event edges between capturing streams.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <vector>

#include "context.hpp"

struct CaptureState {
  uint64_t id = 0;
  CUstream_st* origin = nullptr;
  std::vector<phantora::wire::GraphNode> nodes;
  std::map<CUstream_st*, std::vector<uint32_t>> frontier;  // last nodes of each joined stream
};

struct CUgraph_st {
  std::vector<phantora::wire::GraphNode> nodes;
};

struct CUgraphExec_st {
  uint64_t id = 0;
  size_t node_count = 0;
};

namespace phantora::shim {

// Appends a node to the capture the stream belongs to, depending on the stream's frontier.
void capture_node(CUstream_st* stream, wire::GraphNode node);
// A kernel launch made inside a capture: the node that runs it at replay.
void capture_launch(CUstream_st* stream, const wire::Launch& launch);
// An event recorded inside a capture stands for the recording stream's frontier.
void capture_event_record(CUevent_st* event, CUstream_st* stream);
// A stream that waits on a captured event joins that capture.
void capture_wait_event(CUstream_st* stream, CUevent_st* event);

}  // namespace phantora::shim
