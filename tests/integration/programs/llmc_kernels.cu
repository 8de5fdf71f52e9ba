// Kernels with the names and parameter lists of llm.c's own (train_gpt2.cu at commit a0d5dbb),
// launched as llm.c's launchers launch them: the shim prices them from their grids and integer
// arguments as the bytes they move (docs/kernels.md, "llm.c"). The bodies are empty: under
// phantora no kernel runs, and what is priced is the launch. A kernel of the same name in a
// namespace is another program's and stays default-priced.
#include <cuda_bf16.h>

#include "check.cuh"

using bf16 = __nv_bfloat16;

__global__ void gelu_forward_kernel2(bf16* out, const bf16* inp) {}

template <bool WriteDLogits, bool WriteProbs>
__global__ void fused_classifier_kernel5(bf16* logits, bf16* losses, bf16* probs, const float dloss,
                                         const int* targets, int B, int T, int V, int P) {}

template <typename Tp, typename Tg>
__global__ void adamw_kernel3(Tp* params, float* master, Tg* grads, float* m, float* v, size_t n,
                              float lr, float beta1, float beta2, float correction1,
                              float correction2, float eps, float weight_decay, float grad_scale,
                              unsigned int seed) {}

namespace other {
__global__ void gelu_forward_kernel2(bf16* out, const bf16* inp) {}
}  // namespace other

int main() {
  // GELU over 2^24 bf16 values: block 512, 8 values (16 bytes) a thread.
  const int n = 1 << 24;
  bf16 *in = nullptr, *out = nullptr;
  CHECK(cudaMalloc(&in, n * sizeof(bf16)));
  CHECK(cudaMalloc(&out, n * sizeof(bf16)));
  gelu_forward_kernel2<<<n / (512 * 8), 512>>>(out, in);
  CHECK(cudaGetLastError());

  // The classifier over B x T rows of V logits (padded to P), one block of 1024 a row.
  const int B = 4, T = 256, V = 50257, P = 50304;
  bf16 *logits = nullptr, *losses = nullptr;
  int* targets = nullptr;
  CHECK(cudaMalloc(&logits, size_t{B} * T * P * sizeof(bf16)));
  CHECK(cudaMalloc(&losses, size_t{B} * T * sizeof(bf16)));
  CHECK(cudaMalloc(&targets, size_t{B} * T * sizeof(int)));
  fused_classifier_kernel5<true, false>
      <<<B * T, 1024>>>(logits, losses, nullptr, 1.0f / (B * T), targets, B, T, V, P);
  CHECK(cudaGetLastError());

  // AdamW over 2^20 bf16 parameters, with an fp32 master copy and then without one.
  const size_t params = size_t{1} << 20;
  bf16 *weights = nullptr, *grads = nullptr;
  float *master = nullptr, *m = nullptr, *v = nullptr;
  CHECK(cudaMalloc(&weights, params * sizeof(bf16)));
  CHECK(cudaMalloc(&grads, params * sizeof(bf16)));
  CHECK(cudaMalloc(&master, params * sizeof(float)));
  CHECK(cudaMalloc(&m, params * sizeof(float)));
  CHECK(cudaMalloc(&v, params * sizeof(float)));
  const int blocks = static_cast<int>(params / 512);
  adamw_kernel3<<<blocks, 512>>>(weights, master, grads, m, v, params, 6e-4f, 0.9f, 0.95f, 0.1f,
                                 0.05f, 1e-8f, 0.1f, 1.0f, 42u);
  CHECK(cudaGetLastError());
  adamw_kernel3<<<blocks, 512>>>(weights, static_cast<float*>(nullptr), grads, m, v, params, 6e-4f,
                                 0.9f, 0.95f, 0.1f, 0.05f, 1e-8f, 0.1f, 1.0f, 42u);
  CHECK(cudaGetLastError());

  other::gelu_forward_kernel2<<<n / (512 * 8), 512>>>(out, in);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("done\n");
  return 0;
}
