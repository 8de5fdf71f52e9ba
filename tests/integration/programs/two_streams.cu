// Stream ordering against the legacy default stream, both ways.
// Phase 1: busy_a (100 us) on s1 and busy_b (250 us) on s2 overlap; `tail` (50 us) on the
// legacy stream waits for both. Phase 2: a non-blocking stream neither waits for legacy work
// nor holds it back, while a blocking stream waits for it. The test computes every figure.
#include "check.cuh"

__global__ void busy_a(float* p) { p[threadIdx.x] += 1; }
__global__ void busy_b(float* p) { p[threadIdx.x] *= 2; }
__global__ void tail(float* p) { p[threadIdx.x] -= 1; }

int main() {
  float* d;
  CHECK(cudaMalloc(&d, 1 << 20));
  cudaStream_t s1, s2, nb;
  CHECK(cudaStreamCreate(&s1));
  CHECK(cudaStreamCreate(&s2));
  CHECK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  cudaEvent_t start, ev_a, ev_b, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&ev_a));
  CHECK(cudaEventCreate(&ev_b));
  CHECK(cudaEventCreate(&stop));

  CHECK(cudaEventRecord(start, 0));
  busy_a<<<1, 32, 0, s1>>>(d);
  CHECK(cudaEventRecord(ev_a, s1));
  busy_b<<<1, 32, 0, s2>>>(d);
  CHECK(cudaEventRecord(ev_b, s2));
  tail<<<1, 32>>>(d);
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  std::printf("a_us %.3f\n", elapsed_us(start, ev_a));
  std::printf("b_us %.3f\n", elapsed_us(start, ev_b));
  std::printf("elapsed_us %.3f\n", elapsed_us(start, stop));

  // Phase 2.
  cudaEvent_t start2, stop2, ev_s1;
  CHECK(cudaEventCreate(&start2));
  CHECK(cudaEventCreate(&stop2));
  CHECK(cudaEventCreate(&ev_s1));
  CHECK(cudaEventRecord(start2, 0));
  busy_b<<<1, 32, 0, nb>>>(d);  // does not wait for legacy work
  tail<<<1, 32>>>(d);           // does not wait for the non-blocking stream
  CHECK(cudaEventRecord(stop2, 0));
  busy_a<<<1, 32, 0, s1>>>(d);  // a blocking stream waits for the legacy `tail`
  CHECK(cudaEventRecord(ev_s1, s1));
  CHECK(cudaEventSynchronize(ev_s1));
  std::printf("legacy2_us %.3f\n", elapsed_us(start2, stop2));
  std::printf("s1_after_legacy_us %.3f\n", elapsed_us(start2, ev_s1));
  CHECK(cudaDeviceSynchronize());  // also waits for the non-blocking stream
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  CHECK(cudaStreamDestroy(nb));
  CHECK(cudaFree(d));
  return 0;
}
