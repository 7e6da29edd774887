// Quantized ops: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
// ConvInteger, the requantizing QLinearMatMul and QLinearConv, and the integer products of
// onnxruntime's contrib ops that end in float32. OpenCL 1.2 C.
//
// Element types come as build options naming U8 (uint8), I8 (int8) or int: TX the quantized
// input, TW the second operand (weights, B), TY the quantized output. Integer products
// accumulate in int32, as onnxruntime's kernels do. Rounding is to nearest, ties to even
// (rint), the rounding ONNX specifies and onnxruntime's CPU kernels use.
//
// Per-axis parameters: element i's parameter index is (i / inner) % C (C = 1: per tensor).

#ifdef __OPENCL_VERSION__
#define U8 uchar
#define I8 char
#else
#define U8 unsigned char
#define I8 signed char
#endif

// one program holds every kernel: types a build does not name default to uint8
#ifndef TX
#define TX U8
#endif
#ifndef TW
#define TW U8
#endif
#ifndef TY
#define TY U8
#endif

#define WG 256

// y = saturate(rint(x / scale) + zp): QuantizeLinear, and DynamicQuantizeLinear's second
// launch (scale and zero point then come from its first). The division is a true division,
// as in onnxruntime (a reciprocal multiply moves ties). x starts at element xoff of its buffer.
__kernel void quantize(__global const float* x, const int xoff, __global const float* scale,
                       __global const TY* zp, const int has_zp, __global TY* y, const int n,
                       const int inner, const int C, const float qmin,
                       const float qmax HL_ARGS HL_N(x) HL_N(scale) HL_N(zp) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    VIEW(__global const float*, xv, x, xoff);
    const int c = (i / inner) % C;
    const float z = has_zp ? (float)LD(zp, c) : 0.0f;
    const float v = clamp(rint(LD(xv, i) / LD(scale, c)) + z, qmin, qmax);
    ST(y, i, (TY)(int)v);
}

// y = (float)((int)x - (int)zp) * scale; x from element xoff of its buffer, as in quantize
__kernel void dequantize(__global const TX* x, const int xoff, __global const float* scale,
                         __global const TX* zp, const int has_zp, __global float* y, const int n,
                         const int inner,
                         const int C HL_ARGS HL_N(x) HL_N(scale) HL_N(zp) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    VIEW(__global const TX*, xv, x, xoff);
    const int c = (i / inner) % C;
    const int z = has_zp ? (int)LD(zp, c) : 0;
    ST(y, i, (float)((int)LD(xv, i) - z) * LD(scale, c));
}

// DynamicQuantizeLinear's zero point of a range from mn (<= 0) with scale s
inline float dynamic_zero_point(const float mn, const float s)
{
    return rint(clamp(0.0f - mn / s, 0.0f, 255.0f));
}

// DynamicQuantizeLinear's parameters, one work-group of WG: the range of x widened to
// include 0, scale = (max - min) / 255 (1 when the range is empty), zero point =
// rint(clamp(0 - min / scale, 0, 255)). x: the n elements from element xoff of its buffer.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void dynamic_qparams(__global const float* x, const int xoff, const int n,
                     __global float* scale, __global U8* zp HL_ARGS HL_N(x) HL_N(scale) HL_N(zp))
{
    __local float lo[WG];
    __local float hi[WG];
    const int l = get_local_id(0);
    VIEW(__global const float*, xv, x, xoff);
    float a = 0.0f, b = 0.0f;
    for (int i = l; i < n; i += WG) {
        const float v = LD(xv, i);
        a = fmin(a, v);
        b = fmax(b, v);
    }
    lo[l] = a;
    hi[l] = b;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (l < s) {
            lo[l] = fmin(lo[l], lo[l + s]);
            hi[l] = fmax(hi[l], hi[l + s]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) {
        const float mn = lo[0], mx = hi[0];
        const float s = mx == mn ? 1.0f : (mx - mn) / 255.0f;
        ST(scale, 0, s);
        ST(zp, 0, (U8)(int)dynamic_zero_point(mn, s));
    }
}

// The integer products end in one of three epilogues, OUTPUT(acc, i, j) of the sum acc at row
// (or batch) i, column (or output channel) j:
// - none: the int32 sum (MatMulInteger, ConvInteger);
// - -DREQUANT (QLinearMatMul, QLinearConv): the sum, plus an int32 bias where given,
//   requantized as onnxruntime's MlasRequantizeOutput does: saturate(rint((float)sum * rs[j])
//   + yz), rs the combined scale (x_scale * w_scale[j] / y_scale, computed in float32 by the
//   host) per tensor (rs_n = 1) or per column/channel j;
// - -DTOFLOAT (onnxruntime's MatMulIntegerToFloat, DynamicQuantizeMatMul and the products of
//   DynamicQuantizeLSTM): as onnxruntime's MLAS_QGEMM_SCALE_BIAS_OUTPUT_PROCESSOR does,
//   (float)sum * (as[0] * bs[j]), bs per tensor (bs_n = 1) or per column, then plus
//   add[add_off + i * add_rs + j] where has_add (a step's input projection), then plus
//   bias[j] where has_bias; each product and sum rounded on its own (mlas.h's MUL_RN, ADD_RN).
#if defined(REQUANT)
#define OUT_T TY
#define EPI_ARGS , __global const float* rs, const int rs_n, __global const int* bias, \
    const int has_bias, __global const TY* yz, const int has_yz, const float qmin, \
    const float qmax HL_N(rs) HL_N(bias) HL_N(yz)
#define OUTPUT(acc, i, j) \
    (TY)(int)clamp(rint((float)((acc) + (has_bias ? LD(bias, j) : 0)) * \
                        LD(rs, rs_n == 1 ? 0 : (j))) + (has_yz ? (float)LD(yz, 0) : 0.0f), \
                   qmin, qmax)
#elif defined(TOFLOAT)
#define OUT_T float
#define EPI_ARGS , __global const float* as, __global const float* bs, const int bs_n, \
    __global const float* add, const int add_off, const int add_rs, const int has_add, \
    __global const float* bias, const int has_bias HL_N(as) HL_N(bs) HL_N(add) HL_N(bias)
#define OUTPUT(acc, i, j) \
    scaled_sum((acc), LD(as, 0) * LD(bs, bs_n == 1 ? 0 : (j)), has_add, \
               has_add ? LD(add, add_off + (i) * add_rs + (j)) : 0.0f, has_bias, \
               has_bias ? LD(bias, j) : 0.0f)
inline float scaled_sum(const int acc, const float scale, const int has_add, const float add,
                        const int has_bias, const float bias)
{
    float y = MUL_RN((float)acc, scale);
    if (has_add) y = ADD_RN(y, add);
    if (has_bias) y = ADD_RN(y, bias);
    return y;
}
#else
#define OUT_T int
#define EPI_ARGS
#define OUTPUT(acc, i, j) (acc)
#endif

// MatMulInteger: c[m, n] = the int32 sum over k of (a[m, k] - za) * (b[k, n] - zb). za is
// per tensor (za_n = 1) or per row (za_n = M); zb per tensor (zb_n = 1) or per column
// (zb_n = N); 0 where absent (za_n = 0, zb_n = 0). offs: the (a, b, c) element offsets of
// each batch.
__kernel void matmul_integer(__global const TX* a, __global const TW* b,
                             __global const TX* za, const int za_n, __global const TW* zb,
                             const int zb_n, __global OUT_T* c, const int M, const int N,
                             const int K, __constant int* offs EPI_ARGS
                             HL_ARGS HL_N(a) HL_N(b) HL_N(za) HL_N(zb) HL_N(c))
{
    const int n = get_global_id(0), m = get_global_id(1), t = get_global_id(2);
    if (n >= N || m >= M) return;
    const int ia = offs[3 * t] + m * K, ib = offs[3 * t + 1] + n;
    const int z0 = za_n == 0 ? 0 : (int)LD(za, za_n == 1 ? 0 : m);
    const int z1 = zb_n == 0 ? 0 : (int)LD(zb, zb_n == 1 ? 0 : n);
    int acc = 0;
    for (int k = 0; k < K; ++k)
        acc += ((int)LD(a, ia + k) - z0) * ((int)LD(b, ib + k * N) - z1);
    ST(c, offs[3 * t + 2] + m * N + n, OUTPUT(acc, m, n));
}

// MatMulInteger for a long K: a work-group of TN outputs of one row m, each summed by KS
// work-items over every KS-th k and added up in local memory. Integer sums are exact, so
// the result is matmul_integer's bit for bit; the work spreads over KS times the items.
#define TN 16
#define KS 16
__kernel __attribute__((reqd_work_group_size(TN, KS, 1)))
void matmul_integer_split(__global const TX* a, __global const TW* b,
                          __global const TX* za, const int za_n, __global const TW* zb,
                          const int zb_n, __global OUT_T* c, const int M, const int N,
                          const int K, __constant int* offs EPI_ARGS
                          HL_ARGS HL_N(a) HL_N(b) HL_N(za) HL_N(zb) HL_N(c))
{
    __local int part[KS * TN];
    const int ln = get_local_id(0), lk = get_local_id(1);
    const int n = get_global_id(0), m = get_group_id(1), t = get_global_id(2);
    int acc = 0;
    if (n < N) {
        const int ia = offs[3 * t] + m * K, ib = offs[3 * t + 1] + n;
        const int z0 = za_n == 0 ? 0 : (int)LD(za, za_n == 1 ? 0 : m);
        const int z1 = zb_n == 0 ? 0 : (int)LD(zb, zb_n == 1 ? 0 : n);
        for (int k = lk; k < K; k += KS)
            acc += ((int)LD(a, ia + k) - z0) * ((int)LD(b, ib + k * N) - z1);
    }
    part[lk * TN + ln] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lk == 0 && n < N) {
        int sum = 0;
        for (int j = 0; j < KS; ++j)
            sum += part[j * TN + ln];
        ST(c, offs[3 * t + 2] + m * N + n, OUTPUT(sum, m, n));
    }
}

// ConvInteger, grouped 2-D: the int32 sum of (x - zx) * (w - zw[co]) over the window. A
// padded position counts as x = zx (it adds 0), as onnxruntime pads with the zero point.
// p: [H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, Cin, Cout, G].
__kernel void conv_integer(__global const TX* x, __global const TW* w, __global const TX* zx,
                           const int has_zx, __global const TW* zw, const int zw_n,
                           __global OUT_T* y, __constant int* p EPI_ARGS
                           HL_ARGS HL_N(x) HL_N(w) HL_N(zx) HL_N(zw) HL_N(y))
{
    const int ow = get_global_id(0), oh = get_global_id(1), z = get_global_id(2);
    const int H = p[0], W = p[1], OH = p[2], OW = p[3], KH = p[4], KW = p[5], Cout = p[13];
    if (ow >= OW || oh >= OH) return;
    const int nb = z / Cout, co = z % Cout;
    const int cig = p[12] / p[14], cog = Cout / p[14];
    const int z0 = has_zx ? (int)LD(zx, 0) : 0;
    const int z1 = zw_n == 0 ? 0 : (int)LD(zw, zw_n == 1 ? 0 : co);
    int acc = 0;
    for (int ci = 0; ci < cig; ++ci) {
        const int xb = (nb * p[12] + (co / cog) * cig + ci) * H * W;
        const int wb = (co * cig + ci) * KH * KW;
        for (int kh = 0; kh < KH; ++kh) {
            const int ih = oh * p[6] - p[8] + kh * p[10];
            if (ih < 0 || ih >= H) continue;
            for (int kw = 0; kw < KW; ++kw) {
                const int iw = ow * p[7] - p[9] + kw * p[11];
                if (iw < 0 || iw >= W) continue;
                acc += ((int)LD(x, xb + ih * W + iw) - z0) * ((int)LD(w, wb + kh * KW + kw) - z1);
            }
        }
    }
    ST(y, (z * OH + oh) * OW + ow, OUTPUT(acc, nb, co));
}
