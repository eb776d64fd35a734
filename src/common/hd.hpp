// APAIRS_HD: marks a function for both host and device code (a plain inline function
// when not compiled by nvcc). Its own header, so that code built for other instruction
// sets (src/genotype/kernel_*.cpp) can have it without any inline library code.
#pragma once

#if defined(__CUDACC__)
#define APAIRS_HD __host__ __device__ __forceinline__
#else
#define APAIRS_HD inline
#endif
