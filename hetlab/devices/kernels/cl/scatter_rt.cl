// ScatterElements and ScatterND with indices read at run time, reduction none. OpenCL 1.2 C.
// Where indices repeat, onnxruntime writes the updates in order: the last one stays. So
// does this: ``scatter_claim`` computes each update's flat offset and, with an atomic max,
// the largest update number aimed at each output element (its owner); ``scatter_owned``
// writes only the owner's value. An index out of range updates nothing (onnxruntime refuses
// such a run).
//
// DT the data, IT the indices (int or long), as in scatter.cl.

#ifdef __OPENCL_VERSION__
#define I8 char
#else
#define I8 signed char
#define atomic_max(p, v) atomicMax((int*)(p), (v))
#endif
#ifndef DT
#define DT float
#endif
#ifndef IT
#define IT int
#endif

// at[i] = the flat output offset of update i (-1 when an index is out of range), and
// owner[at[i]] raised to i. ScatterElements (nd_mode 0): meta = [ndim, axis, extent of the
// axis, shape[ndim] (the updates'), xst[ndim] (the data's strides)]. ScatterND (nd_mode 1):
// meta = [k, dims[k], st[k]], inner the elements of one update slice.
__kernel void scatter_claim(__global const IT* idx, __global int* at, __global int* owner,
                            __constant int* meta, const int nd_mode, const int inner,
                            const int n, const int ny
                            HL_ARGS HL_N(idx) HL_N(at) HL_N(owner))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    int off = 0, ok = 1;
    if (nd_mode) {
        const int k = meta[0], t = i / inner;
        off = i % inner;
        for (int j = 0; j < k; ++j) {
            const int dim = meta[1 + j];
            IT q = LD(idx, t * k + j);
            q = q < 0 ? q + dim : q;
            ok = ok && q >= 0 && q < dim;
            off += (int)q * meta[1 + k + j];
        }
    } else {
        const int nd = meta[0], ax = meta[1], dim = meta[2];
        IT q = LD(idx, i);
        q = q < 0 ? q + dim : q;
        ok = q >= 0 && q < dim;
        int t = i;
        for (int d = nd - 1; d >= 0; --d) {
            const int c = t % meta[3 + d];
            t /= meta[3 + d];
            off += (d == ax ? (int)q : c) * meta[3 + nd + d];
        }
    }
    ok = ok && off >= 0 && off < ny;
    ST(at, i, ok ? off : -1);
    if (ok) atomic_max(owner + off, i);
}

// y[at[i]] = upd[i] where update i owns its offset.
__kernel void scatter_owned(__global DT* y, __global const int* at, __global const int* owner,
                            __global const DT* upd, const int n
                            HL_ARGS HL_N(y) HL_N(at) HL_N(owner) HL_N(upd))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const int o = LD(at, i);
    if (o >= 0 && LD(owner, o) == i) ST(y, o, LD(upd, i));
}

// ScatterElements with a reduction (red: 1 add, 2 mul, 3 max, 4 min, as scatter.cl's
// scatter_at) and indices read at run time. Work-item l is one lane: the updates that share
// every coordinate but the axis. No two lanes meet at an output element, and a lane combines
// its updates into y in order along the axis, so every output element takes its updates in
// onnxruntime's order (its loop over the updates in row-major order). meta is
// scatter_claim's ScatterElements block. An index out of range updates nothing.
__kernel void scatter_lanes(__global DT* y, __global const IT* idx, __global const DT* upd,
                            __constant int* meta, const int red, const int lanes
                            HL_ARGS HL_N(y) HL_N(idx) HL_N(upd))
{
    const int l = get_global_id(0);
    if (l >= lanes) return;
    const int nd = meta[0], ax = meta[1], dim = meta[2], L = meta[3 + ax];
    int inner = 1;
    for (int d = ax + 1; d < nd; ++d) inner *= meta[3 + d];
    const int u0 = (l / inner) * L * inner + l % inner;  // the lane's update at axis index 0
    int t = u0, off = 0;
    for (int d = nd - 1; d >= 0; --d) {
        const int c = t % meta[3 + d];
        t /= meta[3 + d];
        off += d == ax ? 0 : c * meta[3 + nd + d];
    }
    for (int j = 0; j < L; ++j) {
        const int i = u0 + j * inner;
        IT q = LD(idx, i);
        q = q < 0 ? q + dim : q;
        if (q < 0 || q >= dim) continue;
        const int o = off + (int)q * meta[3 + nd + ax];
        const DT u = LD(upd, i), v = LD(y, o);
        DT w = u;
        if (red == 1) w = v + u;
        else if (red == 2) w = v * u;
        else if (red == 3) w = v < u ? u : v;
        else if (red == 4) w = u < v ? u : v;
        ST(y, o, w);
    }
}
