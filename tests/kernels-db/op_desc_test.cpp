#include "phantora/kernels/op_desc.hpp"

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

namespace phantora::kernels {
namespace {

TEST(Signature, GemmRendersAndParsesBack) {
  GemmDesc d;
  d.m = 4096;
  d.n = 1024;
  d.k = 512;
  d.batch = 3;
  d.a = d.b = DType::kBF16;
  d.c = DType::kF32;
  d.trans_b = true;
  d.accumulate = true;
  d.epilogue = "bias_gelu";
  const std::string sig = signature(d);
  EXPECT_EQ(sig,
            "gemm:m=4096,n=1024,k=512,batch=3,a=bf16,b=bf16,c=f32,compute=f32,op_a=n,op_b=t,"
            "beta=1,epilogue=bias_gelu");
  const auto back = parse_gemm_signature(sig);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(signature(*back), sig);
  EXPECT_EQ(back->c, DType::kF32);
  EXPECT_TRUE(back->trans_b);
  EXPECT_EQ(signature_family(sig), "gemm");
}

TEST(Signature, NonCanonicalSpellingsAreRejected) {
  const std::string good =
      "gemm:m=8,n=8,k=8,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=n,op_b=n,beta=0,"
      "epilogue=none";
  ASSERT_TRUE(is_canonical_signature(good));
  for (const std::string& bad : {
           std::string("gemm:m=08,n=8,k=8,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=n,"
                       "op_b=n,beta=0,epilogue=none"),  // leading zero
           std::string("gemm:n=8,m=8,k=8,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=n,"
                       "op_b=n,beta=0,epilogue=none"),  // keys out of order
           good + ",",                                  // trailing comma
           good + ",x=1",                               // extra key
           std::string("gemm:m=8,n=8,k=8,batch=1,a=BF16,b=bf16,c=bf16,compute=f32,op_a=n,"
                       "op_b=n,beta=0,epilogue=none"),  // upper case dtype
           std::string("gemm:m=8,n=8,k=8,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=x,"
                       "op_b=n,beta=0,epilogue=none"),  // unknown op
           std::string("gemm:m=-8,n=8,k=8,batch=1,a=bf16,b=bf16,c=bf16,compute=f32,op_a=n,"
                       "op_b=n,beta=0,epilogue=none"),  // sign
           std::string("GEMM:m=8"), std::string("attn:"), std::string(""),
           std::string("kernel:name=a b,grid=1x1x1,block=1x1x1,smem=0"),  // space in name
           std::string("kernel:name=k,grid=1x1,block=1x1x1,smem=0"),      // two dims
       }) {
    EXPECT_FALSE(is_canonical_signature(bad)) << bad;
  }
}

TEST(Signature, AttentionMemoryCopyAndKernelRoundTrip) {
  AttentionDesc a;
  a.batch = 2;
  a.heads_q = 32;
  a.heads_kv = 8;
  a.seq_q = a.seq_k = 4096;
  a.head_dim = 128;
  a.causal = true;
  a.backward = true;
  a.impl = AttentionImpl::kFlash3;
  EXPECT_EQ(signature(a),
            "attn:pass=bwd,b=2,hq=32,hkv=8,sq=4096,sk=4096,d=128,causal=1,dtype=bf16,impl=fa3");
  EXPECT_EQ(signature(*parse_attention_signature(signature(a))), signature(a));

  const MemoryOpDesc m{"layer_norm", 100, 50};
  EXPECT_EQ(signature(m), "mem:op=layer_norm,read=100,write=50");
  EXPECT_EQ(signature(*parse_memory_signature(signature(m))), signature(m));

  CopyDesc c{wire::CopyKind::kHostToDevice, 1 << 20, false};
  EXPECT_EQ(signature(c), "copy:kind=h2d,bytes=1048576,host=pageable");
  EXPECT_EQ(signature(*parse_copy_signature(signature(c))), signature(c));
  c.kind = wire::CopyKind::kDeviceToDevice;  // host memory does not matter on the device
  EXPECT_EQ(signature(c), "copy:kind=d2d,bytes=1048576,host=none");
  EXPECT_FALSE(is_canonical_signature("copy:kind=d2d,bytes=1048576,host=pageable"));

  KernelDesc k;
  k.name = "_Z4busyPfi";
  k.grid = {120, 2, 1};
  k.block = {256, 1, 1};
  k.shared_mem = 4096;
  EXPECT_EQ(signature(k), "kernel:name=_Z4busyPfi,grid=120x2x1,block=256x1x1,smem=4096");
  const auto back = parse_kernel_signature(signature(k));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->grid, k.grid);
  // Nothing follows the launch configuration: a run never keys a kernel by more.
  EXPECT_FALSE(is_canonical_signature(signature(k) + ",numel=16777216"));
}

// One parse for every family: each canonical signature comes back as its own type, equal to
// what that family's parser gives; anything else, including a family's signature with a key
// missing, is no operation at all.
TEST(Signature, ParseSignatureGivesEachFamilyItsType) {
  GemmDesc g;
  g.m = 512;
  AttentionDesc a;
  a.seq_q = a.seq_k = 1024;
  ConvDesc c;
  MemoryOpDesc m;
  m.op = "layer_norm";
  m.bytes_read = 64;
  CopyDesc copy;
  copy.bytes = 4096;
  KernelDesc k;
  k.name = "_Z4busyPfi";
  const std::vector<std::pair<std::string, size_t>> cases = {
      {signature(g), 0}, {signature(a), 1},    {signature(c), 2},
      {signature(m), 3}, {signature(copy), 4}, {signature(k), 5}};
  for (const auto& [sig, index] : cases) {
    const std::optional<OpDesc> op = parse_signature(sig);
    ASSERT_TRUE(op.has_value()) << sig;
    EXPECT_EQ(op->index(), index) << sig;
    EXPECT_EQ(std::visit([](const auto& d) { return signature(d); }, *op), sig);
    EXPECT_TRUE(is_canonical_signature(sig));
    EXPECT_EQ(signature_family(sig), sig.substr(0, sig.find(':')));
  }
  EXPECT_EQ(std::get<GemmDesc>(*parse_signature(signature(g))).m, 512u);
  for (const std::string bad : {"", "gemm", "gemm:", "gemm:m=512", "attn", "nothing:m=1",
                                "kernels:name=k,grid=1x1x1,block=1x1x1,smem=0"}) {
    EXPECT_FALSE(parse_signature(bad).has_value()) << bad;
  }
  EXPECT_EQ(signature_family("gemm:m=512"), "gemm");  // the family of a malformed one
  EXPECT_EQ(signature_family("kernels:name=k"), "");
}

TEST(Signature, DtypeNamesRoundTrip) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kTF32, DType::kF64, DType::kF8E4M3,
                  DType::kF8E5M2, DType::kI8, DType::kI32}) {
    EXPECT_EQ(parse_dtype(to_string(t)), t);
  }
  EXPECT_EQ(dtype_bytes(DType::kBF16), 2u);
  EXPECT_EQ(dtype_bytes(DType::kF8E4M3), 1u);
  EXPECT_FALSE(parse_dtype("float").has_value());
}

// Library element types map onto the cost model's through one table: every type a signature
// names has the wire type of the same name and size, and converts to it.
TEST(Signature, WireDataTypesConvertThroughOneTable) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kTF32, DType::kF64, DType::kF8E4M3,
                  DType::kF8E5M2, DType::kI8, DType::kI32}) {
    const wire::DataTypeInfo* same_name = nullptr;
    for (const wire::DataTypeInfo& w : wire::kDataTypes) {
      if (to_string(t) == w.name) same_name = &w;
    }
    ASSERT_NE(same_name, nullptr) << to_string(t);
    EXPECT_EQ(dtype_of(same_name->type), t);
    EXPECT_EQ(dtype_bytes(t), same_name->size);
  }
  EXPECT_EQ(dtype_of(wire::DataType::kU8), DType::kI8);
  EXPECT_EQ(dtype_of(wire::DataType::kI64), DType::kF32);
  EXPECT_EQ(dtype_of(wire::DataType::kUnknown), DType::kF32);
}

// The kind decoded by the shim travels typed; kernels-db names it for the signature.
TEST(Signature, MemoryOpDescNamesTheDecodedKind) {
  const std::optional<MemoryOpDesc> norm = memory_op_desc(wire::WorkKind::kNorm, 100, 50);
  ASSERT_TRUE(norm.has_value());
  EXPECT_EQ(signature(*norm), "mem:op=norm,read=100,write=50");
  EXPECT_EQ(memory_op_desc(wire::WorkKind::kForeach, 1, 2)->op, "foreach");
  EXPECT_FALSE(memory_op_desc(wire::WorkKind::kNone, 1, 2).has_value());
  EXPECT_FALSE(memory_op_desc(wire::WorkKind::kAttentionForward, 1, 2).has_value());
}

// An attention launch's shape arrives typed and becomes the model's description field by field;
// its signature names the implementation by the protocol's names.
TEST(Signature, AttentionDescFromTheWire) {
  wire::KernelWork w;
  w.kind = wire::WorkKind::kAttentionBackward;
  w.attention.batch = 2, w.attention.heads_q = 16, w.attention.heads_kv = 4;
  w.attention.seq_q = 2048, w.attention.seq_k = 560, w.attention.head_dim = 128;
  w.attention.dtype = wire::DataType::kF16;
  w.attention.impl = wire::AttentionImpl::kFlex;
  w.attention.causal = 1;
  const std::optional<AttentionDesc> d = attention_desc(w);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(signature(*d),
            "attn:pass=bwd,b=2,hq=16,hkv=4,sq=2048,sk=560,d=128,causal=1,dtype=f16,impl=flex");
  w.kind = wire::WorkKind::kNorm;
  EXPECT_FALSE(attention_desc(w).has_value());
  for (const wire::AttentionImplName& n : wire::kAttentionImplNames) {
    EXPECT_EQ(parse_attention_impl(to_string(n.impl)), n.impl);
  }
}

// The CPU-time mode's names: what `phantora run --cpu-time` takes and the report shows.
TEST(Protocol, CpuTimeModeNamesRoundTrip) {
  for (const wire::CpuTimeModeName& n : wire::kCpuTimeModeNames) {
    EXPECT_EQ(wire::parse_cpu_time(wire::cpu_time_name(n.mode)), n.mode);
  }
  EXPECT_EQ(wire::cpu_time_name(wire::CpuTimeMode::kModel), "model");
  EXPECT_FALSE(wire::parse_cpu_time("modelled").has_value());
}

}  // namespace
}  // namespace phantora::kernels
