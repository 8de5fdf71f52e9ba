// One copy of 1 MiB, then a query of an event recorded just before it (did the call block the
// host?) and a synchronisation of the copy's stream. Ends right there, so the run's simulated
// time is the copy's end.
// Usage: copies <h2d|d2h|d2d> <sync|async> <pinned|pageable>
//        copies shadow      small copies keep their bytes
#include <cstring>
#include <string>
#include <vector>

#include "check.cuh"

constexpr size_t kBytes = 1 << 20;

int shadow() {
  int* d = nullptr;
  int* d2 = nullptr;
  CHECK(cudaMalloc(&d, 64 * sizeof(int)));
  CHECK(cudaMalloc(&d2, 64 * sizeof(int)));
  int in[64], out[64];
  for (int i = 0; i < 64; ++i) in[i] = i * i + 7;
  CHECK(cudaMemcpy(d, in, sizeof(in), cudaMemcpyHostToDevice));
  std::memset(out, 0, sizeof(out));
  CHECK(cudaMemcpy(out, d, sizeof(out), cudaMemcpyDeviceToHost));
  if (std::memcmp(in, out, sizeof(in)) != 0) {
    std::printf("FAILED h2d bytes do not read back (out[5]=%d)\n", out[5]);
    return 1;
  }
  // Device to device, then back, at an offset.
  CHECK(cudaMemcpy(d2 + 8, d, 16 * sizeof(int), cudaMemcpyDeviceToDevice));
  std::memset(out, 0, sizeof(out));
  CHECK(cudaMemcpy(out, d2 + 8, 16 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 16; ++i) {
    if (out[i] != i * i + 7) {
      std::printf("FAILED d2d bytes do not read back (out[%d]=%d)\n", i, out[i]);
      return 1;
    }
  }
  // Memset, and an async round trip through pinned memory.
  CHECK(cudaMemset(d2, 0xab, 8));
  unsigned char b[8];
  CHECK(cudaMemcpy(b, d2, 8, cudaMemcpyDeviceToHost));
  for (unsigned char v : b) {
    if (v != 0xab) {
      std::printf("FAILED memset bytes do not read back\n");
      return 1;
    }
  }
  int* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, 4 * sizeof(int)));
  CHECK(cudaMemcpyAsync(pinned, d + 60, 4 * sizeof(int), cudaMemcpyDeviceToHost, 0));
  CHECK(cudaStreamSynchronize(0));
  if (pinned[3] != 63 * 63 + 7) {
    std::printf("FAILED async d2h bytes (got %d)\n", pinned[3]);
    return 1;
  }
  std::printf("shadow ok\n");
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "shadow") == 0) return shadow();
  if (argc != 4) return 2;
  const std::string kind = argv[1];
  const bool sync = std::strcmp(argv[2], "sync") == 0;
  const bool pinned = std::strcmp(argv[3], "pinned") == 0;

  void* dev = nullptr;
  void* dev2 = nullptr;
  CHECK(cudaMalloc(&dev, kBytes));
  CHECK(cudaMalloc(&dev2, kBytes));
  void* host = nullptr;
  std::vector<char> pageable;
  if (pinned) {
    CHECK(cudaMallocHost(&host, kBytes));
  } else {
    pageable.resize(kBytes);
    host = pageable.data();
  }
  cudaStream_t s = 0;
  if (!sync) CHECK(cudaStreamCreate(&s));
  cudaEvent_t before;
  CHECK(cudaEventCreate(&before));
  CHECK(cudaEventRecord(before, s));

  void* dst = nullptr;
  const void* src = nullptr;
  cudaMemcpyKind k;
  if (kind == "h2d") {
    dst = dev, src = host, k = cudaMemcpyHostToDevice;
  } else if (kind == "d2h") {
    dst = host, src = dev, k = cudaMemcpyDeviceToHost;
  } else {
    dst = dev2, src = dev, k = cudaMemcpyDeviceToDevice;
  }
  if (sync) {
    CHECK(cudaMemcpy(dst, src, kBytes, k));
  } else {
    CHECK(cudaMemcpyAsync(dst, src, kBytes, k, s));
  }
  const cudaError_t q = cudaEventQuery(before);
  if (q != cudaSuccess && q != cudaErrorNotReady) CHECK(q);
  std::printf("blocked %d\n", q == cudaSuccess ? 1 : 0);
  CHECK(cudaStreamSynchronize(s));
  return 0;
}
