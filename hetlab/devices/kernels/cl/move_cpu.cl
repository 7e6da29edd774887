// Data movement, reductions, pooling and softmax shaped for a CPU device (PoCL); CPU-only
// (the CUDA backend does not build this file). OpenCL 1.2 C.
//
// PoCL runs a work-group as one loop on one thread and starts each group at a cost of
// microseconds. eltwise.cl's copy_nd finds both offsets of every element by a division per
// dimension, and pool.cl's reduce, softmax and pool2d use work-groups of 64 items with
// barriers (or one group per output) for what is, on a CPU, a short loop. Here a work-item
// walks a run of elements in order, with the same arithmetic per element as those kernels.
// A sum keeps their order too: 64 partial sums (value j into partial j % 64, in order), then
// their tree, as the work-group of 64 adds them, so the results are theirs bit for bit (a
// sum in another order moves an ulp, and a quantization step after it can move a whole step).

#define RL 64
// The partials' tree of pool.cl's work-group, in one work-item: sum (mode 0) or max (1) of
// the first `used` partials (the others hold the fold's identity, which changes nothing).
inline float tree(float* p, const int mode, const int used) {
    for (int s = RL / 2; s > 0; s >>= 1)
        for (int l = 0; l < s && l + s < used; ++l)
            p[l] = mode == 1 ? fmax(p[l], p[l + s]) : p[l] + p[l + s];
    return p[0];
}
#include "eltwise.cl"

#define EW 16

// eltwise.cl's copy_nd (same arguments): a work-item copies EW consecutive elements, its
// offsets found once and then stepped along the innermost dimension, found again only
// where a run of it ends. Global ceil(n / EW).
__kernel void copy_cpu(__global const DT* src, __global DT* dst, __constant int* meta,
                       const int n HL_ARGS HL_N(src) HL_N(dst))
{
    const int i0 = get_global_id(0) * EW;
    if (i0 >= n) return;
    const int len = meta[MAXD], sa = meta[6 + MAXD], sb = meta[12 + MAXD];
    const int e = min(n, i0 + EW);
    int i = i0;
    while (i < e) {
        int ia, ib;
        nd_offsets(meta, i, &ia, &ib);
        const int run = min(e, i + len - i % len);
        for (; i < run; ++i, ia += sa, ib += sb) ST(dst, ib, LD(src, ia));
    }
}

// The input offset of element q of an (up to 6-d) shape sh with strides st, nd dims used.
inline int rm_at(__constant int* sh, __constant int* st, const int nd, int q) {
    int off = 0;
    for (int d = 5; d >= 6 - nd; --d) {
        off += (q % sh[d]) * st[d];
        q /= sh[d];
    }
    return off;
}

// pool.cl's reduce (same meta block, mode and scale) for nout outputs: a work-item per
// output folds its R values, run by run of the innermost reduced dimension, in pool.cl's
// order.
__kernel void reduce_cpu(__global const float* x, __global float* y, __constant int* rm,
                         const int R, const int mode, const float scale, const int nout
                         HL_ARGS HL_N(x) HL_N(y))
{
    const int o = get_global_id(0);
    if (o >= nout) return;
    const int base = rm_at(rm + 1, rm + 7, rm[0], o);
    const int len = rm[19], st = rm[25];  // the innermost reduced dim (1 and 0 if none)
    float p[RL];
    for (int l = 0; l < RL; ++l) p[l] = mode == 1 ? -INFINITY : 0.0f;
    for (int j = 0; j < R; j += len) {
        int off = base + rm_at(rm + 14, rm + 20, rm[13], j);
        for (int k = 0; k < len; ++k, off += st) {
            const float u = LD(x, off);
            const float v = mode == 2 ? MUL_RN(u, u) : u;  // rounded as Pow(x, 2) rounds it
            const int l = (j + k) % RL;
            p[l] = mode == 1 ? fmax(p[l], v) : p[l] + v;
        }
    }
    ST(y, o, tree(p, mode, R) * scale);
}

// reduce.cl's reduce_more (same meta block and mode) for nout outputs: a work-item per
// output, its values folded in reduce.cl's order (log-sum-exp: their maximum first).
__kernel void reduce_more_cpu(__global const float* x, __global float* y, __constant int* rm,
                              const int R, const int mode, const int nout
                              HL_ARGS HL_N(x) HL_N(y))
{
    const int o = get_global_id(0);
    if (o >= nout) return;
    const int base = rm_at(rm + 1, rm + 7, rm[0], o);
    const int len = rm[19], st = rm[25];
    float m = 0.0f;
    if (mode == 3) {
        m = -INFINITY;
        for (int j = 0; j < R; j += len) {
            int off = base + rm_at(rm + 14, rm + 20, rm[13], j);
            for (int k = 0; k < len; ++k, off += st) m = fmax(m, LD(x, off));
        }
    }
    float p[RL];
    for (int l = 0; l < RL; ++l) p[l] = mode == 5 ? INFINITY : (mode == 6 ? 1.0f : 0.0f);
    for (int j = 0; j < R; j += len) {
        int off = base + rm_at(rm + 14, rm + 20, rm[13], j);
        for (int k = 0; k < len; ++k, off += st) {
            float v = LD(x, off);
            if (mode == 0) v = fabs(v);
            else if (mode == 1 || mode == 2) v = v * v;
            else if (mode == 3) v = exp(v - m);
            const int l = (j + k) % RL;
            p[l] = mode == 5 ? fmin(p[l], v) : (mode == 6 ? p[l] * v : p[l] + v);
        }
    }
    for (int s = RL / 2; s > 0; s >>= 1)  // reduce.cl's tree (rm_fold)
        for (int l = 0; l < s && l + s < R; ++l)
            p[l] = mode == 5 ? fmin(p[l], p[l + s]) : (mode == 6 ? p[l] * p[l + s] : p[l] + p[l + s]);
    float acc = p[0];
    if (mode == 1) acc = sqrt(acc);
    else if (mode == 3) acc = log(acc) + m;
    else if (mode == 4) acc = log(acc);
    ST(y, o, acc);
}

// pool.cl's softmax (same arguments) for `rows` rows: a work-item per row, its sum in
// pool.cl's order; the exponentials are written once and divided in place.
__kernel void softmax_cpu(__global const float* x, __global float* y, const int L,
                          const int inner, const int log_, const int rows
                          HL_ARGS HL_N(x) HL_N(y))
{
    const int row = get_global_id(0);
    if (row >= rows) return;
    const int base = (row / inner) * L * inner + row % inner;
    float m = -INFINITY;
    for (int j = 0; j < L; ++j) m = fmax(m, LD(x, base + j * inner));
    float p[RL];
    for (int l = 0; l < RL; ++l) p[l] = 0.0f;
    for (int j = 0; j < L; ++j) {
        const float e = exp(LD(x, base + j * inner) - m);
        p[j % RL] += e;
        if (!log_) ST(y, base + j * inner, e);
    }
    const float sum = tree(p, 0, L);
    if (log_) {
        const float ls = log(sum);
        for (int j = 0; j < L; ++j) ST(y, base + j * inner, LD(x, base + j * inner) - m - ls);
    } else {
        for (int j = 0; j < L; ++j) ST(y, base + j * inner, LD(y, base + j * inner) / sum);
    }
}

// pool.cl's pool2d (same pp block, mode and output offset) for `rows` = planes x OH output
// rows: a work-item per output row, the window's extent, strides and dilations built in
// (build options KH, KW, SH, SW, DH, DW: the window loops unroll; other builds omit it).
#ifdef KH
__kernel void pool2d_cpu(__global const float* x, __global float* y, __constant int* pp,
                         const int mode, const int yoff, const int rows HL_ARGS HL_N(x) HL_N(y))
{
    const int r = get_global_id(0);
    if (r >= rows) return;
    const int H = pp[0], W = pp[1], OH = pp[2], OW = pp[3], PH = pp[8], PW = pp[9];
    const int p = r / OH, oh = r % OH;
    const int h0 = oh * SH - PH;
    VIEW(__global const float*, xp, x, (size_t)p * H * W);
    for (int ow = 0; ow < OW; ++ow) {
        const int w0 = ow * SW - PW;
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
        ST(y, yoff + (size_t)r * OW + ow, mode == 0 ? acc : acc / (float)max(cnt, 1));
    }
}
#endif
