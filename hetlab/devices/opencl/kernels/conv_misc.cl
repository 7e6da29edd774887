// Direct convolutions that do not map well onto the tiled GEMM (depthwise, transposed),
// Resize and the LSTM cell. OpenCL 1.2 C.

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

// Depthwise conv (one input channel per group, `mult` outputs per group), NCHW.
// cp = [H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, Cin, Cout]. Global (OW, OH, N*Cout).
__kernel void depthwise(__global const float* x, __global const float* w,
                        __global const float* bias, const int has_bias, __global float* y,
                        __constant int* cp, const float slope, const float lo, const float hi)
{
    const int ow = get_global_id(0), oh = get_global_id(1), z = get_global_id(2);
    const int H = cp[0], W = cp[1], OH = cp[2], OW = cp[3];
    if (ow >= OW || oh >= OH) return;
    const int KH = cp[4], KW = cp[5], SH = cp[6], SW = cp[7], PH = cp[8], PW = cp[9];
    const int DH = cp[10], DW = cp[11], Cin = cp[12], Cout = cp[13];
    const int co = z % Cout, nb = z / Cout;
    const int ci = co / (Cout / Cin);
    __global const float* xp = x + ((size_t)nb * Cin + ci) * H * W;
    __global const float* wp = w + co * KH * KW;
    float acc = has_bias ? bias[co] : 0.0f;
    for (int kh = 0; kh < KH; ++kh) {
        const int ih = oh * SH - PH + kh * DH;
        if (ih < 0 || ih >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
            const int iw = ow * SW - PW + kw * DW;
            if (iw >= 0 && iw < W) acc = mad(xp[ih * W + iw], wp[kh * KW + kw], acc);
        }
    }
    y[((size_t)z * OH + oh) * OW + ow] = act(acc, slope, lo, hi);
}

// ConvTranspose as a gather: y[n,co,oh,ow] = b[co] + sum x[n,ci,ih,iw] * w[ci,co_g,kh,kw]
// over oh = ih*SH - PH + kh*DH. cp = [H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW, Cin,
// Cout, groups]. Global (OW, OH, N*Cout).
__kernel void conv_transpose(__global const float* x, __global const float* w,
                             __global const float* bias, const int has_bias,
                             __global float* y, __constant int* cp,
                             const float slope, const float lo, const float hi)
{
    const int ow = get_global_id(0), oh = get_global_id(1), z = get_global_id(2);
    const int H = cp[0], W = cp[1], OH = cp[2], OW = cp[3];
    if (ow >= OW || oh >= OH) return;
    const int KH = cp[4], KW = cp[5], SH = cp[6], SW = cp[7], PH = cp[8], PW = cp[9];
    const int DH = cp[10], DW = cp[11], Cin = cp[12], Cout = cp[13], G = cp[14];
    const int co = z % Cout, nb = z / Cout;
    const int cog = Cout / G, cig = Cin / G;
    const int g = co / cog, cl = co - g * cog;
    float acc = has_bias ? bias[co] : 0.0f;
    for (int kh = 0; kh < KH; ++kh) {
        const int th = oh + PH - kh * DH;
        if (th < 0 || th % SH) continue;
        const int ih = th / SH;
        if (ih >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
            const int tw = ow + PW - kw * DW;
            if (tw < 0 || tw % SW) continue;
            const int iw = tw / SW;
            if (iw >= W) continue;
            for (int c = 0; c < cig; ++c) {
                const int ci = g * cig + c;
                acc = mad(x[(((size_t)nb * Cin + ci) * H + ih) * W + iw],
                          w[((ci * cog + cl) * KH + kh) * KW + kw], acc);
            }
        }
    }
    y[((size_t)z * OH + oh) * OW + ow] = act(acc, slope, lo, hi);
}

// Source coordinate of an output index along one axis (ONNX Resize).
// ctm: 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel, 4 tf_half_pixel_for_nn
inline float src_coord(int o, float scale, int in_len, int out_len, int ctm) {
    switch (ctm) {
        case 1: return o / scale;
        case 2: return out_len > 1 ? o * (float)(in_len - 1) / (float)(out_len - 1) : 0.0f;
        case 3: return out_len > 1 ? (o + 0.5f) / scale - 0.5f : 0.0f;
        case 4: return (o + 0.5f) / scale;
        default: return (o + 0.5f) / scale - 0.5f;
    }
}

// nearest_mode: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
inline int nearest(float c, int nm, int in_len) {
    int i;
    switch (nm) {
        case 1: i = (int)floor(c + 0.5f); break;
        case 2: i = (int)floor(c); break;
        case 3: i = (int)ceil(c); break;
        default: i = (c == floor(c) + 0.5f) ? (int)floor(c) : (int)round(c); break;
    }
    return clamp(i, 0, in_len - 1);
}

// Resize of the last two axes of planes H x W -> OH x OW. Global (OW, OH, planes).
// mode: 0 nearest, 1 linear. rp = [H, W, OH, OW, ctm, nearest_mode]; scales sh, sw.
__kernel void resize2d(__global const float* x, __global float* y, __constant int* rp,
                       const float sh, const float sw, const int mode)
{
    const int ow = get_global_id(0), oh = get_global_id(1), p = get_global_id(2);
    const int H = rp[0], W = rp[1], OH = rp[2], OW = rp[3], ctm = rp[4], nm = rp[5];
    if (ow >= OW || oh >= OH) return;
    __global const float* xp = x + (size_t)p * H * W;
    float ch = src_coord(oh, sh, H, OH, ctm), cw = src_coord(ow, sw, W, OW, ctm);
    float v;
    if (mode == 0) {
        v = xp[nearest(ch, nm, H) * W + nearest(cw, nm, W)];
    } else {
        ch = clamp(ch, 0.0f, (float)(H - 1));
        cw = clamp(cw, 0.0f, (float)(W - 1));
        const int h0 = (int)floor(ch), w0 = (int)floor(cw);
        const int h1 = min(h0 + 1, H - 1), w1 = min(w0 + 1, W - 1);
        const float fh = ch - h0, fw = cw - w0;
        v = (1 - fh) * ((1 - fw) * xp[h0 * W + w0] + fw * xp[h0 * W + w1]) +
            fh * ((1 - fw) * xp[h1 * W + w0] + fw * xp[h1 * W + w1]);
    }
    y[((size_t)p * OH + oh) * OW + ow] = v;
}

// One LSTM step: z = [B, 4H] gate pre-activations in ONNX order (i, o, f, c);
// c (in place) and h out: h[hoff + b*Hd + j]. Global (Hd, B).
__kernel void lstm_cell(__global const float* z, __global float* c, __global float* h,
                        const int Hd, const int hoff)
{
    const int j = get_global_id(0), b = get_global_id(1);
    if (j >= Hd) return;
    __global const float* zb = z + b * 4 * Hd;
    const float ig = 1.0f / (1.0f + exp(-zb[j]));
    const float og = 1.0f / (1.0f + exp(-zb[Hd + j]));
    const float fg = 1.0f / (1.0f + exp(-zb[2 * Hd + j]));
    const float gg = tanh(zb[3 * Hd + j]);
    const float cn = fg * c[b * Hd + j] + ig * gg;
    c[b * Hd + j] = cn;
    h[hoff + b * Hd + j] = og * tanh(cn);
}
