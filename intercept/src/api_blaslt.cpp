// cuBLASLt: the light handle, matmul / layout / preference descriptors with their attributes,
// a heuristic that offers one algorithm, and cublasLtMatmul, which sends the product to the
// daemon as one wire::Gemm: m, n from D's layout, k from A's layout and transpose, the batch
// count, the storage and compute types, the transposes and the epilogue.
//
// Descriptors live in a side table keyed by the opaque pointer, so that both the Create
// functions (which allocate the opaque struct) and the Init functions (which fill a struct the
// program owns) work. Attributes are kept as the bytes the program set, checked against the
// size cuBLASLt documents for each; unset ones read as cuBLASLt's documented defaults.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "blas_types.hpp"
#include "context.hpp"

using namespace phantora;
using namespace phantora::shim;

struct cublasLtContext {
  int ordinal = 0;
};

namespace {

struct AttrSpec {
  int id;
  size_t size;
  int64_t fallback;  // documented default
};

// cublasLtMatrixLayoutAttribute_t (cublasLt.h).
constexpr AttrSpec kLayoutAttrs[] = {
    {CUBLASLT_MATRIX_LAYOUT_TYPE, 4, 0},
    {CUBLASLT_MATRIX_LAYOUT_ORDER, 4, CUBLASLT_ORDER_COL},
    {CUBLASLT_MATRIX_LAYOUT_ROWS, 8, 0},
    {CUBLASLT_MATRIX_LAYOUT_COLS, 8, 0},
    {CUBLASLT_MATRIX_LAYOUT_LD, 8, 0},
    {CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 4, 1},
    {CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 8, 0},
    {CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, 8, 0},
    {CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, 4, 0},
};

// cublasLtMatmulDescAttributes_t (cublasLt.h): pointers are 8 bytes, enums and counts 4.
constexpr AttrSpec kDescAttrs[] = {
    {CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 4, CUBLAS_COMPUTE_32F},
    {CUBLASLT_MATMUL_DESC_SCALE_TYPE, 4, CUDA_R_32F},
    {CUBLASLT_MATMUL_DESC_POINTER_MODE, 4, CUBLASLT_POINTER_MODE_HOST},
    {CUBLASLT_MATMUL_DESC_TRANSA, 4, CUBLAS_OP_N},
    {CUBLASLT_MATMUL_DESC_TRANSB, 4, CUBLAS_OP_N},
    {CUBLASLT_MATMUL_DESC_TRANSC, 4, CUBLAS_OP_N},
    {CUBLASLT_MATMUL_DESC_FILL_MODE, 4, CUBLAS_FILL_MODE_FULL},
    {CUBLASLT_MATMUL_DESC_EPILOGUE, 4, CUBLASLT_EPILOGUE_DEFAULT},
    {CUBLASLT_MATMUL_DESC_BIAS_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, 8, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, 8, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, 8, 0},
    {CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, 8, 0},
    {CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, 4, 0},
    {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, 4, -1},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_FAST_ACCUM, 1, 0},
    {CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 4, -1},
    {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, 4, 0},
    {CUBLASLT_MATMUL_DESC_B_SCALE_MODE, 4, 0},
    {CUBLASLT_MATMUL_DESC_C_SCALE_MODE, 4, 0},
    {CUBLASLT_MATMUL_DESC_D_SCALE_MODE, 4, 0},
    {CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE, 4, 0},
    {CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER, 8, 0},
    {CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE, 4, 0},
    {CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, 8, 0},
};

// cublasLtMatmulPreferenceAttributes_t (cublasLt.h).
constexpr AttrSpec kPrefAttrs[] = {
    {CUBLASLT_MATMUL_PREF_SEARCH_MODE, 4, CUBLASLT_SEARCH_BEST_FIT},
    {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 8, 0},
    {CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, 4, CUBLASLT_REDUCTION_SCHEME_MASK},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, 4, 256},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, 4, 256},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, 4, 256},
    {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, 4, 256},
    {CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, 4, 0},
    {CUBLASLT_MATMUL_PREF_IMPL_MASK, 8, -1},
};

template <size_t N>
const AttrSpec* find_spec(const AttrSpec (&table)[N], int id) {
  for (const AttrSpec& s : table)
    if (s.id == id) return &s;
  return nullptr;
}

// One descriptor: the attribute bytes set so far.
struct Attrs {
  std::map<int, std::vector<unsigned char>> set;
};

std::mutex g_mu;
std::map<const void*, Attrs>& table() {
  static auto* t = new std::map<const void*, Attrs>();
  return *t;
}

template <size_t N>
cublasStatus_t set_attr(const void* desc, const AttrSpec (&specs)[N], int id, const void* buf,
                        size_t size) {
  if (desc == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const AttrSpec* spec = find_spec(specs, id);
  if (buf == nullptr || spec == nullptr || size != spec->size) return CUBLAS_STATUS_INVALID_VALUE;
  std::lock_guard lock(g_mu);
  auto it = table().find(desc);
  if (it == table().end()) return CUBLAS_STATUS_NOT_INITIALIZED;
  const auto* p = static_cast<const unsigned char*>(buf);
  it->second.set[id].assign(p, p + size);
  return CUBLAS_STATUS_SUCCESS;
}

template <size_t N>
cublasStatus_t get_attr(const void* desc, const AttrSpec (&specs)[N], int id, void* buf,
                        size_t size, size_t* written) {
  if (desc == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const AttrSpec* spec = find_spec(specs, id);
  if (spec == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (size == 0) {
    if (written == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *written = spec->size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || size != spec->size) return CUBLAS_STATUS_INVALID_VALUE;
  std::lock_guard lock(g_mu);
  auto it = table().find(desc);
  if (it == table().end()) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto v = it->second.set.find(id);
  if (v != it->second.set.end()) {
    std::memcpy(buf, v->second.data(), spec->size);
  } else {
    // Little-endian: the low bytes of the default are the value at any width.
    std::memcpy(buf, &spec->fallback, spec->size);
  }
  if (written != nullptr) *written = spec->size;
  return CUBLAS_STATUS_SUCCESS;
}

// Reads an integer attribute (set or default) of any documented width.
template <size_t N>
int64_t read_int(const void* desc, const AttrSpec (&specs)[N], int id) {
  const AttrSpec* spec = find_spec(specs, id);
  int64_t value = 0;
  std::lock_guard lock(g_mu);
  const auto& set = table()[desc].set;
  auto v = set.find(id);
  if (v != set.end()) {
    std::memcpy(&value, v->second.data(), spec->size);
    // Sign-extend the 4-byte signed attributes (-1 defaults, enums).
    if (spec->size == 4) value = static_cast<int32_t>(value);
  } else {
    value = spec->fallback;
  }
  return value;
}

void register_desc(const void* desc, std::map<int, std::vector<unsigned char>> initial = {}) {
  std::lock_guard lock(g_mu);
  table()[desc] = Attrs{std::move(initial)};
}

bool forget_desc(const void* desc) {
  std::lock_guard lock(g_mu);
  return table().erase(desc) > 0;
}

template <typename T>
std::vector<unsigned char> bytes_of(T v) {
  std::vector<unsigned char> b(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
  return b;
}

std::map<int, std::vector<unsigned char>> layout_init(cudaDataType type, uint64_t rows,
                                                      uint64_t cols, int64_t ld) {
  return {{CUBLASLT_MATRIX_LAYOUT_TYPE, bytes_of<uint32_t>(type)},
          {CUBLASLT_MATRIX_LAYOUT_ROWS, bytes_of<uint64_t>(rows)},
          {CUBLASLT_MATRIX_LAYOUT_COLS, bytes_of<uint64_t>(cols)},
          {CUBLASLT_MATRIX_LAYOUT_LD, bytes_of<int64_t>(ld)}};
}

std::map<int, std::vector<unsigned char>> desc_init(cublasComputeType_t compute,
                                                    cudaDataType_t scale) {
  return {{CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, bytes_of<int32_t>(compute)},
          {CUBLASLT_MATMUL_DESC_SCALE_TYPE, bytes_of<int32_t>(scale)}};
}

bool known(const void* desc) {
  std::lock_guard lock(g_mu);
  return table().contains(desc);
}

// The single algorithm the heuristic offers: cuBLASLt's algo ids are opaque to programs, which
// only pass the struct back to cublasLtMatmul.
constexpr uint64_t kAlgoMagic = 0x50484e54414c474full;  // "PHNTALGO"

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  ApiCall call;
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* h = new cublasLtContext();
  h->ordinal = current_device();
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void) {
  return CUBLAS_VERSION;  // cuBLASLt ships with cuBLAS and shares its version
}

size_t cublasLtGetCudartVersion(void) {
  return CUDART_VERSION;
}

cublasStatus_t cublasLtGetProperty(libraryPropertyType type, int* value) {
  if (value == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
    case MAJOR_VERSION:
      *value = CUBLAS_VER_MAJOR;
      return CUBLAS_STATUS_SUCCESS;
    case MINOR_VERSION:
      *value = CUBLAS_VER_MINOR;
      return CUBLAS_STATUS_SUCCESS;
    case PATCH_LEVEL:
      *value = CUBLAS_VER_PATCH;
      return CUBLAS_STATUS_SUCCESS;
    default:
      return CUBLAS_STATUS_INVALID_VALUE;
  }
}

// --- Matrix layouts -----------------------------------------------------------------------

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (layout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = new cublasLtMatrixLayoutOpaque_t{};
  register_desc(*layout, layout_init(type, rows, cols, ld));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size,
                                                 cudaDataType type, uint64_t rows, uint64_t cols,
                                                 int64_t ld) {
  if (layout == nullptr || size < sizeof(cublasLtMatrixLayoutOpaque_t))
    return CUBLAS_STATUS_INVALID_VALUE;
  register_desc(layout, layout_init(type, rows, cols, ld));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  if (layout == nullptr) return CUBLAS_STATUS_SUCCESS;
  if (!forget_desc(layout)) return CUBLAS_STATUS_INVALID_VALUE;
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  return set_attr(layout, kLayoutAttrs, attr, buf, size);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                size_t size, size_t* written) {
  return get_attr(layout, kLayoutAttrs, attr, buf, size, written);
}

// --- Matmul descriptors -------------------------------------------------------------------

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (desc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *desc = new cublasLtMatmulDescOpaque_t{};
  register_desc(*desc, desc_init(compute, scale));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size,
                                               cublasComputeType_t compute, cudaDataType_t scale) {
  if (desc == nullptr || size < sizeof(cublasLtMatmulDescOpaque_t))
    return CUBLAS_STATUS_INVALID_VALUE;
  register_desc(desc, desc_init(compute, scale));
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  if (desc == nullptr) return CUBLAS_STATUS_SUCCESS;
  if (!forget_desc(desc)) return CUBLAS_STATUS_INVALID_VALUE;
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
  return set_attr(desc, kDescAttrs, attr, buf, size);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  return get_attr(desc, kDescAttrs, attr, buf, size, written);
}

// --- Preferences and heuristics -----------------------------------------------------------

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = new cublasLtMatmulPreferenceOpaque_t{};
  register_desc(*pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref, size_t size) {
  if (pref == nullptr || size < sizeof(cublasLtMatmulPreferenceOpaque_t))
    return CUBLAS_STATUS_INVALID_VALUE;
  register_desc(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  if (pref == nullptr) return CUBLAS_STATUS_SUCCESS;
  if (!forget_desc(pref)) return CUBLAS_STATUS_INVALID_VALUE;
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t size) {
  return set_attr(pref, kPrefAttrs, attr, buf, size);
}

cublasStatus_t cublasLtMatmulPreferenceGetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    void* buf, size_t size, size_t* written) {
  return get_attr(pref, kPrefAttrs, attr, buf, size, written);
}

// Offers one algorithm that needs no workspace (so it fits every preference) and fills the GPU.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returned) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (requested <= 0 || results == nullptr || returned == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!known(desc) || !known(a) || !known(b) || !known(c) || !known(d) ||
      (pref != nullptr && !known(pref)))
    return CUBLAS_STATUS_INVALID_VALUE;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].algo.data[0] = kAlgoMagic;
  results[0].workspaceSize = 0;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoInit(cublasLtHandle_t handle, cublasComputeType_t, cudaDataType_t,
                                      cudaDataType_t, cudaDataType_t, cudaDataType_t,
                                      cudaDataType_t, int algo_id, cublasLtMatmulAlgo_t* algo) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (algo == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *algo = cublasLtMatmulAlgo_t{};
  algo->data[0] = kAlgoMagic;
  algo->data[1] = static_cast<uint64_t>(algo_id);
  return CUBLAS_STATUS_SUCCESS;
}

// --- The product --------------------------------------------------------------------------

cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void*,
                              const void*, cublasLtMatrixLayout_t a_desc, const void*,
                              cublasLtMatrixLayout_t b_desc, const void* beta, const void*,
                              cublasLtMatrixLayout_t c_desc, void*, cublasLtMatrixLayout_t d_desc,
                              const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t stream) {
  ApiCall call;
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!known(desc) || !known(a_desc) || !known(b_desc) || !known(c_desc) ||
      (d_desc != nullptr && !known(d_desc)))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (d_desc == nullptr) d_desc = c_desc;
  const bool ta = read_int(desc, kDescAttrs, CUBLASLT_MATMUL_DESC_TRANSA) != CUBLAS_OP_N;
  const bool tb = read_int(desc, kDescAttrs, CUBLASLT_MATMUL_DESC_TRANSB) != CUBLAS_OP_N;
  const auto rows = [](cublasLtMatrixLayout_t l) {
    return read_int(l, kLayoutAttrs, CUBLASLT_MATRIX_LAYOUT_ROWS);
  };
  const auto cols = [](cublasLtMatrixLayout_t l) {
    return read_int(l, kLayoutAttrs, CUBLASLT_MATRIX_LAYOUT_COLS);
  };
  const auto type = [](cublasLtMatrixLayout_t l) {
    return wire_type(
        static_cast<cudaDataType_t>(read_int(l, kLayoutAttrs, CUBLASLT_MATRIX_LAYOUT_TYPE)));
  };
  // D is m x n; op(A) is m x k, so A stores m x k, or k x m when transposed.
  const int64_t m = rows(d_desc);
  const int64_t n = cols(d_desc);
  const int64_t k = ta ? rows(a_desc) : cols(a_desc);
  const int64_t k_b = tb ? cols(b_desc) : rows(b_desc);
  const int64_t a_m = ta ? cols(a_desc) : rows(a_desc);
  const int64_t b_n = tb ? rows(b_desc) : cols(b_desc);
  if (k != k_b || a_m != m || b_n != n || rows(c_desc) != m || cols(c_desc) != n)
    return CUBLAS_STATUS_INVALID_VALUE;
  const int64_t batch = read_int(d_desc, kLayoutAttrs, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT);
  const auto compute = static_cast<cublasComputeType_t>(
      read_int(desc, kDescAttrs, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE));
  const auto epilogue =
      static_cast<uint32_t>(read_int(desc, kDescAttrs, CUBLASLT_MATMUL_DESC_EPILOGUE));
  // beta as the descriptor's scale type says; a device-side one (CUBLASLT_POINTER_MODE_DEVICE
  // and the vector modes) is not read here and taken as zero.
  const bool host_scalars =
      read_int(desc, kDescAttrs, CUBLASLT_MATMUL_DESC_POINTER_MODE) == CUBLASLT_POINTER_MODE_HOST;
  const wire::DataType scale = wire_type(
      static_cast<cudaDataType_t>(read_int(desc, kDescAttrs, CUBLASLT_MATMUL_DESC_SCALE_TYPE)));
  submit_gemm(resolve_stream(stream, false), BlasApi::kLtMatmul, m, n, k, batch, type(a_desc),
              type(b_desc), type(d_desc), wire_compute(compute), ta, tb, wire_epilogue(epilogue),
              host_scalars && nonzero_scalar(beta, scale));
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
