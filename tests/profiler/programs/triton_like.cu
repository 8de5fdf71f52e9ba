// An extern "C" kernel compiled to a cubin, as Triton hands its kernels to the driver: its name
// says nothing of its parameters, which the cubin's parameter table states (8 and 4 bytes).
extern "C" __global__ void triton_like(float* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 2.0f + 1.0f;
}

// A struct parameter over the 4 KB limit of CUDA before 12.1: nvcc states its size in the other
// layout of the cubin's parameter table (launch_replay.py relaunches it with its pointer moved).
struct Big {
  float* p;
  char bytes[25600];
};
extern "C" __global__ void big_param(Big b, int n) {
  if (threadIdx.x == 0 && n > 0) b.p[0] = b.bytes[n];
}
