// NCCL (communicators, collectives, point-to-point, groups) on the simulated network. The real
// libnccl is never called: communicators are agreed through the daemon, and every operation
// becomes a record that the daemon matches across ranks and times on the network model.
#include <nccl.h>
#include <sys/random.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "context.hpp"
#include "payload_inbox.hpp"
#include "shadow.hpp"

using namespace phantora;
using namespace phantora::shim;

struct ncclComm {
  uint64_t handle = 0;
  int nranks = 0;
  int rank = 0;
  int ordinal = 0;  // CUDA device ordinal of the rank
  int device = 0;   // physical device index on the host
  bool destroyed = false;
};

namespace {

std::atomic<uint64_t> g_next_comm{1};
std::atomic<int> g_next_custom_op{ncclNumOps};
thread_local std::string t_last_error;

ncclResult_t fail(ncclResult_t r, std::string message) {
  t_last_error = std::move(message);
  return r;
}

wire::DataType to_wire(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
      return wire::DataType::kI8;
    case ncclUint8:
      return wire::DataType::kU8;
    case ncclInt32:
      return wire::DataType::kI32;
    case ncclUint32:
      return wire::DataType::kU32;
    case ncclInt64:
      return wire::DataType::kI64;
    case ncclUint64:
      return wire::DataType::kU64;
    case ncclFloat16:
      return wire::DataType::kF16;
    case ncclFloat32:
      return wire::DataType::kF32;
    case ncclFloat64:
      return wire::DataType::kF64;
    case ncclBfloat16:
      return wire::DataType::kBF16;
    case ncclFloat8e4m3:
      return wire::DataType::kFP8E4M3;
    case ncclFloat8e5m2:
      return wire::DataType::kFP8E5M2;
    default:
      return wire::DataType::kUnknown;
  }
}

// Environment variables users tune NCCL with, read when a communicator is created (as NCCL
// reads them at init), and passed to the daemon's algorithm model.
void read_tuning(wire::CommInit& init) {
  auto copy = [](char* dst, size_t n, const char* name) {
    const char* v = std::getenv(name);
    if (v != nullptr) std::strncpy(dst, v, n - 1);
  };
  copy(init.algo, sizeof(init.algo), "NCCL_ALGO");
  copy(init.proto, sizeof(init.proto), "NCCL_PROTO");
  auto number = [](const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? 0 : std::atoi(v);
  };
  init.min_channels = number("NCCL_MIN_NCHANNELS");
  init.max_channels = number("NCCL_MAX_NCHANNELS");
}

// An ncclCommSplit whose answer (the new rank and size) has not been read yet.
struct PendingSplit {
  uint64_t request;
  ncclComm_t* out;
  uint64_t handle;
  int ordinal;
  int device;
};

// ncclGroupStart/End: operations issued in between are launched together at the end, one
// record per stream, and communicator inits in between do not block until the end.
struct GroupState {
  int depth = 0;
  struct Pending {
    cudaStream_t stream;
    int ordinal;
    wire::CollectiveOp op;
    std::vector<std::byte> payload;
  };
  std::vector<Pending> ops;
  std::vector<uint64_t> init_requests;
  std::vector<PendingSplit> splits;
};
thread_local GroupState t_group;

void complete_split(const PendingSplit& p) {
  const auto answer = Runtime::get().wait_reply(p.request);
  // A negative rank: this rank passed NCCL_SPLIT_NOCOLOR and joins no communicator.
  *p.out = answer.value0 < 0 ? nullptr : new ncclComm{p.handle,  answer.value1, answer.value0,
                                                      p.ordinal, p.device,      false};
}

ncclResult_t send_ops(CUstream_st* s, const std::vector<wire::CollectiveOp>& ops,
                      const std::vector<std::vector<std::byte>>& payloads) {
  if (s->capture != nullptr) {
    return fail(ncclInvalidUsage,
                "phantora: NCCL operations inside CUDA graph capture are not simulated (the "
                "collective would have to be replayed with the graph)");
  }
  // Ops, then each op's attached send-buffer bytes in op order.
  if (std::any_of(payloads.begin(), payloads.end(), [](const auto& p) { return !p.empty(); })) {
    Runtime::note_expensive();
  }
  std::vector<std::byte> tail(ops.size() * sizeof(wire::CollectiveOp));
  std::memcpy(tail.data(), ops.data(), tail.size());
  for (const auto& p : payloads) tail.insert(tail.end(), p.begin(), p.end());
  wire::CollectiveHeader h{s->id, s->device, static_cast<uint32_t>(ops.size())};
  if (sizeof(h) + tail.size() + sizeof(wire::RecordHeader) > wire::kMaxFrameBytes - 4096) {
    return fail(ncclInvalidUsage,
                "phantora: too many small NCCL operations in one group (payloads exceed a frame)");
  }
  Runtime::get().submit_parts(wire::RecordType::kCollective, &h, sizeof(h), tail.data(),
                              tail.size());
  return ncclSuccess;
}

// Small operations carry data (wire::op_carries_payload): the send buffer's bytes go with the
// record, and the receive buffer is expected to be written by the daemon's answer.
std::vector<std::byte> attach_payload(const ncclComm& comm, wire::CollectiveOp& op) {
  const bool p2p = op.kind == wire::CollKind::kSend || op.kind == wire::CollKind::kRecv;
  const int n = p2p ? 1 : comm.nranks;
  if (!wire::op_carries_payload(op.kind, op.count, op.dtype, n)) return {};
  Runtime::note_expensive();
  const bool root = comm.rank == op.peer;
  std::vector<std::byte> bytes(wire::op_send_bytes(op.kind, op.count, op.dtype, n, root));
  if (!bytes.empty()) ShadowStore::get().read(op.sendbuff, bytes.data(), bytes.size());
  const uint64_t receives = wire::op_recv_bytes(op.kind, op.count, op.dtype, n, root);
  if (receives > 0) PayloadInbox::get().expect(op.recvbuff, receives);
  op.payload_bytes = bytes.size();
  return bytes;
}

ncclResult_t enqueue(ncclComm_t comm, wire::CollKind kind, const void* send, void* recv,
                     size_t count, ncclDataType_t dtype, int redop, int peer, cudaStream_t stream) {
  ApiCall call;
  if (comm == nullptr || comm->destroyed) return fail(ncclInvalidArgument, "invalid communicator");
  const wire::DataType dt = to_wire(dtype);
  if (dt == wire::DataType::kUnknown) return fail(ncclInvalidArgument, "invalid data type");
  if (redop < 0 || redop >= g_next_custom_op)
    return fail(ncclInvalidArgument, "invalid reduction op");
  wire::CollectiveOp op{};
  op.comm = comm->handle;
  op.kind = kind;
  op.dtype = dt;
  op.redop = static_cast<uint8_t>(std::min(redop, 255));
  op.peer = peer;
  op.count = count;
  op.sendbuff = reinterpret_cast<uint64_t>(send);
  op.recvbuff = reinterpret_cast<uint64_t>(recv);
  std::vector<std::byte> payload = attach_payload(*comm, op);
  if (t_group.depth > 0) {
    t_group.ops.push_back({stream, comm->ordinal, op, std::move(payload)});
    return ncclSuccess;
  }
  // The stream is read on the communicator's device, as NCCL launches there.
  return send_ops(resolve_stream_on(comm->ordinal, stream), {op}, {std::move(payload)});
}

ncclResult_t init_rank(ncclComm_t* out, int nranks, const ncclUniqueId& id, int rank, int ordinal) {
  if (out == nullptr || nranks < 1 || rank < 0 || rank >= nranks) {
    return fail(ncclInvalidArgument, "ncclCommInitRank: invalid rank or size");
  }
  const int device = physical_device(ordinal);
  if (device < 0)
    return fail(ncclInvalidArgument, "ncclCommInitRank: the current CUDA device is invalid");
  auto* comm = new ncclComm{g_next_comm++, nranks, rank, ordinal, device, false};
  wire::CommInit init{};
  init.comm = comm->handle;
  std::memcpy(init.unique_id, id.internal, sizeof(init.unique_id));
  init.nranks = nranks;
  init.rank = rank;
  init.device = device;
  read_tuning(init);
  const uint64_t request =
      Runtime::get().send_request(wire::RecordType::kCommInit, &init, sizeof(init));
  // Inside a group the init completes at ncclGroupEnd (several ranks of one process join then).
  if (t_group.depth > 0) {
    t_group.init_requests.push_back(request);
  } else {
    Runtime::get().wait_reply(request);
  }
  *out = comm;
  return ncclSuccess;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return fail(ncclInvalidArgument, "null version");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  ApiCall call;
  if (id == nullptr) return fail(ncclInvalidArgument, "null unique id");
  std::memset(id->internal, 0, sizeof(id->internal));
  // Real NCCL puts the root's address here; any value unique to the run serves, since the
  // daemon only uses it to tell communicators apart.
  if (getrandom(id->internal, 32, 0) != 32) return fail(ncclSystemError, "getrandom failed");
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
  ApiCall call;
  return init_rank(comm, nranks, id, rank, current_device());
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t*) {
  ApiCall call;
  return init_rank(comm, nranks, id, rank, current_device());
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank, int n_ids,
                                      ncclUniqueId* ids, ncclConfig_t*) {
  ApiCall call;
  if (ids == nullptr || n_ids < 1) return fail(ncclInvalidArgument, "no unique ids");
  return init_rank(comm, nranks, ids[0], rank, current_device());
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  ApiCall call;
  if (comms == nullptr || ndev < 1) return fail(ncclInvalidArgument, "ncclCommInitAll: no devices");
  ncclUniqueId id;
  if (ncclResult_t r = ncclGetUniqueId(&id)) return r;
  // One process joins every rank: all inits go out before any is waited for.
  ncclGroupStart();
  for (int i = 0; i < ndev; ++i) {
    if (ncclResult_t r = init_rank(&comms[i], ndev, id, i, devlist != nullptr ? devlist[i] : i)) {
      ncclGroupEnd();
      return r;
    }
  }
  return ncclGroupEnd();
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t*) {
  ApiCall call;
  if (comm == nullptr || newcomm == nullptr)
    return fail(ncclInvalidArgument, "ncclCommSplit: null argument");
  wire::CommSplit split{comm->handle, g_next_comm++, color, key};
  const uint64_t request =
      Runtime::get().send_request(wire::RecordType::kCommSplit, &split, sizeof(split));
  PendingSplit pending{request, newcomm, split.comm, comm->ordinal, comm->device};
  // Inside a group (one thread splitting several ranks) the new communicator is ready at
  // ncclGroupEnd, as NCCL specifies; its peers' splits may come later in the same group.
  if (t_group.depth > 0) {
    t_group.splits.push_back(pending);
    return ncclSuccess;
  }
  complete_split(pending);
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return comm == nullptr ? fail(ncclInvalidArgument, "null communicator") : ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  ApiCall call;
  if (comm == nullptr) return fail(ncclInvalidArgument, "null communicator");
  wire::CommRef ref{comm->handle};
  Runtime::get().submit(wire::RecordType::kCommDestroy, &ref, sizeof(ref));
  comm->destroyed = true;  // kept: operations already queued may still name it
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return ncclCommDestroy(comm);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return fail(ncclInvalidArgument, "null argument");
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return fail(ncclInvalidArgument, "null argument");
  *device = comm->ordinal;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return fail(ncclInvalidArgument, "null argument");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (comm == nullptr || error == nullptr) return fail(ncclInvalidArgument, "null argument");
  // Disagreeing collectives end the whole run in the daemon; nothing is left to report here.
  *error = ncclSuccess;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error";
    case ncclSystemError:
      return "unhandled system error";
    case ncclInternalError:
      return "internal error";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t) {
  return t_last_error.c_str();
}

// Buffer registration only speeds up real transfers; the simulated ones are unaffected.
ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t, void** handle) {
  if (comm == nullptr || handle == nullptr) return fail(ncclInvalidArgument, "null argument");
  *handle = buff;
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void*) {
  return comm == nullptr ? fail(ncclInvalidArgument, "null communicator") : ncclSuccess;
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return cudaMalloc(ptr, size) == cudaSuccess ? ncclSuccess
                                              : fail(ncclUnhandledCudaError, "cudaMalloc failed");
}

ncclResult_t ncclMemFree(void* ptr) {
  return cudaFree(ptr) == cudaSuccess ? ncclSuccess
                                      : fail(ncclUnhandledCudaError, "cudaFree failed");
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void*, ncclDataType_t, ncclScalarResidence_t,
                                      ncclComm_t) {
  if (op == nullptr) return fail(ncclInvalidArgument, "null op");
  *op = static_cast<ncclRedOp_t>(g_next_custom_op++);
  return ncclSuccess;
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t, ncclComm_t) {
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  t_group.depth++;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  ApiCall call;
  if (t_group.depth == 0) return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--t_group.depth > 0) return ncclSuccess;
  // One record per stream, streams in the order they first appear.
  struct StreamOps {
    CUstream_st* stream;
    std::vector<wire::CollectiveOp> ops;
    std::vector<std::vector<std::byte>> payloads;
  };
  std::vector<StreamOps> by_stream;
  for (const auto& p : t_group.ops) {
    CUstream_st* s = resolve_stream_on(p.ordinal, p.stream);
    auto it = std::find_if(by_stream.begin(), by_stream.end(),
                           [&](const auto& e) { return e.stream == s; });
    if (it == by_stream.end()) {
      by_stream.push_back({s, {}, {}});
      it = by_stream.end() - 1;
    }
    it->ops.push_back(p.op);
    it->payloads.push_back(p.payload);
  }
  t_group.ops.clear();
  ncclResult_t result = ncclSuccess;
  for (const auto& group : by_stream) {
    if (ncclResult_t r = send_ops(group.stream, group.ops, group.payloads)) result = r;
  }
  const std::vector<uint64_t> inits = std::move(t_group.init_requests);
  t_group.init_requests.clear();
  for (uint64_t request : inits) Runtime::get().wait_reply(request);
  const std::vector<PendingSplit> splits = std::move(t_group.splits);
  t_group.splits.clear();
  for (const PendingSplit& p : splits) complete_split(p);
  return result;
}

ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kAllReduce, send, recv, count, dtype, op, 0, stream);
}

ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                           int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kBroadcast, send, recv, count, dtype, 0, root, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t dtype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, dtype, root, comm, stream);
}

ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kReduce, send, recv, count, dtype, op, root, stream);
}

ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t dtype,
                           ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kAllGather, send, recv, sendcount, dtype, 0, 0, stream);
}

ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t dtype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kReduceScatter, send, recv, recvcount, dtype, op, 0, stream);
}

ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count, ncclDataType_t dtype,
                          ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kAllToAll, send, recv, count, dtype, 0, 0, stream);
}

ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t dtype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kGather, send, recv, count, dtype, 0, root, stream);
}

ncclResult_t ncclScatter(const void* send, void* recv, size_t count, ncclDataType_t dtype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kScatter, send, recv, count, dtype, 0, root, stream);
}

ncclResult_t ncclSend(const void* send, size_t count, ncclDataType_t dtype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kSend, send, nullptr, count, dtype, 0, peer, stream);
}

ncclResult_t ncclRecv(void* recv, size_t count, ncclDataType_t dtype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return enqueue(comm, wire::CollKind::kRecv, nullptr, recv, count, dtype, 0, peer, stream);
}

}  // extern "C"
