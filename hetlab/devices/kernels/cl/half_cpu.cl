// half.cl's float16 conversions shaped for a CPU device (PoCL); CPU-only (the CUDA backend
// does not build this file). OpenCL 1.2 C.
//
// half.cl takes one element a work-item and branches per element, which PoCL neither
// vectorises nor amortises over the work-item. Here a work-item converts EW consecutive
// elements as two 8-lane vectors: every branch of half.cl's integer code is computed in every
// lane and the lane's case selected, so the codes are half.cl's bit for bit. A subnormal
// half, which half.cl normalises in a loop, is m * 2^-24 here: exact in float, the same bits.
// A tail shorter than EW goes element by element through half.cl's functions.
#include "half.cl"

#define EW 16

#define LDF8(b, i) ((float8)(LD(b, (i)), LD(b, (i) + 1), LD(b, (i) + 2), LD(b, (i) + 3), \
                             LD(b, (i) + 4), LD(b, (i) + 5), LD(b, (i) + 6), LD(b, (i) + 7)))
#define LDH8(b, i) ((uint8)((uint)LD(b, (i)), (uint)LD(b, (i) + 1), (uint)LD(b, (i) + 2), \
                            (uint)LD(b, (i) + 3), (uint)LD(b, (i) + 4), (uint)LD(b, (i) + 5), \
                            (uint)LD(b, (i) + 6), (uint)LD(b, (i) + 7)))

inline uint8 float_to_half8(const float8 f) {
    const uint8 u = as_uint8(f);
    const uint8 sign = (u >> 16) & 0x8000u;
    const uint8 a = u & 0x7fffffffu;
    const uint8 nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    const uint8 normal = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;
    // subnormal or zero: shift 14..24 as half.cl; 25 (for shifts above 24) rounds to 0 alike
    const uint8 shift = clamp((uint8)126u - min(a >> 23, (uint8)126u), (uint8)14u, (uint8)25u);
    const uint8 m = (a & 0x7fffffu) | 0x800000u;
    const uint8 half_ulp = (uint8)1u << (shift - 1u);
    const uint8 rest = m & ((half_ulp << 1) - 1u);
    const uint8 down = m >> shift;
    const int8 up = (rest > half_ulp) | ((rest == half_ulp) & ((down & 1u) != 0u));
    uint8 h = select(down, down + 1u, up);
    h = select(h, normal, a >= 0x38800000u);
    h = select(h, (uint8)0x7c00u, a >= 0x47800000u);
    h = select(h, nan, a > 0x7f800000u);
    return sign | h;
}

inline float8 half_to_float8(const uint8 h) {
    const uint8 sign = (h & 0x8000u) << 16;
    const uint8 e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    uint8 u = ((e + 112u) << 23) | (m << 13);
    u = select(u, as_uint8(convert_float8(m) * 0x1p-24f), e == 0u);
    u = select(u, 0x7f800000u | (m << 13), e == 0x1fu);
    return as_float8(sign | u);
}

// half.cl's from_half to float. Global ceil(n / EW).
__kernel void from_half_cpu(__global const U16* x, __global float* y, const int n
                            HL_ARGS HL_N(x) HL_N(y))
{
    const int i0 = get_global_id(0) * EW;
    if (i0 >= n) return;
    if (i0 + EW <= n) {
        float t[EW] __attribute__((aligned(32)));
        *(float8*)t = half_to_float8(LDH8(x, i0));
        *(float8*)(t + 8) = half_to_float8(LDH8(x, i0 + 8));
        for (int j = 0; j < EW; ++j) ST(y, i0 + j, t[j]);
        return;
    }
    for (int j = i0; j < n; ++j) ST(y, j, half_to_float(LD(x, j)));
}

// EW elements of x from i0 to y's float16 codes; with back != 0 (a constant), x rewritten
// as those values back in float (half.cl's to_half_round)
#define TO_HALF_BLOCK(back)                                                               \
    const int i0 = get_global_id(0) * EW;                                                 \
    if (i0 >= n) return;                                                                  \
    if (i0 + EW <= n) {                                                                   \
        uint t[EW] __attribute__((aligned(32)));                                          \
        *(uint8*)t = float_to_half8(LDF8(x, i0));                                         \
        *(uint8*)(t + 8) = float_to_half8(LDF8(x, i0 + 8));                               \
        for (int j = 0; j < EW; ++j) ST(y, i0 + j, (U16)t[j]);                            \
        if (back) {                                                                       \
            float r[EW] __attribute__((aligned(32)));                                     \
            *(float8*)r = half_to_float8(*(uint8*)t);                                     \
            *(float8*)(r + 8) = half_to_float8(*(uint8*)(t + 8));                         \
            for (int j = 0; j < EW; ++j) ST(x, i0 + j, r[j]);                             \
        }                                                                                 \
        return;                                                                           \
    }                                                                                     \
    for (int j = i0; j < n; ++j) {                                                        \
        const U16 h = float_to_half(LD(x, j));                                            \
        ST(y, j, h);                                                                      \
        if (back) ST(x, j, half_to_float(h));                                             \
    }

// half.cl's to_half from float. Global ceil(n / EW).
__kernel void to_half_cpu(__global float* x, __global U16* y, const int n
                          HL_ARGS HL_N(x) HL_N(y))
{
    TO_HALF_BLOCK(0)
}

// half.cl's to_half_round. Global ceil(n / EW).
__kernel void to_half_round_cpu(__global float* x, __global U16* y, const int n
                                HL_ARGS HL_N(x) HL_N(y))
{
    TO_HALF_BLOCK(1)
}

// half.cl's round_half. Global ceil(n / EW).
__kernel void round_half_cpu(__global float* x, const int n HL_ARGS HL_N(x))
{
    const int i0 = get_global_id(0) * EW;
    if (i0 >= n) return;
    if (i0 + EW <= n) {
        float r[EW] __attribute__((aligned(32)));
        *(float8*)r = half_to_float8(float_to_half8(LDF8(x, i0)));
        *(float8*)(r + 8) = half_to_float8(float_to_half8(LDF8(x, i0 + 8)));
        for (int j = 0; j < EW; ++j) ST(x, i0 + j, r[j]);
        return;
    }
    for (int j = i0; j < n; ++j) ST(x, j, half_to_float(float_to_half(LD(x, j))));
}
