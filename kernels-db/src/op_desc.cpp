#include "phantora/kernels/op_desc.hpp"

#include <charconv>

#include <fmt/format.h>

namespace phantora::kernels {
namespace {

// Each DType's signature name, element size and the library element type it prices.
struct DTypeName {
  DType type;
  std::string_view name;
  uint64_t bytes;
  wire::DataType wire;
};
constexpr DTypeName kDTypes[] = {
    {DType::kF16, "f16", 2, wire::DataType::kF16},
    {DType::kBF16, "bf16", 2, wire::DataType::kBF16},
    {DType::kF32, "f32", 4, wire::DataType::kF32},
    {DType::kTF32, "tf32", 4, wire::DataType::kTF32},
    {DType::kF64, "f64", 8, wire::DataType::kF64},
    {DType::kF8E4M3, "f8e4m3", 1, wire::DataType::kFP8E4M3},
    {DType::kF8E5M2, "f8e5m2", 1, wire::DataType::kFP8E5M2},
    {DType::kI8, "i8", 1, wire::DataType::kI8},
    {DType::kI32, "i32", 4, wire::DataType::kI32},
};

struct CopyKindName {
  wire::CopyKind kind;
  std::string_view name;
};
constexpr CopyKindName kCopyKinds[] = {
    {wire::CopyKind::kHostToDevice, "h2d"},   {wire::CopyKind::kDeviceToHost, "d2h"},
    {wire::CopyKind::kDeviceToDevice, "d2d"}, {wire::CopyKind::kHostToHost, "h2h"},
    {wire::CopyKind::kPeer, "peer"},
};

// The signature tokens of the memory-bound kinds the shim decodes.
struct WorkKindName {
  wire::WorkKind kind;
  std::string_view op;
};
constexpr WorkKindName kWorkKinds[] = {
    {wire::WorkKind::kElementwise, "elementwise"},
    {wire::WorkKind::kReduce, "reduce"},
    {wire::WorkKind::kCat, "cat"},
    {wire::WorkKind::kNorm, "norm"},
    {wire::WorkKind::kSoftmax, "softmax"},
    {wire::WorkKind::kForeach, "foreach"},
    {wire::WorkKind::kRandom, "random"},
    {wire::WorkKind::kSort, "sort"},
    {wire::WorkKind::kScan, "scan"},
};

// The signature token of each convolution pass (cuDNN's and CUTLASS's names for them).
struct ConvPassName {
  wire::ConvPass pass;
  std::string_view name;
};
constexpr ConvPassName kConvPasses[] = {
    {wire::ConvPass::kForward, "fprop"},
    {wire::ConvPass::kBackwardData, "dgrad"},
    {wire::ConvPass::kBackwardFilter, "wgrad"},
};

bool host_copy(wire::CopyKind k) {
  return k == wire::CopyKind::kHostToDevice || k == wire::CopyKind::kDeviceToHost;
}

std::string_view copy_kind_name(wire::CopyKind k) {
  for (const CopyKindName& c : kCopyKinds) {
    if (c.kind == k) return c.name;
  }
  return "unknown";
}

// A whole decimal number (the canonical re-rendering rejects signs and leading zeros).
bool parse_number(std::string_view v, uint64_t& out) {
  const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return !v.empty() && ec == std::errc() && ptr == v.data() + v.size();
}

// A token: a lower case name, digits and underscores (epilogues, memory-op families).
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// A kernel name as the program registers it: mangled or extern "C" identifiers; nothing that
// could be confused with the separators of a signature.
bool is_kernel_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '$' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::string dims(const std::array<uint32_t, 3>& d) {
  return fmt::format("{}x{}x{}", d[0], d[1], d[2]);
}

// The fields of a signature of `family`, in order; nullopt when the text is not
// "<family>:k=v,k=v...".
std::optional<std::vector<std::pair<std::string_view, std::string_view>>> split(
    std::string_view sig, std::string_view family) {
  if (sig.size() <= family.size() + 1 || sig.substr(0, family.size()) != family ||
      sig[family.size()] != ':') {
    return std::nullopt;
  }
  std::string_view rest = sig.substr(family.size() + 1);
  std::vector<std::pair<std::string_view, std::string_view>> out;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view field = rest.substr(0, comma);
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    out.emplace_back(field.substr(0, eq), field.substr(eq + 1));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

// Reads fields in their fixed order; any mismatch makes the whole parse fail.
class FieldReader {
 public:
  explicit FieldReader(std::vector<std::pair<std::string_view, std::string_view>> fields)
      : fields_(std::move(fields)) {}

  bool ok() const { return ok_; }
  bool done() const { return next_ == fields_.size(); }

  std::string_view raw(std::string_view key) {
    if (!ok_ || next_ >= fields_.size() || fields_[next_].first != key) {
      ok_ = false;
      return {};
    }
    return fields_[next_++].second;
  }
  uint64_t number(std::string_view key) {
    const std::string_view v = raw(key);
    uint64_t out = 0;
    const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (!ok_ || v.empty() || ec != std::errc() || ptr != v.data() + v.size()) ok_ = false;
    return out;
  }
  bool flag(std::string_view key) {
    const std::string_view v = raw(key);
    if (v != "0" && v != "1") ok_ = false;
    return v == "1";
  }
  DType dtype(std::string_view key) {
    const std::optional<DType> t = parse_dtype(raw(key));
    if (!t) ok_ = false;
    return t.value_or(DType::kF32);
  }
  std::array<uint32_t, 3> dims(std::string_view key) {
    std::string_view v = raw(key);
    std::array<uint32_t, 3> out{};
    for (int i = 0; i < 3 && ok_; ++i) {
      const size_t x = v.find('x');
      const std::string_view part = v.substr(0, x);
      const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), out[i]);
      if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) ok_ = false;
      if ((i < 2) == (x == std::string_view::npos)) ok_ = false;
      v.remove_prefix(x == std::string_view::npos ? v.size() : x + 1);
    }
    return out;
  }
  void fail() { ok_ = false; }

 private:
  std::vector<std::pair<std::string_view, std::string_view>> fields_;
  size_t next_ = 0;
  bool ok_ = true;
};

// The parse is accepted only when it renders back to the very same text.
template <typename Desc>
std::optional<Desc> canonical(std::optional<Desc> d, std::string_view sig) {
  if (!d || signature(*d) != sig) return std::nullopt;
  return d;
}

}  // namespace

std::string_view to_string(DType t) {
  for (const DTypeName& d : kDTypes) {
    if (d.type == t) return d.name;
  }
  return "unknown";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeName& d : kDTypes) {
    if (d.name == name) return d.type;
  }
  return std::nullopt;
}

uint64_t dtype_bytes(DType t) {
  for (const DTypeName& d : kDTypes) {
    if (d.type == t) return d.bytes;
  }
  return 4;
}

DType dtype_of(wire::DataType t) {
  if (t == wire::DataType::kU8) return DType::kI8;
  for (const DTypeName& d : kDTypes) {
    if (d.wire == t) return d.type;
  }
  return DType::kF32;
}

std::string_view to_string(AttentionImpl impl) {
  for (const wire::AttentionImplName& n : wire::kAttentionImplNames) {
    if (n.impl == impl) return n.name;
  }
  return "fa2";
}

std::optional<AttentionImpl> parse_attention_impl(std::string_view name) {
  return wire::parse_attention_impl(name);
}

std::string signature(const GemmDesc& d) {
  return fmt::format(
      "gemm:m={},n={},k={},batch={},a={},b={},c={},compute={},op_a={},op_b={},beta={},"
      "epilogue={}",
      d.m, d.n, d.k, d.batch, to_string(d.a), to_string(d.b), to_string(d.c), to_string(d.compute),
      d.trans_a ? "t" : "n", d.trans_b ? "t" : "n", d.accumulate ? 1 : 0, d.epilogue);
}

std::string signature(const AttentionDesc& d) {
  return fmt::format("attn:pass={},b={},hq={},hkv={},sq={},sk={},d={},causal={},dtype={},impl={}",
                     d.backward ? "bwd" : "fwd", d.batch, d.heads_q, d.heads_kv, d.seq_q, d.seq_k,
                     d.head_dim, d.causal ? 1 : 0, to_string(d.dtype), to_string(d.impl));
}

std::string_view to_string(wire::ConvPass pass) {
  for (const ConvPassName& p : kConvPasses) {
    if (p.pass == pass) return p.name;
  }
  return "unknown";
}

std::string signature(const ConvDesc& d) {
  return fmt::format(
      "conv:pass={},n={},c={},h={},w={},k={},r={},s={},p={},q={},groups={},stride={}x{},layout={},"
      "dtype={}",
      to_string(d.pass), d.n, d.c, d.h, d.w, d.k, d.r, d.s, d.p, d.q, d.groups, d.stride_h,
      d.stride_w, d.channels_first ? "nchw" : "nhwc", to_string(d.dtype));
}

std::optional<ConvDesc> conv_desc(const wire::KernelWork& work) {
  if (work.kind != wire::WorkKind::kConvolution) return std::nullopt;
  const wire::ConvShape& c = work.conv;
  ConvDesc d;
  d.n = c.n, d.c = c.c, d.h = c.h, d.w = c.w, d.k = c.k, d.r = c.r, d.s = c.s;
  d.p = c.p, d.q = c.q, d.groups = c.groups, d.stride_h = c.stride_h, d.stride_w = c.stride_w;
  d.pass = c.pass;
  d.channels_first = c.channels_first != 0;
  d.dtype = dtype_of(c.dtype);
  return d;
}

std::optional<MemoryOpDesc> memory_op_desc(wire::WorkKind kind, uint64_t bytes_read,
                                           uint64_t bytes_written) {
  for (const WorkKindName& w : kWorkKinds) {
    if (w.kind == kind) return MemoryOpDesc{std::string(w.op), bytes_read, bytes_written};
  }
  return std::nullopt;
}

std::optional<AttentionDesc> attention_desc(const wire::KernelWork& work) {
  if (work.kind != wire::WorkKind::kAttentionForward &&
      work.kind != wire::WorkKind::kAttentionBackward) {
    return std::nullopt;
  }
  const wire::AttentionShape& a = work.attention;
  AttentionDesc d;
  d.batch = a.batch, d.heads_q = a.heads_q, d.heads_kv = a.heads_kv;
  d.seq_q = a.seq_q, d.seq_k = a.seq_k, d.head_dim = a.head_dim;
  d.causal = a.causal != 0;
  d.backward = work.kind == wire::WorkKind::kAttentionBackward;
  d.dtype = dtype_of(a.dtype);
  d.impl = a.impl;
  return d;
}

MemoryOpDesc memset_desc(uint64_t bytes) {
  MemoryOpDesc d;
  d.op = "memset";
  d.bytes_read = 0;
  d.bytes_written = bytes;
  return d;
}

bool is_memset(const MemoryOpDesc& d) {
  return d.op == "memset" && d.bytes_read == 0;
}

std::string signature(const MemoryOpDesc& d) {
  return fmt::format("mem:op={},read={},write={}", d.op, d.bytes_read, d.bytes_written);
}

std::string signature(const CopyDesc& d) {
  const std::string_view host =
      host_copy(d.kind) ? (d.pinned_host ? "pinned" : "pageable") : "none";
  return fmt::format("copy:kind={},bytes={},host={}", copy_kind_name(d.kind), d.bytes, host);
}

std::string signature(const KernelDesc& d) {
  return fmt::format("kernel:name={},grid={},block={},smem={}", d.name, dims(d.grid), dims(d.block),
                     d.shared_mem);
}

namespace {

// A family's name and its parser, widened to OpDesc: the one table of signature families.
struct SignatureFamily {
  std::string_view name;
  std::optional<OpDesc> (*parse)(std::string_view sig);
};

template <class Desc, std::optional<Desc> (*Parse)(std::string_view)>
std::optional<OpDesc> parse_as_op(std::string_view sig) {
  if (auto d = Parse(sig)) return OpDesc(std::move(*d));
  return std::nullopt;
}

constexpr std::array kFamilies{
    SignatureFamily{"gemm", parse_as_op<GemmDesc, parse_gemm_signature>},
    SignatureFamily{"attn", parse_as_op<AttentionDesc, parse_attention_signature>},
    SignatureFamily{"conv", parse_as_op<ConvDesc, parse_conv_signature>},
    SignatureFamily{"mem", parse_as_op<MemoryOpDesc, parse_memory_signature>},
    SignatureFamily{"copy", parse_as_op<CopyDesc, parse_copy_signature>},
    SignatureFamily{"kernel", parse_as_op<KernelDesc, parse_kernel_signature>},
};

const SignatureFamily* family_of(std::string_view sig) {
  for (const SignatureFamily& family : kFamilies) {
    if (sig.size() > family.name.size() && sig.substr(0, family.name.size()) == family.name &&
        sig[family.name.size()] == ':') {
      return &family;
    }
  }
  return nullptr;
}

}  // namespace

std::string_view signature_family(std::string_view sig) {
  const SignatureFamily* family = family_of(sig);
  return family != nullptr ? family->name : std::string_view();
}

std::optional<GemmDesc> parse_gemm_signature(std::string_view sig) {
  auto fields = split(sig, "gemm");
  if (!fields) return std::nullopt;
  FieldReader r(std::move(*fields));
  GemmDesc d;
  d.m = r.number("m");
  d.n = r.number("n");
  d.k = r.number("k");
  d.batch = r.number("batch");
  d.a = r.dtype("a");
  d.b = r.dtype("b");
  d.c = r.dtype("c");
  d.compute = r.dtype("compute");
  const std::string_view op_a = r.raw("op_a");
  const std::string_view op_b = r.raw("op_b");
  d.trans_a = op_a == "t";
  d.trans_b = op_b == "t";
  d.accumulate = r.flag("beta");
  d.epilogue = std::string(r.raw("epilogue"));
  if (!is_token(d.epilogue)) r.fail();
  if (!r.ok() || !r.done()) return std::nullopt;
  return canonical<GemmDesc>(d, sig);
}

std::optional<AttentionDesc> parse_attention_signature(std::string_view sig) {
  auto fields = split(sig, "attn");
  if (!fields) return std::nullopt;
  FieldReader r(std::move(*fields));
  AttentionDesc d;
  d.backward = r.raw("pass") == "bwd";
  d.batch = r.number("b");
  d.heads_q = r.number("hq");
  d.heads_kv = r.number("hkv");
  d.seq_q = r.number("sq");
  d.seq_k = r.number("sk");
  d.head_dim = r.number("d");
  d.causal = r.flag("causal");
  d.dtype = r.dtype("dtype");
  const std::optional<AttentionImpl> impl = parse_attention_impl(r.raw("impl"));
  if (!impl) return std::nullopt;
  d.impl = *impl;
  if (!r.ok() || !r.done()) return std::nullopt;
  return canonical<AttentionDesc>(d, sig);
}

std::optional<ConvDesc> parse_conv_signature(std::string_view sig) {
  auto fields = split(sig, "conv");
  if (!fields) return std::nullopt;
  FieldReader r(std::move(*fields));
  ConvDesc d;
  const std::string_view pass = r.raw("pass");
  bool known = false;
  for (const ConvPassName& p : kConvPasses) {
    if (p.name == pass) d.pass = p.pass, known = true;
  }
  if (!known) r.fail();
  d.n = r.number("n");
  d.c = r.number("c");
  d.h = r.number("h");
  d.w = r.number("w");
  d.k = r.number("k");
  d.r = r.number("r");
  d.s = r.number("s");
  d.p = r.number("p");
  d.q = r.number("q");
  d.groups = r.number("groups");
  const std::string_view stride = r.raw("stride");
  const size_t x = stride.find('x');
  if (x == std::string_view::npos || !parse_number(stride.substr(0, x), d.stride_h) ||
      !parse_number(stride.substr(x + 1), d.stride_w)) {
    r.fail();
  }
  const std::string_view layout = r.raw("layout");
  if (layout != "nchw" && layout != "nhwc") r.fail();
  d.channels_first = layout == "nchw";
  d.dtype = r.dtype("dtype");
  if (!r.ok() || !r.done()) return std::nullopt;
  return canonical<ConvDesc>(d, sig);
}

std::optional<MemoryOpDesc> parse_memory_signature(std::string_view sig) {
  auto fields = split(sig, "mem");
  if (!fields) return std::nullopt;
  FieldReader r(std::move(*fields));
  MemoryOpDesc d;
  d.op = std::string(r.raw("op"));
  d.bytes_read = r.number("read");
  d.bytes_written = r.number("write");
  if (!is_token(d.op) || !r.ok() || !r.done()) return std::nullopt;
  return canonical<MemoryOpDesc>(d, sig);
}

std::optional<CopyDesc> parse_copy_signature(std::string_view sig) {
  auto fields = split(sig, "copy");
  if (!fields) return std::nullopt;
  FieldReader r(std::move(*fields));
  CopyDesc d;
  const std::string_view kind = r.raw("kind");
  bool known = false;
  for (const CopyKindName& c : kCopyKinds) {
    if (c.name == kind) {
      d.kind = c.kind;
      known = true;
    }
  }
  if (!known) r.fail();
  d.bytes = r.number("bytes");
  d.pinned_host = r.raw("host") != "pageable";
  if (!r.ok() || !r.done()) return std::nullopt;
  return canonical<CopyDesc>(d, sig);
}

std::optional<KernelDesc> parse_kernel_signature(std::string_view sig) {
  auto fields = split(sig, "kernel");
  if (!fields) return std::nullopt;
  FieldReader r(std::move(*fields));
  KernelDesc d;
  d.name = std::string(r.raw("name"));
  d.grid = r.dims("grid");
  d.block = r.dims("block");
  d.shared_mem = r.number("smem");
  if (!is_kernel_name(d.name) || !r.ok() || !r.done()) return std::nullopt;
  return canonical<KernelDesc>(d, sig);
}

std::optional<OpDesc> parse_signature(std::string_view sig) {
  const SignatureFamily* family = family_of(sig);
  return family != nullptr ? family->parse(sig) : std::nullopt;
}

bool is_canonical_signature(std::string_view sig) {
  return parse_signature(sig).has_value();
}

}  // namespace phantora::kernels
