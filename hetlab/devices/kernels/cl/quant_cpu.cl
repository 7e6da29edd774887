// Integer products shaped for a CPU device (PoCL): MatMulInteger (and every op that ends in
// quant.cl's integer GEMM: QLinearMatMul, MatMulIntegerToFloat, DynamicQuantizeMatMul, the
// products of DynamicQuantizeLSTM) and ConvInteger/QLinearConv as an implicit-im2col GEMM.
// CPU-only (the CUDA backend does not build this file). OpenCL 1.2 C.
//
// gemm_cpu.cl's shape over integers: a work-item owns an MB x 16 block of the product, walks
// all of K itself, and uses no local memory and no barrier. Each operand has its zero point
// subtracted as it is loaded, so every product is an integer of magnitude at most 255 * 255.
// The matrix product sums them in int8 vectors (eight int32 lanes); the convolution in float8
// vectors over chunks of KCH = 256 values of k (exact: 256 such products stay below 2**24),
// each chunk's sums then added to int32 accumulators (there the float multiply-adds were the
// faster, in the matrix product the int32 ones). Either way the sums are those of quant.cl's
// kernels bit for bit. The epilogues (OUTPUT, EPI_ARGS: none, REQUANT, TOFLOAT) and the
// element types (TX, TW, TY) are quant.cl's.
#include "quant.cl"

#ifndef MB
#define MB 6
#endif
#define NBLK 16

// eight consecutive 8-bit values from element i as int32 lanes (one vector load: vload8 is a
// call in PoCL), and eight s apart
#define LDI8(b, i) ((int8)((int)LD(b, (i)), (int)LD(b, (i) + 1), (int)LD(b, (i) + 2), \
                           (int)LD(b, (i) + 3), (int)LD(b, (i) + 4), (int)LD(b, (i) + 5), \
                           (int)LD(b, (i) + 6), (int)LD(b, (i) + 7)))
#define LDSI8(b, i, s) ((int8)((int)LD(b, (i)), (int)LD(b, (i) + (s)), (int)LD(b, (i) + 2 * (s)), \
                               (int)LD(b, (i) + 3 * (s)), (int)LD(b, (i) + 4 * (s)), \
                               (int)LD(b, (i) + 5 * (s)), (int)LD(b, (i) + 6 * (s)), \
                               (int)LD(b, (i) + 7 * (s))))
// the block's rows += (A(m0 + i, k) - its zero point) * (b0, b1), in int8 vectors
#define ROWS_MAD(A, k) \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) { \
        const int8 av = (int8)((int)LD(A, arow[i] + (k)) - zrow[i]); \
        acc0[i] += av * b0; \
        acc1[i] += av * b1; \
    }
#define KCH 256
#define LDF8(b, i) ((float8)(LD(b, (i)), LD(b, (i) + 1), LD(b, (i) + 2), LD(b, (i) + 3), \
                             LD(b, (i) + 4), LD(b, (i) + 5), LD(b, (i) + 6), LD(b, (i) + 7)))
// the same in float8 vectors: f0, f1 (a chunk's sums, exact integers), cleared and added to
// the int32 accumulators per chunk
#define ROWS_FMAD(A, k) \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) { \
        const float8 av = (float8)(A_VAL(A, i, k)); \
        f0[i] += av * b0; \
        f1[i] += av * b1; \
    }
// A's value less its zero point, as a float: W_FLOAT (constant weights) has it precomputed
#if defined(W_FLOAT) && defined(A_PACKED)  // packed as [groups][row blocks][K][MB]
#define WT float
#define A_VAL(A, i, k) LD(A, (get_global_id(1) * K + (k)) * MB + (i))
#elif defined(W_FLOAT)
#define WT float
#define A_VAL(A, i, k) LD(A, arow[i] + (k))
#else
#define WT TW
#define A_VAL(A, i, k) ((float)((int)LD(A, arow[i] + (k)) - zrow[i]))
#endif
#define CLEAR_CHUNK \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) { \
        f0[i] = (float8)(0.0f); \
        f1[i] = (float8)(0.0f); \
    }
#define ADD_CHUNK \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) { \
        acc0[i] += convert_int8(f0[i]); \
        acc1[i] += convert_int8(f1[i]); \
    }
// write the block's first jn columns: OUTPUT(acc, row, column) at c[base + m * N + n0 + j]
// (ROW_OF and COL_OF name the epilogue's row and column of block row i, column j)
#define STORE_BLOCK(c, base, jn, ROW_OF, COL_OF) \
    _Pragma("unroll") for (int i = 0; i < MB; ++i) { \
        if (m0 + i >= M) break; \
        *(int8*)ct = acc0[i]; \
        *(int8*)(ct + 8) = acc1[i]; \
        for (int j = 0; j < (jn); ++j) \
            ST(c, (base) + (m0 + i) * N + n0 + j, OUTPUT(ct[j], ROW_OF, COL_OF)); \
    }

// matmul_integer's arguments: c = OUTPUT((a - za) @ (b - zb)) per batch.
__kernel void matmul_integer_cpu(__global const TX* a, __global const TW* b,
                                 __global const TX* za, const int za_n, __global const TW* zb,
                                 const int zb_n, __global OUT_T* c, const int M, const int N,
                                 const int K, __constant int* offs EPI_ARGS
                                 HL_ARGS HL_N(a) HL_N(b) HL_N(za) HL_N(zb) HL_N(c))
{
    const int n0 = get_global_id(0) * NBLK, m0 = get_global_id(1) * MB, t = get_global_id(2);
    if (n0 >= N || m0 >= M) return;
    VIEW(__global const TX*, ab, a, offs[3 * t]);
    VIEW(__global const TW*, bb, b, offs[3 * t + 1]);
    int arow[MB], zrow[MB];  // rows past M repeat the last row (their C is not written)
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        const int m = min(m0 + i, M - 1);
        arow[i] = m * K;
        zrow[i] = za_n == 0 ? 0 : (int)LD(za, za_n == 1 ? 0 : m);
    }
    int ct[NBLK] __attribute__((aligned(32)));
    int col[NBLK];  // columns past N repeat the last column
    for (int j = 0; j < NBLK; ++j) {
        col[j] = min(n0 + j, N - 1);
        ct[j] = zb_n == 0 ? 0 : (int)LD(zb, zb_n == 1 ? 0 : col[j]);
    }
    const int8 z0 = *(int8*)ct, z1 = *(int8*)(ct + 8);
    int8 acc0[MB], acc1[MB];
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        acc0[i] = (int8)(0);
        acc1[i] = (int8)(0);
    }
#ifdef B_PACKED  // b packed as [column blocks][K][NBLK] (ops/gemm_pack.py), zero past N
    VIEW(__global const TW*, bp, bb, get_global_id(0) * K * NBLK);
    for (int k = 0; k < K; ++k) {
        const int8 b0 = LDI8(bp, k * NBLK) - z0, b1 = LDI8(bp, k * NBLK + 8) - z1;
        ROWS_MAD(ab, k);
    }
#else
    if (n0 + NBLK <= N) {
        for (int k = 0; k < K; ++k) {
            const int p = k * N + n0;
            const int8 b0 = LDI8(bb, p) - z0, b1 = LDI8(bb, p + 8) - z1;
            ROWS_MAD(ab, k);
        }
    } else {
        for (int k = 0; k < K; ++k) {
            for (int j = 0; j < NBLK; ++j) ct[j] = (int)LD(bb, k * N + col[j]);
            const int8 b0 = *(int8*)ct - z0, b1 = *(int8*)(ct + 8) - z1;
            ROWS_MAD(ab, k);
        }
    }
#endif
    STORE_BLOCK(c, offs[3 * t + 2], min(NBLK, N - n0), m0 + i, n0 + j);
}

// ConvInteger and QLinearConv (conv_integer's arguments, p as there) as C[co, pos] = the sum
// over k = (ci, kh, kw) of (w[co, k] - zw[co]) * (x[ci, pos's tap k] - zx) per image and
// group: M = output channels of a group, N = OH * OW, K = its input channels * KH * KW; a
// padded tap adds 0 (onnxruntime pads with the zero point). ktab: gemm_shape.conv_table's
// per-k offsets. With W_FLOAT, w holds the constant weights less their zero points as
// floats (exact small integers), and zw is not read. A block's 16 columns are 16 outputs of one output row (a row's last block
// may hold fewer), so that its inputs at a tap are one vector load, or 16 strided ones,
// wherever the tap's row and the 16 inputs lie inside the image; a gather otherwise.
// Global (OH * ceil(OW/16), ceil(M/MB), images * groups).
#ifdef B_PACKED  // x: the inputs less their zero point, packed by pack_x
#define XT float
#else
#define XT TX
#endif
__kernel void conv_integer_cpu(__global const XT* x, __global const WT* w, __global const TX* zx,
                               const int has_zx, __global const TW* zw, const int zw_n,
                               __global OUT_T* y, __constant int* p,
                               __global const int4* ktab EPI_ARGS
                               HL_ARGS HL_N(x) HL_N(w) HL_N(zx) HL_N(zw) HL_N(y) HL_N(ktab))
{
    const int H = p[0], W = p[1], OH = p[2], OW = p[3], KH = p[4], KW = p[5];
    const int SH = p[6], SW = p[7], PH = p[8], PW = p[9], Cin = p[12], Cout = p[13], G = p[14];
    const int M = Cout / G, N = OH * OW, K = Cin / G * KH * KW;
    const int OWB = (OW + NBLK - 1) / NBLK, oh = get_global_id(0) / OWB;
    const int ow0 = (get_global_id(0) - oh * OWB) * NBLK, n0 = oh * OW + ow0;
    const int m0 = get_global_id(1) * MB, t = get_global_id(2);
    if (oh >= OH || m0 >= M) return;
    const int nb = t / G, g = t % G, jn = min(NBLK, OW - ow0);
#ifdef A_PACKED
    VIEW(__global const WT*, wb, w, g * ((M + MB - 1) / MB) * MB * K);
#else
    VIEW(__global const WT*, wb, w, g * M * K);
#endif
#ifdef B_PACKED
    VIEW(__global const float*, xb, x, ((size_t)t * OH * OWB + get_global_id(0)) * K * NBLK);
#else
    VIEW(__global const TX*, xb, x, (nb * Cin + g * (Cin / G)) * H * W);
#endif
    const int zxv = has_zx ? (int)LD(zx, 0) : 0;
    int arow[MB], zrow[MB];
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        const int m = min(m0 + i, M - 1);
        arow[i] = m * K;
        zrow[i] = zw_n == 0 ? 0 : (int)LD(zw, zw_n == 1 ? 0 : g * M + m);
    }
    const int ih0 = oh * SH - PH, iw0 = ow0 * SW - PW;  // the block's first input
    const int full = jn == NBLK, span = (NBLK - 1) * SW;
    int8 acc0[MB], acc1[MB];
    #pragma unroll
    for (int i = 0; i < MB; ++i) {
        acc0[i] = (int8)(0);
        acc1[i] = (int8)(0);
    }
    int ct[NBLK] __attribute__((aligned(32)));
    float8 f0[MB], f1[MB];
    for (int kc = 0; kc < K; kc += KCH) {
        const int ke = min(K, kc + KCH);
        CLEAR_CHUNK;
#ifdef B_PACKED
        for (int k = kc; k < ke; ++k) {
            const float8 b0 = LDF8(xb, k * NBLK), b1 = LDF8(xb, k * NBLK + 8);
            ROWS_FMAD(wb, k);
        }
#else
        for (int k = kc; k < ke; ++k) {
            int8 i0, i1;
            const int4 tk = LD(ktab, k);
            const int ih = ih0 + tk.y, iw = iw0 + tk.z;
            if (full && ih >= 0 && ih < H && iw >= 0 && iw + span < W) {
                const int q = tk.x + ih0 * W + iw0;
                if (SW == 1) {
                    i0 = LDI8(xb, q) - zxv;
                    i1 = LDI8(xb, q + 8) - zxv;
                } else {  // strided: no bounds to check inside the row
                    i0 = LDSI8(xb, q, SW) - zxv;
                    i1 = LDSI8(xb, q + 8 * SW, SW) - zxv;
                }
            } else {  // at the image's edges, and past the row's last output (jn < 16)
                for (int j = 0; j < NBLK; ++j) {
                    const int wj = iw + j * SW;
                    ct[j] = j < jn && ih >= 0 && ih < H && wj >= 0 && wj < W
                                ? (int)LD(xb, tk.x + ih0 * W + iw0 + j * SW) - zxv : 0;
                }
                i0 = *(int8*)ct;
                i1 = *(int8*)(ct + 8);
            }
            const float8 b0 = convert_float8(i0), b1 = convert_float8(i1);
            ROWS_FMAD(wb, k);
        }
#endif
        ADD_CHUNK;
    }
    STORE_BLOCK(y, (nb * Cout + g * M) * N, jn, nb, g * M + m0 + i);
}

// QuantizeLinear and DequantizeLinear (quant.cl's `quantize` and `dequantize`, same
// arguments) with QW consecutive elements per work-item: a block whose elements share one
// parameter index (per tensor, or inside one run of `inner`) as float8 vectors, the same
// operations lane by lane; any other block element by element. Global ceil(n / QW).
#define QW 16
#define ONE_PARAM(i0) \
    ((i0) + QW <= n && (C == 1 || ((i0) + QW - 1) / inner == (i0) / inner))

__kernel void quantize_cpu(__global const float* x, const int xoff, __global const float* scale,
                           __global const TY* zp, const int has_zp, __global TY* y, const int n,
                           const int inner, const int C, const float qmin,
                           const float qmax HL_ARGS HL_N(x) HL_N(scale) HL_N(zp) HL_N(y))
{
    const int i0 = get_global_id(0) * QW;
    if (i0 >= n) return;
    VIEW(__global const float*, xv, x, xoff);
    if (ONE_PARAM(i0)) {
        const int c = (i0 / inner) % C;
        const float s = LD(scale, c), z = has_zp ? (float)LD(zp, c) : 0.0f;
        float t[QW] __attribute__((aligned(32)));
        *(float8*)t = clamp(rint(LDF8(xv, i0) / s) + z, qmin, qmax);
        *(float8*)(t + 8) = clamp(rint(LDF8(xv, i0 + 8) / s) + z, qmin, qmax);
        for (int j = 0; j < QW; ++j) ST(y, i0 + j, (TY)(int)t[j]);
        return;
    }
    for (int i = i0; i < min(n, i0 + QW); ++i) {
        const int c = (i / inner) % C;
        const float z = has_zp ? (float)LD(zp, c) : 0.0f;
        ST(y, i, (TY)(int)clamp(rint(LD(xv, i) / LD(scale, c)) + z, qmin, qmax));
    }
}

__kernel void dequantize_cpu(__global const TX* x, const int xoff, __global const float* scale,
                             __global const TX* zp, const int has_zp, __global float* y,
                             const int n, const int inner,
                             const int C HL_ARGS HL_N(x) HL_N(scale) HL_N(zp) HL_N(y))
{
    const int i0 = get_global_id(0) * QW;
    if (i0 >= n) return;
    VIEW(__global const TX*, xv, x, xoff);
    if (ONE_PARAM(i0)) {
        const int c = (i0 / inner) % C;
        const int z = has_zp ? (int)LD(zp, c) : 0;
        const float s = LD(scale, c);
        float t[QW] __attribute__((aligned(32)));
        *(float8*)t = convert_float8(LDI8(xv, i0) - z) * s;
        *(float8*)(t + 8) = convert_float8(LDI8(xv, i0 + 8) - z) * s;
        for (int j = 0; j < QW; ++j) ST(y, i0 + j, t[j]);
        return;
    }
    for (int i = i0; i < min(n, i0 + QW); ++i) {
        const int c = (i / inner) % C;
        const int z = has_zp ? (int)LD(zp, c) : 0;
        ST(y, i, (float)((int)LD(xv, i) - z) * LD(scale, c));
    }
}

// DynamicQuantizeLinear's parameters (quant.cl's `dynamic_qparams`) in two launches. First,
// work-item g takes the range of elements [g * chunk, (g + 1) * chunk) of the n from xoff,
// widened to include 0, in float8 vectors, into part[2g] (min) and part[2g + 1] (max);
// then one work-item combines the parts. Minimum and maximum are exact in any order, so the
// parameters are dynamic_qparams' bit for bit.
__kernel void range_parts_cpu(__global const float* x, const int xoff, const int n,
                              const int chunk, __global float* part HL_ARGS HL_N(x) HL_N(part))
{
    const int g = get_global_id(0), b = min(n, g * chunk), e = min(n, b + chunk);
    VIEW(__global const float*, xv, x, xoff);
    float8 lo = (float8)(0.0f), hi = (float8)(0.0f);
    int i = b;
    for (; i + 8 <= e; i += 8) {
        const float8 v = LDF8(xv, i);
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
    const float4 lo4 = fmin(lo.lo, lo.hi), hi4 = fmax(hi.lo, hi.hi);
    float a = fmin(fmin(lo4.x, lo4.y), fmin(lo4.z, lo4.w));
    float c = fmax(fmax(hi4.x, hi4.y), fmax(hi4.z, hi4.w));
    for (; i < e; ++i) {
        a = fmin(a, LD(xv, i));
        c = fmax(c, LD(xv, i));
    }
    ST(part, 2 * g, a);
    ST(part, 2 * g + 1, c);
}

__kernel void dynamic_qparams_parts(__global const float* part, const int parts,
                                    __global float* scale,
                                    __global U8* zp HL_ARGS HL_N(part) HL_N(scale) HL_N(zp))
{
    float mn = 0.0f, mx = 0.0f;
    for (int g = 0; g < parts; ++g) {
        mn = fmin(mn, LD(part, 2 * g));
        mx = fmax(mx, LD(part, 2 * g + 1));
    }
    const float s = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    ST(scale, 0, s);
    ST(zp, 0, (U8)(int)dynamic_zero_point(mn, s));
}

// conv_integer_cpu's B for B_PACKED: per image and group, [column blocks][K][NBLK] of the
// inputs less their zero point as floats (exact small integers), zero at a padded tap and
// past the row's last output; the block and tap geometry is conv_integer_cpu's. A
// work-item writes one block's taps k0 .. k0 + 32. Global (OH * ceil(OW/16), ceil(K/32),
// images * groups) with work-groups of one block.
__kernel void pack_x(__global const TX* x, __global const TX* zx, const int has_zx,
                     __global float* P, __constant int* p, __global const int4* ktab
                     HL_ARGS HL_N(x) HL_N(zx) HL_N(P) HL_N(ktab))
{
    const int H = p[0], W = p[1], OH = p[2], OW = p[3], KH = p[4], KW = p[5];
    const int SH = p[6], SW = p[7], PH = p[8], PW = p[9], Cin = p[12], G = p[14];
    const int K = Cin / G * KH * KW, OWB = (OW + NBLK - 1) / NBLK;
    const int blk = get_global_id(0), k0 = get_global_id(1) * 32, t = get_global_id(2);
    const int oh = blk / OWB, ow0 = (blk - oh * OWB) * NBLK;
    if (k0 >= K || oh >= OH) return;
    const int nb = t / G, g = t % G, jn = min(NBLK, OW - ow0);
    VIEW(__global const TX*, xb, x, (nb * Cin + g * (Cin / G)) * H * W);
    VIEW(__global float*, pb, P, ((size_t)t * OH * OWB + blk) * K * NBLK);
    const int zxv = has_zx ? (int)LD(zx, 0) : 0;
    const int ih0 = oh * SH - PH, iw0 = ow0 * SW - PW;
    for (int k = k0; k < min(K, k0 + 32); ++k) {
        const int4 tk = LD(ktab, k);
        const int ih = ih0 + tk.y, iw = iw0 + tk.z;
        for (int j = 0; j < NBLK; ++j) {
            const int wj = iw + j * SW;
            const int in = j < jn && ih >= 0 && ih < H && wj >= 0 && wj < W;
            ST(pb, k * NBLK + j,
               in ? (float)((int)LD(xb, tk.x + ih0 * W + iw0 + j * SW) - zxv) : 0.0f);
        }
    }
}
