// Element-wise kernels shaped for a CPU device (PoCL); CPU-only (the CUDA backend does not
// build this file). OpenCL 1.2 C.
//
// PoCL runs a work-group as one loop on one thread, starts each group at a cost of
// microseconds, and does not vectorise a one-element work-item: eltwise.cl's `unary` spent
// 20-30 ns an element. Here a work-item takes EW consecutive elements, the op is a build
// option (OP, eltwise.cl's unary codes: the per-element switch folds away), and the ops that
// are plain arithmetic run on explicit float8 vectors (VEC8), the same operations lane by
// lane as the scalar code; the others call eltwise.cl's unary_op per element.
#include "eltwise.cl"

#define EW 16

#if OP == 0
#define VEC8(v) (v)
#elif OP == 2
#define VEC8(v) fmin(fmax(p0 * (v) + p1, 0.0f), 1.0f)
#elif OP == 3
#define VEC8(v) ((v) * fmin(fmax((v) / 6.0f + 0.5f, 0.0f), 1.0f))
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
