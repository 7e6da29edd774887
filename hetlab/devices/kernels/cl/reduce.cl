// The reductions pool.cl's ``reduce`` does not compute, and ArgMax/ArgMin. OpenCL 1.2 C.
// The meta block rm is pool.cl's: [nd, oshape[6], ostr[6], ndr, rshape[6], rstr[6]], the
// kept and the reduced dims with their input strides (trailing nd, ndr entries used).

#ifdef __OPENCL_VERSION__
#define I8 char
#else
#define I8 signed char  // int8 as in eltwise.cl
#endif
#ifndef RL
#define RL 64
#endif
#ifndef DT
#define DT float
#endif

// The input offset of element q of an (up to 6-d) shape sh with strides st, nd dims used.
inline int rm_offset(__constant int* sh, __constant int* st, int nd, int q) {
    int off = 0;
    for (int d = 5; d >= 6 - nd; --d) {
        off += (q % sh[d]) * st[d];
        q /= sh[d];
    }
    return off;
}

// mode: 0 L1, 1 L2, 2 sum of squares, 3 log-sum-exp, 4 log-sum, 5 min, 6 product.
// One work-group per output element. Log-sum-exp subtracts the row's maximum first
// (log(sum(exp(x - m))) + m), as onnxruntime computes it.
inline float rm_fold(int mode, float acc, float v) {
    if (mode == 5) return fmin(acc, v);
    if (mode == 6) return acc * v;
    return acc + v;
}

__kernel __attribute__((reqd_work_group_size(RL, 1, 1)))
void reduce_more(__global const float* x, __global float* y, __constant int* rm, const int R,
                 const int mode HL_ARGS HL_N(x) HL_N(y))
{
    __local float buf[RL];
    const int o = get_group_id(0), l = get_local_id(0);
    const int base = rm_offset(rm + 1, rm + 7, rm[0], o);
    float m = 0.0f;
    if (mode == 3) {  // the row's maximum first
        float mx = -INFINITY;
        for (int j = l; j < R; j += RL) mx = fmax(mx, LD(x, base + rm_offset(rm + 14, rm + 20, rm[13], j)));
        buf[l] = mx;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = RL / 2; s > 0; s >>= 1) {
            if (l < s) buf[l] = fmax(buf[l], buf[l + s]);
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        m = buf[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float acc = mode == 5 ? INFINITY : (mode == 6 ? 1.0f : 0.0f);
    for (int j = l; j < R; j += RL) {
        float v = LD(x, base + rm_offset(rm + 14, rm + 20, rm[13], j));
        if (mode == 0) v = fabs(v);
        else if (mode == 1 || mode == 2) v = v * v;
        else if (mode == 3) v = exp(v - m);
        acc = rm_fold(mode, acc, v);
    }
    buf[l] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = RL / 2; s > 0; s >>= 1) {
        if (l < s) buf[l] = rm_fold(mode, buf[l], buf[l + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float r = buf[0];
    if (mode == 1) r = sqrt(r);
    else if (mode == 3) r = log(r) + m;
    else if (mode == 4) r = log(r);
    if (l == 0) ST(y, o, r);
}

// ArgMax (want_max 1) and ArgMin over an axis of extent L and stride inner: y[o] is the
// index of the largest (smallest) value of row o = (outer, inner), the first one of equal
// values, or the last with last != 0. One work-item per output element.
__kernel void arg_reduce(__global const DT* x, __global long* y, const int L, const int inner,
                         const int n, const int want_max, const int last
                         HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int base = (i / inner) * L * inner + i % inner;
    DT best = LD(x, base);
    int at = 0;
    for (int j = 1; j < L; ++j) {
        const DT v = LD(x, base + j * inner);
        const int better = want_max ? v > best : v < best;
        if (better || (last && v == best)) {
            best = v;
            at = j;
        }
    }
    ST(y, i, (long)at);
}
