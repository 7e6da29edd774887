// Global-memory access of hetlab's kernels, prepended to every kernel file (device.source).
//
// Every read of a __global buffer goes through LD(buf, i), every write through ST(buf, i, v),
// and a pointer into a buffer at an offset is declared with VIEW(type, name, buf, offset).
// In the normal build these are the plain expressions: the kernels compile as written.
//
// With -DHETLAB_BOUNDS (the bounds-checked debug build, docs/opencl.md) a kernel ends with
// extra arguments, HL_ARGS (the unit's error record and the launch's index in its unit) and
// HL_N(buf) for each __global buffer: buf_hl0 and buf_hln, the valid index range
// [buf_hl0, buf_hln) of buf (0 and the element count for an argument; a VIEW shifts both by
// its offset). The host sets them by name (opencl/bounds.py). An index outside its range is
// not accessed (a read gives 0, a write is dropped) and the first one is recorded:
// err = [violations, site, line, index lo, index hi, count lo, count hi, is a write],
// with the index and count those of the underlying buffer.

#ifdef HETLAB_BOUNDS
#define HL_ARGS , __global int* hl_err, const int hl_site
#define HL_N(b) , const long b##_hl0, const long b##_hln
#define VIEW(T, v, b, off) \
    T v = (b) + (off); \
    const long v##_hl0 = b##_hl0 - (long)(off), v##_hln = b##_hln - (long)(off)

inline int hl_ok(__global int* err, int site, int line, int write, long i, long lo, long hi) {
    if (i >= lo && i < hi) return 1;
    if (atomic_inc((volatile __global int*)err) == 0) {
        const long j = i - lo, n = hi - lo;
        err[1] = site;
        err[2] = line;
        err[3] = (int)j;
        err[4] = (int)(j >> 32);
        err[5] = (int)n;
        err[6] = (int)(n >> 32);
        err[7] = write;
    }
    return 0;
}

#define HL_OK(b, i, w) hl_ok(hl_err, hl_site, __LINE__, (w), (long)(i), b##_hl0, b##_hln)
#define LD(b, i) (HL_OK(b, i, 0) ? (b)[i] : (__typeof__((b)[0]))0)
#define ST(b, i, v) (HL_OK(b, i, 1) ? (void)((b)[i] = (v)) : (void)0)
#else
#define HL_ARGS
#define HL_N(b)
#define VIEW(T, v, b, off) T v = (b) + (off)
#define LD(b, i) ((b)[i])
#define ST(b, i, v) ((b)[i] = (v))
#endif
