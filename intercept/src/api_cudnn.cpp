// cuDNN's graph (backend) API, for the calls the simulator stands in for: attention and
// convolutions. The handle calls and the cudnnBackend* entry points PyTorch's cuDNN attention
// and convolutions reach (via cuDNN's frontend) stand in for libcudnn's (the real library is
// still loaded: it is linked by torch, and anything else in it reaches the driver on its own and
// stops loudly, unimplemented.cpp). Descriptors are kept as data (cudnn_graph.hpp); the engine
// heuristics offer one engine for a graph a decoder reads as attention or a convolution
// (decode_cudnn_call) and none for any other, saying so; executing a plan sends the call its
// graph describes as one kernel on the handle's stream, priced by the attention model (impl
// cudnn) or the convolution model, and executing any other graph stops the run naming it.
#include <cudnn_graph.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "capture.hpp"
#include "context.hpp"
#include "cudnn_graph.hpp"
#include "cudnn_handle.hpp"
#include "runtime.hpp"

using namespace phantora;
using namespace phantora::shim;

namespace {

CudnnDescriptor* descriptor_of(cudnnBackendDescriptor_t d) {
  return reinterpret_cast<CudnnDescriptor*>(d);
}

bool valid(const void* p) {
  return p != nullptr;
}

// The operation graph an execution plan runs: plan -> engine config -> engine -> graph.
const CudnnDescriptor* plan_graph(const CudnnDescriptor& plan) {
  const CudnnDescriptor* cfg = plan.descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG);
  const CudnnDescriptor* engine = cfg ? cfg->descriptor(CUDNN_ATTR_ENGINECFG_ENGINE) : nullptr;
  return engine ? engine->descriptor(CUDNN_ATTR_ENGINE_OPERATION_GRAPH) : nullptr;
}

// Engine queries with nothing to report (notes, knobs, intermediates) answer no elements;
// sizes and indices answer 0: one engine, no workspace, no shared memory of its own.
bool answers_none(int name) {
  switch (name) {
    case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE:
    case CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE:
    case CUDNN_ATTR_ENGINE_KNOB_INFO:
    case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
    case CUDNN_ATTR_ENGINECFG_INTERMEDIATE_INFO:
    case CUDNN_ATTR_EXECUTION_PLAN_COMPUTED_INTERMEDIATE_UIDS:
    case CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS:
      return true;
    default:
      return false;
  }
}
bool answers_zero(int name) {
  switch (name) {
    case CUDNN_ATTR_ENGINE_GLOBAL_INDEX:
    case CUDNN_ATTR_ENGINECFG_WORKSPACE_SIZE:
    case CUDNN_ATTR_ENGINECFG_SHARED_MEMORY_USED:
    case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
      return true;
    default:
      return false;
  }
}

void set_descriptor_attribute(CudnnDescriptor& d, int name,
                              std::shared_ptr<const CudnnDescriptor> value) {
  CudnnAttribute a;
  a.type = CUDNN_TYPE_BACKEND_DESCRIPTOR;
  a.count = 1;
  a.descriptors.push_back(std::move(value));
  d.attributes[name] = std::move(a);
}

// The engine heuristics' answer: one engine for a graph the decoder knows, none otherwise.
cudnnStatus_t heuristics_results(const CudnnDescriptor& heur, int64_t requested, int64_t* count,
                                 void* elements) {
  const CudnnDescriptor* graph = heur.descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
  if (graph == nullptr || !decode_cudnn_call(*graph)) {
    std::fprintf(stderr,
                 "phantora: cuDNN graph (%s) is neither an attention nor a single convolution "
                 "the simulator knows: it stands in for those only, so no engine is offered "
                 "(docs/pytorch.md, \"cuDNN\").\n",
                 graph ? describe_cudnn_graph(*graph).c_str() : "none");
    if (count != nullptr) *count = 0;
    return CUDNN_STATUS_SUCCESS;
  }
  if (count != nullptr) *count = 1;
  if (requested >= 1 && elements != nullptr) {
    auto engine = std::make_shared<CudnnDescriptor>();
    engine->type = CUDNN_BACKEND_ENGINE_DESCRIPTOR;
    engine->attributes[CUDNN_ATTR_ENGINE_OPERATION_GRAPH] =
        heur.attributes.at(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH);
    engine->finalized = true;
    CudnnDescriptor* cfg = descriptor_of(static_cast<cudnnBackendDescriptor_t*>(elements)[0]);
    if (cfg == nullptr) return CUDNN_STATUS_BAD_PARAM;
    cfg->type = CUDNN_BACKEND_ENGINECFG_DESCRIPTOR;
    set_descriptor_attribute(*cfg, CUDNN_ATTR_ENGINECFG_ENGINE, std::move(engine));
    cfg->finalized = true;
  }
  return CUDNN_STATUS_SUCCESS;
}

// The simulated kernel of one attention call: its grid as FlashAttention's (row blocks of 128,
// heads, batch).
void submit_attention(cudnnHandle_t handle, const CudnnAttention& call) {
  CUstream_st* s = resolve_stream_on(handle->ordinal, handle->stream);
  static const uint32_t forward_id = Runtime::get().kernel_id("cudnn_sdpa_forward");
  static const uint32_t backward_id = Runtime::get().kernel_id("cudnn_sdpa_backward");
  const wire::AttentionShape& a = call.shape;
  const uint32_t rows = call.backward ? a.seq_k : a.seq_q;
  wire::Launch l{};
  l.stream = s->id;
  l.device = s->device;
  l.kernel = call.backward ? backward_id : forward_id;
  l.grid[0] = (rows + 127) / 128, l.grid[1] = a.heads_q, l.grid[2] = a.batch;
  l.block[0] = 256, l.block[1] = l.block[2] = 1;
  l.work.kind =
      call.backward ? wire::WorkKind::kAttentionBackward : wire::WorkKind::kAttentionForward;
  l.work.attention = a;
  if (s->capture != nullptr) {
    capture_launch(s, l);
    return;
  }
  Runtime::get().submit(wire::RecordType::kLaunch, &l, sizeof(l));
}

// The simulated kernel of one convolution. What it costs comes from its shape (kernels-db's
// convolution model) and how much of the GPU it takes from its being a convolution (the
// daemon takes it to fill the GPU, as a GEMM): the grid cuDNN's kernel would have is not
// known here, so the launch names one block.
void submit_convolution(cudnnHandle_t handle, const CudnnConvolution& call) {
  CUstream_st* s = resolve_stream_on(handle->ordinal, handle->stream);
  static const uint32_t ids[] = {Runtime::get().kernel_id("cudnn_convolution_fprop"),
                                 Runtime::get().kernel_id("cudnn_convolution_dgrad"),
                                 Runtime::get().kernel_id("cudnn_convolution_wgrad")};
  const wire::ConvShape& c = call.shape;
  wire::Launch l{};
  l.stream = s->id;
  l.device = s->device;
  l.kernel = ids[static_cast<int>(c.pass)];
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  l.block[0] = 256, l.block[1] = l.block[2] = 1;
  l.work.kind = wire::WorkKind::kConvolution;
  l.work.conv = c;
  if (s->capture != nullptr) {
    capture_launch(s, l);
    return;
  }
  Runtime::get().submit(wire::RecordType::kLaunch, &l, sizeof(l));
}

}  // namespace

extern "C" {

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  if (!valid(handle)) return CUDNN_STATUS_BAD_PARAM;
  *handle = new cudnnContext{nullptr, current_device()};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
  delete handle;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  if (!valid(handle)) return CUDNN_STATUS_BAD_PARAM;
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetStream(cudnnHandle_t handle, cudaStream_t* stream) {
  if (!valid(handle) || !valid(stream)) return CUDNN_STATUS_BAD_PARAM;
  *stream = handle->stream;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendCreateDescriptor(cudnnBackendDescriptorType_t type,
                                           cudnnBackendDescriptor_t* descriptor) {
  if (!valid(descriptor)) return CUDNN_STATUS_BAD_PARAM;
  auto* d = new CudnnDescriptor{};
  d->type = type;
  *descriptor = reinterpret_cast<cudnnBackendDescriptor_t>(d);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  delete descriptor_of(descriptor);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendInitialize(cudnnBackendDescriptor_t descriptor) {
  return valid(descriptor) ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t count,
                                       const void* elements) {
  CudnnDescriptor* d = descriptor_of(descriptor);
  if (d == nullptr || count < 0 || (count > 0 && elements == nullptr)) {
    return CUDNN_STATUS_BAD_PARAM;
  }
  CudnnAttribute a;
  a.type = type;
  a.count = count;
  const auto* bytes = static_cast<const uint8_t*>(elements);
  a.bytes.assign(bytes, bytes + cudnn_element_bytes(type) * static_cast<size_t>(count));
  if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
    const auto* values = static_cast<const cudnnBackendDescriptor_t*>(elements);
    for (int64_t i = 0; i < count; ++i) {
      const CudnnDescriptor* v = descriptor_of(values[i]);
      if (v == nullptr) return CUDNN_STATUS_BAD_PARAM;
      a.descriptors.push_back(std::make_shared<const CudnnDescriptor>(*v));
    }
  }
  d->attributes[name] = std::move(a);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  CudnnDescriptor* d = descriptor_of(descriptor);
  if (d == nullptr) return CUDNN_STATUS_BAD_PARAM;
  if (d->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
    const CudnnDescriptor* graph = plan_graph(*d);
    d->call = graph ? decode_cudnn_call(*graph) : std::nullopt;
  }
  d->finalized = true;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
                                       cudnnBackendAttributeName_t name,
                                       cudnnBackendAttributeType_t type, int64_t requested,
                                       int64_t* count, void* elements) {
  const CudnnDescriptor* d = descriptor_of(descriptor);
  if (d == nullptr || requested < 0) return CUDNN_STATUS_BAD_PARAM;
  if (const CudnnAttribute* a = d->find(name)) {
    if (count != nullptr) *count = a->count;
    const int64_t n = std::min(requested, a->count);
    if (n > 0 && elements == nullptr) return CUDNN_STATUS_BAD_PARAM;
    if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
      auto* out = static_cast<cudnnBackendDescriptor_t*>(elements);
      for (int64_t i = 0; i < n && i < static_cast<int64_t>(a->descriptors.size()); ++i) {
        CudnnDescriptor* target = descriptor_of(out[i]);
        if (target == nullptr) return CUDNN_STATUS_BAD_PARAM;
        *target = *a->descriptors[i];
      }
    } else if (n > 0) {
      std::memcpy(elements, a->bytes.data(),
                  std::min(a->bytes.size(), cudnn_element_bytes(type) * static_cast<size_t>(n)));
    }
    return CUDNN_STATUS_SUCCESS;
  }
  if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS) {
    return heuristics_results(*d, requested, count, elements);
  }
  if (answers_none(name)) {
    if (count != nullptr) *count = 0;
    return CUDNN_STATUS_SUCCESS;
  }
  if (answers_zero(name)) {
    if (count != nullptr) *count = 1;
    if (requested >= 1 && elements != nullptr) std::memset(elements, 0, cudnn_element_bytes(type));
    return CUDNN_STATUS_SUCCESS;
  }
  return CUDNN_STATUS_NOT_SUPPORTED;
}

cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                                  cudnnBackendDescriptor_t variant_pack) {
  // An intercepted call like a kernel launch: the program's CPU time up to here is charged
  // before the kernel is stamped with the host clock (runtime.hpp, ApiCall).
  ApiCall call;
  const CudnnDescriptor* p = descriptor_of(plan);
  if (!valid(handle) || p == nullptr || !valid(variant_pack)) return CUDNN_STATUS_BAD_PARAM;
  if (!p->call) {
    const CudnnDescriptor* graph = plan_graph(*p);
    std::fprintf(stderr,
                 "phantora: cudnnBackendExecute of a graph (%s) that is neither an attention nor "
                 "a single convolution the simulator knows: cuDNN is simulated for those only "
                 "(docs/pytorch.md, \"cuDNN\")\n",
                 graph ? describe_cudnn_graph(*graph).c_str() : "none");
    std::abort();
  }
  if (const auto* a = std::get_if<CudnnAttention>(&*p->call)) submit_attention(handle, *a);
  if (const auto* c = std::get_if<CudnnConvolution>(&*p->call)) submit_convolution(handle, *c);
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
