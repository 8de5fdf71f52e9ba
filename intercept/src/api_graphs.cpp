// Stream capture and CUDA graphs: capture, instantiate, launch, destroy. A launched graph costs
// the longest dependency chain of its nodes (computed by the daemon from each node's cost).
#include <cuda_runtime_api.h>

#include "../runtime_abi.hpp"
#include "capture.hpp"
#include "context.hpp"
#include "pt_variants.hpp"

using namespace phantora;
using namespace phantora::shim;

namespace {

thread_local cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;
std::atomic<uint64_t> g_next_capture{1};

cudaError_t cudaStreamBeginCapture_impl(bool pt, cudaStream_t stream, cudaStreamCaptureMode mode) {
  ApiCall call;
  CUstream_st* s = resolve_stream(stream, pt);
  if (s->legacy) return set_error(cudaErrorStreamCaptureUnsupported);
  if (s->capture != nullptr) return set_error(cudaErrorIllegalState);
  auto* cap = new CaptureState();
  cap->id = g_next_capture++;
  cap->origin = s;
  cap->frontier[s] = {};
  s->capture = cap;
  s->capture_mode = mode;
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture_impl(bool pt, cudaStream_t stream, cudaGraph_t* graph) {
  ApiCall call;
  if (graph == nullptr) return set_error(cudaErrorInvalidValue);
  CUstream_st* s = resolve_stream(stream, pt);
  CaptureState* cap = s->capture;
  if (cap == nullptr) return set_error(cudaErrorIllegalState);
  if (cap->origin != s) return set_error(cudaErrorStreamCaptureUnmatched);
  for (auto& [joined, frontier] : cap->frontier) joined->capture = nullptr;
  auto* g = new CUgraph_st();
  g->nodes = std::move(cap->nodes);
  delete cap;
  *graph = g;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing_impl(bool pt, cudaStream_t stream,
                                       cudaStreamCaptureStatus* status) {
  if (status == nullptr) return set_error(cudaErrorInvalidValue);
  *status = resolve_stream(stream, pt)->capture != nullptr ? cudaStreamCaptureStatusActive
                                                           : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}

cudaError_t capture_info(bool pt, cudaStream_t stream, cudaStreamCaptureStatus* status,
                         unsigned long long* id, cudaGraph_t* graph, const cudaGraphNode_t** deps,
                         const cudaGraphEdgeData** edges, size_t* num_deps) {
  if (status == nullptr) return set_error(cudaErrorInvalidValue);
  CUstream_st* s = resolve_stream(stream, pt);
  *status = s->capture != nullptr ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  if (id != nullptr && s->capture != nullptr) *id = s->capture->id;
  // The graph under construction and its node handles are not exposed: nothing in the shim
  // can be edited through them. Callers that ask receive none.
  if (graph != nullptr) *graph = nullptr;
  if (deps != nullptr) *deps = nullptr;
  if (edges != nullptr) *edges = nullptr;
  if (num_deps != nullptr) *num_deps = 0;
  return cudaSuccess;
}

cudaError_t instantiate(cudaGraphExec_t* exec, cudaGraph_t graph) {
  ApiCall call;
  if (exec == nullptr || graph == nullptr) return set_error(cudaErrorInvalidValue);
  auto* e = new CUgraphExec_st();
  e->id = Runtime::get().next_graph_id();
  e->node_count = graph->nodes.size();
  wire::DefineGraph d{e->id, static_cast<uint32_t>(graph->nodes.size()), 0};
  Runtime::get().submit_parts(wire::RecordType::kDefineGraph, &d, sizeof(d), graph->nodes.data(),
                              graph->nodes.size() * sizeof(wire::GraphNode));
  *exec = e;
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiateWithParams_impl(bool, cudaGraphExec_t* exec, cudaGraph_t graph,
                                                cudaGraphInstantiateParams* params) {
  const cudaError_t e = instantiate(exec, graph);
  if (params != nullptr)
    params->result_out = e == cudaSuccess ? cudaGraphInstantiateSuccess : cudaGraphInstantiateError;
  return e;
}

cudaError_t cudaGraphLaunch_impl(bool pt, cudaGraphExec_t exec, cudaStream_t stream) {
  ApiCall call;
  if (exec == nullptr) return set_error(cudaErrorInvalidResourceHandle);
  CUstream_st* s = resolve_stream(stream, pt);
  if (s->capture != nullptr) return set_error(cudaErrorStreamCaptureUnsupported);
  wire::GraphLaunch l{exec->id, s->id, s->device, 0};
  Runtime::get().submit(wire::RecordType::kGraphLaunch, &l, sizeof(l));
  return cudaSuccess;
}

cudaError_t cudaGraphUpload_impl(bool, cudaGraphExec_t exec, cudaStream_t) {
  // Uploading prepares the graph on the device ahead of launch; it has no simulated cost.
  return exec != nullptr ? cudaSuccess : set_error(cudaErrorInvalidResourceHandle);
}

}  // namespace

extern "C" {

cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  if (mode == nullptr) return set_error(cudaErrorInvalidValue);
  std::swap(*mode, t_capture_mode);
  return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* exec, cudaGraph_t graph, unsigned long long) {
  return instantiate(exec, graph);
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                          unsigned long long) {
  return instantiate(exec, graph);
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (graph == nullptr) return set_error(cudaErrorInvalidValue);
  delete graph;
  return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (exec == nullptr) return set_error(cudaErrorInvalidValue);
  delete exec;
  return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* count) {
  if (graph == nullptr || count == nullptr) return set_error(cudaErrorInvalidValue);
  // Node handles cannot be edited in the shim; only the count is answered.
  if (nodes != nullptr) return set_error(cudaErrorNotSupported);
  *count = graph->nodes.size();
  return cudaSuccess;
}

}  // extern "C"

PHANTORA_DEFINE_PT(cudaStreamBeginCapture, _ptsz, (cudaStream_t stream, cudaStreamCaptureMode mode),
                   (stream, mode))
PHANTORA_DEFINE_PT(cudaStreamEndCapture, _ptsz, (cudaStream_t stream, cudaGraph_t* graph),
                   (stream, graph))
PHANTORA_DEFINE_PT(cudaStreamIsCapturing, _ptsz,
                   (cudaStream_t stream, cudaStreamCaptureStatus* status), (stream, status))

// cudaStreamGetCaptureInfo: CUDA 13 takes seven arguments. CUDA 12 exported the name with its
// first three (its headers send programs to _v2, with six, or _v3, with seven), so in a CUDA
// 12 process the last four are whatever the caller's registers and stack held: not written.
namespace {

cudaError_t cudaStreamGetCaptureInfo_impl(bool pt, cudaStream_t stream,
                                          cudaStreamCaptureStatus* status, unsigned long long* id,
                                          cudaGraph_t* graph, const cudaGraphNode_t** deps,
                                          const cudaGraphEdgeData** edges, size_t* num_deps) {
  if (intercept::linked_cudart_major() < 13) {
    return capture_info(pt, stream, status, id, nullptr, nullptr, nullptr, nullptr);
  }
  return capture_info(pt, stream, status, id, graph, deps, edges, num_deps);
}

// CUDA 12's six-argument form (no edge data), where its headers send cudaStreamGetCaptureInfo.
cudaError_t cudaStreamGetCaptureInfo_v2_impl(bool pt, cudaStream_t stream,
                                             cudaStreamCaptureStatus* status,
                                             unsigned long long* id, cudaGraph_t* graph,
                                             const cudaGraphNode_t** deps, size_t* num_deps) {
  return capture_info(pt, stream, status, id, graph, deps, nullptr, num_deps);
}

// CUDA 12.3's seven-argument form: CUDA 13's cudaStreamGetCaptureInfo, whatever the runtime.
cudaError_t cudaStreamGetCaptureInfo_v3_impl(bool pt, cudaStream_t stream,
                                             cudaStreamCaptureStatus* status,
                                             unsigned long long* id, cudaGraph_t* graph,
                                             const cudaGraphNode_t** deps,
                                             const cudaGraphEdgeData** edges, size_t* num_deps) {
  return capture_info(pt, stream, status, id, graph, deps, edges, num_deps);
}

}  // namespace

#define PHANTORA_CAPTURE_INFO_PARAMS                                                  \
  (cudaStream_t stream, cudaStreamCaptureStatus * status, unsigned long long* id,     \
   cudaGraph_t* graph, const cudaGraphNode_t** deps, const cudaGraphEdgeData** edges, \
   size_t* num_deps)
PHANTORA_DEFINE_PT(cudaStreamGetCaptureInfo, _ptsz, PHANTORA_CAPTURE_INFO_PARAMS,
                   (stream, status, id, graph, deps, edges, num_deps))
PHANTORA_DEFINE_PT(cudaStreamGetCaptureInfo_v2, _ptsz,
                   (cudaStream_t stream, cudaStreamCaptureStatus* status, unsigned long long* id,
                    cudaGraph_t* graph, const cudaGraphNode_t** deps, size_t* num_deps),
                   (stream, status, id, graph, deps, num_deps))
PHANTORA_DEFINE_PT(cudaStreamGetCaptureInfo_v3, _ptsz, PHANTORA_CAPTURE_INFO_PARAMS,
                   (stream, status, id, graph, deps, edges, num_deps))
#undef PHANTORA_CAPTURE_INFO_PARAMS

PHANTORA_DEFINE_PT(cudaGraphInstantiateWithParams, _ptsz,
                   (cudaGraphExec_t * exec, cudaGraph_t graph, cudaGraphInstantiateParams* params),
                   (exec, graph, params))
PHANTORA_DEFINE_PT(cudaGraphLaunch, _ptsz, (cudaGraphExec_t exec, cudaStream_t stream),
                   (exec, stream))
PHANTORA_DEFINE_PT(cudaGraphUpload, _ptsz, (cudaGraphExec_t exec, cudaStream_t stream),
                   (exec, stream))
