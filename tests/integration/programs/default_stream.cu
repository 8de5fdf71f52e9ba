// The same source built twice: with the legacy default stream and with
// --default-stream per-thread (the _ptsz/_ptds entry points). busy_a (100 us) runs on a
// blocking stream s1, busy_b (250 us) on stream 0, between events on stream 0.
#include "check.cuh"

__global__ void busy_a(float* p) { p[threadIdx.x] += 1; }
__global__ void busy_b(float* p) { p[threadIdx.x] *= 2; }

int main() {
  float* d;
  CHECK(cudaMalloc(&d, 4096));
  cudaStream_t s1;
  CHECK(cudaStreamCreate(&s1));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, 0));
  busy_a<<<1, 32, 0, s1>>>(d);
  busy_b<<<1, 32>>>(d);
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaStreamSynchronize(0));
  std::printf("elapsed_us %.3f\n", elapsed_us(start, stop));
  int h[4] = {1, 2, 3, 4};
  CHECK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
  int back[4] = {};
  CHECK(cudaMemcpy(back, d, sizeof(back), cudaMemcpyDeviceToHost));
  std::printf("readback %d %d %d %d\n", back[0], back[1], back[2], back[3]);
  CHECK(cudaDeviceSynchronize());
  return 0;
}
