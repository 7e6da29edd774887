// A chain of element-wise ops as one kernel on a CPU device (PoCL); CPU-only (the CUDA
// backend does not build this file). OpenCL 1.2 C.
//
// The chain is one expression over float8 values, built in: EXPR, in v0..v3 (the inputs
// x0..x3, NIN of them used) with constants as hexadecimal literals (ops/fused.py writes it).
// A work-item takes EW consecutive output elements, gathers each input's values at its
// broadcast strides (offsets found once, then stepped along the innermost dimension), and
// evaluates the expression on two float8. Each op rounds on its own, as the one-op kernels
// do: no contraction into FMAs across the ops of the chain. A node computing on float16
// tensors (kernels/widen.py) is its term rounded to float16 (ROUND8); the chain's output is
// then float16 (HALF_OUT) or its rounded float32 twin.
#define OP 0  // eltwise_cpu.cl's one-op kernels, built alongside, take no op here
#include "eltwise_cpu.cl"
#include "half_cpu.cl"

// a value rounded to float16 and back (the term of a node computing on float16 tensors:
// its result as the float16 tensor holds it, half.cl's round_half)
#define ROUND8(v) half_to_float8(float_to_half8(v))
// HALF_OUT: y is the chain's float16 output, written as half.cl's to_half writes it
#ifdef HALF_OUT
#define YT U16
#else
#define YT float
#endif

#pragma OPENCL FP_CONTRACT OFF

#ifdef EXPR
// meta = [ndim, shape[6], s0[6], s1[6], s2[6], s3[6]]: the output's shape (row-major,
// trailing ndim entries used) and each input's element strides over it (0: broadcast).
// GATHER reads input k's values of output elements i0..e-1 into out (a macro: LD needs the
// buffer's own name); a whole block inside one run of the innermost dimension, at stride 1
// or 0, as EW loads of a fixed count (the compiler's vector loads).
#define GATHER(x, k, out)                                                             \
    {                                                                                 \
        const int len = meta[MAXD], s = meta[MAXD + 6 * ((k) + 1)];                   \
        const int whole = e - i0 == EW && i0 % len + EW <= len && (s == 0 || s == 1); \
        int i = i0;                                                                   \
        while (i < e) {                                                               \
            int q = i, off = 0;                                                       \
            for (int d = MAXD - 1; d >= MAXD - meta[0]; --d) {                        \
                off += (q % meta[1 + d]) * meta[1 + d + 6 * ((k) + 1)];               \
                q /= meta[1 + d];                                                     \
            }                                                                         \
            if (whole && s == 1) {                                                    \
                for (int j = 0; j < EW; ++j) out[j] = LD(x, off + j);                 \
                break;                                                                \
            }                                                                         \
            if (whole) {                                                              \
                const float v = LD(x, off);                                           \
                for (int j = 0; j < EW; ++j) out[j] = v;                              \
                break;                                                                \
            }                                                                         \
            const int run = min(e, i + len - i % len);                                \
            for (; i < run; ++i, off += s) out[i - i0] = LD(x, off);                  \
        }                                                                             \
    }

// y = act(EXPR) over n elements (y contiguous). Global ceil(n / EW).
__kernel void fused_cpu(__global const float* x0, __global const float* x1,
                        __global const float* x2, __global const float* x3, __global YT* y,
                        __constant int* meta, const int n, const float slope, const float lo,
                        const float hi HL_ARGS HL_N(x0) HL_N(x1) HL_N(x2) HL_N(x3) HL_N(y))
{
    const int i0 = get_global_id(0) * EW;
    if (i0 >= n) return;
    const int e = min(n, i0 + EW);
    float a0[EW] __attribute__((aligned(32))) = {0};
    GATHER(x0, 0, a0);
#if NIN > 1
    float a1[EW] __attribute__((aligned(32))) = {0};
    GATHER(x1, 1, a1);
#endif
#if NIN > 2
    float a2[EW] __attribute__((aligned(32))) = {0};
    GATHER(x2, 2, a2);
#endif
#if NIN > 3
    float a3[EW] __attribute__((aligned(32))) = {0};
    GATHER(x3, 3, a3);
#endif
    float t[EW] __attribute__((aligned(32)));
    for (int h = 0; h < EW; h += 8) {
        const float8 v0 = *(float8*)(a0 + h);
#if NIN > 1
        const float8 v1 = *(float8*)(a1 + h);
#endif
#if NIN > 2
        const float8 v2 = *(float8*)(a2 + h);
#endif
#if NIN > 3
        const float8 v3 = *(float8*)(a3 + h);
#endif
        *(float8*)(t + h) = act8(EXPR, slope, lo, hi);
    }
#ifdef HALF_OUT
    uint u[EW] __attribute__((aligned(32)));
    *(uint8*)u = float_to_half8(*(float8*)t);
    *(uint8*)(u + 8) = float_to_half8(*(float8*)(t + 8));
    for (int i = i0; i < e; ++i) ST(y, i, (U16)u[i - i0]);
#else
    for (int i = i0; i < e; ++i) ST(y, i, t[i - i0]);
#endif
}
#endif
