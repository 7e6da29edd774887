// Whole-sequence recurrences for a GPU: ONNX's LSTM, GRU and RNN and onnxruntime's
// DynamicQuantizeLSTM (at the end), every step in one launch. OpenCL 1.2 C; the CUDA backend
// builds it too (cuda/source.py: __local, barrier and reqd_work_group_size as reduce.cl and
// quant.cl use them). ops/rnn_gpu.py and ops/contrib_lstm.py launch them.
//
// One work-group per direction and batch row: global (WG, B, D), local (WG, 1, 1), built
// with -DHD=<hidden size> -DWG=<work-group size>, WG >= G (the gate columns, GATES * HD).
// h lives in local memory. A step: work-item l sums gate column l of h_{t-1} x R^T (k in
// order; rt = R^T as [D, HD, G], so the work-items of one k read adjacent columns) and adds
// the column's input projection, zl[l] = xw + sum; a barrier; work-item j < HD runs unit j's
// cell and writes h; a barrier. xw = [T, B, D, G] is the input projection of every step and
// direction with the biases folded in (rnn_cpu.py's GEMM); a work-item loads its column of
// the next step while the present one runs, so that a step need not wait for device memory.
// The gates are MLAS's logistic and tanh, rounded as rnn_cpu.cl's cells (onnxruntime's), on
// the same pre-activations: xw + sum, then the peephole's product.
//
// h0 and c0 are [D, B, HD] (zeros where the node has none); y = [T, D, B, HD]; yh and c (the
// final states) are [D, B, HD]. rev has bit d set where direction d runs backward.

#ifndef HD
#define HD 32
#endif
#ifndef WG
#define WG 128
#endif
#ifndef LBR
#define LBR 0
#endif

#define SEQ_ARGS                                                                            \
    __global const float *xw, __global const float *rt, __global const float *h0,          \
        __global float *y, __global float *yh, const int T, const int B, const int rev
#define SEQ_N HL_N(xw) HL_N(rt) HL_N(h0) HL_N(y) HL_N(yh)

// The work-item (l: its gate column, its unit where l < HD), its row and direction; so: the
// row's slice of a [D, B, HD] state; ro: the direction's R^T; xn: the column's projection
// of the next step (0 outside the columns). h (local, hl) starts as h0.
#define SEQ_BEGIN()                                                                \
    const int l = get_local_id(0), b = get_group_id(1), d = get_group_id(2);      \
    const int D = get_num_groups(2), backward = (rev >> d) & 1;                    \
    const int so = (d * B + b) * HD, ro = d * HD * G + l, col = l < G;             \
    if (l < HD) hl[l] = LD(h0, so + l);                                            \
    float xn = col ? LD(xw, ((backward ? T - 1 : 0) * B + b) * D * G + d * G + l) : 0.0f; \
    barrier(CLK_LOCAL_MEM_FENCE)

// Step s: its time t, where its h goes in y (yo), xc its projection (loading the next's)
#define STEP_BEGIN()                                                                  \
    for (int s = 0; s < T; ++s) {                                                     \
        const int t = backward ? T - 1 - s : s, tn = backward ? t - 1 : t + 1;        \
        const int yo = ((t * D + d) * B + b) * HD;                                    \
        const float xc = xn;                                                          \
        if (col && s + 1 < T) xn = LD(xw, (tn * B + b) * D * G + d * G + l)

// this work-item's column of v x R^T (v: HD values in local memory)
#define REC_SUM(v, out)                                                   \
    {                                                                     \
        float acc_ = 0.0f;                                                \
        for (int k = 0; k < HD; ++k) acc_ += (v)[k] * LD(rt, ro + k * G); \
        out = acc_;                                                       \
    }

// every gate column's pre-activation, its projection plus its recurrent sum, into zl; then
// the barrier after which the cells read them
#define GATE_SUMS()             \
    if (col) {                  \
        float z_;               \
        REC_SUM(hl, z_);        \
        zl[l] = xc + z_;        \
    }                           \
    barrier(CLK_LOCAL_MEM_FENCE)

// unit l's h to y and hl (after the barrier that ends the reads of the old h)
#define STORE_H(v)              \
    {                           \
        const float hv_ = (v);  \
        hl[l] = hv_;            \
        ST(y, yo + l, hv_);     \
    }

// the barrier that closes a step, then Y_h
#define STEP_END()                  \
    barrier(CLK_LOCAL_MEM_FENCE);   \
    }                               \
    if (l < HD) ST(yh, so + l, hl[l])

// ONNX LSTM (default activations; gates i, o, f, c): pp the peepholes [D, 3 HD] (i, o, f)
// where has_p: i and f see the step's old c, o the new one. c stays in a register.
#define G (4 * HD)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void lstm_seq(SEQ_ARGS, __global const float* c0, __global float* c, __global const float* pp,
              const int has_p HL_ARGS SEQ_N HL_N(c0) HL_N(c) HL_N(pp))
{
    __local float hl[HD];
    __local float zl[G];
    SEQ_BEGIN();
    const int po = d * 3 * HD + l, unit = l < HD;
    const float pi = unit && has_p ? LD(pp, po) : 0.0f;
    const float pf = unit && has_p ? LD(pp, po + 2 * HD) : 0.0f;
    const float pn = unit && has_p ? LD(pp, po + HD) : 0.0f;
    float cp = unit ? LD(c0, so + l) : 0.0f;
    STEP_BEGIN();
    GATE_SUMS();
    if (unit) {
        const float ig = logistic(zl[l] + (has_p ? pi * cp : 0.0f));
        const float fg = logistic(zl[2 * HD + l] + (has_p ? pf * cp : 0.0f));
        const float gg = mlas_tanh(zl[3 * HD + l]);
        const float kept = MUL_RN(cp, fg);
        const float added = MUL_RN(ig, gg);
        cp = ADD_RN(kept, added);
        const float og = logistic(zl[HD + l] + (has_p ? pn * cp : 0.0f));
        STORE_H(MUL_RN(mlas_tanh(cp), og));
    }
    STEP_END();
    if (unit) ST(c, so + l, cp);
}
#undef G

// ONNX GRU (default activations; gates z, r, h): rb = [D, HD], Rb_h, which adds inside the h
// gate with -DLBR=1 (unused without; the h gate's projection then waits in xh).
// linear_before_reset = 0: r * h (rh) goes through R_h's columns after the z and r gates'
// sums, a barrier apart.
#define G (3 * HD)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void gru_seq(SEQ_ARGS, __global const float* rb HL_ARGS SEQ_N HL_N(rb))
{
    __local float hl[HD];
    __local float zl[G];
    __local float rh[HD];  // r * h, or (LBR) the h gate's projection
    SEQ_BEGIN();
    const int unit = l < HD, hcol = l >= 2 * HD && col;
#if LBR
    const float rbh = hcol ? LD(rb, d * HD + l - 2 * HD) : 0.0f;
#endif
    STEP_BEGIN();
    float z = 0.0f;
#if LBR
    if (col) REC_SUM(hl, z);
    if (hcol) {
        zl[l] = z + rbh;
        rh[l - 2 * HD] = xc;
    } else if (col) {
        zl[l] = xc + z;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    if (col && !hcol) {
        REC_SUM(hl, z);
        zl[l] = xc + z;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (unit) rh[l] = logistic(zl[HD + l]) * hl[l];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (hcol) {
        REC_SUM(rh, z);
        zl[l] = xc + z;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    if (unit) {
        const float zg = logistic(zl[l]);
#if LBR
        const float r = logistic(zl[HD + l]);
        const float nn = mlas_tanh(rh[l] + r * zl[2 * HD + l]);
#else
        const float nn = mlas_tanh(zl[2 * HD + l]);
#endif
        STORE_H((1.0f - zg) * nn + zg * hl[l]);
    }
    STEP_END();
}
#undef G

// ONNX RNN (Tanh).
#define G HD
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void rnn_seq(SEQ_ARGS HL_ARGS SEQ_N)
{
    __local float hl[HD];
    __local float zl[G];
    SEQ_BEGIN();
    STEP_BEGIN();
    GATE_SUMS();
    if (l < HD) STORE_H(mlas_tanh(zl[l]));
    STEP_END();
}
#undef G

// onnxruntime's DynamicQuantizeLSTM as rnn_cpu.cl's dq_lstm_seq computes it, bit for bit: one
// work-group per direction (global (WG, 1, D)) runs every batch row (-DNB=<batch>), since
// the whole batch's h is quantized before each step (its range a tree over lo and hi, WGP
// the power of two at or above WG), hq = q - zero point. Column l's int32 sum over k of
// hq x rq (rq = R less its zero point, [D, HD, G]) becomes ((float)sum * (h_scale * rs) +
// xw) + bias as quant.cl's TOFLOAT epilogue rounds it; then the cell. xw = [D, T, NB, G];
// rs = [D, ns] (ns 1 or G); bias = [D, G] (Wb + Rb, where has_bias).
#ifndef NB
#define NB 1
#endif
#ifndef WGP
#define WGP WG
#endif
#define G (4 * HD)
#define NH (NB * HD)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void dq_lstm_seq(__global const float* xw, __global const int* rq, __global const float* rs,
                 const int ns, __global const float* bias, const int has_bias,
                 __global const float* h0, __global const float* c0, __global float* y,
                 __global float* yh, __global float* c, const int T, const int rev
                 HL_ARGS HL_N(xw) HL_N(rq) HL_N(rs) HL_N(bias) HL_N(h0) HL_N(c0) HL_N(y)
                 HL_N(yh) HL_N(c))
{
    __local float hl[NH];
    __local float hq[NH];
    __local float cs[NH];
    __local float zl[NB * G];
    __local float lo[WG];
    __local float hi[WG];
    const int l = get_local_id(0), d = get_group_id(2), D = get_num_groups(2);
    const int backward = (rev >> d) & 1, so = d * NH, ro = d * HD * G + l, col = l < G;
    for (int i = l; i < NH; i += WG) {
        hl[i] = LD(h0, so + i);
        cs[i] = LD(c0, so + i);
    }
    const float rsl = col ? LD(rs, d * ns + (ns == 1 ? 0 : l)) : 0.0f;
    const float bl = col && has_bias ? LD(bias, d * G + l) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 0; s < T; ++s) {
        const int t = backward ? T - 1 - s : s;
        float mn = 0.0f, mx = 0.0f;
        for (int i = l; i < NH; i += WG) {
            mn = fmin(mn, hl[i]);
            mx = fmax(mx, hl[i]);
        }
        lo[l] = mn;
        hi[l] = mx;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int w = WGP / 2; w > 0; w >>= 1) {
            if (l < w && l + w < WG) {
                lo[l] = fmin(lo[l], lo[l + w]);
                hi[l] = fmax(hi[l], hi[l + w]);
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        const float sc = hi[0] == lo[0] ? 1.0f : (hi[0] - lo[0]) / 255.0f;
        const float zp = rint(clamp(0.0f - lo[0] / sc, 0.0f, 255.0f));
        for (int i = l; i < NH; i += WG)
            hq[i] = clamp(rint(hl[i] / sc) + zp, 0.0f, 255.0f) - zp;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (col) {
            const float scale = sc * rsl;
            for (int b = 0; b < NB; ++b) {
                int acc = 0;
                for (int k = 0; k < HD; ++k) acc += (int)hq[b * HD + k] * LD(rq, ro + k * G);
                float v = MUL_RN((float)acc, scale);
                v = ADD_RN(v, LD(xw, ((d * T + t) * NB + b) * G + l));
                if (has_bias) v = ADD_RN(v, bl);
                zl[b * G + l] = v;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < HD) {
            for (int b = 0; b < NB; ++b) {
                const int zo = b * G + l, u = b * HD + l;
                const float cp = cs[u];
                const float ig = logistic(zl[zo]);
                const float fg = logistic(zl[zo + 2 * HD]);
                const float gg = mlas_tanh(zl[zo + 3 * HD]);
                const float kept = MUL_RN(cp, fg);
                const float added = MUL_RN(ig, gg);
                const float cn = ADD_RN(kept, added);
                const float og = logistic(zl[zo + HD]);
                const float hv = MUL_RN(mlas_tanh(cn), og);
                cs[u] = cn;
                hl[u] = hv;
                ST(y, ((t * D + d) * NB + b) * HD + l, hv);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = l; i < NH; i += WG) {
        ST(yh, so + i, hl[i]);
        ST(c, so + i, cs[i]);
    }
}
#undef G
#undef NH
