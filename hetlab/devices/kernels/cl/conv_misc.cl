// Direct convolutions that do not map well onto the tiled GEMM (depthwise, transposed),
// Resize and the LSTM cell. OpenCL 1.2 C.

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

#ifdef PRE_RELU
#define IN_X(v) ((v) < 0.0f ? 0.0f : (v))
#else
#define IN_X(v) (v)
#endif

// Depthwise conv (one input channel per group, `mult` outputs per group), NCHW. With
// PRE_RELU, x is read through a Relu (a Relu before the Conv, applied as it loads).
// cp = [H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, Cin, Cout]. Global (OW, OH, N*Cout).
__kernel void depthwise(__global const float* x, __global const float* w,
                        __global const float* bias, const int has_bias, __global float* y,
                        __constant int* cp, const float slope, const float lo, const float hi
                        HL_ARGS HL_N(x) HL_N(w) HL_N(bias) HL_N(y))
{
    const int ow = get_global_id(0), oh = get_global_id(1), z = get_global_id(2);
    const int H = cp[0], W = cp[1], OH = cp[2], OW = cp[3];
    if (ow >= OW || oh >= OH) return;
    const int KH = cp[4], KW = cp[5], SH = cp[6], SW = cp[7], PH = cp[8], PW = cp[9];
    const int DH = cp[10], DW = cp[11], Cin = cp[12], Cout = cp[13];
    const int co = z % Cout, nb = z / Cout;
    const int ci = co / (Cout / Cin);
    VIEW(__global const float*, xp, x, ((size_t)nb * Cin + ci) * H * W);
    VIEW(__global const float*, wp, w, co * KH * KW);
    float acc = has_bias ? LD(bias, co) : 0.0f;
    for (int kh = 0; kh < KH; ++kh) {
        const int ih = oh * SH - PH + kh * DH;
        if (ih < 0 || ih >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
            const int iw = ow * SW - PW + kw * DW;
            if (iw >= 0 && iw < W) acc = mad(IN_X(LD(xp, ih * W + iw)), LD(wp, kh * KW + kw), acc);
        }
    }
    ST(y, ((size_t)z * OH + oh) * OW + ow, act(acc, slope, lo, hi));
}

// ConvTranspose as a gather: y[n,co,oh,ow] = b[co] + sum x[n,ci,ih,iw] * w[ci,co_g,kh,kw]
// over oh = ih*SH - PH + kh*DH. cp = [H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, Cin,
// Cout, groups]. Global (OW, OH, N*Cout).
__kernel void conv_transpose(__global const float* x, __global const float* w,
                             __global const float* bias, const int has_bias,
                             __global float* y, __constant int* cp,
                             const float slope, const float lo, const float hi
                             HL_ARGS HL_N(x) HL_N(w) HL_N(bias) HL_N(y))
{
    const int ow = get_global_id(0), oh = get_global_id(1), z = get_global_id(2);
    const int H = cp[0], W = cp[1], OH = cp[2], OW = cp[3];
    if (ow >= OW || oh >= OH) return;
    const int KH = cp[4], KW = cp[5], SH = cp[6], SW = cp[7], PH = cp[8], PW = cp[9];
    const int DH = cp[10], DW = cp[11], Cin = cp[12], Cout = cp[13], G = cp[14];
    const int co = z % Cout, nb = z / Cout;
    const int cog = Cout / G, cig = Cin / G;
    const int g = co / cog, cl = co - g * cog;
    float acc = has_bias ? LD(bias, co) : 0.0f;
    // undilated, only every S-th tap from the first whose (o + P - k) divides by S reaches o
    const int kh0 = DH == 1 ? (oh + PH) % SH : 0, kw0 = DW == 1 ? (ow + PW) % SW : 0;
    for (int kh = kh0; kh < KH; kh += DH == 1 ? SH : 1) {
        const int th = oh + PH - kh * DH;
        if (th < 0 || th % SH) continue;
        const int ih = th / SH;
        if (ih >= H) continue;
        for (int kw = kw0; kw < KW; kw += DW == 1 ? SW : 1) {
            const int tw = ow + PW - kw * DW;
            if (tw < 0 || tw % SW) continue;
            const int iw = tw / SW;
            if (iw >= W) continue;
            for (int c = 0; c < cig; ++c) {
                const int ci = g * cig + c;
                acc = mad(LD(x, (((size_t)nb * Cin + ci) * H + ih) * W + iw),
                          LD(w, ((ci * cog + cl) * KH + kh) * KW + kw), acc);
            }
        }
    }
    ST(y, ((size_t)z * OH + oh) * OW + ow, act(acc, slope, lo, hi));
}

// ConvTranspose's second half on a CPU device (ops/conv.py): the GEMM of W^T and x made
// cols[n][(co*KH + kh)*KW + kw][ih*W + iw], each input's contribution to each tap, and
// y[n,co,oh,ow] = act(b[co] + sum cols[...] over the taps with oh = ih*SH - PH + kh*DH).
// cp as conv_transpose's. Global (OW, OH, N*Cout).
__kernel void col2im(__global const float* cols, __global const float* bias,
                     const int has_bias, __global float* y, __constant int* cp,
                     const float slope, const float lo, const float hi
                     HL_ARGS HL_N(cols) HL_N(bias) HL_N(y))
{
    const int ow = get_global_id(0), oh = get_global_id(1), z = get_global_id(2);
    const int H = cp[0], W = cp[1], OH = cp[2], OW = cp[3];
    if (ow >= OW || oh >= OH) return;
    const int KH = cp[4], KW = cp[5], SH = cp[6], SW = cp[7], PH = cp[8], PW = cp[9];
    const int DH = cp[10], DW = cp[11], Cout = cp[13];
    VIEW(__global const float*, cz, cols, (size_t)z * KH * KW * H * W);
    float acc = has_bias ? LD(bias, z % Cout) : 0.0f;
    const int kh0 = DH == 1 ? (oh + PH) % SH : 0, kw0 = DW == 1 ? (ow + PW) % SW : 0;
    for (int kh = kh0; kh < KH; kh += DH == 1 ? SH : 1) {
        const int th = oh + PH - kh * DH;
        if (th < 0 || th % SH) continue;
        const int ih = th / SH;
        if (ih >= H) continue;
        for (int kw = kw0; kw < KW; kw += DW == 1 ? SW : 1) {
            const int tw = ow + PW - kw * DW;
            if (tw < 0 || tw % SW) continue;
            const int iw = tw / SW;
            if (iw < W) acc += LD(cz, ((kh * KW + kw) * H + ih) * W + iw);
        }
    }
    ST(y, ((size_t)z * OH + oh) * OW + ow, act(acc, slope, lo, hi));
}

// Resize of the last two axes of planes H x W -> OH x OW. Global (OW, OH, planes).
// The source of each output row and column is computed on the host, as onnxruntime computes
// it (ops/resize.py): rp = [H, W, OH, OW, mode (0 nearest, 1 linear)]; ti = [h0[OH], h1[OH],
// w0[OW], w1[OW]] source indices (h0 or w0 < 0: outside the crop, the value is ``extrap``);
// tf = [dy1[OH], dy2[OH], dx1[OW], dx2[OW]] linear weights of the second and first source.
__kernel void resize2d(__global const float* x, __global float* y, __constant int* rp,
                       __global const int* ti, __global const float* tf, const float extrap
                       HL_ARGS HL_N(x) HL_N(y) HL_N(ti) HL_N(tf))
{
    const int ow = get_global_id(0), oh = get_global_id(1), p = get_global_id(2);
    const int H = rp[0], W = rp[1], OH = rp[2], OW = rp[3], mode = rp[4];
    if (ow >= OW || oh >= OH) return;
    VIEW(__global const float*, xp, x, (size_t)p * H * W);
    const int h0 = LD(ti, oh), w0 = LD(ti, 2 * OH + ow);
    float v;
    if (h0 < 0 || w0 < 0) {
        v = extrap;
    } else if (mode == 0) {
        v = LD(xp, h0 * W + w0);
    } else {
        const int h1 = LD(ti, OH + oh), w1 = LD(ti, 2 * OH + OW + ow);
        const float dy1 = LD(tf, oh), dy2 = LD(tf, OH + oh);
        const float dx1 = LD(tf, 2 * OH + ow), dx2 = LD(tf, 2 * OH + OW + ow);
        v = dx2 * dy2 * LD(xp, h0 * W + w0) + dx1 * dy2 * LD(xp, h0 * W + w1) +
            dx2 * dy1 * LD(xp, h1 * W + w0) + dx1 * dy1 * LD(xp, h1 * W + w1);
    }
    ST(y, ((size_t)p * OH + oh) * OW + ow, v);
}

// One LSTM step: z = [B, 4H] gate pre-activations in ONNX order (i, o, f, c);
// c (in place) and h out: h[hoff + b*Hd + j]. Global (Hd, B). With -DMLAS_GATES the gates
// are onnxruntime's, bit for bit: MLAS's logistic and tanh (mlas.h), c * f + i * g and
// tanh(c) * o each product and sum rounded on its own, as its LSTM computes them; the
// quantized LSTM takes this build, whose next step quantizes h (an ulp can move a step).
#ifdef MLAS_GATES
#define SIGMOID(v) logistic(v)
#define TANH(v) mlas_tanh(v)
#else
#define SIGMOID(v) (1.0f / (1.0f + exp(-(v))))
#define TANH(v) tanh(v)
#endif
__kernel void lstm_cell(__global const float* z, __global float* c, __global float* h,
                        const int Hd, const int hoff HL_ARGS HL_N(z) HL_N(c) HL_N(h))
{
    const int j = get_global_id(0), b = get_global_id(1);
    if (j >= Hd) return;
    VIEW(__global const float*, zb, z, b * 4 * Hd);
    const float ig = SIGMOID(LD(zb, j));
    const float og = SIGMOID(LD(zb, Hd + j));
    const float fg = SIGMOID(LD(zb, 2 * Hd + j));
    const float gg = TANH(LD(zb, 3 * Hd + j));
#ifdef MLAS_GATES
    const float kept = MUL_RN(LD(c, b * Hd + j), fg);
    const float added = MUL_RN(ig, gg);
    const float cn = ADD_RN(kept, added);
    const float th = TANH(cn);
    ST(c, b * Hd + j, cn);
    ST(h, hoff + b * Hd + j, MUL_RN(th, og));
#else
    const float cn = fg * LD(c, b * Hd + j) + ig * gg;
    ST(c, b * Hd + j, cn);
    ST(h, hoff + b * Hd + j, og * TANH(cn));
#endif
}
