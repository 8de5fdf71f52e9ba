// A CUDA program written without Phantora in mind: a chunked pipeline that overlaps host-to-
// device copies on one stream with compute on another, on every GPU the process can see, and
// times it with CUDA events. Under `phantora run` it reports simulated times.
//
//   nvcc -cudart shared -o overlap overlap.cu
//   phantora run --hosts 2 --gpus-per-host 4 --gpu h100 -- ./overlap
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                    \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                   cudaGetErrorString(err_));                                          \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

__global__ void scale(float* x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + 1.0f;
}

int main(int argc, char** argv) {
  const int chunks = argc > 1 ? std::atoi(argv[1]) : 8;
  const int n = 1 << 24;  // floats per chunk: 64 MiB
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  const char* host = std::getenv("PHANTORA_HOST");
  for (int d = 0; d < devices; ++d) {
    CHECK(cudaSetDevice(d));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, d));
    float* host_buf = nullptr;
    CHECK(cudaMallocHost(&host_buf, sizeof(float) * n));
    float* dev = nullptr;
    CHECK(cudaMalloc(&dev, sizeof(float) * n * 2));
    cudaStream_t copy, compute;
    CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> copied(chunks);
    for (auto& e : copied) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));

    CHECK(cudaEventRecord(start, copy));
    for (int c = 0; c < chunks; ++c) {
      float* slot = dev + (c % 2) * n;
      CHECK(cudaMemcpyAsync(slot, host_buf, sizeof(float) * n, cudaMemcpyHostToDevice, copy));
      CHECK(cudaEventRecord(copied[c], copy));
      CHECK(cudaStreamWaitEvent(compute, copied[c], 0));
      scale<<<(n + 255) / 256, 256, 0, compute>>>(slot, n, 2.0f);
      CHECK(cudaGetLastError());
    }
    CHECK(cudaEventRecord(stop, compute));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("host %s GPU %d (%s, %d SMs): %d chunks of 64 MiB in %.3f ms (%.1f GB/s)\n",
                host ? host : "?", d, prop.name, prop.multiProcessorCount, chunks, ms,
                chunks * sizeof(float) * n / (ms * 1e6));
    CHECK(cudaFree(dev));
    CHECK(cudaFreeHost(host_buf));
  }
  return 0;
}
