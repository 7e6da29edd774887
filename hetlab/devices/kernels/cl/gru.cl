// The GRU cell of ops/gru.py (and, at the end, the RNN cell of ops/rnn.py and the LSTM
// cell with peepholes of ops/lstm.py). OpenCL 1.2 C. Gates in ONNX order (z, r, h); per step,
// xw = [B, 3H] is the input projection X[t] @ W^T plus the biases folded into it, at offset
// xoff, and z = [B, 3H] the recurrent pre-activations (h @ R^T, see gru.py for which bias).
// The previous state is hp[poff + b*Hd + j]. Global (Hd, B) for both kernels.

inline float gru_sigmoid(float v) { return 1.0f / (1.0f + exp(-v)); }

// rh = r * h_prev, r = sigmoid(xw_r + z_r): the state linear_before_reset=0 multiplies by R_h.
__kernel void gru_reset(__global const float* xw, const int xoff, __global const float* z,
                        __global const float* hp, const int poff, __global float* rh,
                        const int Hd HL_ARGS HL_N(xw) HL_N(z) HL_N(hp) HL_N(rh))
{
    const int j = get_global_id(0), b = get_global_id(1);
    if (j >= Hd) return;
    const int g = b * 3 * Hd + Hd + j;
    const float r = gru_sigmoid(LD(xw, xoff + g) + LD(z, g));
    ST(rh, b * Hd + j, r * LD(hp, poff + b * Hd + j));
}

// h = (1 - zg) * n + zg * h_prev with zg = sigmoid(xw_z + z_z) and n = tanh(xw_h + z_h), or with
// -DLBR=1 (linear_before_reset) n = tanh(xw_h + r * z_h). Writes h[hoff + b*Hd + j].
__kernel void gru_cell(__global const float* xw, const int xoff, __global const float* z,
                       __global const float* hp, const int poff, __global float* h,
                       const int hoff, const int Hd
                       HL_ARGS HL_N(xw) HL_N(z) HL_N(hp) HL_N(h))
{
    const int j = get_global_id(0), b = get_global_id(1);
    if (j >= Hd) return;
    VIEW(__global const float*, xb, xw, xoff + b * 3 * Hd);
    VIEW(__global const float*, zb, z, b * 3 * Hd);
    const float zg = gru_sigmoid(LD(xb, j) + LD(zb, j));
#if LBR
    const float r = gru_sigmoid(LD(xb, Hd + j) + LD(zb, Hd + j));
    const float n = tanh(LD(xb, 2 * Hd + j) + r * LD(zb, 2 * Hd + j));
#else
    const float n = tanh(LD(xb, 2 * Hd + j) + LD(zb, 2 * Hd + j));
#endif
    const float hv = LD(hp, poff + b * Hd + j);
    ST(h, hoff + b * Hd + j, (1.0f - zg) * n + zg * hv);
}

// The ONNX RNN's step (ops/rnn.py): h = tanh(z), z = [B, Hd] the step's pre-activations
// (h_prev @ R^T plus the input projection); MLAS's tanh, as onnxruntime's. Writes
// h[hoff + i]. Global (n) with n = B * Hd.
__kernel void rnn_cell(__global const float* z, __global float* h, const int hoff,
                       const int n HL_ARGS HL_N(z) HL_N(h))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    ST(h, hoff + i, mlas_tanh(LD(z, i)));
}

// The LSTM step with peepholes (ops/lstm.py): z = [B, 4 Hd] pre-activations (i, o, f, c),
// p = the peepholes (i, o, f) of this direction from element poff: i and f see the old c,
// o the new one. c in place, h to h[hoff + b*Hd + j]. MLAS's logistic and tanh. Global (Hd, B).
__kernel void lstm_cell_peep(__global const float* z, __global float* c, __global float* h,
                             const int Hd, const int hoff, __global const float* p,
                             const int poff HL_ARGS HL_N(z) HL_N(c) HL_N(h) HL_N(p))
{
    const int j = get_global_id(0), b = get_global_id(1);
    if (j >= Hd) return;
    VIEW(__global const float*, zb, z, b * 4 * Hd);
    const float cp = LD(c, b * Hd + j);
    const float ig = logistic(LD(zb, j) + LD(p, poff + j) * cp);
    const float fg = logistic(LD(zb, 2 * Hd + j) + LD(p, poff + 2 * Hd + j) * cp);
    const float cn = fg * cp + ig * mlas_tanh(LD(zb, 3 * Hd + j));
    const float og = logistic(LD(zb, Hd + j) + LD(p, poff + Hd + j) * cn);
    ST(c, b * Hd + j, cn);
    ST(h, hoff + b * Hd + j, og * mlas_tanh(cn));
}
