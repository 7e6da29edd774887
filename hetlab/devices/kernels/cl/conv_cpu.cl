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
