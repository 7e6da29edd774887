// GatherND, GatherElements (indices read at run time) and ScatterND, ScatterElements (flat
// offsets computed on the host from constant indices). OpenCL 1.2 C.
//
// Element types come from build options as in eltwise.cl: DT the data (float when not given),
// IT the indices (int or long). A negative index counts from the end of its axis; one out of
// range reads 0 (onnxruntime refuses such a run).

#ifdef __OPENCL_VERSION__
#define I8 char
#else
#define I8 signed char  // int8 as in eltwise.cl: plain char's sign is the CUDA host's choice
#endif
#ifndef DT
#define DT float
#endif
#ifndef IT
#define IT int
#endif

// y[i] = x[batch * bsize + sum_j q_j * st_j + r]: the i-th output element is element r of the
// slice the t-th index tuple (k entries q_j, axis extents dims_j and strides st_j in meta =
// [k, dims[k], st[k]]) names, t = i / inner; the tuple's batch is t / per_batch.
__kernel void gather_nd(__global const DT* x, __global const IT* idx, __global DT* y,
                        __constant int* meta, const int per_batch, const int bsize,
                        const int inner, const int n HL_ARGS HL_N(x) HL_N(idx) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int k = meta[0];
    const int r = i % inner, t = i / inner;
    int off = (t / per_batch) * bsize + r, ok = 1;
    for (int j = 0; j < k; ++j) {
        const int dim = meta[1 + j];
        IT q = LD(idx, t * k + j);
        q = q < 0 ? q + dim : q;
        ok = ok && q >= 0 && q < dim;
        off += (int)q * meta[1 + k + j];
    }
    ST(y, i, ok ? LD(x, off) : (DT)0);
}

// y[i] = x at the i-th output element's coordinates with the axis coordinate replaced by
// idx[i]; meta = [ndim, axis, x's extent on the axis, shape[ndim] (the output's = the
// indices'), xst[ndim] (x's strides)].
__kernel void gather_elements(__global const DT* x, __global const IT* idx, __global DT* y,
                              __constant int* meta, const int n
                              HL_ARGS HL_N(x) HL_N(idx) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int nd = meta[0], ax = meta[1], dim = meta[2];
    IT q = LD(idx, i);
    q = q < 0 ? q + dim : q;
    const int ok = q >= 0 && q < dim;
    int t = i, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
        const int c = t % meta[3 + d];
        t /= meta[3 + d];
        off += (d == ax ? (int)q : c) * meta[3 + nd + d];
    }
    ST(y, i, ok ? LD(x, off) : (DT)0);
}

// y[at[i]] = upd[i] (red 0), or y[at[i]] combined with upd[i] by add (1), mul (2), max (3),
// min (4; as C++'s std::max and std::min). The host checks that the offsets at[] are distinct: no two work-items meet.
__kernel void scatter_at(__global DT* y, __global const int* at, __global const DT* upd,
                         const int red, const int n HL_ARGS HL_N(y) HL_N(at) HL_N(upd))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int o = LD(at, i);
    const DT u = LD(upd, i), v = LD(y, o);
    DT w = u;
    if (red == 1) w = v + u;
    else if (red == 2) w = v * u;
    else if (red == 3) w = v < u ? u : v;
    else if (red == 4) w = u < v ? u : v;
    ST(y, o, w);
}
