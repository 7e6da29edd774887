// Whole-sequence recurrences for a CPU device (PoCL): ONNX's LSTM, GRU and RNN and
// onnxruntime's DynamicQuantizeLSTM; CPU-only (the CUDA backend does not build this file).
// OpenCL 1.2 C. ops/rnn_cpu.py launches them.
//
// One work-item runs every step of one direction (global (D), local (1)): PoCL runs a
// work-group as one thread's loop, so the directions run on threads of their own and a step
// costs no launch (a launch per step, a GEMM and a cell, cost 0.1-1 ms each). The input
// projection of every step (biases folded in) comes from one GEMM before: xw[t, b, d, j] at
// t * xs_t + b * xs_b + d * xs_d + j. A step's recurrent product (rec_product) walks k over
// Hd with 32 gate columns at a time. The gates are onnxruntime's functions (MLAS's logistic
// and tanh, mlas.h, built with FAST_FMA); the LSTM cell rounds as conv_misc.cl's lstm_cell
// with MLAS_GATES.
//
// h of step t goes to y[t, d] (y = [T, D, B, Hd]) and the next step reads it there; h0, c0
// are [D, B, Hd] (zeros where the node has none); yh (where has_yh) and c (the cell state,
// which is the Y_c output where the node has one) are [D, B, Hd]; z = [D, B, Gp] is scratch (Gp: the gates padded as the panels, below).

// A helper function that reads through LD takes the bounds build's arguments: FN_ARGS and
// HL_N per buffer where declared, FN_PASS and N_PASS per buffer where called.
#ifdef HETLAB_BOUNDS
#define HL_ERR __global int*
#define FN_ARGS , HL_ERR hl_err, const int hl_site
#define FN_PASS , hl_err, hl_site
#define N_PASS(b) , b##_hl0, b##_hln
#define PICK(T, v, c, a, b) \
    T v = (c) ? (a) : (b); \
    const long v##_hl0 = (c) ? a##_hl0 : b##_hl0, v##_hln = (c) ? a##_hln : b##_hln
#else
#define FN_ARGS
#define FN_PASS
#define N_PASS(b)
#define PICK(T, v, c, a, b) T v = (c) ? (a) : (b)
#endif

// eight consecutive values as one vector (one unaligned load; vload8 is a call in PoCL)
#define LD8(b, i) ((float8)(LD(b, (i)), LD(b, (i) + 1), LD(b, (i) + 2), LD(b, (i) + 3), \
                            LD(b, (i) + 4), LD(b, (i) + 5), LD(b, (i) + 6), LD(b, (i) + 7)))
#define LDI8(b, i) ((int8)(LD(b, (i)), LD(b, (i) + 1), LD(b, (i) + 2), LD(b, (i) + 3), \
                           LD(b, (i) + 4), LD(b, (i) + 5), LD(b, (i) + 6), LD(b, (i) + 7)))

// The recurrent product of one step and batch row: z[zo + 32 * jb + i] = the sum over k of
// v[vo + k] * the weight of k and padded column 32 * jb + i, for the panels jb in [p0, p1).
// The weights come in panels of 32 columns, [D, panels, Hd, 32] (pr: direction d's first),
// each gate's Hd columns padded to Hp = a multiple of 32 (zeros), so that a step streams
// them in order: rows Gp * 4 bytes apart (4 KB at Hd = 256) kept the cache sets busy and ran
// at 1.4 GMAC/s. Four float8 per panel; each row read through a view at its start, so the
// eight loads of a vector have constant offsets and become one (indices computed per load
// ran 4x slower); products added as a += x * y, contracted into vfmadd.
// a, b, c, e (panel jb's four float8 of columns) += v[vo + k] * row k of the panel in w,
// for k in [k0, k1)
#define PANEL_SUMS(w, jb, k0, k1)                                        \
    for (int k = (k0); k < (k1); ++k) {                                  \
        const float8 hk = (float8)(LD(v, vo + k));                       \
        VIEW(__global const float*, r, w, pr + ((jb) * Hd + k) * 32);    \
        a += hk * LD8(r, 0);                                             \
        b += hk * LD8(r, 8);                                             \
        c += hk * LD8(r, 16);                                            \
        e += hk * LD8(r, 24);                                            \
    }
inline void rec_product(__global const float* v, const int vo, __global const float* rt,
                        const int pr, __global float* z, const int zo, const int p0,
                        const int p1, const int Hd FN_ARGS HL_N(v) HL_N(rt) HL_N(z))
{
    float t[32] __attribute__((aligned(32)));
    for (int jb = p0; jb < p1; ++jb) {
        float8 a = (float8)(0.0f), b = a, c = a, e = a;
        PANEL_SUMS(rt, jb, 0, Hd);
        *(float8*)t = a;
        *(float8*)(t + 8) = b;
        *(float8*)(t + 16) = c;
        *(float8*)(t + 24) = e;
        VIEW(__global float*, zb, z, zo + jb * 32);
        for (int i = 0; i < 32; ++i) ST(zb, i, t[i]);
    }
}

// rec_product over every panel, exact: v and rq hold integers of at most 255 in magnitude
// (h and R less their zero points) as floats, so a product is exact and so is a sum of up
// to 256 of them (below 2^24); the sums of each run of 256 k are added in int32 and stored
// as float bits (as_float). float8 products ran about 4x faster than int8 ones.
#define KRUN 256
inline void int_product(__global const float* v, const int vo, __global const float* rq,
                        const int pr, __global float* z, const int zo, const int panels,
                        const int Hd FN_ARGS HL_N(v) HL_N(rq) HL_N(z))
{
    int t[32] __attribute__((aligned(32)));
    for (int jb = 0; jb < panels; ++jb) {
        int8 s0 = (int8)(0), s1 = s0, s2 = s0, s3 = s0;
        for (int k0 = 0; k0 < Hd; k0 += KRUN) {
            float8 a = (float8)(0.0f), b = a, c = a, e = a;
            PANEL_SUMS(rq, jb, k0, min(Hd, k0 + KRUN));
            s0 += convert_int8(a);
            s1 += convert_int8(b);
            s2 += convert_int8(c);
            s3 += convert_int8(e);
        }
        *(int8*)t = s0;
        *(int8*)(t + 8) = s1;
        *(int8*)(t + 16) = s2;
        *(int8*)(t + 24) = s3;
        VIEW(__global float*, zb, z, zo + jb * 32);
        for (int i = 0; i < 32; ++i) ST(zb, i, as_float(t[i]));
    }
}

// the time of direction d's step s (0 first): a backward direction runs T-1 down to 0
inline int step_time(const int s, const int T, const int backward)
{
    return backward ? T - 1 - s : s;
}

// c[zo + i] = c0[zo + i] for the n values of one direction
#define COPY_STATE(c, c0, zo, n) \
    for (int i = 0; i < (n); ++i) ST(c, (zo) + i, LD(c0, (zo) + i))

// The LSTM cell of units j0.. of one batch row, gates (i, o, f, c): pre-activation g of unit j is
// PRE(g, j, cell), cell the state its peephole sees (the step's old c for i and f, the new
// one for o); c in place at co, h to y at yo, rounded as conv_misc.cl's lstm_cell with
// MLAS_GATES.
#define LSTM_CELL(PRE, c, co, y, yo, j0, Hd)                       \
    for (int j = (j0); j < (Hd); ++j) {                          \
        const float cp = LD(c, (co) + j);                        \
        const float ig = logistic(PRE(0, j, cp));                \
        const float fg = logistic(PRE(2, j, cp));                \
        const float gg = mlas_tanh(PRE(3, j, cp));               \
        const float kept = MUL_RN(cp, fg);                       \
        const float added = MUL_RN(ig, gg);                      \
        const float cn = ADD_RN(kept, added);                    \
        const float og = logistic(PRE(1, j, cn));                \
        ST(c, (co) + j, cn);                                     \
        ST(y, (yo) + j, MUL_RN(mlas_tanh(cn), og));              \
    }

// The sequence kernels' common arguments: rev has bit d set where direction d runs backward.
#define SEQ_ARGS                                                                           \
    __global const float *xw, const int xs_t, const int xs_b, const int xs_d,             \
        __global const float *h0, __global float *z, __global float *y, __global float *yh, \
        const int has_yh, const int T, const int B, const int Hd, const int rev
#define SEQ_N HL_N(xw) HL_N(h0) HL_N(z) HL_N(y) HL_N(yh)

// Each kernel's step loop: t, ho (h's slice of y), po and hp (the h before), Hp, Gp (padded)
#define STEP_BEGIN(GATES)                                                                 \
    const int d = get_global_id(0), D = get_global_size(0), n = B * Hd;                  \
    const int backward = (rev >> d) & 1, Hp = (Hd + 31) / 32 * 32, Gp = (GATES) * Hp;    \
    const int pr = d * Gp * Hd;                                                           \
    for (int s = 0; s < T; ++s) {                                                         \
        const int t = step_time(s, T, backward);                                          \
        const int ho = ((size_t)t * D + d) * n;                                           \
        const int po = s ? ((size_t)step_time(s - 1, T, backward) * D + d) * n : d * n;   \
        PICK(__global const float*, hp, s, y, h0);

// yh[d] = the h of direction d's last step (closes STEP_BEGIN's loop first)
#define STEP_END()                                                                 \
    }                                                                              \
    if (has_yh) {                                                                  \
        const int last = ((size_t)step_time(T - 1, T, backward) * D + d) * n;      \
        for (int i = 0; i < n; ++i) ST(yh, d * n + i, LD(y, last + i));            \
    }

// ONNX LSTM (default activations): rt = R^T in panels ([D, 4 Hp / 32, Hd, 32]); pp the
// peepholes [D, 3 Hd] (i, o, f) where has_p.
__kernel void lstm_seq(SEQ_ARGS, __global const float* rt, __global const float* c0,
                       __global float* c, __global const float* pp, const int has_p
                       HL_ARGS SEQ_N HL_N(rt) HL_N(c0) HL_N(c) HL_N(pp))
{
    COPY_STATE(c, c0, get_global_id(0) * B * Hd, B * Hd);
    STEP_BEGIN(4)
    for (int b = 0; b < B; ++b) {
        const int xo = t * xs_t + b * xs_b + d * xs_d, zo = (d * B + b) * Gp;
        rec_product(hp, po + b * Hd, rt, pr, z, zo, 0, Gp / 32, Hd
                    FN_PASS N_PASS(hp) N_PASS(rt) N_PASS(z));
#define PRE(g, j, cell)                                                        \
    (LD(xw, xo + (g) * Hd + (j)) + LD(z, zo + (g) * Hp + (j)) +                 \
     ((has_p && (g) < 3) ? LD(pp, (d * 3 + (g)) * Hd + (j)) * (cell) : 0.0f))
        const int co = (d * B + b) * Hd;
        int j = 0;
        for (; j + 8 <= Hd; j += 8) {  // eight units as float8, the same operations
            VIEW(__global const float*, xj, xw, xo + j);
            VIEW(__global const float*, zj, z, zo + j);
            VIEW(__global const float*, pj, pp, d * 3 * Hd + j);
            const float8 cp = LD8(c, co + j);
            const float8 pi = has_p ? LD8(pj, 0) * cp : (float8)(0.0f);
            const float8 pf = has_p ? LD8(pj, 2 * Hd) * cp : (float8)(0.0f);
            const float8 ig = logistic8(LD8(xj, 0) + LD8(zj, 0) + pi);
            const float8 fg = logistic8(LD8(xj, 2 * Hd) + LD8(zj, 2 * Hp) + pf);
            const float8 gg = mlas_tanh8(LD8(xj, 3 * Hd) + LD8(zj, 3 * Hp));
            const float8 kept = MUL_RN(cp, fg);
            const float8 added = MUL_RN(ig, gg);
            const float8 cn = ADD_RN(kept, added);
            const float8 pn = has_p ? LD8(pj, Hd) * cn : (float8)(0.0f);
            const float8 og = logistic8(LD8(xj, Hd) + LD8(zj, Hp) + pn);
            float cv[16] __attribute__((aligned(32)));
            *(float8*)cv = cn;
            *(float8*)(cv + 8) = MUL_RN(mlas_tanh8(cn), og);
            for (int i = 0; i < 8; ++i) ST(c, co + j + i, cv[i]);
            for (int i = 0; i < 8; ++i) ST(y, ho + b * Hd + j + i, cv[8 + i]);
        }
        const int jt = j;  // the units left
        LSTM_CELL(PRE, c, co, y, ho + b * Hd, jt, Hd);
#undef PRE
    }
    STEP_END()
}

// ONNX GRU (default activations): rt = R^T in panels ([D, 3 Hp / 32, Hd, 32]); rb = [D, Hd],
// Rb_h, which adds inside the h gate with -DLBR=1 (unused without); rh = [D, B, Hd] scratch,
// r * h (linear_before_reset = 0).
__kernel void gru_seq(SEQ_ARGS, __global const float* rt, __global const float* rb,
                      __global float* rh HL_ARGS SEQ_N HL_N(rt) HL_N(rb) HL_N(rh))
{
    STEP_BEGIN(3)
    for (int b = 0; b < B; ++b) {
        const int xo = t * xs_t + b * xs_b + d * xs_d, zo = (d * B + b) * Gp;
        const int hb = po + b * Hd;
#if LBR
        rec_product(hp, hb, rt, pr, z, zo, 0, Gp / 32, Hd FN_PASS N_PASS(hp) N_PASS(rt) N_PASS(z));
#else
        rec_product(hp, hb, rt, pr, z, zo, 0, 2 * Hp / 32, Hd
                    FN_PASS N_PASS(hp) N_PASS(rt) N_PASS(z));
        const int rho = (d * B + b) * Hd;
        for (int k = 0; k < Hd; ++k)
            ST(rh, rho + k, logistic(LD(xw, xo + Hd + k) + LD(z, zo + Hp + k)) * LD(hp, hb + k));
        rec_product(rh, rho, rt, pr, z, zo, 2 * Hp / 32, Gp / 32, Hd
                    FN_PASS N_PASS(rh) N_PASS(rt) N_PASS(z));
#endif
        int j = 0;
        for (; j + 8 <= Hd; j += 8) {  // eight units as float8, the same operations
            VIEW(__global const float*, xj, xw, xo + j);
            VIEW(__global const float*, zj, z, zo + j);
            VIEW(__global const float*, hj, hp, hb + j);
            const float8 zg = logistic8(LD8(xj, 0) + LD8(zj, 0));
#if LBR
            VIEW(__global const float*, rj, rb, d * Hd + j);
            const float8 r = logistic8(LD8(xj, Hd) + LD8(zj, Hp));
            const float8 nn = mlas_tanh8(LD8(xj, 2 * Hd) + r * (LD8(zj, 2 * Hp) + LD8(rj, 0)));
#else
            const float8 nn = mlas_tanh8(LD8(xj, 2 * Hd) + LD8(zj, 2 * Hp));
#endif
            float hv[8] __attribute__((aligned(32)));
            *(float8*)hv = (1.0f - zg) * nn + zg * LD8(hj, 0);
            for (int i = 0; i < 8; ++i) ST(y, ho + b * Hd + j + i, hv[i]);
        }
        for (; j < Hd; ++j) {
            const float zg = logistic(LD(xw, xo + j) + LD(z, zo + j));
#if LBR
            const float r = logistic(LD(xw, xo + Hd + j) + LD(z, zo + Hp + j));
            const float hz = LD(z, zo + 2 * Hp + j) + LD(rb, d * Hd + j);
            const float nn = mlas_tanh(LD(xw, xo + 2 * Hd + j) + r * hz);
#else
            const float nn = mlas_tanh(LD(xw, xo + 2 * Hd + j) + LD(z, zo + 2 * Hp + j));
#endif
            ST(y, ho + b * Hd + j, (1.0f - zg) * nn + zg * LD(hp, hb + j));
        }
    }
    STEP_END()
}

// ONNX RNN (Tanh): rt = R^T in panels ([D, Hp / 32, Hd, 32]).
__kernel void rnn_seq(SEQ_ARGS, __global const float* rt HL_ARGS SEQ_N HL_N(rt))
{
    STEP_BEGIN(1)
    for (int b = 0; b < B; ++b) {
        const int xo = t * xs_t + b * xs_b + d * xs_d, zo = (d * B + b) * Gp;
        rec_product(hp, po + b * Hd, rt, pr, z, zo, 0, Gp / 32, Hd
                    FN_PASS N_PASS(hp) N_PASS(rt) N_PASS(z));
        for (int j = 0; j < Hd; ++j)
            ST(y, ho + b * Hd + j, mlas_tanh(LD(xw, xo + j) + LD(z, zo + j)));
    }
    STEP_END()
}

// onnxruntime's DynamicQuantizeLSTM, as ops/contrib_lstm.py composes it from launches and
// bit for bit the same: before each step the whole batch's h is quantized to uint8 as
// DynamicQuantizeLinear does (quant.cl's dynamic_qparams and quantize), hq = q - zero point;
// the int32 sum of hq x rq (R less its zero point, in panels as rt) becomes
// ((float)sum * (h_scale * rs[j]) + xw) + bias[j] as quant.cl's TOFLOAT epilogue rounds it;
// rs = [D, ns] (ns 1 or 4 Hd), bias = [D, 4 Hd] (Wb + Rb, where has_bias); hq = [D, B, Hd].
__kernel void dq_lstm_seq(SEQ_ARGS, __global const float* rq, __global const float* rs,
                          const int ns, __global const float* bias, const int has_bias,
                          __global float* hq, __global const float* c0, __global float* c
                          HL_ARGS SEQ_N HL_N(rq) HL_N(rs) HL_N(bias) HL_N(hq) HL_N(c0) HL_N(c))
{
    COPY_STATE(c, c0, get_global_id(0) * B * Hd, B * Hd);
    STEP_BEGIN(4)
    float mn = 0.0f, mx = 0.0f;
    for (int i = 0; i < n; ++i) {
        mn = fmin(mn, LD(hp, po + i));
        mx = fmax(mx, LD(hp, po + i));
    }
    const float sc = mx == mn ? 1.0f : (mx - mn) / 255.0f;
    const float zp = rint(clamp(0.0f - mn / sc, 0.0f, 255.0f));
    for (int i = 0; i < n; ++i)
        ST(hq, d * n + i, clamp(rint(LD(hp, po + i) / sc) + zp, 0.0f, 255.0f) - zp);
    for (int b = 0; b < B; ++b) {
        const int xo = t * xs_t + b * xs_b + d * xs_d, zo = (d * B + b) * Gp;
        int_product(hq, d * n + b * Hd, rq, pr, z, zo, Gp / 32, Hd
                    FN_PASS N_PASS(hq) N_PASS(rq) N_PASS(z));
        for (int g = 0; g < 4; ++g)  // quant.cl's TOFLOAT epilogue, in place
            for (int j = 0; j < Hd; ++j) {
                const int col = g * Hd + j;
                const float scale = sc * LD(rs, d * ns + (ns == 1 ? 0 : col));
                float v = MUL_RN((float)as_int(LD(z, zo + g * Hp + j)), scale);
                v = ADD_RN(v, LD(xw, xo + col));
                if (has_bias) v = ADD_RN(v, LD(bias, d * 4 * Hd + col));
                ST(z, zo + g * Hp + j, v);
            }
#define PRE(g, j, cell) LD(z, zo + (g) * Hp + (j))
        LSTM_CELL(PRE, c, (d * B + b) * Hd, y, ho + b * Hd, 0, Hd);
#undef PRE
    }
    STEP_END()
}
