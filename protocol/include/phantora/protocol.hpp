// The wire protocol between the shim (intercept/) and the daemon (simcore/).
//
// This is the one header both sides include; it depends on nothing but the standard library
// and phantora/units.hpp. Everything is fixed-size, little-endian POD (both ends run on the
// same machine architecture; the magic and version reject anything else).
//
// A connection carries frames. A frame is a FrameHeader followed by `length` payload bytes.
//   client -> daemon: kHello once, then kBatch frames (a run of records), finally kBye.
//   daemon -> client: kWelcome once, then kReply frames, one per record that asked for one.
// Records inside a batch are RecordHeader + body; the body struct is chosen by RecordType.
// Asynchronous work (launches, copies, event records) never waits for the daemon; only
// records with a non-zero `request` id get a reply, which carries the simulated time at which
// the awaited work completes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>

namespace phantora::wire {

inline constexpr uint32_t kMagic = 0x50484e54;  // "PHNT"
// 2: Launch carries decoded memory work; 3: and attention shapes. 6: kProgress. 7: the requests
// a Progress covers, and a kHostResumed that may come before its reply. 8: convolution shapes.
inline constexpr uint16_t kVersion = 8;
inline constexpr size_t kTokenBytes = 32;
// Large enough for a group of small collectives with their payloads (kMaxPayloadBytes each).
inline constexpr size_t kMaxFrameBytes = 64u << 20;
inline constexpr int kMaxDevicesPerHost = 64;

// kPayload: daemon -> client, the bytes a small collective wrote into one of the client's
// receive buffers (PayloadHeader + bytes).
// kRefused: daemon -> client, instead of kWelcome, then the connection closes: why the hello was
// refused (a wrong token, a host out of range), as text of at most kMaxRefusalBytes. A shim
// that predates it reads it as a failed welcome, so it needs no new version.
// kProgress: daemon -> client, Progress: the simulation has stopped at this client's own bound
// while it waits for answers; none of them will come earlier than Progress::answers_from_ps.
enum class FrameType : uint16_t {
  kHello = 1,
  kWelcome = 2,
  kBatch = 3,
  kReply = 4,
  kBye = 5,
  kPayload = 6,
  kRefused = 7,
  kProgress = 8,
};
inline constexpr size_t kMaxRefusalBytes = 1024;

struct FrameHeader {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  FrameType type{};
  uint32_t length = 0;  // payload bytes after this header
};

// How a client's host clock advances between calls (docs/time.md). The one enumeration for it:
// `phantora run --cpu-time` parses it, the shim reads it from PHANTORA_CPU_TIME before it
// connects and from the welcome after, the report names it.
enum class CpuTimeMode : uint8_t { kMeasured = 0, kModel = 1, kZero = 2 };
struct CpuTimeModeName {
  CpuTimeMode mode;
  std::string_view name;
};
inline constexpr CpuTimeModeName kCpuTimeModeNames[] = {
    {CpuTimeMode::kMeasured, "measured"},
    {CpuTimeMode::kModel, "model"},
    {CpuTimeMode::kZero, "zero"},
};
inline std::string_view cpu_time_name(CpuTimeMode m) {
  for (const CpuTimeModeName& n : kCpuTimeModeNames) {
    if (n.mode == m) return n.name;
  }
  return "?";
}
inline std::optional<CpuTimeMode> parse_cpu_time(std::string_view name) {
  for (const CpuTimeModeName& n : kCpuTimeModeNames) {
    if (n.name == name) return n.mode;
  }
  return std::nullopt;
}

struct Hello {
  char token[kTokenBytes]{};
  int32_t host = 0;  // PHANTORA_HOST
  int32_t pid = 0;
  int32_t global_rank = -1;  // RANK from the environment where a launcher set it, else -1
  int32_t local_rank = -1;   // LOCAL_RANK likewise
  int32_t world_size = -1;   // WORLD_SIZE likewise: how many ranks the daemon is to expect
};

// Figures of one simulated GPU model, sent to every client at connection so that the shim can
// answer cudaGetDeviceProperties / cudaDeviceGetAttribute without reading any file itself.
// Filled by the daemon from the GPU preset table (kernels-db/data/gpus.toml).
struct DeviceSpec {
  char name[96]{};                // e.g. "NVIDIA H100 80GB HBM3", as the real part reports it
  uint64_t total_global_mem = 0;  // bytes
  int32_t cc_major = 0, cc_minor = 0;
  int32_t multiprocessor_count = 0;
  int32_t max_threads_per_block = 0;
  int32_t max_threads_per_multiprocessor = 0;
  int32_t max_blocks_per_multiprocessor = 0;
  int32_t regs_per_block = 0, regs_per_multiprocessor = 0;
  uint64_t shared_mem_per_block = 0;
  uint64_t shared_mem_per_block_optin = 0;
  uint64_t shared_mem_per_multiprocessor = 0;
  uint64_t reserved_shared_mem_per_block = 0;
  int32_t l2_cache_bytes = 0;
  int32_t persisting_l2_cache_max_bytes = 0;
  int32_t memory_bus_width_bits = 0;
  int32_t memory_clock_khz = 0;
  int32_t clock_khz = 0;
  int32_t async_engine_count = 0;
  int32_t pci_device_id = 0;  // PCI device id of the part, e.g. 0x2330 for H100 SXM5
  int32_t pci_subsystem_id = 0;
  int32_t cooperative_launch = 1;
  int32_t cluster_launch = 0;  // thread block clusters (sm_90+)
};
static_assert(std::is_trivially_copyable_v<DeviceSpec>);

struct Welcome {
  uint32_t client_id = 0;
  int32_t hosts = 0;
  int32_t gpus_per_host = 0;
  CpuTimeMode cpu_time = CpuTimeMode::kMeasured;
  uint8_t pad[3]{};
  int64_t per_call_cost_ps = 0;   // host time charged per intercepted call in model mode
  int64_t launch_latency_ps = 0;  // host-to-GPU launch latency added to every async op
  DeviceSpec device{};
};
static_assert(std::is_trivially_copyable_v<Welcome>);

enum class RecordType : uint16_t {
  kDefineKernel = 1,     // body DefineKernel + name bytes
  kStreamCreate = 2,     // StreamCreate
  kStreamDestroy = 3,    // StreamRef
  kLaunch = 4,           // Launch
  kCopy = 5,             // Copy
  kMemset = 6,           // Memset
  kEventRecord = 7,      // EventOp
  kStreamWaitEvent = 8,  // EventOp
  kAlloc = 9,            // MemOp
  kFree = 10,            // MemOp
  kStreamSync = 11,      // StreamRef (request)
  kEventSync = 12,       // EventOp (request): reply = time the event completes
  kDeviceSync = 13,      // DeviceRef (request)
  kHostClock = 14,       // HostClock: the thread's clock moved (bounds what it can still submit)
  kDefineGraph = 15,     // DefineGraph + nodes
  kGraphLaunch = 16,     // GraphLaunch
  kHostFunc = 17,        // StreamRef: a host callback enqueued on a stream (zero GPU time)
  kGemm = 18,
  kCommInit = 19,     // CommInit (request): answered once every rank has joined
  kCommSplit = 20,    // CommSplit (request): answered with the new rank and size
  kCommDestroy = 21,  // CommRef
  kCollective = 22,  // CollectiveHeader + CollectiveOp[count]: one NCCL call or group            //
                     // Gemm: a cuBLAS / cuBLASLt matrix multiply with its full descriptor
};

// kBye's body: how the process ended.
enum ByeHow : int32_t {
  kByeExited = 0,     // exit(code) or a return from main
  kByeSignalled = 1,  // a fatal signal (code = its number); the connection closes after it
};
struct Bye {
  int64_t host_time_ps = 0;  // the latest clock of its threads
  int32_t how = kByeExited;
  int32_t code = 0;
  // Hand-offs between its threads that no waiter took up, each of which held the process bound
  // for a second of real time before it lapsed (none is expected; docs/reliability.md).
  uint64_t lapsed_handoffs = 0;
};
static_assert(std::is_trivially_copyable_v<Bye>);

struct RecordHeader {
  RecordType type{};
  uint16_t pad = 0;
  uint32_t size = 0;         // body bytes after this header
  uint64_t request = 0;      // non-zero: the client waits for a Reply with this id
  int64_t host_time_ps = 0;  // the submitting thread's host clock at the call
  // The earliest host time at which the process can still submit work: the least clock of its
  // threads that run (not blocked in a call the simulator answers, nor waiting for another
  // thread) and of hand-offs between threads not yet taken up; kNoBound when every thread
  // waits. Lets the network advance while one thread of a process waits and others run.
  int64_t bound_ps = 0;
};
inline constexpr int64_t kNoBound = INT64_MAX;

// Stream ids are chosen by the shim and unique within a client. Each device's legacy default
// stream has id kLegacyStreamBase + device.
inline constexpr uint64_t kLegacyStreamBase = 1;
inline constexpr uint64_t kFirstUserStream = 1u << 16;

enum StreamFlags : uint32_t {
  kStreamBlocking = 0,     // synchronises with the legacy default stream
  kStreamNonBlocking = 1,  // cudaStreamNonBlocking
};

struct StreamCreate {
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t flags = 0;
  int32_t priority = 0;
  uint32_t pad = 0;
};

struct StreamRef {
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t pad = 0;
};

struct DeviceRef {
  int32_t device = 0;
  uint32_t pad = 0;
};

struct DefineKernel {
  uint32_t kernel = 0;  // id chosen by the shim; the mangled name follows the struct
  uint32_t name_bytes = 0;
};

// Element types of library calls (cuBLAS, NCCL), independent of any NVIDIA header. Kept apart
// from the cost model's kernels::DType: NCCL reduces integer types (u8, i64, u32, u64) that no
// kernel-database signature names, and the wire needs numbers fixed by the protocol version.
// kernels-db converts with one table (kernels::dtype_of).
enum class DataType : uint8_t {
  kUnknown = 0,
  kF64 = 1,
  kF32 = 2,
  kTF32 = 3,  // F32 storage computed on tensor cores
  kF16 = 4,
  kBF16 = 5,
  kFP8E4M3 = 6,
  kFP8E5M2 = 7,
  kI8 = 8,
  kI32 = 9,
  kU8 = 10,
  kI64 = 11,
  kU32 = 12,
  kU64 = 13,
};

// What a launch of a known kernel family does, as the shim decoded it from the launch
// (intercept/src/torch_kernel_args.hpp, described_launches.hpp); kNone when the family is not
// known. The memory-bound kinds carry the bytes they move, the attention kinds a shape.
enum class WorkKind : uint8_t {
  kNone = 0,
  kElementwise = 1,
  kReduce = 2,
  kCat = 3,
  kNorm = 4,
  kSoftmax = 5,
  kAttentionForward = 6,  // KernelWork::attention
  kAttentionBackward = 7,
  kForeach = 8,       // multi_tensor_apply: _foreach_* ops, fused optimizers
  kRandom = 9,        // random-number generation (normal_, uniform_, randint, dropout masks)
  kSort = 10,         // radix-sort passes and histograms (CUB)
  kScan = 11,         // prefix sums, select / unique-by-key and their tile state (CUB)
  kConvolution = 12,  // KernelWork::conv: a cuDNN convolution (forward, data or filter gradient)
};
// The cost model names the memory-bound kinds (kernels-db memory_op_desc); the wire carries
// the kind only.

// Which kernels compute an attention call: they run at different rates on the same shape.
enum class AttentionImpl : uint8_t {
  kFlash2 = 0,  // FlashAttention-2 (PyTorch's SDPA flash kernels)
  kFlash3 = 1,  // FlashAttention-3
  kFlex = 2,    // FlexAttention's inductor-generated Triton kernels
  // PyTorch's memory-efficient attention (SDPA's EFFICIENT_ATTENTION backend: the CUTLASS
  // kernels fmha_cutlassF_* / fmha_cutlassB_* it took from xFormers)
  kMemEfficient = 3,
  kCudnn = 4,  // cuDNN's attention (its backend graph API: PyTorch's CUDNN_ATTENTION backend)
};
// Their names: kernels-db's attention signatures (impl=...) and the impl argument of the shim's
// phantora_describe_next_attention().
struct AttentionImplName {
  AttentionImpl impl;
  std::string_view name;
};
inline constexpr AttentionImplName kAttentionImplNames[] = {
    {AttentionImpl::kFlash2, "fa2"},
    {AttentionImpl::kFlash3, "fa3"},
    {AttentionImpl::kFlex, "flex"},
    {AttentionImpl::kMemEfficient, "mem_efficient"},
    {AttentionImpl::kCudnn, "cudnn"}};
inline std::optional<AttentionImpl> parse_attention_impl(std::string_view name) {
  for (const AttentionImplName& n : kAttentionImplNames) {
    if (n.name == name) return n.impl;
  }
  return std::nullopt;
}

struct AttentionShape {
  uint32_t batch = 0, heads_q = 0, heads_kv = 0, seq_q = 0, seq_k = 0, head_dim = 0;
  DataType dtype = DataType::kBF16;
  AttentionImpl impl = AttentionImpl::kFlash2;
  uint8_t causal = 0;
  uint8_t pad = 0;
};

// Which product of a convolution a kernel computes: the forward pass (fprop), the gradient of
// its input (dgrad) or of its filter (wgrad), as cuDNN's three convolution operations.
enum class ConvPass : uint8_t { kForward = 0, kBackwardData = 1, kBackwardFilter = 2 };

// A 2-D convolution of an N x C x H x W input with K filters of (C / groups) x R x S into an
// N x K x P x Q output (a 1-D one has H = R = P = 1; 3-D ones are not described). The strides
// are carried because a strided convolution's data gradient skips the filter taps that land
// between input pixels; padding and dilation are implied by H, W, P, Q and do not change what
// it costs. `channels_first`: the activations are laid out N, C, H, W (PyTorch's default)
// rather than channels-last (N, H, W, C), which is what tensor-core kernels read and write.
struct ConvShape {
  uint32_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, p = 0, q = 0;
  uint32_t groups = 1, stride_h = 1, stride_w = 1;
  DataType dtype = DataType::kBF16;  // input, filter and output alike
  ConvPass pass = ConvPass::kForward;
  uint8_t channels_first = 0;
  uint8_t pad = 0;
};

// One kernel's work, the same for a direct launch and a captured graph's kernel node.
struct KernelWork {
  WorkKind kind = WorkKind::kNone;
  uint8_t pad[7]{};
  uint64_t bytes_read = 0;  // memory-bound kinds; both 0 otherwise
  uint64_t bytes_written = 0;
  AttentionShape attention{};  // the attention kinds
  ConvShape conv{};            // kConvolution
};
static_assert(std::is_trivially_copyable_v<KernelWork>);

struct Launch {
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t kernel = 0;
  uint32_t grid[3]{};
  uint32_t block[3]{};
  uint64_t shared_mem = 0;
  KernelWork work{};
};

enum class CopyKind : uint8_t {
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kDeviceToDevice = 3,
  kHostToHost = 4,
  kPeer = 5
};

struct Copy {
  uint64_t stream = 0;
  int32_t device = 0;
  CopyKind kind{};
  uint8_t pinned = 0;  // host side is page-locked
  uint16_t pad = 0;
  uint64_t bytes = 0;
};

struct Memset {
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t pad = 0;
  uint64_t bytes = 0;
};

struct EventOp {
  uint64_t event = 0;
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t pad = 0;
};

struct MemOp {
  uint64_t address = 0;
  uint64_t bytes = 0;
  int32_t device = 0;
  uint32_t pad = 0;
};

enum HostClockFlags : uint32_t {
  // The process has submitted no GPU work for a while and uses little CPU: it waits in
  // something the simulator cannot see (a TCPStore get, a Gloo barrier, a pipe). Until its
  // next record it does not hold the simulation back (design.md, "Causality").
  kHostIdle = 1,
  // A thread that blocked in a request has its reply and runs again: until this record the
  // daemon bounds the process by the reply's time (HostClock::thread = the request's id). Sent
  // before the reply when a query went on without it (wire::Progress): its reply, when it
  // comes, bounds nothing.
  kHostResumed = 2,
};

struct HostClock {
  uint64_t thread = 0;
  uint32_t flags = 0;
  uint32_t pad = 0;
};

// Gemm::api of a CUTLASS grouped GEMM of torch._grouped_mm whose group sizes are on the device:
// `batch` groups of the varying dimension split evenly (an assumption the trace states).
inline constexpr uint32_t kGemmApiGroupedEvenSplit = 200;

// C = epilogue(alpha * op(A) * op(B) + beta * C), `batch` independent products of m x n x k.
struct Gemm {
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t api = 0;  // which entry point issued it (intercept's own numbering, for the trace;
                     // kGemmApiGroupedEvenSplit is read by the daemon)
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  DataType a_type{}, b_type{}, c_type{}, compute_type{};
  uint8_t trans_a = 0, trans_b = 0;
  uint8_t epilogue = 0;    // 0 none; cuBLASLt epilogue bits otherwise (bias, gelu, relu ...)
  uint8_t accumulate = 0;  // beta != 0: C is read as well as written
};
static_assert(std::is_trivially_copyable_v<Gemm>);

// A captured CUDA graph: nodes are launches, library GEMMs, copies or memsets; each names the
// nodes it depends on by index (earlier nodes only). Its cost on replay is the longest path.
struct DefineGraph {
  uint64_t graph = 0;
  uint32_t node_count = 0;
  uint32_t pad = 0;
};

enum class GraphNodeKind : uint8_t { kKernel = 1, kCopy = 2, kMemset = 3, kEmpty = 4, kGemm = 5 };

inline constexpr int kMaxGraphNodeDeps = 8;

struct GraphNode {
  GraphNodeKind kind{};
  CopyKind copy_kind{};
  uint8_t dep_count = 0;
  uint8_t pad = 0;
  uint32_t kernel = 0;
  uint32_t grid[3]{};
  uint32_t block[3]{};
  uint64_t bytes = 0;
  uint32_t deps[kMaxGraphNodeDeps]{};
  uint64_t shared_mem = 0;  // kernel nodes
  KernelWork work{};        // kernel nodes
  Gemm gemm{};              // GEMM nodes (stream and device unused: the graph's launch says)
};

struct GraphLaunch {
  uint64_t graph = 0;
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t pad = 0;
};

// NCCL communicators. `comm` is the client's own handle for the communicator; the daemon
// learns which communicator it is from the unique id at init (or the parent at split).
inline constexpr size_t kUniqueIdBytes = 128;  // sizeof(ncclUniqueId)

struct CommInit {
  uint64_t comm = 0;
  uint8_t unique_id[kUniqueIdBytes]{};
  int32_t nranks = 0;
  int32_t rank = 0;
  int32_t device = 0;
  int32_t min_channels = 0;  // NCCL_MIN_NCHANNELS as the rank saw it (0: unset)
  int32_t max_channels = 0;  // NCCL_MAX_NCHANNELS
  char algo[32]{};           // NCCL_ALGO
  char proto[32]{};          // NCCL_PROTO
};

struct CommSplit {
  uint64_t parent = 0;
  uint64_t comm = 0;  // handle for the new communicator
  int32_t color = 0;  // negative: this rank joins no new communicator (NCCL_SPLIT_NOCOLOR)
  int32_t key = 0;
};

struct CommRef {
  uint64_t comm = 0;
};

enum class CollKind : uint8_t {
  kAllReduce = 1,
  kBroadcast = 2,
  kReduce = 3,
  kAllGather = 4,
  kReduceScatter = 5,
  kAllToAll = 6,
  kSend = 7,
  kRecv = 8,
  kGather = 9,
  kScatter = 10,
};

// One NCCL operation. Operations of one ncclGroupStart/End on one stream travel together and
// occupy the stream as one unit, as NCCL fuses them into one kernel.
struct CollectiveOp {
  uint64_t comm = 0;
  CollKind kind{};
  DataType dtype{};
  uint8_t redop = 0;  // ncclRedOp_t value
  uint8_t pad = 0;
  int32_t peer = 0;    // root (broadcast, reduce, gather, scatter) or peer (send, recv)
  uint64_t count = 0;  // elements, as the NCCL call states it
  uint64_t sendbuff = 0;
  uint64_t recvbuff = 0;
  uint64_t payload_bytes = 0;  // send-buffer bytes attached after the ops array (0: none)
};

// Small collectives carry their data (design.md, "Memory and values"): every member attaches
// its send buffer's bytes and receives what NCCL would have written into its receive buffer.
// Whether an operation does is decided from what every member knows alike, so that senders,
// receivers and the daemon agree: the largest buffer any member sends or receives.
// 64 KiB covers what frameworks exchange to steer control flow (shapes, sizes, flags, small
// pickled objects) while keeping gradient-sized operations timing-only.
inline constexpr uint64_t kMaxPayloadBytes = 64 << 10;

// Name (the spelling kernels-db signatures use: f16, bf16, f8e4m3, ...) and element size of
// each DataType.
struct DataTypeInfo {
  DataType type;
  const char* name;
  uint64_t size;
};
inline constexpr DataTypeInfo kDataTypes[] = {
    {DataType::kF64, "f64", 8},        {DataType::kF32, "f32", 4},
    {DataType::kTF32, "tf32", 4},      {DataType::kF16, "f16", 2},
    {DataType::kBF16, "bf16", 2},      {DataType::kFP8E4M3, "f8e4m3", 1},
    {DataType::kFP8E5M2, "f8e5m2", 1}, {DataType::kI8, "i8", 1},
    {DataType::kI32, "i32", 4},        {DataType::kU8, "u8", 1},
    {DataType::kI64, "i64", 8},        {DataType::kU32, "u32", 4},
    {DataType::kU64, "u64", 8},
};

inline const char* dtype_name(DataType t) {
  for (const DataTypeInfo& d : kDataTypes) {
    if (d.type == t) return d.name;
  }
  return "unknown";
}

// 0 for kUnknown.
inline uint64_t dtype_size(DataType t) {
  for (const DataTypeInfo& d : kDataTypes) {
    if (d.type == t) return d.size;
  }
  return 0;
}

// Bytes a rank's send buffer holds for the operation (the root's, where roles differ).
inline uint64_t op_send_bytes(CollKind kind, uint64_t count, DataType dtype, int nranks,
                              bool is_root) {
  const uint64_t b = count * dtype_size(dtype);
  switch (kind) {
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
      return b * static_cast<uint64_t>(nranks);
    case CollKind::kScatter:
      return is_root ? b * static_cast<uint64_t>(nranks) : 0;
    case CollKind::kBroadcast:
      return is_root ? b : 0;
    case CollKind::kRecv:
      return 0;
    default:
      return b;
  }
}

// Bytes NCCL writes into a rank's receive buffer.
inline uint64_t op_recv_bytes(CollKind kind, uint64_t count, DataType dtype, int nranks,
                              bool is_root) {
  const uint64_t b = count * dtype_size(dtype);
  switch (kind) {
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
      return b * static_cast<uint64_t>(nranks);
    case CollKind::kGather:
      return is_root ? b * static_cast<uint64_t>(nranks) : 0;
    case CollKind::kReduce:
      return is_root ? b : 0;
    case CollKind::kSend:
      return 0;
    default:
      return b;
  }
}

inline bool op_carries_payload(CollKind kind, uint64_t count, DataType dtype, int nranks) {
  uint64_t largest = 0;
  for (bool root : {false, true}) {
    largest = std::max({largest, op_send_bytes(kind, count, dtype, nranks, root),
                        op_recv_bytes(kind, count, dtype, nranks, root)});
  }
  return largest > 0 && largest <= kMaxPayloadBytes;
}

struct PayloadHeader {
  uint64_t recvbuff = 0;
  uint64_t bytes = 0;
};

struct CollectiveHeader {
  uint64_t stream = 0;
  int32_t device = 0;
  uint32_t op_count = 0;
};

enum class ReplyStatus : uint32_t { kOk = 0, kError = 1 };

// Sent when the network has run as far as causality lets it and the process itself holds it there
// (its bound) while one of its threads waits for an answer: every answer not yet taken up is at
// this time or later (a later request's may not be), so the shim may count a thread blocked in a
// request at least there when another thread's timeout asks how far the process has got
// (docs/time.md, "Sleeps and timed waits"). Otherwise a sleeping thread that holds the bound at its
// wake-up and a thread blocked in a collective ending after it would each wait for the other. It
// covers the requests the daemon had read when it said so (ids up to `through_request`): a query
// among them, which goes on from its thread's clock whatever its answer, is known not to be done by
// that clock once answers_from_ps lies past it, and the shim lets it go on with that answer rather
// than wait for the work's end (docs/time.md, "A sleep beside a query").
struct Progress {
  int64_t answers_from_ps = 0;
  uint64_t through_request = 0;
};

struct Reply {
  uint64_t request = 0;
  int64_t time_ps = 0;  // simulated completion time of what the request waited for
  ReplyStatus status = ReplyStatus::kOk;
  int32_t value0 = 0;  // request-specific answers (comm split: new rank)
  int32_t value1 = 0;  // (comm split: new size)
  uint32_t pad = 0;
};

}  // namespace phantora::wire
