// Tiled GEMM (and implicit-im2col convolution) for hetlab's OpenCL device. OpenCL 1.2 C.
//
//   C[b](m, n) = act(alpha * sum_k A[b](m, k) * B[b](k, n) + beta * bias[b](m, n))
//
// A TS x TS tile of C per 16 x 16 work-group, each work-item holds a (TS/16) x (TS/16)
// register block; K advances in steps of TK through local memory. Compile-time options:
//   TS      64 or 32 (tile edge)
//   A_KC    1 if A is contiguous along k (row-major A), else contiguous along m
//   B_NC    1 if B is contiguous along n, else contiguous along k
//   CONV    B is the implicit im2col matrix of an NCHW input (B(k,n) = x[ci, ih, iw]),
//           addressed through the per-k table ktab (no divisions in the K loop)
//   RESID   the epilogue also adds R[c - rshift] (c: the output's element index), a tensor
//           of the output's shape: a residual Add fused into the GEMM (two extra arguments,
//           R and rshift, after the last ones; gemm_splitk and gemv take them too)
//   PRE_RELU  B is read through a Relu (a Relu before a Conv, applied as the Conv loads)
// Per-batch base offsets come from `offs[b]` = (A, B, C, bias) element offsets, so grouped
// convolutions and broadcast batched MatMul share one kernel. get_group_id(2) = b * splits + s:
// with splits > 1 each group sums its K-slice into a raw partial tile (reduced by gemm_splitk).
// cp = conv params: H, W, OW, KH, KW, SH, SW, PH, PW, DH, DW.

#ifndef TS
#define TS 64
#endif
#define TK 16
#define WPT (TS / 16)
#define LOADS_A (TS * TK / 256)

#ifdef RESID
#define RESID_ARGS , __global const float* R, const int rshift HL_N(R)
#define ADD_RESID(v, c) ((v) + LD(R, (c) - rshift))
#else
#define RESID_ARGS
#define ADD_RESID(v, c) (v)
#endif

#ifdef PRE_RELU
#define IN_B(v) ((v) < 0.0f ? 0.0f : (v))
#else
#define IN_B(v) (v)
#endif

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void gemm(const int M, const int N, const int K,
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
    __local float As[TK][TS + 1];
    __local float Bs[TK][TS + 1];
    const int tx = get_local_id(0), ty = get_local_id(1);
    const int tid = ty * 16 + tx;
    const int n0 = get_group_id(0) * TS, m0 = get_group_id(1) * TS;
    const int z = get_group_id(2);
    const int b = z / splits, s = z - b * splits;
    const int4 off = LD(offs, b);
    VIEW(__global const float*, Ab, A, off.x);
    VIEW(__global const float*, Bb, B, off.y);
    const int kbeg = s * klen;
    const int kend = min(K, kbeg + klen);
#ifdef CONV
    const int H = cp[0], W = cp[1], OW = cp[2];
    const int SH = cp[5], SW = cp[6], PH = cp[7], PW = cp[8];
    const int n_loc = tid % TS, gn_c = n0 + n_loc;
    const int n_ok = gn_c < N;
    const int oh_c = gn_c / OW, ow_c = gn_c - (gn_c / OW) * OW;
    const int ih0 = oh_c * SH - PH, iw0 = ow_c * SW - PW;
#endif
    float acc[WPT][WPT];
    #pragma unroll
    for (int i = 0; i < WPT; ++i) {
        #pragma unroll
        for (int j = 0; j < WPT; ++j) acc[i][j] = 0.0f;
    }

    for (int k0 = kbeg; k0 < kend; k0 += TK) {
        #pragma unroll
        for (int l = 0; l < LOADS_A; ++l) {
            const int idx = tid + l * 256;
#if A_KC
            const int mm = idx / TK, kk = idx % TK;
#else
            const int mm = idx % TS, kk = idx / TS;
#endif
            const int gm = m0 + mm, gk = k0 + kk;
            As[kk][mm] = (gm < M && gk < kend) ? LD(Ab, gm * sam + gk * sak) : 0.0f;
        }
#ifdef CONV
        // each work-item always loads the same column n (256 % TS == 0): ih0/iw0 are fixed,
        // and ktab[k] = (ci*H*W + kh*DH*W + kw*DW, kh*DH, kw*DW) replaces the divisions.
        #pragma unroll
        for (int l = 0; l < LOADS_A; ++l) {
            const int kk = tid / TS + l * (256 / TS);
            const int gk = k0 + kk;
            float v = 0.0f;
            if (n_ok && gk < kend) {
                const int4 t = LD(ktab, gk);
                const int ih = ih0 + t.y, iw = iw0 + t.z;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = IN_B(LD(Bb, t.x + ih0 * W + iw0));
            }
            Bs[kk][n_loc] = v;
        }
#else
        #pragma unroll
        for (int l = 0; l < LOADS_A; ++l) {
            const int idx = tid + l * 256;
#if B_NC
            const int nn = idx % TS, kk = idx / TS;
#else
            const int nn = idx / TK, kk = idx % TK;
#endif
            const int gn = n0 + nn, gk = k0 + kk;
            Bs[kk][nn] = (gn < N && gk < kend) ? IN_B(LD(Bb, gk * sbk + gn * sbn)) : 0.0f;
        }
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        #pragma unroll
        for (int kk = 0; kk < TK; ++kk) {
            float a[WPT], bb[WPT];
            #pragma unroll
            for (int i = 0; i < WPT; ++i) a[i] = As[kk][ty + 16 * i];
            #pragma unroll
            for (int j = 0; j < WPT; ++j) bb[j] = Bs[kk][tx + 16 * j];
            #pragma unroll
            for (int i = 0; i < WPT; ++i) {
                #pragma unroll
                for (int j = 0; j < WPT; ++j) acc[i][j] = mad(a[i], bb[j], acc[i][j]);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (splits > 1) {  // raw partial sums: layout [s][b][M][N]
        VIEW(__global float*, P, C, (s * (get_num_groups(2) / splits) + b) * csplit);
        for (int i = 0; i < WPT; ++i) {
            const int gm = m0 + ty + 16 * i;
            for (int j = 0; j < WPT; ++j) {
                const int gn = n0 + tx + 16 * j;
                if (gm < M && gn < N) ST(P, gm * N + gn, acc[i][j]);
            }
        }
        return;
    }
    for (int i = 0; i < WPT; ++i) {
        const int gm = m0 + ty + 16 * i;
        for (int j = 0; j < WPT; ++j) {
            const int gn = n0 + tx + 16 * j;
            if (gm < M && gn < N) {
                float v = alpha * acc[i][j];
                if (has_bias) v += beta * LD(bias, off.w + gm * sbias_m + gn * sbias_n);
                const int c = off.z + gm * ldc + gn;
                ST(C, c, act(ADD_RESID(v, c), slope, lo, hi));
            }
        }
    }
}

// Sum the split-K partials [splits][batch][M][N] and apply the epilogue. Global (N, M, batch).
__kernel void gemm_splitk(const int M, const int N, const int splits, const int nbatch,
                          __global const float* P, __global float* C, const int ldc,
                          __global const int4* offs,
                          __global const float* bias, const int sbias_m, const int sbias_n,
                          const float alpha, const float beta, const int has_bias,
                          const float slope, const float lo, const float hi RESID_ARGS
                          HL_ARGS HL_N(P) HL_N(C) HL_N(offs) HL_N(bias))
{
    const int n = get_global_id(0), m = get_global_id(1), b = get_global_id(2);
    if (n >= N || m >= M) return;
    float v = 0.0f;
    for (int s = 0; s < splits; ++s) v += LD(P, ((s * nbatch + b) * M + m) * N + n);
    const int4 off = LD(offs, b);
    v *= alpha;
    if (has_bias) v += beta * LD(bias, off.w + m * sbias_m + n * sbias_n);
    const int c = off.z + m * ldc + n;
    ST(C, c, act(ADD_RESID(v, c), slope, lo, hi));
}

// Skinny GEMM (M <= 4, A k-contiguous, B n-contiguous): the FC layers and LSTM steps at batch 1.
// A 16 x 16 work-group covers 16 columns; its 16 rows of work-items split K and reduce through
// local memory. Global (ceil(N/16)*16, 16, batch). Same epilogue and offsets as gemm.
#define GV_M 4
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void gemv(const int M, const int N, const int K,
          __global const float* A, const int sam, __global const float* B, const int sbk,
          __global float* C, const int ldc, __global const int4* offs,
          __global const float* bias, const int sbias_m, const int sbias_n,
          const float alpha, const float beta, const int has_bias,
          const float slope, const float lo, const float hi RESID_ARGS
          HL_ARGS HL_N(A) HL_N(B) HL_N(C) HL_N(offs) HL_N(bias))
{
    __local float red[16][GV_M][17];
    const int tx = get_local_id(0), ks = get_local_id(1);
    const int n = get_group_id(0) * 16 + tx;
    const int4 off = LD(offs, get_group_id(2));
    VIEW(__global const float*, Ab, A, off.x);
    VIEW(__global const float*, Bb, B, off.y);
    float acc[GV_M] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (n < N) {
        for (int k = ks; k < K; k += 16) {
            const float bv = IN_B(LD(Bb, k * sbk + n));
            #pragma unroll
            for (int m = 0; m < GV_M; ++m)
                if (m < M) acc[m] = mad(LD(Ab, m * sam + k), bv, acc[m]);
        }
    }
    #pragma unroll
    for (int m = 0; m < GV_M; ++m) red[ks][m][tx] = acc[m];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ks < M && n < N) {  // row ks of the output: sum the 16 K-slices
        float v = 0.0f;
        for (int s = 0; s < 16; ++s) v += red[s][ks][tx];
        v *= alpha;
        if (has_bias) v += beta * LD(bias, off.w + ks * sbias_m + n * sbias_n);
        const int c = off.z + ks * ldc + n;
        ST(C, c, act(ADD_RESID(v, c), slope, lo, hi));
    }
}
