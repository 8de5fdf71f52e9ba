// Calls an entry point the simulator does not implement: the process must die naming it.
#include "check.cuh"

int main() {
  std::printf("before\n");
  std::fflush(stdout);
  cudaMemcpy3DParms p = {};
  const cudaError_t e = cudaMemcpy3D(&p);
  std::printf("after %s\n", cudaGetErrorName(e));  // must never be reached
  return 0;
}
