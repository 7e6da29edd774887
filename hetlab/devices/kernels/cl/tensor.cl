// The operands of a library GEMM (cuBLAS on the tensor cores, ops/library.py): gathered into
// packed matrices and rounded to the precision's operand type in one pass.
//
//   pack:    dst[b][r][c] = OP(src[off[b] + r * sr + c * sc])   a strided matrix, packed
//   im2col:  dst[b][k][n] = OP(x[off[b] + ...])                 the im2col matrix of an NCHW
//            input, as gemm.cl's CONV reads it implicitly (the per-k table ktab and the conv
//            params cp: H, W, OW, KH, KW, SH, SW, PH, PW, DH, DW)
// dst's rows are ld elements apart (ld >= the row's length: rows aligned for the library),
// and its batch matrices rows * ld.
//
// Compile-time options:
//   OUT_F16   dst holds float16 bits (round to nearest, ties to even: half.cl's float_to_half)
//   OUT_BF16  dst holds bfloat16 bits (the top 16 bits of the float, rounded to nearest even)
//   PRE_RELU  the source is read through a Relu (a Relu before a Conv)
// Otherwise dst is float (a tf32 operand: cuBLAS rounds it on the tensor cores).
#include "half.cl"

#if defined(OUT_F16) || defined(OUT_BF16)
#define OPERAND U16
#else
#define OPERAND float
#endif

inline U16 float_to_bf16(float f) {
    const unsigned int u = F_BITS(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (U16)((u >> 16) | 0x40u);  // NaN stays quiet
    return (U16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // a carry may reach infinity: right
}

inline OPERAND to_operand(float v) {
#ifdef PRE_RELU
    v = v < 0.0f ? 0.0f : v;
#endif
#if defined(OUT_F16)
    return float_to_half(v);
#elif defined(OUT_BF16)
    return float_to_bf16(v);
#else
    return v;
#endif
}

// Global (C, R, batch).
__kernel void pack(__global const float* src, __global OPERAND* dst, __global const int* off,
                   const int R, const int C, const int sr, const int sc, const int ld
                   HL_ARGS HL_N(src) HL_N(dst) HL_N(off))
{
    const int c = get_global_id(0), r = get_global_id(1), b = get_global_id(2);
    if (c >= C || r >= R) return;
    ST(dst, (b * R + r) * ld + c, to_operand(LD(src, LD(off, b) + r * sr + c * sc)));
}

// Global (N, K, batch): N output positions (OH * OW), K = channels x KH x KW.
__kernel void im2col(__global const float* x, __global OPERAND* dst, __global const int* off,
                     const int K, const int N, const int ld, __constant int* cp,
                     __global const int4* ktab HL_ARGS HL_N(x) HL_N(dst) HL_N(off) HL_N(ktab))
{
    const int n = get_global_id(0), k = get_global_id(1), b = get_global_id(2);
    if (n >= N || k >= K) return;
    const int H = cp[0], W = cp[1], OW = cp[2];
    const int SH = cp[5], SW = cp[6], PH = cp[7], PW = cp[8];
    const int oh = n / OW, ow = n - (n / OW) * OW;
    const int ih0 = oh * SH - PH, iw0 = ow * SW - PW;
    const int4 t = LD(ktab, k);
    const int ih = ih0 + t.y, iw = iw0 + t.z;
    float v = 0.0f;
    if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = LD(x, LD(off, b) + t.x + ih0 * W + iw0);
    ST(dst, (b * K + k) * ld + n, to_operand(v));
}
