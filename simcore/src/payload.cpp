// Real payloads of small NCCL operations. See payload.hpp for the semantics and the rounding
// rules; this file only implements them.
#include "phantora/simcore/payload.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace phantora::sim {
namespace {

using wire::CollKind;
using wire::DataType;

[[noreturn]] void fail(const std::string& what) {
  throw PayloadError("payload: " + what);
}

const char* kind_name(CollKind kind) {
  switch (kind) {
    case CollKind::kAllReduce:
      return "AllReduce";
    case CollKind::kBroadcast:
      return "Broadcast";
    case CollKind::kReduce:
      return "Reduce";
    case CollKind::kAllGather:
      return "AllGather";
    case CollKind::kReduceScatter:
      return "ReduceScatter";
    case CollKind::kAllToAll:
      return "AllToAll";
    case CollKind::kSend:
      return "Send";
    case CollKind::kRecv:
      return "Recv";
    case CollKind::kGather:
      return "Gather";
    case CollKind::kScatter:
      return "Scatter";
  }
  return nullptr;
}

std::string kind_str(CollKind kind) {
  const char* name = kind_name(kind);
  if (name == nullptr) return "collective kind " + std::to_string(static_cast<int>(kind));
  return name;
}

void check_kind(CollKind kind) {
  if (kind_name(kind) == nullptr) fail("unknown " + kind_str(kind));
}

bool is_rooted(CollKind kind) {
  return kind == CollKind::kBroadcast || kind == CollKind::kReduce || kind == CollKind::kGather ||
         kind == CollKind::kScatter;
}

uint64_t checked_mul(uint64_t a, uint64_t b, CollKind kind) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) {
    fail(kind_str(kind) + ": buffer size overflows 64 bits");
  }
  return a * b;
}

// ---------------------------------------------------------------------------------------------
// Element operations. Each Ops type names its storage and gives the NCCL reduction steps.

template <typename T>
T load(std::span<const std::byte> buf, uint64_t index) {
  T v;
  std::memcpy(&v, buf.data() + index * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store(std::span<std::byte> buf, uint64_t index, T v) {
  std::memcpy(buf.data() + index * sizeof(T), &v, sizeof(T));
}

// Integers in their unsigned storage type U; signedness only matters for max/min and avg.
template <typename U, bool Signed>
struct IntOps {
  static_assert(std::is_unsigned_v<U>);
  using Storage = U;
  static constexpr bool kFloat = false;
  using S = std::make_signed_t<U>;

  static U add(U a, U b) { return static_cast<U>(a + b); }
  static U mul(U a, U b) { return static_cast<U>(a * b); }
  static bool less(U a, U b) {
    if constexpr (Signed) {
      return static_cast<S>(a) < static_cast<S>(b);
    } else {
      return a < b;
    }
  }
  static U max(U a, U b) { return less(a, b) ? b : a; }
  static U min(U a, U b) { return less(b, a) ? b : a; }
  // FuncSumPostDiv::divide: the magnitude is divided, then the sign restored.
  static U post_div(U sum, uint64_t n) {
    const bool negative = Signed && (sum >> (8 * sizeof(U) - 1)) != 0;
    const U magnitude = negative ? static_cast<U>(U{0} - sum) : sum;
    const U q = static_cast<U>(magnitude / n);
    return negative ? static_cast<U>(U{0} - q) : q;
  }
};

// Floating types. Storage S; arithmetic on Compute (float or double), each result narrowed back
// by Codec::narrow (the rounding of one native NCCL step).
template <typename Codec>
struct FloatOps {
  using Storage = typename Codec::Storage;
  using Compute = typename Codec::Compute;
  static constexpr bool kFloat = true;

  static Storage add(Storage a, Storage b) {
    return Codec::narrow(Codec::widen(a) + Codec::widen(b));
  }
  static Storage mul(Storage a, Storage b) {
    return Codec::narrow(Codec::widen(a) * Codec::widen(b));
  }
  // fmaxf / __hmax: a NaN yields the other operand; +0 > -0. The chosen operand is passed
  // through narrow(), which is the identity except for fp8, whose result goes back through
  // the satfinite conversion (an e5m2 infinity comes out as +-57344, as on the GPU).
  static Storage pick(Storage a, Storage b, bool want_max) {
    const Compute x = Codec::widen(a), y = Codec::widen(b);
    const bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn && yn) return Codec::nan();
    if (xn) return Codec::narrow(y);
    if (yn) return Codec::narrow(x);
    bool first;
    if (x == y) {
      // Equal values differ at most in the sign of zero.
      first = want_max ? !std::signbit(x) : std::signbit(x);
    } else {
      first = (x > y) == want_max;
    }
    return Codec::narrow(first ? x : y);
  }
  static Storage max(Storage a, Storage b) { return pick(a, b, true); }
  static Storage min(Storage a, Storage b) { return pick(a, b, false); }
  static Storage pre_mul(Storage x, Compute scalar) {
    return Codec::narrow(Codec::widen(x) * scalar);
  }
  static Compute avg_scalar(uint64_t n) { return Codec::avg_scalar(n); }
};

struct F32Codec {
  using Storage = float;
  using Compute = float;
  static float widen(float v) { return v; }
  static float narrow(float v) { return v; }
  static float nan() { return std::numeric_limits<float>::quiet_NaN(); }
  static float avg_scalar(uint64_t n) { return static_cast<float>(1.0 / static_cast<double>(n)); }
};

struct F64Codec {
  using Storage = double;
  using Compute = double;
  static double widen(double v) { return v; }
  static double narrow(double v) { return v; }
  static double nan() { return std::numeric_limits<double>::quiet_NaN(); }
  static double avg_scalar(uint64_t n) { return 1.0 / static_cast<double>(n); }
};

struct F16Codec {
  using Storage = uint16_t;
  using Compute = float;
  static float widen(uint16_t v) { return half_to_float(v); }
  static uint16_t narrow(float v) { return float_to_half(v); }
  static uint16_t nan() { return 0x7FFF; }
  static float avg_scalar(uint64_t n) {
    return widen(float_to_half(static_cast<float>(1.0 / static_cast<double>(n))));
  }
};

struct BF16Codec {
  using Storage = uint16_t;
  using Compute = float;
  static float widen(uint16_t v) { return bf16_to_float(v); }
  static uint16_t narrow(float v) { return float_to_bf16(v); }
  static uint16_t nan() { return 0x7FFF; }
  static float avg_scalar(uint64_t n) {
    return widen(float_to_bf16(static_cast<float>(1.0 / static_cast<double>(n))));
  }
};

// fp8: operands widened to half (exact), one half operation (float arithmetic rounded to half),
// then narrowed to fp8 with satfinite.
template <bool E4M3>
struct FP8Codec {
  using Storage = uint8_t;
  using Compute = float;
  static float widen(uint8_t v) { return E4M3 ? fp8_e4m3_to_float(v) : fp8_e5m2_to_float(v); }
  static uint8_t to_fp8(float v) { return E4M3 ? float_to_fp8_e4m3(v) : float_to_fp8_e5m2(v); }
  static uint8_t narrow(float v) { return to_fp8(half_to_float(float_to_half(v))); }
  static uint8_t nan() { return 0x7F; }
  static float avg_scalar(uint64_t n) {
    // __nv_cvt_float_to_fp8(float(1.0 / nRanks), __NV_SATFINITE, ...), straight from float.
    return widen(to_fp8(static_cast<float>(1.0 / static_cast<double>(n))));
  }
};

// Reduces element [offset, offset + count) of every buffer into one buffer of count elements.
template <typename Ops>
std::vector<std::byte> reduce_typed(int redop, uint64_t offset, uint64_t count,
                                    const std::vector<std::span<const std::byte>>& in) {
  using T = typename Ops::Storage;
  const uint64_t n = in.size();
  // Custom ops (>= kNumBuiltinRedOps) are PreMulSum with a scalar the daemon does not know:
  // computed as a plain sum (see payload.hpp).
  const int op = redop >= kNumBuiltinRedOps ? kRedSum : redop;
  std::vector<std::byte> out(count * sizeof(T));
  std::span<std::byte> dst(out);

  for (uint64_t i = 0; i < count; ++i) {
    const auto at = [&](uint64_t rank) { return load<T>(in[rank], offset + i); };
    T acc{};
    if constexpr (Ops::kFloat) {
      if (op == kRedAvg) {
        const auto scalar = Ops::avg_scalar(n);
        acc = Ops::pre_mul(at(0), scalar);
        for (uint64_t r = 1; r < n; ++r) acc = Ops::add(acc, Ops::pre_mul(at(r), scalar));
        store(dst, i, acc);
        continue;
      }
    }
    acc = at(0);
    for (uint64_t r = 1; r < n; ++r) {
      const T x = at(r);
      switch (op) {
        case kRedSum:
        case kRedAvg:  // integers: sum now, divide below
          acc = Ops::add(acc, x);
          break;
        case kRedProd:
          acc = Ops::mul(acc, x);
          break;
        case kRedMax:
          acc = Ops::max(acc, x);
          break;
        case kRedMin:
          acc = Ops::min(acc, x);
          break;
      }
    }
    if constexpr (!Ops::kFloat) {
      if (op == kRedAvg) acc = Ops::post_div(acc, n);
    }
    store(dst, i, acc);
  }
  return out;
}

std::vector<std::byte> reduce(DataType dtype, int redop, uint64_t offset, uint64_t count,
                              const std::vector<std::span<const std::byte>>& in) {
  switch (dtype) {
    case DataType::kI8:
      return reduce_typed<IntOps<uint8_t, true>>(redop, offset, count, in);
    case DataType::kU8:
      return reduce_typed<IntOps<uint8_t, false>>(redop, offset, count, in);
    case DataType::kI32:
      return reduce_typed<IntOps<uint32_t, true>>(redop, offset, count, in);
    case DataType::kU32:
      return reduce_typed<IntOps<uint32_t, false>>(redop, offset, count, in);
    case DataType::kI64:
      return reduce_typed<IntOps<uint64_t, true>>(redop, offset, count, in);
    case DataType::kU64:
      return reduce_typed<IntOps<uint64_t, false>>(redop, offset, count, in);
    case DataType::kF16:
      return reduce_typed<FloatOps<F16Codec>>(redop, offset, count, in);
    case DataType::kF32:
      return reduce_typed<FloatOps<F32Codec>>(redop, offset, count, in);
    case DataType::kF64:
      return reduce_typed<FloatOps<F64Codec>>(redop, offset, count, in);
    case DataType::kBF16:
      return reduce_typed<FloatOps<BF16Codec>>(redop, offset, count, in);
    case DataType::kFP8E4M3:
      return reduce_typed<FloatOps<FP8Codec<true>>>(redop, offset, count, in);
    case DataType::kFP8E5M2:
      return reduce_typed<FloatOps<FP8Codec<false>>>(redop, offset, count, in);
    default:
      break;
  }
  fail("unsupported data type " + std::to_string(static_cast<int>(dtype)));
}

std::vector<std::byte> copy_of(std::span<const std::byte> s, uint64_t offset, uint64_t bytes) {
  return std::vector<std::byte>(s.begin() + static_cast<ptrdiff_t>(offset),
                                s.begin() + static_cast<ptrdiff_t>(offset + bytes));
}

}  // namespace

size_t dtype_bytes(DataType dtype) {
  switch (dtype) {
    case DataType::kI8:
    case DataType::kU8:
    case DataType::kFP8E4M3:
    case DataType::kFP8E5M2:
      return 1;
    case DataType::kF16:
    case DataType::kBF16:
      return 2;
    case DataType::kI32:
    case DataType::kU32:
    case DataType::kF32:
      return 4;
    case DataType::kI64:
    case DataType::kU64:
    case DataType::kF64:
      return 8;
    case DataType::kUnknown:
    case DataType::kTF32:
      break;
  }
  fail("data type " + std::to_string(static_cast<int>(dtype)) + " is not an NCCL data type");
}

bool reads_sendbuff(CollKind kind, int rank, int root) {
  switch (kind) {
    case CollKind::kBroadcast:
    case CollKind::kScatter:
      return rank == root;
    case CollKind::kRecv:
      return false;
    default:
      return true;
  }
}

bool writes_recvbuff(CollKind kind, int rank, int root) {
  switch (kind) {
    case CollKind::kReduce:
    case CollKind::kGather:
      return rank == root;
    case CollKind::kSend:
      return false;
    default:
      return true;
  }
}

uint64_t send_bytes(CollKind kind, DataType dtype, uint64_t count, int nranks) {
  check_kind(kind);
  if (nranks < 1) fail(kind_str(kind) + ": " + std::to_string(nranks) + " ranks");
  const uint64_t elem = checked_mul(count, dtype_bytes(dtype), kind);
  switch (kind) {
    case CollKind::kReduceScatter:
    case CollKind::kAllToAll:
    case CollKind::kScatter:
      return checked_mul(elem, static_cast<uint64_t>(nranks), kind);
    case CollKind::kRecv:
      return 0;
    default:
      return elem;
  }
}

uint64_t recv_bytes(CollKind kind, DataType dtype, uint64_t count, int nranks) {
  check_kind(kind);
  if (nranks < 1) fail(kind_str(kind) + ": " + std::to_string(nranks) + " ranks");
  const uint64_t elem = checked_mul(count, dtype_bytes(dtype), kind);
  switch (kind) {
    case CollKind::kAllGather:
    case CollKind::kAllToAll:
    case CollKind::kGather:
      return checked_mul(elem, static_cast<uint64_t>(nranks), kind);
    case CollKind::kSend:
      return 0;
    default:
      return elem;
  }
}

std::vector<std::vector<std::byte>> collective_result(
    CollKind kind, DataType dtype, int redop, uint64_t count, int root,
    const std::vector<std::span<const std::byte>>& sends) {
  check_kind(kind);
  const size_t esize = dtype_bytes(dtype);
  const bool p2p = kind == CollKind::kSend || kind == CollKind::kRecv;
  if (sends.empty()) fail(kind_str(kind) + ": no ranks");
  if (sends.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    fail(kind_str(kind) + ": too many ranks");
  }
  const int n = static_cast<int>(sends.size());
  if (p2p && n != 2) {
    fail(kind_str(kind) + ": expects 2 buffers (sender, receiver), got " + std::to_string(n));
  }
  if (is_rooted(kind) && (root < 0 || root >= n)) {
    fail(kind_str(kind) + ": root " + std::to_string(root) + " out of range for " +
         std::to_string(n) + " ranks");
  }
  const bool reduces =
      kind == CollKind::kAllReduce || kind == CollKind::kReduce || kind == CollKind::kReduceScatter;
  if (reduces && redop < 0)
    fail(kind_str(kind) + ": invalid reduction op " + std::to_string(redop));

  // The sendbuff size every reading rank must supply.
  const uint64_t want = send_bytes(p2p ? CollKind::kSend : kind, dtype, count, n);
  for (int r = 0; r < n; ++r) {
    const bool reads = p2p ? r == 0 : reads_sendbuff(kind, r, root);
    if (reads && sends[r].size() != want) {
      fail(kind_str(kind) + ": rank " + std::to_string(r) + " send buffer holds " +
           std::to_string(sends[r].size()) + " bytes, expected " + std::to_string(want) + " (" +
           std::to_string(count) + " elements of " + std::to_string(esize) + " bytes" +
           (want != count * esize ? " x " + std::to_string(n) + " ranks)" : ")"));
    }
  }

  const uint64_t block = count * esize;  // no overflow: checked by send_bytes / recv_bytes
  (void)recv_bytes(kind, dtype, count, n);
  std::vector<std::vector<std::byte>> out(static_cast<size_t>(n));
  switch (kind) {
    case CollKind::kAllReduce: {
      auto result = reduce(dtype, redop, 0, count, sends);
      for (int r = 0; r < n; ++r) out[r] = result;
      break;
    }
    case CollKind::kReduce:
      out[root] = reduce(dtype, redop, 0, count, sends);
      break;
    case CollKind::kReduceScatter:
      for (int r = 0; r < n; ++r) out[r] = reduce(dtype, redop, r * count, count, sends);
      break;
    case CollKind::kBroadcast:
      for (int r = 0; r < n; ++r) out[r] = copy_of(sends[root], 0, block);
      break;
    case CollKind::kAllGather:
    case CollKind::kGather: {
      std::vector<std::byte> all;
      all.reserve(block * n);
      for (int r = 0; r < n; ++r) all.insert(all.end(), sends[r].begin(), sends[r].end());
      if (kind == CollKind::kGather) {
        out[root] = std::move(all);
      } else {
        for (int r = 0; r < n; ++r) out[r] = all;
      }
      break;
    }
    case CollKind::kAllToAll:
      for (int r = 0; r < n; ++r) {
        out[r].reserve(block * n);
        for (int p = 0; p < n; ++p) {
          const auto* from = sends[p].data() + block * r;
          out[r].insert(out[r].end(), from, from + block);
        }
      }
      break;
    case CollKind::kScatter:
      for (int r = 0; r < n; ++r) out[r] = copy_of(sends[root], block * r, block);
      break;
    case CollKind::kSend:
    case CollKind::kRecv:
      out[1] = copy_of(sends[0], 0, block);
      break;
  }
  return out;
}

}  // namespace phantora::sim
