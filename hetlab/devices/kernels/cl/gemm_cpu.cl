// GEMM (and implicit-im2col convolution) for OpenCL devices that are CPUs (PoCL). OpenCL 1.2 C.
//
//   C[b](m, n) = act(alpha * sum_k A[b](m, k) * B[b](k, n) + beta * bias[b](m, n))
//
// Same arguments and options as gemm.cl's `gemm` without split-K (A_KC, B_NC, CONV, RESID,
// PRE_RELU; cp and ktab as there). A CPU compiler does badly with gemm.cl's shape: a private
// register block that lives across work-group barriers is spilled to memory per work-item,
// and work-items are vectorised implicitly if at all. Here a work-item owns an MB x 16 block
// of C in explicit float8 registers, walks all of K itself, and uses no local memory and no
// barrier. Per k it loads 16 consecutive values of B's row k (a vector pair where B is
// n-contiguous or the convolution's row lies inside the input, strided loads without bounds
// checks where the convolution is strided, a gather otherwise) and MB scalars of A, then
// does 2 * MB vector multiply-adds. Global (ceil(N/16), ceil(M/MB), batch).

#ifndef MB
#define MB 6
#endif
#define NBLK 16

#ifdef RESID
#define RESID_ARGS , __global const float* R, const int rshift HL_N(R)
#define ADD_RESID(v, c) ((v) + LD(R, (c) - rshift))
#else
#define RESID_ARGS
#define ADD_RESID(v, c) (v)
#endif

#ifdef PRE_RELU
#define IN_B(v) ((v) < 0.0f ? 0.0f : (v))
#define IN_B8(v) fmax((v), (float8)(0.0f))
#else
#define IN_B(v) (v)
#define IN_B8(v) (v)
#endif

// eight consecutive floats as one vector (one unaligned load; vload8 is a call in PoCL)
#define LD8(b, i) ((float8)(LD(b, (i)), LD(b, (i) + 1), LD(b, (i) + 2), LD(b, (i) + 3), \
                            LD(b, (i) + 4), LD(b, (i) + 5), LD(b, (i) + 6), LD(b, (i) + 7)))
// eight floats s apart as one vector
#define LDS8(b, i, s) ((float8)(LD(b, (i)), LD(b, (i) + (s)), LD(b, (i) + 2 * (s)), \
                                LD(b, (i) + 3 * (s)), LD(b, (i) + 4 * (s)), LD(b, (i) + 5 * (s)), \
                                LD(b, (i) + 6 * (s)), LD(b, (i) + 7 * (s))))
// C's MB x 16 block += A(m0.., k) * (b0, b1)
#define ROWS_MAD(k) \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) { \
        const float8 a = (float8)(LD(Ab, arow[i] + (k) * sak)); \
        acc0[i] += a * b0; \
        acc1[i] += a * b1; \
    }

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

__kernel void gemm_cpu(const int M, const int N, const int K,
                       __global const float* A, const int sam, const int sak,
                       __global const float* B, const int sbk, const int sbn,
                       __global float* C, const int ldc, const int csplit,
                       __global const int4* offs, const int splits, const int klen,
                       __global const float* bias, const int sbias_m, const int sbias_n,
                       const float alpha, const float beta, const int has_bias,
                       const float slope, const float lo, const float hi,
                       __constant int* cp, __global const int4* ktab RESID_ARGS
                       HL_ARGS HL_N(A) HL_N(B) HL_N(C) HL_N(offs) HL_N(bias) HL_N(ktab))
{
    const int n0 = get_global_id(0) * NBLK, m0 = get_global_id(1) * MB;
    const int b = get_global_id(2);
    if (n0 >= N || m0 >= M) return;
    const int4 off = LD(offs, b);
    VIEW(__global const float*, Ab, A, off.x);
    VIEW(__global const float*, Bb, B, off.y);
    const int full = n0 + NBLK <= N;
    int arow[MB];  // A's row offsets; rows past M repeat the last row (their C is not written)
    #pragma unroll
    for (int i = 0; i < MB; ++i) arow[i] = min(m0 + i, M - 1) * sam;
    float8 acc0[MB], acc1[MB];
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        acc0[i] = (float8)(0.0f);
        acc1[i] = (float8)(0.0f);
    }
    float bt[NBLK] __attribute__((aligned(32)));
#ifdef CONV
    const int H = cp[0], W = cp[1], OW = cp[2];
    const int SH = cp[5], SW = cp[6], PH = cp[7], PW = cp[8];
    // the 16 columns' input origins; `row` = all 16 in one output row (1-D: always)
    int ih0[NBLK], iw0[NBLK];
    #pragma unroll
    for (int j = 0; j < NBLK; ++j) {
        const int n = min(n0 + j, N - 1), oh = n / OW;
        ih0[j] = oh * SH - PH;
        iw0[j] = (n - oh * OW) * SW - PW;
    }
    const int row = full && ih0[0] == ih0[NBLK - 1];
    const int span = (NBLK - 1) * SW;
#endif
#ifdef CONV
    for (int k = 0; k < K; ++k) {
        float8 b0, b1;
        const int4 t = LD(ktab, k);
        const int ih = ih0[0] + t.y, iw = iw0[0] + t.z;
        if (row && ih >= 0 && ih < H && iw >= 0 && iw + span < W) {
            const int p = t.x + ih0[0] * W + iw0[0];
            if (SW == 1) {
                b0 = IN_B8(LD8(Bb, p));
                b1 = IN_B8(LD8(Bb, p + 8));
            } else {  // strided: no bounds to check inside the row
                b0 = IN_B8(LDS8(Bb, p, SW));
                b1 = IN_B8(LDS8(Bb, p + 8 * SW, SW));
            }
        } else {
            #pragma unroll
            for (int j = 0; j < NBLK; ++j) {
                const int hj = ih0[j] + t.y, wj = iw0[j] + t.z;
                bt[j] = (n0 + j < N && hj >= 0 && hj < H && wj >= 0 && wj < W)
                            ? IN_B(LD(Bb, t.x + ih0[j] * W + iw0[j])) : 0.0f;
            }
            b0 = *(float8*)bt;
            b1 = *(float8*)(bt + 8);
        }
        ROWS_MAD(k);
    }
#else
    if (full && sbn == 1) {
        for (int k = 0; k < K; ++k) {
            const int p = k * sbk + n0;
            const float8 b0 = IN_B8(LD8(Bb, p)), b1 = IN_B8(LD8(Bb, p + 8));
            ROWS_MAD(k);
        }
    } else {
        for (int k = 0; k < K; ++k) {
            #pragma unroll
            for (int j = 0; j < NBLK; ++j)
                bt[j] = n0 + j < N ? IN_B(LD(Bb, k * sbk + (n0 + j) * sbn)) : 0.0f;
            const float8 b0 = *(float8*)bt, b1 = *(float8*)(bt + 8);
            ROWS_MAD(k);
        }
    }
#endif
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        const int gm = m0 + i;
        if (gm >= M) break;
        *(float8*)bt = acc0[i];
        *(float8*)(bt + 8) = acc1[i];
        for (int j = 0; j < NBLK; ++j) {
            const int gn = n0 + j;
            if (gn >= N) break;
            float v = alpha * bt[j];
            if (has_bias) v += beta * LD(bias, off.w + gm * sbias_m + gn * sbias_n);
            const int c = off.z + gm * ldc + gn;
            ST(C, c, act(ADD_RESID(v, c), slope, lo, hi));
        }
    }
}
