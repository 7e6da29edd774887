// Pooling, reductions, softmax and LRN. OpenCL 1.2 C.

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

// 2-D max/average pool over planes of H x W. pp = [H, W, OH, OW, KH, KW, SH, SW, PH, PW,
// DH, DW, PHE, PWE] (PHE/PWE: end pads, for count_include_pad windows). Global (OW, OH, planes).
// mode: 0 max, 1 average excluding pads, 2 average including pads.
__kernel void pool2d(__global const float* x, __global float* y, __constant int* pp,
                     const int mode, const int yoff HL_ARGS HL_N(x) HL_N(y))
{
    const int ow = get_global_id(0), oh = get_global_id(1), p = get_global_id(2);
    const int H = pp[0], W = pp[1], OH = pp[2], OW = pp[3];
    if (ow >= OW || oh >= OH) return;
    const int KH = pp[4], KW = pp[5], SH = pp[6], SW = pp[7], PH = pp[8], PW = pp[9];
    const int DH = pp[10], DW = pp[11];
    const int h0 = oh * SH - PH, w0 = ow * SW - PW;
    VIEW(__global const float*, xp, x, (size_t)p * H * W);
    float acc = mode == 0 ? -INFINITY : 0.0f;
    int cnt = 0;
    for (int kh = 0; kh < KH; ++kh) {
        const int ih = h0 + kh * DH;
        if (ih < 0 || ih >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
            const int iw = w0 + kw * DW;
            if (iw < 0 || iw >= W) continue;
            const float v = LD(xp, ih * W + iw);
            acc = mode == 0 ? fmax(acc, v) : acc + v;
            ++cnt;
        }
    }
    if (mode == 2) {  // window clipped to the padded extent
        const int he = min(h0 + (KH - 1) * DH + 1, H + pp[12]);
        const int we = min(w0 + (KW - 1) * DW + 1, W + pp[13]);
        cnt = ((he - h0 - 1) / DH + 1) * ((we - w0 - 1) / DW + 1);
    }
    ST(y, yoff + ((size_t)p * OH + oh) * OW + ow, mode == 0 ? acc : acc / (float)max(cnt, 1));
}

// Reduce: one work-group of RL items per output element. rm = [ndo, oshape[6], ostr[6],
// ndr, rshape[6], rstr[6]] (input strides of the kept and reduced dims, trailing nd used).
// mode: 0 sum, 1 max, 2 sum of squares. Result multiplied by `scale` (1/R for a mean).
#ifndef RL
#define RL 64
#endif
__kernel __attribute__((reqd_work_group_size(RL, 1, 1)))
void reduce(__global const float* x, __global float* y, __constant int* rm, const int R,
            const int mode, const float scale HL_ARGS HL_N(x) HL_N(y))
{
    __local float buf[RL];
    const int o = get_group_id(0), l = get_local_id(0);
    int base = 0, r = o;
    for (int d = 5; d >= 6 - rm[0]; --d) {
        const int c = r % rm[1 + d];
        r /= rm[1 + d];
        base += c * rm[7 + d];
    }
    float acc = mode == 1 ? -INFINITY : 0.0f;
    for (int j = l; j < R; j += RL) {
        int off = base, q = j;
        for (int d = 5; d >= 6 - rm[13]; --d) {
            const int c = q % rm[14 + d];
            q /= rm[14 + d];
            off += c * rm[20 + d];
        }
        const float u = LD(x, off);
        const float v = mode == 2 ? MUL_RN(u, u) : u;  // rounded as Pow(x, 2) rounds it
        acc = mode == 1 ? fmax(acc, v) : acc + v;
    }
    buf[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = RL / 2; s > 0; s >>= 1) {
        if (l < s) buf[l] = mode == 1 ? fmax(buf[l], buf[l + s]) : buf[l] + buf[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) ST(y, o, buf[0] * scale);
}

// Softmax over L elements of stride `inner`, rows (outer, inner). One work-group per row.
// log_ = 1 gives LogSoftmax.
__kernel __attribute__((reqd_work_group_size(RL, 1, 1)))
void softmax(__global const float* x, __global float* y, const int L, const int inner,
             const int log_ HL_ARGS HL_N(x) HL_N(y))
{
    __local float buf[RL];
    const int row = get_group_id(0), l = get_local_id(0);
    const int base = (row / inner) * L * inner + row % inner;
    float m = -INFINITY;
    for (int j = l; j < L; j += RL) m = fmax(m, LD(x, base + j * inner));
    buf[l] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = RL / 2; s > 0; s >>= 1) {
        if (l < s) buf[l] = fmax(buf[l], buf[l + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = buf[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int j = l; j < L; j += RL) sum += exp(LD(x, base + j * inner) - m);
    buf[l] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = RL / 2; s > 0; s >>= 1) {
        if (l < s) buf[l] += buf[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    sum = buf[0];
    for (int j = l; j < L; j += RL) {
        const float e = LD(x, base + j * inner) - m;
        ST(y, base + j * inner, log_ ? e - log(sum) : exp(e) / sum);
    }
}

// LRN across channels of NCHW (inner = H*W). Window [c - (size-1)/2, c + size/2].
__kernel void lrn(__global const float* x, __global float* y, const int n, const int C,
                  const int inner, const int size, const float alpha, const float beta,
                  const float bias HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = (i / inner) % C;
    const int base = i - c * inner;
    float s = 0.0f;
    const int c0 = max(0, c - (size - 1) / 2), c1 = min(C - 1, c + size / 2);
    for (int k = c0; k <= c1; ++k) {
        const float v = LD(x, base + k * inner);
        s += v * v;
    }
    ST(y, i, LD(x, i) / pow(bias + alpha / (float)size * s, beta));
}

// LayerNormalization over rows of L contiguous elements: y = (x - mean) / sqrt(var + eps)
// * scale[j] + bias[j] (scale/bias broadcast over rows). One work-group per row.
__kernel __attribute__((reqd_work_group_size(RL, 1, 1)))
void layernorm(__global const float* x, __global float* y, __global const float* scale,
               __global const float* bias, const int has_bias, const int L, const float eps
               HL_ARGS HL_N(x) HL_N(y) HL_N(scale) HL_N(bias))
{
    __local float buf[RL];
    const int row = get_group_id(0), l = get_local_id(0);
    VIEW(__global const float*, xr, x, (size_t)row * L);
    float s = 0.0f;
    for (int j = l; j < L; j += RL) s += LD(xr, j);
    buf[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = RL / 2; k > 0; k >>= 1) {
        if (l < k) buf[l] += buf[l + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float mean = buf[0] / L;
    barrier(CLK_LOCAL_MEM_FENCE);
    s = 0.0f;
    for (int j = l; j < L; j += RL) {
        const float d = LD(xr, j) - mean;
        s += d * d;
    }
    buf[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = RL / 2; k > 0; k >>= 1) {
        if (l < k) buf[l] += buf[l + k];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv = rsqrt(buf[0] / L + eps);
    for (int j = l; j < L; j += RL) {
        const float v = (LD(xr, j) - mean) * inv * LD(scale, j);
        ST(y, (size_t)row * L + j, has_bias ? v + LD(bias, j) : v);
    }
}
