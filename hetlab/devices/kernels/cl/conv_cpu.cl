// Direct convolutions shaped for a CPU device (PoCL), with explicit float8 vectors; CPU-only
// (the CUDA backend does not build this file). OpenCL 1.2 C.

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

#ifdef PRE_RELU
#define IN_X8(v) fmax((v), (float8)(0.0f))
#else
#define IN_X8(v) (v)
#endif

// eight floats s apart as one vector (s = 1: one unaligned load; vload8 is a call in PoCL)
#define LDS8(b, i, s) ((float8)(LD(b, (i)), LD(b, (i) + (s)), LD(b, (i) + 2 * (s)), \
                                LD(b, (i) + 3 * (s)), LD(b, (i) + 4 * (s)), LD(b, (i) + 5 * (s)), \
                                LD(b, (i) + 6 * (s)), LD(b, (i) + 7 * (s))))

// Depthwise conv (conv_misc.cl's `depthwise`, same arguments): a work-item computes eight
// consecutive outputs of one row as a float8; per tap the eight inputs are one vector load
// (strided loads at stride > 1) where they lie inside the row, a checked gather at its
// edges. Global (ceil(OW/8), OH, N*Cout).
__kernel void depthwise8(__global const float* x, __global const float* w,
                         __global const float* bias, const int has_bias, __global float* y,
                         __constant int* cp, const float slope, const float lo, const float hi
                         HL_ARGS HL_N(x) HL_N(w) HL_N(bias) HL_N(y))
{
    const int ow0 = get_global_id(0) * 8, oh = get_global_id(1), z = get_global_id(2);
    const int H = cp[0], W = cp[1], OH = cp[2], OW = cp[3];
    if (ow0 >= OW || oh >= OH) return;
    const int KH = cp[4], KW = cp[5], SH = cp[6], SW = cp[7], PH = cp[8], PW = cp[9];
    const int DH = cp[10], DW = cp[11], Cin = cp[12], Cout = cp[13];
    const int co = z % Cout, nb = z / Cout;
    const int ci = co / (Cout / Cin);
    VIEW(__global const float*, xp, x, ((size_t)nb * Cin + ci) * H * W);
    VIEW(__global const float*, wp, w, co * KH * KW);
    float8 acc = (float8)(has_bias ? LD(bias, co) : 0.0f);
    float t[8] __attribute__((aligned(32)));
    for (int kh = 0; kh < KH; ++kh) {
        const int ih = oh * SH - PH + kh * DH;
        if (ih < 0 || ih >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
            const int iw = ow0 * SW - PW + kw * DW;
            const int p = ih * W + iw;
            float8 xv;
            if (iw >= 0 && iw + 7 * SW < W) {
                xv = LDS8(xp, p, SW);
            } else {
                for (int j = 0; j < 8; ++j) {
                    const int wj = iw + j * SW;
                    t[j] = wj >= 0 && wj < W ? LD(xp, p + j * SW) : 0.0f;
                }
                xv = *(float8*)t;
            }
            acc += IN_X8(xv) * LD(wp, kh * KW + kw);
        }
    }
    *(float8*)t = acc;
    const size_t o = ((size_t)z * OH + oh) * OW + ow0;
    for (int j = 0; j < 8 && ow0 + j < OW; ++j) ST(y, o + j, act(t[j], slope, lo, hi));
}

// Depthwise conv on a CPU device, its geometry fixed at build time (DW_ROWS; G_KH, G_KW, G_SH,
// G_SW, G_PH, G_PW, G_DH, G_DW, G_H, G_W, G_OH, G_OW; G_RB, G_CV, G_NCH as ops/depthwise.py
// chooses them). A work-item computes RB output rows of one channel. It first copies the
// input rows they read into a private plane, zero where a row or column falls in the
// padding, each row split into SW phases (phase q holds the padded row's columns q, q + SW,
// ..), so that every tap is then a branch-free unit-stride vector read at a constant offset
// (tap kw: phase kw*DW % SW from kw*DW / SW on). Each output row goes in NCH chunks of CV
// float8 vectors (the last chunk's lanes past OW are computed and not stored). Same
// arguments as depthwise8; global (ceil(OH/RB), N*Cout).
#ifdef DW_ROWS
// input rows a work-item reads; outputs per row computed; a phase's length (a multiple of
// 8) and a plane row's; the input columns a plane row holds
#define DR_PR ((G_RB - 1) * G_SH + (G_KH - 1) * G_DH + 1)
#define DR_OWP (G_NCH * G_CV * 8)
#define DR_PHL ((((G_KW - 1) * G_DW) / G_SW + DR_OWP + 7) / 8 * 8)
#define DR_RL (G_SW * DR_PHL)
#define DR_SPAN ((DR_OWP - 1) * G_SW + (G_KW - 1) * G_DW + 1)
#define DR_CW (DR_SPAN - G_PW < G_W ? DR_SPAN - G_PW : G_W)
#ifdef PRE_RELU
#define IN_X(v) ((v) < 0.0f ? 0.0f : (v))
#define DR_IN8(v) select((v), (float8)(0.0f), (v) < (float8)(0.0f))
#else
#define IN_X(v) (v)
#define DR_IN8(v) (v)
#endif
// eight private floats from p on, read and written as one unaligned vector each
#define PLD8(p) ((float8)((p)[0], (p)[1], (p)[2], (p)[3], (p)[4], (p)[5], (p)[6], (p)[7]))
#define PST8(p, v) do { \
        (p)[0] = (v).s0; (p)[1] = (v).s1; (p)[2] = (v).s2; (p)[3] = (v).s3; \
        (p)[4] = (v).s4; (p)[5] = (v).s5; (p)[6] = (v).s6; (p)[7] = (v).s7; \
    } while (0)

inline float8 act8(float8 v, float slope, float lo, float hi) {
    v = select(v, v * slope, v < (float8)(0.0f));
    v = select(v, (float8)(lo), v < (float8)(lo));
    return select(v, (float8)(hi), v > (float8)(hi));
}

__kernel void depthwise_rows(__global const float* x, __global const float* w,
                             __global const float* bias, const int has_bias, __global float* y,
                             __constant int* cp, const float slope, const float lo,
                             const float hi HL_ARGS HL_N(x) HL_N(w) HL_N(bias) HL_N(y))
{
    const int r0 = get_global_id(0) * G_RB, z = get_global_id(1);
    const int Cin = cp[12], Cout = cp[13], planes = cp[14];
    if (r0 >= G_OH || z >= planes) return;
    const int co = z % Cout, nb = z / Cout, ci = co / (Cout / Cin);
    VIEW(__global const float*, xp, x, ((size_t)nb * Cin + ci) * G_H * G_W);
    float wk[G_KH * G_KW];
    #pragma unroll
    for (int t = 0; t < G_KH * G_KW; ++t) wk[t] = LD(w, co * G_KH * G_KW + t);
    const float b = has_bias ? LD(bias, co) : 0.0f;
    float pl[DR_PR * DR_RL] __attribute__((aligned(32)));
    for (int r = 0; r < DR_PR; ++r) {  // zeros, then the input row's columns in their phases
        float* row = pl + r * DR_RL;
        #pragma unroll
        for (int j = 0; j < DR_RL; j += 8) *(float8*)(row + j) = (float8)(0.0f);
        const int ih = r0 * G_SH - G_PH + r;
        if (ih < 0 || ih >= G_H) continue;
        const int p = ih * G_W;
        int j = 0;
#if G_SW == 1
        for (; j + 8 <= DR_CW; j += 8) PST8(row + G_PW + j, DR_IN8(LDS8(xp, p + j, 1)));
#elif G_SW == 2  // sixteen columns: the even ones to one phase, the odd ones to the other
        for (; j + 16 <= DR_CW; j += 16) {
            const int e = G_PW + j;
            const float16 v = (float16)(LDS8(xp, p + j, 1), LDS8(xp, p + j + 8, 1));
            PST8(row + (e % 2) * DR_PHL + e / 2, DR_IN8(v.even));
            PST8(row + ((e + 1) % 2) * DR_PHL + (e + 1) / 2, DR_IN8(v.odd));
        }
#endif
        for (; j < DR_CW; ++j) {
            const int c = G_PW + j;
            row[(c % G_SW) * DR_PHL + c / G_SW] = IN_X(LD(xp, p + j));
        }
    }
    for (int rr = 0; rr < G_RB; ++rr) {
        const int oh = r0 + rr;
        if (oh >= G_OH) break;
        const float* base = pl + rr * G_SH * DR_RL;
        const size_t o = ((size_t)z * G_OH + oh) * G_OW;
        for (int ch = 0; ch < G_NCH; ++ch) {
            float8 acc[G_CV];
            #pragma unroll
            for (int v = 0; v < G_CV; ++v) acc[v] = (float8)(b);
            const float* src = base + ch * G_CV * 8;
            #pragma unroll
            for (int kh = 0; kh < G_KH; ++kh) {
                #pragma unroll
                for (int kw = 0; kw < G_KW; ++kw) {
                    const float wv = wk[kh * G_KW + kw];
                    const int q = kw * G_DW % G_SW, at = kw * G_DW / G_SW;
                    const float* tap = src + kh * G_DH * DR_RL + q * DR_PHL + at;
                    #pragma unroll
                    for (int v = 0; v < G_CV; ++v) acc[v] += wv * PLD8(tap + 8 * v);
                }
            }
            #pragma unroll
            for (int v = 0; v < G_CV; ++v) {
                const int ow0 = (ch * G_CV + v) * 8;
                const float8 r = act8(acc[v], slope, lo, hi);
                if (ow0 + 8 <= G_OW) {
                    ST(y, o + ow0, r.s0); ST(y, o + ow0 + 1, r.s1); ST(y, o + ow0 + 2, r.s2);
                    ST(y, o + ow0 + 3, r.s3); ST(y, o + ow0 + 4, r.s4); ST(y, o + ow0 + 5, r.s5);
                    ST(y, o + ow0 + 6, r.s6); ST(y, o + ow0 + 7, r.s7);
                } else {
                    float t[8] __attribute__((aligned(32)));
                    *(float8*)t = r;
                    for (int j = 0; j < 8 && ow0 + j < G_OW; ++j) ST(y, o + ow0 + j, t[j]);
                }
            }
        }
    }
}
#endif

// B of a product packed for gemm_cpu's B_PACKED: [column blocks][K][NBLK] per batch entry,
// zero where a column is past N or a tap falls in the padding. CONV: a block is NBLK outputs
// of one output row and B the implicit im2col of gemm_cpu's CONV path (cp, ktab as there);
// else B is plain, (k, n) at k * sbk + n. A work-item writes one block's taps k0 .. k0 + KC:
// one vector load per tap inside the input row, the same load with the lanes outside the row
// zeroed at its edges, a checked gather where that load would leave the image's channels.
// Global (blocks, ceil(K / KC), batch).
#define KC 32
#ifndef NBLK
#define NBLK 16
#endif
#define LD8(b, i) LDS8(b, i, 1)
#ifdef HETLAB_BOUNDS  // a vector store, its first and last index checked
#define ST8(b, i, v) (HL_OK(b, (i), 1) && HL_OK(b, (i) + 7, 1) ? (void)(*(__global float8*)((b) + (i)) = (v)) : (void)0)
#else
#define ST8(b, i, v) (*(__global float8*)((b) + (i)) = (v))
#endif
__kernel void pack_b(__global const float* B, const int sbk, const int N, const int K,
                     __global const int4* offs, __global float* P, __constant int* cp,
                     __global const int4* ktab HL_ARGS HL_N(B) HL_N(offs) HL_N(P) HL_N(ktab))
{
    const int blk = get_global_id(0), k0 = get_global_id(1) * KC, b = get_global_id(2);
    const int blocks = get_global_size(0);
    if (k0 >= K) return;
    VIEW(__global const float*, Bb, B, LD(offs, b).y);
    VIEW(__global float*, Pb, P, ((size_t)b * blocks + blk) * K * NBLK);
    const int k1 = min(K, k0 + KC);
    float t[NBLK] __attribute__((aligned(32)));
#ifdef CONV
    const int H = cp[0], W = cp[1], OW = cp[2];
    const int SH = cp[5], SW = cp[6], PH = cp[7], PW = cp[8];
    const int BW = (OW + NBLK - 1) / NBLK;
    const int oh = blk / BW, ow0 = (blk - oh * BW) * NBLK;
    const int ih0 = oh * SH - PH, iw0 = ow0 * SW - PW;
    const int span = (NBLK - 1) * SW, plane = K / (cp[3] * cp[4]) * H * W;
    const int8 lane = (int8)(0, 1, 2, 3, 4, 5, 6, 7) * SW;
    for (int k = k0; k < k1; ++k) {
        const int4 tk = LD(ktab, k);
        const int ih = ih0 + tk.y, iw = iw0 + tk.z, p = tk.x + ih0 * W + iw0;
        float8 v[NBLK / 8];
        if (ih < 0 || ih >= H) {
            #pragma unroll
            for (int u = 0; u < NBLK / 8; ++u) v[u] = (float8)(0.0f);
        } else if (iw >= 0 && iw + span < W) {
            #pragma unroll
            for (int u = 0; u < NBLK / 8; ++u)
                v[u] = SW == 1 ? LD8(Bb, p + 8 * u) : LDS8(Bb, p + 8 * u * SW, SW);
        } else if (p >= 0 && p + span < plane) {
            #pragma unroll
            for (int u = 0; u < NBLK / 8; ++u) {
                const int8 c = (int8)(iw + 8 * u * SW) + lane;
                v[u] = select((float8)(0.0f), LDS8(Bb, p + 8 * u * SW, SW), (c >= 0) & (c < W));
            }
        } else {
            #pragma unroll
            for (int j = 0; j < NBLK; ++j) {
                const int wj = iw + j * SW;
                t[j] = wj >= 0 && wj < W ? LD(Bb, p + j * SW) : 0.0f;
            }
            #pragma unroll
            for (int u = 0; u < NBLK / 8; ++u) v[u] = *(float8*)(t + 8 * u);
        }
        #pragma unroll
        for (int u = 0; u < NBLK / 8; ++u) ST8(Pb, k * NBLK + 8 * u, v[u]);
    }
#else
    const int n0 = blk * NBLK, full = n0 + NBLK <= N;
    for (int k = k0; k < k1; ++k) {
        #pragma unroll
        for (int u = 0; u < NBLK / 8; ++u) {
            float8 v;
            if (full) {
                v = LD8(Bb, k * sbk + n0 + 8 * u);
            } else {
                #pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const int n = n0 + 8 * u + j;
                    t[j] = n < N ? LD(Bb, k * sbk + n) : 0.0f;
                }
                v = *(float8*)t;
            }
            ST8(Pb, k * NBLK + 8 * u, v);
        }
    }
#endif
}
