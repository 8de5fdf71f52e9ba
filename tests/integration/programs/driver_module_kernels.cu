// Kernels that driver_modules.cu loads at run time from a cubin, as Triton's launchers do:
// compiled with `nvcc -cubin`, never linked into the program.
extern "C" __global__ void dm_scale(float* p, float f) {
  p[threadIdx.x] *= f;
}
extern "C" __global__ void dm_shift(float* p, float d) {
  extern __shared__ float tile[];
  tile[threadIdx.x] = p[threadIdx.x];
  p[threadIdx.x] = tile[threadIdx.x] + d;
}
