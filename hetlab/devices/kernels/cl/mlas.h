// onnxruntime's CPU activations (MLAS), prepended to every kernel file after bounds.h
// (device.source): kernels that must agree with onnxruntime to the last bit use these
// instead of the exact functions. Both are rational approximations with Eigen's
// coefficients, evaluated with FMAs as MLAS's AVX2/FMA3 kernels evaluate them.

// A product and a sum each rounded on its own, where onnxruntime rounds them so: NVRTC
// contracts a * b + c into an FMA even across statements (--fmad), OpenCL C only within one
// expression, so callers write them as statements apart.
#ifdef __OPENCL_VERSION__
#define MUL_RN(a, b) ((a) * (b))
#define ADD_RN(a, b) ((a) + (b))
#else
#define MUL_RN(a, b) __fmul_rn((a), (b))
#define ADD_RN(a, b) __fadd_rn((a), (b))
#endif

// A fused multiply-add, rounded once. With -DFAST_FMA (the CPU kernels' build under PoCL,
// which is clang) it is clang's builtin, one vfmadd: PoCL's fma() is a call, which made
// mlas_tanh 4.7x slower (23 against 4.9 ns an element on two cores); the bits are the same.
#ifdef FAST_FMA
#define MLAS_FMA(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define MLAS_FMA(a, b, c) fma((a), (b), (c))
#endif

// The logistic function as onnxruntime's CPU kernels compute it (MLAS, coefficients from
// Eigen): a rational approximation on x clamped to [-18, 18], the result clamped to [0, 1].
// It is exactly 0 below -18 and up to a few times the true value just above; the exact
// 1 / (1 + exp(-x)) differs there by up to 6e-8 absolute, which dominates the relative error
// of probability maps whose values are mostly near 0. Matching the reference keeps them equal.
inline float logistic(float x) {
    x = clamp(x, -18.0f, 18.0f);
    const float x2 = x * x;
    float p = MLAS_FMA(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
    p = MLAS_FMA(p, x2, 6.08574864600143e-05f);
    p = MLAS_FMA(p, x2, 8.51377133304701e-03f);
    p = MLAS_FMA(p, x2, 2.48287947061529e-01f);
    p = p * x;
    float q = MLAS_FMA(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
    q = MLAS_FMA(q, x2, 6.29106785017040e-06f);
    q = MLAS_FMA(q, x2, 1.70198817374094e-03f);
    q = MLAS_FMA(q, x2, 1.16817656904453e-01f);
    q = MLAS_FMA(q, x2, 9.93151921023180e-01f);
    return clamp(p / q + 0.5f, 0.0f, 1.0f);
}

// The hyperbolic tangent as MLAS computes it: a rational approximation on x clamped to
// [-9, 9] (MlasTanhKernel), within a few ulp of tanh.
inline float mlas_tanh(float x) {
    x = clamp(x, -9.0f, 9.0f);
    const float x2 = x * x;
    float p = MLAS_FMA(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);
    p = MLAS_FMA(p, x2, -8.60467152213735e-11f);
    p = MLAS_FMA(p, x2, 5.12229709037114e-08f);
    p = MLAS_FMA(p, x2, 1.48572235717979e-05f);
    p = MLAS_FMA(p, x2, 6.37261928875436e-04f);
    p = MLAS_FMA(p, x2, 4.89352455891786e-03f);
    p = p * x;
    float q = MLAS_FMA(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);
    q = MLAS_FMA(q, x2, 2.26843463243900e-03f);
    q = MLAS_FMA(q, x2, 4.89352518554385e-03f);
    return p / q;
}

#ifdef __OPENCL_VERSION__
// logistic and mlas_tanh on eight lanes, the same operations lane by lane (the CPU kernels)
inline float8 logistic8(float8 x) {
    x = clamp(x, -18.0f, 18.0f);
    const float8 x2 = x * x;
    float8 p = fma(x2, (float8)(4.37031012579801e-11f), (float8)(1.15627324459942e-07f));
    p = fma(p, x2, (float8)(6.08574864600143e-05f));
    p = fma(p, x2, (float8)(8.51377133304701e-03f));
    p = fma(p, x2, (float8)(2.48287947061529e-01f));
    p = p * x;
    float8 q = fma(x2, (float8)(6.10247389755681e-13f), (float8)(5.76102136993427e-09f));
    q = fma(q, x2, (float8)(6.29106785017040e-06f));
    q = fma(q, x2, (float8)(1.70198817374094e-03f));
    q = fma(q, x2, (float8)(1.16817656904453e-01f));
    q = fma(q, x2, (float8)(9.93151921023180e-01f));
    return clamp(p / q + 0.5f, 0.0f, 1.0f);
}

inline float8 mlas_tanh8(float8 x) {
    x = clamp(x, -9.0f, 9.0f);
    const float8 x2 = x * x;
    float8 p = fma(x2, (float8)(-2.76076847742355e-16f), (float8)(2.00018790482477e-13f));
    p = fma(p, x2, (float8)(-8.60467152213735e-11f));
    p = fma(p, x2, (float8)(5.12229709037114e-08f));
    p = fma(p, x2, (float8)(1.48572235717979e-05f));
    p = fma(p, x2, (float8)(6.37261928875436e-04f));
    p = fma(p, x2, (float8)(4.89352455891786e-03f));
    p = p * x;
    float8 q = fma(x2, (float8)(1.19825839466702e-06f), (float8)(1.18534705686654e-04f));
    q = fma(q, x2, (float8)(2.26843463243900e-03f));
    q = fma(q, x2, (float8)(4.89352518554385e-03f));
    return p / q;
}
#endif
