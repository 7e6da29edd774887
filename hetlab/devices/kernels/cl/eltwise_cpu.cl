// Element-wise kernels shaped for a CPU device (PoCL); CPU-only (the CUDA backend does not
// build this file). OpenCL 1.2 C.
//
// PoCL runs a work-group as one loop on one thread, starts each group at a cost of
// microseconds, and does not vectorise a one-element work-item: eltwise.cl's `unary` spent
// 20-30 ns an element. Here a work-item takes EW consecutive elements, the op is a build
// option (OP, eltwise.cl's unary codes: the per-element switch folds away), and the common
// ops run on explicit float8 vectors (VEC8): the plain-arithmetic ones, the logistic and tanh
// as mlas.h's rational approximations, the same operations lane by lane as the scalar code;
// exp and erf as PoCL's vector functions, about ten times faster than the scalar ones and at
// most an ulp from them (docs/decisions.md#vector-functions-on-a-cpu-device). The others
// call eltwise.cl's unary_op per element.
#include "eltwise.cl"

#define EW 16

#if OP == 0
#define VEC8(v) (v)
#elif OP == 2
#define VEC8(v) fmin(fmax(p0 * (v) + p1, 0.0f), 1.0f)
#elif OP == 3
#define VEC8(v) ((v) * fmin(fmax((v) / 6.0f + 0.5f, 0.0f), 1.0f))
#elif OP == 4
#define VEC8(v) mlas_tanh8(v)
#elif OP == 8
#define VEC8(v) (-(v))
#elif OP == 9
#define VEC8(v) fabs(v)
#elif OP == 16
#define VEC8(v) floor(v)
#elif OP == 17
#define VEC8(v) ceil(v)
#elif OP == 18
#define VEC8(v) rint(v)
#elif OP == 1
#define VEC8(v) logistic8(v)
#elif OP == 5
#define VEC8(v) exp(v)
#elif OP == 6
#define VEC8(v) sqrt(v)
#elif OP == 7
#define VEC8(v) erf(v)
#elif OP == 13
#define VEC8(v) select((v), p0 * (exp(v) - 1.0f), (v) < 0.0f)
#elif OP == 14
#define VEC8(v) (0.5f * (v) * (1.0f + erf((v) * 0.70710678118654752f)))
#endif

// eight consecutive floats as one vector (one unaligned load; vload8 is a call in PoCL)
#define LD8(b, i) ((float8)(LD(b, (i)), LD(b, (i) + 1), LD(b, (i) + 2), LD(b, (i) + 3), \
                            LD(b, (i) + 4), LD(b, (i) + 5), LD(b, (i) + 6), LD(b, (i) + 7)))

inline float8 act8(const float8 v, const float slope, const float lo, const float hi) {
    return fmin(fmax(select(v, v * slope, v < 0.0f), lo), hi);
}

// eltwise.cl's `unary` (same arguments; the build's OP stands for its op argument).
// Global ceil(n / EW).
__kernel void unary_cpu(__global const float* x, __global float* y, const int n, const int op,
                        const float p0, const float p1, const float slope, const float lo,
                        const float hi HL_ARGS HL_N(x) HL_N(y))
{
    const int i0 = get_global_id(0) * EW;
    if (i0 >= n) return;
#ifdef VEC8
    if (i0 + EW <= n) {
        float t[EW] __attribute__((aligned(32)));
        *(float8*)t = act8(VEC8(LD8(x, i0)), slope, lo, hi);
        *(float8*)(t + 8) = act8(VEC8(LD8(x, i0 + 8)), slope, lo, hi);
        for (int j = 0; j < EW; ++j) ST(y, i0 + j, t[j]);
        return;
    }
#endif
    const int e = min(n, i0 + EW);
    for (int j = i0; j < e; ++j) {
        const float v = act(unary_op(LD(x, j), OP, p0, p1), slope, lo, hi);
        ST(y, j, v);
    }
}

#if OP == 0
#define BIN8(u, w) ((u) + (w))
#elif OP == 1
#define BIN8(u, w) ((u) - (w))
#elif OP == 2
#define BIN8(u, w) ((u) * (w))
#elif OP == 3
#define BIN8(u, w) ((u) / (w))
#elif OP == 5
#define BIN8(u, w) fmax((u), (w))
#elif OP == 6
#define BIN8(u, w) fmin((u), (w))
#elif OP == 7
#define BIN8(u, w) select((u), (u) * (w), (u) < 0.0f)
#endif
// eight values of b from element i: consecutive (s = 1) or one repeated (s = 0)
#define LDV8(b, i, s) ((s) ? LD8(b, i) : (float8)(LD(b, i)))

// eltwise.cl's `binary` (same arguments; the build's OP stands for its op argument).
// A block of EW elements inside one run of the innermost dimension, where both operands
// step by 0 or 1 along it, is two float8 of each operand (VEC8's ops: add, sub, mul, div,
// max, min, prelu); any other block goes element by element. Global ceil(n / EW).
__kernel void binary_cpu(__global const float* a, __global const float* b, __global float* y,
                         __constant int* meta, const int n, const int op, const float slope,
                         const float lo, const float hi HL_ARGS HL_N(a) HL_N(b) HL_N(y))
{
    const int i0 = get_global_id(0) * EW;
    if (i0 >= n) return;
    int ia, ib;
#ifdef BIN8
    const int len = meta[MAXD], sa = meta[6 + MAXD], sb = meta[12 + MAXD];
    if (i0 + EW <= n && i0 % len + EW <= len && (sa == 0 || sa == 1) && (sb == 0 || sb == 1)) {
        nd_offsets(meta, i0, &ia, &ib);
        float t[EW] __attribute__((aligned(32)));
        const float8 u0 = LDV8(a, ia, sa), u1 = LDV8(a, ia + 8 * sa, sa);
        const float8 w0 = LDV8(b, ib, sb), w1 = LDV8(b, ib + 8 * sb, sb);
        *(float8*)t = act8(BIN8(u0, w0), slope, lo, hi);
        *(float8*)(t + 8) = act8(BIN8(u1, w1), slope, lo, hi);
        for (int j = 0; j < EW; ++j) ST(y, i0 + j, t[j]);
        return;
    }
#endif
    for (int i = i0; i < min(n, i0 + EW); ++i) {
        nd_offsets(meta, i, &ia, &ib);
        const float v = act(binary_op(LD(a, ia), LD(b, ib), OP), slope, lo, hi);
        ST(y, i, v);
    }
}
