// Elementwise, broadcasting and data-movement kernels. OpenCL 1.2 C.
// An "nd meta" block (int32, __constant) is [ndim, shape[6], sa[6], sb[6], offa, offb]:
// the iteration shape (row-major, trailing ndim entries used) and element strides of two
// operands (0 = broadcast). Strides may be negative (Slice with a negative step).
//
// Kernels that move or compare values of any dtype take their element type from build
// options: DT the data (float when not given; DT_INT set where it is int or long), IT a second type (Gather's indices, Cast's
// input), OT Cast's output (with OT_BOOL where that is bool: nonzero -> 1). A program is
// compiled per combination (ops/common.py, type_options); bool is uchar holding 0 or 1,
// int8 is I8 (a signed char in both builds: plain char's sign is the CUDA host's choice).

#define MAXD 6
#ifdef __OPENCL_VERSION__
#define I8 char
#else
#define I8 signed char
#endif
#ifndef DT
#define DT float
#endif
#ifndef IT
#define IT int
#endif
#ifndef OT
#define OT float
#endif

inline float act(float v, float slope, float lo, float hi) {
    v = v < 0.0f ? v * slope : v;
    return fmin(fmax(v, lo), hi);
}

inline void nd_offsets(__constant int* m, int i, int* ia, int* ib) {
    const int nd = m[0];
    int a = m[19], b = m[20];
    for (int d = MAXD - 1; d >= MAXD - nd; --d) {
        const int s = m[1 + d];
        const int c = i % s;
        i /= s;
        a += c * m[7 + d];
        b += c * m[13 + d];
    }
    *ia = a;
    *ib = b;
}

// op: 0 relu-family (epilogue only), 1 sigmoid, 2 hardsigmoid(p0=alpha, p1=beta), 3 hardswish,
//     4 tanh, 5 exp, 6 sqrt, 7 erf, 8 neg, 9 abs, 10 log, 11 reciprocal, 12 softplus,
//     13 elu(p0=alpha), 14 gelu (erf), 15 gelu (tanh approximation), 16 floor, 17 ceil,
//     18 round (half to even), 19 sin, 20 cos, 21 tan, 22 asin, 23 acos, 24 atan, 25 sinh,
//     26 cosh, 27 asinh, 28 acosh, 29 atanh, 30 sign (0 for zeros and NaN)
inline float unary_op(float v, const int op, const float p0, const float p1)
{
    switch (op) {
        case 1: v = logistic(v); break;
        case 2: v = fmin(fmax(p0 * v + p1, 0.0f), 1.0f); break;
        case 3: v = v * fmin(fmax(v / 6.0f + 0.5f, 0.0f), 1.0f); break;
        case 4: v = mlas_tanh(v); break;
        case 5: v = exp(v); break;
        case 6: v = sqrt(v); break;
        case 7: v = erf(v); break;
        case 8: v = -v; break;
        case 9: v = fabs(v); break;
        case 10: v = log(v); break;
        case 11: v = 1.0f / v; break;
        case 12: v = log1p(exp(-fabs(v))) + fmax(v, 0.0f); break;
        case 13: v = v < 0.0f ? p0 * (exp(v) - 1.0f) : v; break;
        case 14: v = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f)); break;
        case 15: v = 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v))); break;
        case 16: v = floor(v); break;
        case 17: v = ceil(v); break;
        case 18: v = rint(v); break;
        case 19: v = sin(v); break;
        case 20: v = cos(v); break;
        case 21: v = tan(v); break;
        case 22: v = asin(v); break;
        case 23: v = acos(v); break;
        case 24: v = atan(v); break;
        case 25: v = sinh(v); break;
        case 26: v = cosh(v); break;
        case 27: v = asinh(v); break;
        case 28: v = acosh(v); break;
        case 29: v = atanh(v); break;
        case 30: v = v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f); break;
        default: break;
    }
    return v;
}

__kernel void unary(__global const float* x, __global float* y, const int n, const int op,
                    const float p0, const float p1,
                    const float slope, const float lo, const float hi HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    ST(y, i, act(unary_op(LD(x, i), op, p0, p1), slope, lo, hi));
}

// op: 0 add, 1 sub, 2 mul, 3 div, 4 pow, 5 max, 6 min, 7 prelu (b = slope), 8 fmod,
// 9 pow by a one-element exponent: x * x for 2 and x * x * x for 3 (two roundings), as
// onnxruntime's Pow computes them, pow() otherwise
inline float binary_op(const float u, const float w, const int op)
{
    float v;
    switch (op) {
        case 0: v = u + w; break;
        case 1: v = u - w; break;
        case 2: v = u * w; break;
        case 3: v = u / w; break;
        case 4: v = pow(u, w); break;
        case 5: v = fmax(u, w); break;
        case 6: v = fmin(u, w); break;
        case 8: v = fmod(u, w); break;
        case 9: v = w == 2.0f ? u * u : (w == 3.0f ? u * u * u : pow(u, w)); break;
        default: v = u < 0.0f ? u * w : u; break;
    }
    return v;
}

__kernel void binary(__global const float* a, __global const float* b, __global float* y,
                     __constant int* meta, const int n, const int op,
                     const float slope, const float lo, const float hi
                     HL_ARGS HL_N(a) HL_N(b) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    int ia, ib;
    nd_offsets(meta, i, &ia, &ib);
    ST(y, i, act(binary_op(LD(a, ia), LD(b, ib), op), slope, lo, hi));
}

// dst[offb + ...] = src[offa + ...] over the meta shape (Transpose, Slice, Concat, Split, Expand).
__kernel void copy_nd(__global const DT* src, __global DT* dst, __constant int* meta,
                      const int n HL_ARGS HL_N(src) HL_N(dst))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    int ia, ib;
    nd_offsets(meta, i, &ia, &ib);
    ST(dst, ib, LD(src, ia));
}

// y = act(x * scale[c] + shift[c]), c = (i / inner) % C (BatchNormalization as an affine).
__kernel void affine(__global const float* x, __global float* y, __global const float* scale,
                     __global const float* shift, const int n, const int C, const int inner,
                     const float slope, const float lo, const float hi
                     HL_ARGS HL_N(x) HL_N(y) HL_N(scale) HL_N(shift))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = (i / inner) % C;
    ST(y, i, act(mad(LD(x, i), LD(scale, c), LD(shift, c)), slope, lo, hi));
}

// Concat of up to four inputs along one axis, as one launch. The launch writes axis positions
// [p0, p0 + at[4]) of y, (outer, A, inner) row-major from element base; input k holds the
// positions [at[k], at[k+1]) of that range, (outer, at[k+1] - at[k], inner) row-major (at[k]
// = at[4] past the inputs given). cm = [A, inner, base, p0, at[5]]; a work-item writes ew
// consecutive elements of the range, n in all.
__kernel void concat4(__global const DT* x0, __global const DT* x1, __global const DT* x2,
                      __global const DT* x3, __global DT* y, __constant int* cm, const int n,
                      const int ew HL_ARGS HL_N(x0) HL_N(x1) HL_N(x2) HL_N(x3) HL_N(y))
{
    const int i0 = get_global_id(0) * ew;
    if (i0 >= n) return;
    const int A = cm[0], inner = cm[1], base = cm[2], p0 = cm[3], Ag = cm[8];
    const int end = min(n, i0 + ew);
    int e = i0 % inner, a = (i0 / inner) % Ag, o = i0 / (inner * Ag);
    for (int i = i0; i < end; ++i) {
        int k = 0;
        while (k < 3 && a >= cm[5 + k]) ++k;
        const int lo = cm[4 + k];
        const int src = (o * (cm[5 + k] - lo) + a - lo) * inner + e;
        const DT v = k == 0 ? LD(x0, src) : k == 1 ? LD(x1, src) : k == 2 ? LD(x2, src) : LD(x3, src);
        ST(y, base + (o * A + p0 + a) * inner + e, v);
        if (++e == inner) {
            e = 0;
            if (++a == Ag) {
                a = 0;
                ++o;
            }
        }
    }
}

// ai.onnx.ml Scaler: y = ((float)x - offset[c]) * scale[c], c = i % C (C = 1: one value).
__kernel void scaler(__global const DT* x, __global float* y, __global const float* offset,
                     __global const float* scale, const int n, const int C
                     HL_ARGS HL_N(x) HL_N(y) HL_N(offset) HL_N(scale))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int c = i % C;
    ST(y, i, ((float)LD(x, i) - LD(offset, c)) * LD(scale, c));
}

__kernel void fill(__global DT* y, const int n, const DT value HL_ARGS HL_N(y))
{
    const int i = get_global_id(0);
    if (i < n) ST(y, i, value);
}

// Pad. pm = [ndim, out_shape[6], in_shape[6], pad_begin[6]] (trailing ndim used).
// mode: 0 constant, 1 reflect, 2 edge.
__kernel void pad(__global const DT* x, __global DT* y, __constant int* pm, const int n,
                  const int mode, const DT value HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int nd = pm[0];
    int r = i, src = 0, stride = 1, inside = 1;
    for (int d = MAXD - 1; d >= MAXD - nd; --d) {
        const int os = pm[1 + d], is = pm[7 + d];
        int c = r % os - pm[13 + d];
        r /= os;
        if (c < 0 || c >= is) {
            if (mode == 0) inside = 0;
            else if (mode == 2) c = clamp(c, 0, is - 1);
            else {
                const int p = max(2 * is - 2, 1);
                c = abs(c) % p;
                if (c >= is) c = p - c;
            }
        }
        src += c * stride;
        stride *= is;
    }
    ST(y, i, inside ? LD(x, src) : value);
}

// Integer arithmetic over DT (int or long), as C computes it: 0 add, 1 sub, 2 mul,
// 3 div (truncating toward zero), 4 max, 5 min, 6 mod (the divisor's sign, ONNX Mod fmod=0),
// 7 fmod (the dividend's sign). A zero divisor gives 0 instead of a trap.
#ifdef DT_INT
__kernel void binary_int(__global const DT* a, __global const DT* b, __global DT* y,
                         __constant int* meta, const int n, const int op
                         HL_ARGS HL_N(a) HL_N(b) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    int ia, ib;
    nd_offsets(meta, i, &ia, &ib);
    const DT u = LD(a, ia), w = LD(b, ib);
    DT v;
    switch (op) {
        case 0: v = u + w; break;
        case 1: v = u - w; break;
        case 2: v = u * w; break;
        case 3: v = w == 0 ? 0 : u / w; break;
        case 4: v = u > w ? u : w; break;
        case 5: v = u < w ? u : w; break;
        case 6: v = w == 0 ? 0 : u % w; v = (v != 0 && (v < 0) != (w < 0)) ? v + w : v; break;
        default: v = w == 0 ? 0 : u % w; break;
    }
    ST(y, i, v);
}
#endif

// Comparisons and logic, to bool: 0 equal, 1 less, 2 greater, 3 less or equal,
// 4 greater or equal, 5 and, 6 or, 7 xor (the last three on bools).
__kernel void compare(__global const DT* a, __global const DT* b, __global uchar* y,
                      __constant int* meta, const int n, const int op
                      HL_ARGS HL_N(a) HL_N(b) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    int ia, ib;
    nd_offsets(meta, i, &ia, &ib);
    const DT u = LD(a, ia), w = LD(b, ib);
    int v;
    switch (op) {
        case 0: v = u == w; break;
        case 1: v = u < w; break;
        case 2: v = u > w; break;
        case 3: v = u <= w; break;
        case 4: v = u >= w; break;
        case 5: v = u != 0 && w != 0; break;
        case 6: v = u != 0 || w != 0; break;
        default: v = (u != 0) != (w != 0); break;
    }
    ST(y, i, (uchar)v);
}

// y = c ? a : b, broadcast: mca holds the offsets of c and a, mb those of b (twice).
__kernel void where_sel(__global const uchar* c, __global const DT* a, __global const DT* b,
                        __global DT* y, __constant int* mca, __constant int* mb, const int n
                        HL_ARGS HL_N(c) HL_N(a) HL_N(b) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    int ic, ia, ib, unused;
    nd_offsets(mca, i, &ic, &ia);
    nd_offsets(mb, i, &ib, &unused);
    ST(y, i, LD(c, ic) ? LD(a, ia) : LD(b, ib));
}

// op: 0 neg, 1 abs, 2 logical not (on bools), over DT.
__kernel void unary_t(__global const DT* x, __global DT* y, const int n, const int op
                      HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const DT u = LD(x, i);
    ST(y, i, op == 0 ? (DT)(-u) : (op == 1 ? (u < 0 ? (DT)(-u) : u) : (DT)(u == 0)));
}

// ONNX Cast from IT to OT: C's conversion (float to integer truncates toward zero), and to
// bool, nonzero -> 1. To a 1-byte integer (OT_NARROW) the value goes through int first:
// integers keep their low 8 bits (wrapping, as numpy's and onnxruntime's casts do), and a
// float truncates to int before it wraps, where a direct conversion out of range is undefined.
__kernel void cast(__global const IT* x, __global OT* y, const int n HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
#ifdef OT_BOOL
    ST(y, i, (OT)(LD(x, i) != 0));
#elif defined(OT_NARROW)
    ST(y, i, (OT)(int)LD(x, i));
#else
    ST(y, i, (OT)LD(x, i));
#endif
}

// IsNaN (op 0) and IsInf (op 1, counting -inf when neg and +inf when pos), float to bool.
// Comparisons rather than isnan/isinf: the same code in the CUDA translation.
__kernel void fclass(__global const float* x, __global uchar* y, const int n, const int op,
                     const int neg, const int pos HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float v = LD(x, i);
    const int inf = (neg && v == -INFINITY) || (pos && v == INFINITY);
    ST(y, i, (uchar)(op == 0 ? v != v : inf));
}

// Gather along an axis with indices read at run time (IT, negative from the end):
// y[o, j, r] = x[o, idx[j], r], the axis of x being dim long. An index out of range gives 0.
__kernel void gather(__global const DT* x, __global const IT* idx, __global DT* y,
                     const int k, const int dim, const int inner, const int n
                     HL_ARGS HL_N(x) HL_N(idx) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int r = i % inner, t = i / inner;
    const int j = t % k, o = t / k;
    IT q = LD(idx, j);
    q = q < 0 ? q + dim : q;
    ST(y, i, (q >= 0 && q < dim) ? LD(x, (o * dim + (int)q) * inner + r) : (DT)0);
}

// Range over DT: y[i] = start + i * delta, start and delta read from one-element buffers.
__kernel void range(__global const DT* start, __global const DT* delta, __global DT* y,
                    const int n HL_ARGS HL_N(start) HL_N(delta) HL_N(y))
{
    const int i = get_global_id(0);
    if (i < n) ST(y, i, (DT)(LD(start, 0) + (DT)i * LD(delta, 0)));
}
