// Cast to and from float16 (IEEE binary16), held as its 16 bits in an unsigned short. The
// conversions are integer code (no cl_khr_fp16, no vload_half, the same in the CUDA
// translation): float -> half rounds to nearest, ties to even, with subnormals, overflow to
// infinity and NaN kept a (quiet) NaN; half -> float is exact. Values of other types go
// through float: IT -> float -> half, half -> float -> OT (C's conversion; to bool, nonzero
// -> 1; to a 1-byte integer through int, as eltwise.cl's cast).

#ifdef __OPENCL_VERSION__
#define U16 ushort
#define I8 char
#define F_BITS(f) as_uint(f)
#define BITS_F(u) as_float(u)
#else
#define U16 unsigned short
#define I8 signed char
#define F_BITS(f) __float_as_uint(f)
#define BITS_F(u) __uint_as_float(u)
#endif
#ifndef IT
#define IT float
#endif
#ifndef OT
#define OT float
#endif

inline U16 float_to_half(float f) {
    const unsigned int u = F_BITS(f);
    const unsigned int sign = (u >> 16) & 0x8000u;
    const unsigned int a = u & 0x7fffffffu;
    unsigned int h;
    if (a > 0x7f800000u) {
        h = 0x7e00u | ((a >> 13) & 0x3ffu);  // NaN: quiet, the top payload bits kept
    } else if (a >= 0x47800000u) {
        h = 0x7c00u;  // |f| >= 65536 (or infinity): infinity
    } else if (a >= 0x38800000u) {  // a normal half: rebias, round the 13 dropped bits
        const unsigned int odd = (a >> 13) & 1u;
        h = (a - 0x38000000u + 0xfffu + odd) >> 13;  // a carry may reach infinity: right
    } else {  // a subnormal half or zero, in units of 2^-24
        const unsigned int e = a >> 23;
        const unsigned int shift = 126u - e;  // >= 14
        if (shift > 24u) {
            h = 0u;
        } else {
            const unsigned int m = (a & 0x7fffffu) | 0x800000u;
            const unsigned int half_ulp = 1u << (shift - 1u);
            const unsigned int rest = m & ((1u << shift) - 1u);
            h = m >> shift;
            h += (rest > half_ulp || (rest == half_ulp && (h & 1u))) ? 1u : 0u;
        }
    }
    return (U16)(sign | h);
}

inline float half_to_float(U16 v) {
    const unsigned int h = (unsigned int)v;
    const unsigned int sign = (h & 0x8000u) << 16;
    unsigned int e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    unsigned int u;
    if (e == 0x1fu) {
        u = sign | 0x7f800000u | (m << 13);
    } else if (e != 0u) {
        u = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m == 0u) {
        u = sign;
    } else {  // subnormal: normalize
        e = 113u;
        while ((m & 0x400u) == 0u) {
            m <<= 1;
            e -= 1u;
        }
        u = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    return BITS_F(u);
}

__kernel void to_half(__global const IT* x, __global U16* y, const int n HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i < n) ST(y, i, float_to_half((float)LD(x, i)));
}

__kernel void from_half(__global const U16* x, __global OT* y, const int n
                        HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const float v = half_to_float(LD(x, i));
#ifdef OT_BOOL
    ST(y, i, (OT)(v != 0.0f));
#elif defined(OT_NARROW)
    ST(y, i, (OT)(int)v);
#else
    ST(y, i, (OT)v);
#endif
}

// to_half from float, and x rewritten as that float16 value back in float (the rounded twin
// that float16 readers of the same unit read, so they need no from_half of their own)
__kernel void to_half_round(__global float* x, __global U16* y, const int n
                            HL_ARGS HL_N(x) HL_N(y))
{
    const int i = get_global_id(0);
    if (i >= n) return;
    const U16 h = float_to_half(LD(x, i));
    ST(y, i, h);
    ST(x, i, half_to_float(h));
}

// x rewritten as its value rounded to float16 and back, where no float16 copy is needed
__kernel void round_half(__global float* x, const int n HL_ARGS HL_N(x))
{
    const int i = get_global_id(0);
    if (i < n) ST(x, i, half_to_float(float_to_half(LD(x, i))));
}
