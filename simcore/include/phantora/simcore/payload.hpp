// Real payloads of small NCCL operations: given the bytes of every rank's send buffer, the
// bytes every rank's receive buffer holds afterwards, computed as NCCL computes them. Pure
// functions; nothing here knows about clients, streams or time.
//
// Semantics follow nccl.h (2.28) call by call:
//   AllReduce      every rank: reduce(send[0..n))                      count elements
//   Broadcast      every rank: send[root]                              count
//   Reduce         root only:  reduce(send[0..n))                      count
//   AllGather      every rank: send[0] | send[1] | ... | send[n-1]     n x count (count=sendcount)
//   ReduceScatter  rank r:     block r of reduce(send[0..n))           count (=recvcount) of
//                                                                      n x count sent
//   AllToAll       rank r:     block r of send[0] | ... | block r of send[n-1]   n x count
//   Gather         root only:  send[0] | ... | send[n-1]               n x count
//   Scatter        rank r:     block r of send[root]                   count of n x count
//   Send / Recv    the receiver gets the sender's count elements.
//
// How reductions are computed (NCCL 2.28, src/device/reduce_kernel.h and src/enqueue.cc):
//   * Ranks are folded left to right in rank order: ((x0 op x1) op x2) ... NCCL's order depends
//     on the algorithm (ring, tree, NVLS); results agree whenever every step is exact.
//   * Integers: sum and prod wrap (NCCL runs signed sum/prod as unsigned); max/min compare as
//     the signed or unsigned type. avg sums (wrapping) and then divides once by n; unsigned
//     types divide with floor, signed types divide the magnitude and restore the sign, i.e.
//     truncate toward zero (FuncSumPostDiv::divide): avg(-3, -4) over 2 ranks = -3.
//   * f32 / f64: each step in the native type. avg is a "pre-multiplied sum": every input is
//     first multiplied by the scalar float(1.0 / n) (f64: 1.0 / n) and the products summed, so
//     for n not a power of two the result can differ in the last bit from sum / n.
//   * f16 / bf16: each step is one correctly rounded native operation (__hadd, __hmul), which is
//     what float arithmetic rounded to nearest-even back to the type gives. avg pre-multiplies
//     by __float2half(float(1.0 / n)) (bf16 likewise), rounding each product to the type.
//   * fp8 (e4m3, e5m2): as NCCL on sm_90: both operands widened to half (exactly), one half
//     operation rounded to half, then narrowed back to fp8 with round-to-nearest-even and
//     __NV_SATFINITE (what the __nv_fp8_e4m3(__half) constructors do): a result beyond the
//     largest finite value, infinities included, becomes +-max finite (448 for e4m3, 57344 for
//     e5m2); NaN stays NaN. avg pre-multiplies by fp8(float(1.0 / n)) in half, rounded to fp8.
//   * Floating max/min: as fmaxf/__hmax: a NaN operand yields the other operand, two NaNs yield
//     NaN, and +0 counts as greater than -0. Other NaN results: f16 and bf16 give the canonical
//     0x7FFF, fp8 gives 0x7F; f32/f64 give the host's NaN (payload bits are not meaningful).
//   * Custom reduction ops (redop >= 5, from ncclRedOpCreatePreMulSum) multiply each input by a
//     user scalar the daemon never sees: they are computed as a plain sum (scalar 1). Callers
//     that need the scaled result must not rely on these bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "phantora/float_formats.hpp"
#include "phantora/protocol.hpp"

namespace phantora::sim {

// Inputs that do not describe a valid operation: a wrong number of buffers, a buffer of the
// wrong size, a root out of range, an unsupported data type or reduction op. The message says
// which.
class PayloadError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// NCCL's reduction ops (ncclRedOp_t). Values >= kNumBuiltinRedOps are user-created ops.
inline constexpr int kRedSum = 0;
inline constexpr int kRedProd = 1;
inline constexpr int kRedMax = 2;
inline constexpr int kRedMin = 3;
inline constexpr int kRedAvg = 4;
inline constexpr int kNumBuiltinRedOps = 5;

// Bytes per element of an NCCL data type; throws PayloadError for kUnknown and kTF32 (not an
// NCCL type).
size_t dtype_bytes(wire::DataType dtype);

// Whether rank `rank` of an operation reads its sendbuff / has its recvbuff written. NCCL leaves
// non-root sendbuffs of Broadcast and Scatter unread and non-root recvbuffs of Reduce and Gather
// untouched. For kSend / kRecv the kind is the op as this rank issued it: a kSend rank only
// reads, a kRecv rank only writes (rank and root are not used).
bool reads_sendbuff(wire::CollKind kind, int rank, int root);
bool writes_recvbuff(wire::CollKind kind, int rank, int root);

// Bytes in the sendbuff of a rank that reads it (see reads_sendbuff), and bytes written to the
// recvbuff of a rank that has it written, for an operation of `count` elements (as the NCCL call
// states it) on `nranks` ranks. kRecv sends 0 bytes and kSend receives 0. Throws PayloadError
// on an unsupported type, nranks < 1, or a size that does not fit 64 bits.
uint64_t send_bytes(wire::CollKind kind, wire::DataType dtype, uint64_t count, int nranks);
uint64_t recv_bytes(wire::CollKind kind, wire::DataType dtype, uint64_t count, int nranks);

// The result of one operation. `sends` holds one send buffer per rank in communicator-rank
// order; entries of ranks that do not read their sendbuff are ignored (pass them empty).
// For kSend / kRecv (either kind, same meaning) `sends` has exactly two entries: [0] is the
// sender's buffer and [1] the receiver's, ignored; `root` is not used.
// Returns one vector per rank (same order): the bytes its recvbuff holds afterwards, or an empty
// vector where the recvbuff is not written. `redop` (an ncclRedOp_t value) is used by AllReduce,
// Reduce and ReduceScatter only. `root` is the root of Broadcast, Reduce, Gather and Scatter.
// Throws PayloadError on inconsistent inputs.
std::vector<std::vector<std::byte>> collective_result(
    wire::CollKind kind, wire::DataType dtype, int redop, uint64_t count, int root,
    const std::vector<std::span<const std::byte>>& sends);

// The narrow-float conversions the reductions use (common/include/phantora/float_formats.hpp).
using phantora::bf16_to_float;
using phantora::float_to_bf16;
using phantora::float_to_fp8_e4m3;
using phantora::float_to_fp8_e5m2;
using phantora::float_to_half;
using phantora::fp8_e4m3_to_float;
using phantora::fp8_e5m2_to_float;
using phantora::half_to_float;

}  // namespace phantora::sim
