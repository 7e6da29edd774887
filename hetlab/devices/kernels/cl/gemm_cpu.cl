// GEMM (and implicit-im2col convolution) for OpenCL devices that are CPUs (PoCL). OpenCL 1.2 C.
//
//   C[b](m, n) = act(alpha * sum_k A[b](m, k) * B[b](k, n) + beta * bias[b](m, n))
//
// Same arguments and options as gemm.cl's `gemm` without split-K (A_KC, B_NC, CONV, RESID,
// PRE_RELU; cp and ktab as there). A CPU compiler does badly with gemm.cl's shape: a private
// register block that lives across work-group barriers is spilled to memory per work-item,
// and work-items are vectorised implicitly if at all. Here a work-item owns an MB x (8 NV)
// block of C in explicit float8 registers, walks all of K itself, and uses no local memory
// and no barrier. Per k it loads NV vectors of B's row k and MB scalars of A, then does
// MB * NV vector multiply-adds. Global (column blocks, ceil(M/MB), batch). Constant operands
// come packed (A_PACKED, B_PACKED: ops/gemm_pack.py), each work-item's one contiguous stream.
//
// A convolution's column block is 8 NV outputs of one output row (a row's last block is
// partly idle). Per tap its inputs are one vector load each where they lie inside the input
// row (strided loads at stride > 1), the same load with the lanes outside the row zeroed at
// its edges (a padding column), a checked gather only where that load would leave the
// image's channels; a padding row is skipped.

#ifndef MB
#define MB 6
#endif
#ifndef NV
#define NV 2
#endif
#define NBLK (8 * NV)

#ifdef RESID
#define RESID_ARGS , __global const float* R, const int rshift
#define RESID_HL HL_N(R)
#define ADD_RESID(v, c) ((v) + LD(R, (c) - rshift))
#define ADD_RESID8(v, c) ((v) + LDS8(R, (c) - rshift, 1))
#else
#define RESID_ARGS
#define RESID_HL
#define ADD_RESID(v, c) (v)
#define ADD_RESID8(v, c) (v)
#endif

// PRELU: a PRelu after the product, its slope S at off.w + m * ssm + n * ssn (eight lanes
// s apart in PRELU8)
#ifdef PRELU
#define PRELU_ARGS , __global const float* S, const int ssm, const int ssn
#define PRELU_HL HL_N(S)
#define PRELU1(v, o) ((v) < 0.0f ? (v) * LD(S, (o)) : (v))
#define PRELU8(v, o, s) \
    select((v), (v) * ((s) == 0 ? (float8)(LD(S, (o))) : LDS8(S, (o), (s))), (v) < (float8)(0.0f))
#else
#define PRELU_ARGS
#define PRELU_HL
#define PRELU1(v, o) (v)
#define PRELU8(v, o, s) (v)
#endif

#ifdef PRE_RELU
#define IN_B(v) ((v) < 0.0f ? 0.0f : (v))
#define IN_B8(v) fmax((v), (float8)(0.0f))
#else
#define IN_B(v) (v)
#define IN_B8(v) (v)
#endif

// eight floats s apart as one vector (s = 1: one unaligned load; vload8 is a call in PoCL)
#define LDS8(b, i, s) ((float8)(LD(b, (i)), LD(b, (i) + (s)), LD(b, (i) + 2 * (s)), \
                                LD(b, (i) + 3 * (s)), LD(b, (i) + 4 * (s)), LD(b, (i) + 5 * (s)), \
                                LD(b, (i) + 6 * (s)), LD(b, (i) + 7 * (s))))
#define LD8(b, i) LDS8(b, i, 1)
// A(m0 + i, k): A_PACKED, A packed as [row blocks][K][MB] (ops/gemm_pack.py)
#ifdef A_PACKED
#define A_AT(i, k) LD(Ab, (get_global_id(1) * K + (k)) * MB + (i))
#else
#define A_AT(i, k) LD(Ab, arow[i] + (k) * sak)
#endif
// C's MB x NBLK block += A(m0.., k) * bv
#define ROWS_MAD(k) \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) { \
        const float8 a = (float8)(A_AT(i, k)); \
        _Pragma("unroll") for (int v = 0; v < NV; ++v) acc[i][v] += a * bv[v]; \
    }

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

// act() on eight lanes by compares and selects (fmin and fmax are calls in PoCL)
inline float8 act8(float8 v, float slope, float lo, float hi) {
    v = select(v, v * slope, v < (float8)(0.0f));
    v = select(v, (float8)(lo), v < (float8)(lo));
    return select(v, (float8)(hi), v > (float8)(hi));
}

// eight floats stored from element i on (eight stores the compiler joins into one
// unaligned store)
#define ST8(b, i, v) do { \
        ST(b, (i), (v).s0); ST(b, (i) + 1, (v).s1); ST(b, (i) + 2, (v).s2); \
        ST(b, (i) + 3, (v).s3); ST(b, (i) + 4, (v).s4); ST(b, (i) + 5, (v).s5); \
        ST(b, (i) + 6, (v).s6); ST(b, (i) + 7, (v).s7); \
    } while (0)

#ifndef NC  // gemv_cpu's build has no gemm_cpu
__kernel void gemm_cpu(const int M, const int N, const int K,
                       __global const float* A, const int sam, const int sak,
                       __global const float* B, const int sbk, const int sbn,
                       __global float* C, const int ldc, const int csplit,
                       __global const int4* offs, const int splits, const int klen,
                       __global const float* bias, const int sbias_m, const int sbias_n,
                       const float alpha, const float beta, const int has_bias,
                       const float slope, const float lo, const float hi,
                       __constant int* cp, __global const int4* ktab RESID_ARGS PRELU_ARGS
                       HL_ARGS HL_N(A) HL_N(B) HL_N(C) HL_N(offs) HL_N(bias) HL_N(ktab)
                       RESID_HL PRELU_HL)
{
    const int m0 = get_global_id(1) * MB, b = get_global_id(2);
#ifdef CONV
    const int H = cp[0], W = cp[1], OW = cp[2];
    const int SH = cp[5], SW = cp[6], PH = cp[7], PW = cp[8];
    const int BW = (OW + NBLK - 1) / NBLK;  // column blocks per output row
    const int oh = get_global_id(0) / BW, ow0 = (get_global_id(0) - oh * BW) * NBLK;
    const int n0 = oh * OW + ow0, ncols = min(NBLK, OW - ow0);
#else
    const int n0 = get_global_id(0) * NBLK, ncols = min(NBLK, N - n0);
#endif
    if (n0 >= N || m0 >= M) return;
    const int4 off = LD(offs, b);
    VIEW(__global const float*, Ab, A, off.x);
    VIEW(__global const float*, Bb, B, off.y);
    int arow[MB];  // A's row offsets; rows past M repeat the last row (their C is not written)
    #pragma unroll
    for (int i = 0; i < MB; ++i) arow[i] = min(m0 + i, M - 1) * sam;
    float8 acc[MB][NV], bv[NV];
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        #pragma unroll
        for (int v = 0; v < NV; ++v) acc[i][v] = (float8)(0.0f);
    }
    float bt[NBLK] __attribute__((aligned(32)));
#if defined(B_PACKED)  // B packed as [column blocks][K][NBLK], zero past N
    VIEW(__global const float*, Bp, Bb, (size_t)get_global_id(0) * K * NBLK);
    for (int k = 0; k < K; ++k) {
        #pragma unroll
        for (int v = 0; v < NV; ++v) bv[v] = IN_B8(LD8(Bp, k * NBLK + 8 * v));
        ROWS_MAD(k);
    }
#elif defined(CONV)
    const int ih0 = oh * SH - PH, iw0 = ow0 * SW - PW;
    const int span = (NBLK - 1) * SW, plane = K / (cp[3] * cp[4]) * H * W;
    const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7) * SW;
    for (int k = 0; k < K; ++k) {
        const int4 t = LD(ktab, k);
        const int ih = ih0 + t.y;
        if (ih < 0 || ih >= H) continue;  // a padding row adds nothing
        const int iw = iw0 + t.z, p = t.x + ih0 * W + iw0;
        if (iw >= 0 && iw + span < W) {  // inside the row
            #pragma unroll
            for (int v = 0; v < NV; ++v)
                bv[v] = IN_B8(SW == 1 ? LD8(Bb, p + 8 * v) : LDS8(Bb, p + 8 * v * SW, SW));
        } else if (p >= 0 && p + span < plane) {  // the lanes outside the row zeroed
            #pragma unroll
            for (int v = 0; v < NV; ++v) {
                const int8 c = (int8)(iw + 8 * v * SW) + lane;
                bv[v] = select((float8)(0.0f), IN_B8(LDS8(Bb, p + 8 * v * SW, SW)),
                               (c >= 0) & (c < W));
            }
        } else {
            #pragma unroll
            for (int j = 0; j < NBLK; ++j) {
                const int wj = iw + j * SW;
                bt[j] = wj >= 0 && wj < W ? IN_B(LD(Bb, p + j * SW)) : 0.0f;
            }
            #pragma unroll
            for (int v = 0; v < NV; ++v) bv[v] = *(float8*)(bt + 8 * v);
        }
        ROWS_MAD(k);
    }
#else
    if (ncols == NBLK && sbn == 1) {
        for (int k = 0; k < K; ++k) {
            const int p = k * sbk + n0;
            #pragma unroll
            for (int v = 0; v < NV; ++v) bv[v] = IN_B8(LD8(Bb, p + 8 * v));
            ROWS_MAD(k);
        }
    } else {
        for (int k = 0; k < K; ++k) {
            #pragma unroll
            for (int j = 0; j < NBLK; ++j)
                bt[j] = j < ncols ? IN_B(LD(Bb, k * sbk + (n0 + j) * sbn)) : 0.0f;
            #pragma unroll
            for (int v = 0; v < NV; ++v) bv[v] = *(float8*)(bt + 8 * v);
            ROWS_MAD(k);
        }
    }
#endif
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        const int gm = m0 + i;
        if (gm >= M) break;
        if (ncols == NBLK) {  // the whole row of the block, eight lanes at a time
            #pragma unroll
            for (int v = 0; v < NV; ++v) {
                const int gn = n0 + 8 * v, c = off.z + gm * ldc + gn;
                float8 r = alpha * acc[i][v];
                if (has_bias) {
                    const int o = off.w + gm * sbias_m + gn * sbias_n;
                    r += beta * (sbias_n == 0 ? (float8)(LD(bias, o)) : LDS8(bias, o, sbias_n));
                }
                r = PRELU8(ADD_RESID8(r, c), off.w + gm * ssm + gn * ssn, ssn);
                r = act8(r, slope, lo, hi);
                ST8(C, c, r);
            }
            continue;
        }
        #pragma unroll
        for (int v = 0; v < NV; ++v) *(float8*)(bt + 8 * v) = acc[i][v];
        for (int j = 0; j < ncols; ++j) {
            const int gn = n0 + j;
            float v = alpha * bt[j];
            if (has_bias) v += beta * LD(bias, off.w + gm * sbias_m + gn * sbias_n);
            const int c = off.z + gm * ldc + gn;
            v = PRELU1(ADD_RESID(v, c), off.w + gm * ssm + gn * ssn);
            ST(C, c, act(v, slope, lo, hi));
        }
    }
}
#endif

// A product with few columns of C (NC = N, 1 to 4: a matrix times a vector, a 1x1
// convolution on a 1x1 map) and A packed as [row blocks][K][MB] (A_PACKED, MB = 8 RV):
// gemm_cpu's 16 columns would leave all but N lanes idle, so here the vectors run along M.
// A work-item owns MB rows and every column of C; per k it loads RV vectors of A and NC
// scalars of B, and does RV * NC vector multiply-adds. Same arguments as gemm_cpu (cp, ktab
// unused). Global (1, ceil(M/MB), batch).
#ifdef NC
__kernel void gemv_cpu(const int M, const int N, const int K,
                       __global const float* A, const int sam, const int sak,
                       __global const float* B, const int sbk, const int sbn,
                       __global float* C, const int ldc, const int csplit,
                       __global const int4* offs, const int splits, const int klen,
                       __global const float* bias, const int sbias_m, const int sbias_n,
                       const float alpha, const float beta, const int has_bias,
                       const float slope, const float lo, const float hi,
                       __constant int* cp, __global const int4* ktab RESID_ARGS PRELU_ARGS
                       HL_ARGS HL_N(A) HL_N(B) HL_N(C) HL_N(offs) HL_N(bias) HL_N(ktab)
                       RESID_HL PRELU_HL)
{
    const int m0 = get_global_id(1) * MB, b = get_global_id(2);
    if (m0 >= M) return;
    const int4 off = LD(offs, b);
    VIEW(__global const float*, Ap, A, off.x + (size_t)get_global_id(1) * K * MB);
    VIEW(__global const float*, Bb, B, off.y);
    float8 acc[NC][RV];
    #pragma unroll
    for (int n = 0; n < NC; ++n) {
        #pragma unroll
        for (int v = 0; v < RV; ++v) acc[n][v] = (float8)(0.0f);
    }
    for (int k = 0; k < K; ++k) {
        float8 av[RV];
        #pragma unroll
        for (int v = 0; v < RV; ++v) av[v] = LD8(Ap, k * MB + 8 * v);
        #pragma unroll
        for (int n = 0; n < NC; ++n) {
            const float8 bk = (float8)(IN_B(LD(Bb, k * sbk + n * sbn)));
            #pragma unroll
            for (int v = 0; v < RV; ++v) acc[n][v] += av[v] * bk;
        }
    }
    float t[8] __attribute__((aligned(32)));
    #pragma unroll
    for (int n = 0; n < NC; ++n) {
        #pragma unroll
        for (int v = 0; v < RV; ++v) {
            const int m = m0 + 8 * v;
            if (m >= M) break;
            const int c = off.z + m * ldc + n, o = off.w + m * sbias_m + n * sbias_n;
            if (m + 8 <= M) {  // eight rows: C's and the bias's lanes ldc and sbias_m apart
                float8 r = alpha * acc[n][v];
                if (has_bias)
                    r += beta * (sbias_m == 0 ? (float8)(LD(bias, o)) : LDS8(bias, o, sbias_m));
#ifdef RESID
                r += LDS8(R, c - rshift, ldc);
#endif
                r = PRELU8(r, off.w + m * ssm + n * ssn, ssm);
                *(float8*)t = act8(r, slope, lo, hi);
            } else {  // the rows past M neither read nor written
                *(float8*)t = acc[n][v];
                for (int j = 0; j < 8 && m + j < M; ++j) {
                    float r = alpha * t[j];
                    if (has_bias) r += beta * LD(bias, o + j * sbias_m);
                    r = PRELU1(ADD_RESID(r, c + j * ldc), off.w + (m + j) * ssm + n * ssn);
                    t[j] = act(r, slope, lo, hi);
                }
            }
            for (int j = 0; j < 8 && m + j < M; ++j) ST(C, c + j * ldc, t[j]);
        }
    }
}
#endif
