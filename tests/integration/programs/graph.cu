// A CUDA graph captured from two streams (fork and join through events), launched K times.
// g_a (10 us) forks; s1 runs g_b (30); s2 runs g_c twice (20 + 20); g_d (5) joins.
// Usage: graph <K>
#include "check.cuh"

__global__ void g_a(float* p) { p[0] += 1; }
__global__ void g_b(float* p) { p[1] += 1; }
__global__ void g_c(float* p) { p[2] += 1; }
__global__ void g_d(float* p) { p[3] += 1; }

int main(int argc, char** argv) {
  const int k = argc > 1 ? std::atoi(argv[1]) : 5;
  float* d;
  CHECK(cudaMalloc(&d, 1024));
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join, start, stop;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));

  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  g_a<<<1, 1, 0, s1>>>(d);
  CHECK(cudaEventRecord(fork, s1));
  CHECK(cudaStreamWaitEvent(s2, fork, 0));
  g_b<<<1, 1, 0, s1>>>(d);
  g_c<<<1, 1, 0, s2>>>(d);
  g_c<<<1, 1, 0, s2>>>(d);
  CHECK(cudaEventRecord(join, s2));
  CHECK(cudaStreamWaitEvent(s1, join, 0));
  g_d<<<1, 1, 0, s1>>>(d);
  cudaGraph_t graph;
  CHECK(cudaStreamEndCapture(s1, &graph));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  std::printf("nodes %zu\n", nodes);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));

  CHECK(cudaEventRecord(start, s1));
  for (int i = 0; i < k; ++i) CHECK(cudaGraphLaunch(exec, s1));
  CHECK(cudaEventRecord(stop, s1));
  CHECK(cudaEventSynchronize(stop));
  std::printf("elapsed_us %.3f\n", elapsed_us(start, stop));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return 0;
}
