/* Branch-free float kernels for the net's forward pass, written so that
   gcc -O3 vectorises the loops over hidden units.  The array functions are
   compiled twice on x86-64 (SSE2 and AVX2, chosen at load time by the CPU);
   both do the same IEEE operations in the same order lane by lane (no
   fused multiply-adds, fixed summation order), so their results are
   bit-identical.  Used by bgfast/_net.pyx. */
#ifndef BGFAST_VECMATH_H
#define BGFAST_VECMATH_H

#include <stdint.h>
#include <string.h>

/* e^x: x = n ln2 + f with |f| <= ln2 / 2, e^f by a degree-6 minimax
   polynomial, 2^n put straight into the exponent bits.  The argument is
   clamped to [-87, 88] (the normal range), relative error about 2e-7. */
static inline float bgv_expf(float x)
{
    float fn, f, z, p, scale;
    int32_t bits;
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    fn = x * 1.44269504088896341f + 12582912.0f;   /* 1.5 * 2^23: rounds to the nearest */
    fn = fn - 12582912.0f;
    f = x - fn * 0.693359375f;                      /* ln 2 in two parts */
    f = f + fn * 2.12194440e-4f;
    z = f * f;
    p = 1.9875691500e-4f;
    p = p * f + 1.3981999507e-3f;
    p = p * f + 8.3334519073e-3f;
    p = p * f + 4.1665795894e-2f;
    p = p * f + 1.6666665459e-1f;
    p = p * f + 5.0000001201e-1f;
    p = p * z + f + 1.0f;
    bits = ((int32_t)fn + 127) << 23;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float bgv_sigmoid1(float x)
{
    return 1.0f / (1.0f + bgv_expf(-x));
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(BGFAST_NO_CLONES)
#define BGV_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define BGV_CLONES
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"   /* 32-byte vectors stay inside inlined code */
#endif
typedef float bgv_f8 __attribute__((vector_size(32)));
typedef int32_t bgv_i8 __attribute__((vector_size(32)));

/* bgv_sigmoid1 of 8 values at once (the same operations, lane by lane) */
static inline bgv_f8 bgv_sigmoid8(bgv_f8 x)
{
    const bgv_f8 lo = {-87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f, -87.0f};
    const bgv_f8 hi = {88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f, 88.0f};
    bgv_f8 fn, f, z, p, scale, one = hi / hi;
    bgv_i8 m, bits;
    x = -x;
    m = x < lo;
    x = (bgv_f8)((m & (bgv_i8)lo) | (~m & (bgv_i8)x));
    m = x > hi;
    x = (bgv_f8)((m & (bgv_i8)hi) | (~m & (bgv_i8)x));
    fn = x * 1.44269504088896341f + 12582912.0f;
    fn = fn - 12582912.0f;
    f = x - fn * 0.693359375f;
    f = f + fn * 2.12194440e-4f;
    z = f * f;
    p = f * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * f + 8.3334519073e-3f;
    p = p * f + 4.1665795894e-2f;
    p = p * f + 1.6666665459e-1f;
    p = p * f + 5.0000001201e-1f;
    p = p * z + f + 1.0f;
    bits = (__builtin_convertvector(fn, bgv_i8) + 127) << 23;
    scale = (bgv_f8)bits;
    return one / (one + p * scale);
}

/* h = b + the rows T[add[i] * H] - the rows T[sub[i] * H], added and then
   subtracted in the order given (b may be h).  The hidden units go in
   blocks of 32 kept in registers while the rows are summed. */
BGV_CLONES
static void bgv_rows(float *h, const float *b, const float *restrict T,
                     const int32_t *add, int nadd, const int32_t *sub, int nsub, int H)
{
    int i, j0 = 0, l;
    bgv_f8 a0, a1, a2, a3, r0, r1, r2, r3;
    const float *r;
    float t;
    for (; j0 + 32 <= H; j0 += 32) {
        memcpy(&a0, b + j0, 32);
        memcpy(&a1, b + j0 + 8, 32);
        memcpy(&a2, b + j0 + 16, 32);
        memcpy(&a3, b + j0 + 24, 32);
        for (i = 0; i < nadd; i++) {
            r = T + (size_t)add[i] * H + j0;
            memcpy(&r0, r, 32);
            memcpy(&r1, r + 8, 32);
            memcpy(&r2, r + 16, 32);
            memcpy(&r3, r + 24, 32);
            a0 += r0;
            a1 += r1;
            a2 += r2;
            a3 += r3;
        }
        for (i = 0; i < nsub; i++) {
            r = T + (size_t)sub[i] * H + j0;
            memcpy(&r0, r, 32);
            memcpy(&r1, r + 8, 32);
            memcpy(&r2, r + 16, 32);
            memcpy(&r3, r + 24, 32);
            a0 -= r0;
            a1 -= r1;
            a2 -= r2;
            a3 -= r3;
        }
        memcpy(h + j0, &a0, 32);
        memcpy(h + j0 + 8, &a1, 32);
        memcpy(h + j0 + 16, &a2, 32);
        memcpy(h + j0 + 24, &a3, 32);
    }
    for (l = j0; l < H; l++) {
        t = b[l];
        for (i = 0; i < nadd; i++)
            t += T[(size_t)add[i] * H + l];
        for (i = 0; i < nsub; i++)
            t -= T[(size_t)sub[i] * H + l];
        h[l] = t;
    }
}

/* the 5 output sums b2[o] + sum_j sigmoid(h[j]) w2t[o * H + j]: the
   sigmoids of 8 hidden units at a time go straight into 5 x 8 partial
   sums, added up in a fixed order at the end */
BGV_CLONES
static void bgv_output_sums(const float *restrict h, const float *restrict w2t,
                            const float *restrict b2, int H, float *restrict s)
{
    float acc[5][8], a[8], t;
    bgv_f8 x;
    int j, l, o;
    for (o = 0; o < 5; o++)
        for (l = 0; l < 8; l++)
            acc[o][l] = 0.0f;
    for (j = 0; j + 8 <= H; j += 8) {
        memcpy(&x, h + j, sizeof x);
        x = bgv_sigmoid8(x);
        memcpy(a, &x, sizeof a);
        for (o = 0; o < 5; o++)
            for (l = 0; l < 8; l++)
                acc[o][l] += a[l] * w2t[(size_t)o * H + j + l];
    }
    for (o = 0; o < 5; o++) {
        t = 0.0f;
        for (l = j; l < H; l++)
            t += bgv_sigmoid1(h[l]) * w2t[(size_t)o * H + l];
        s[o] = b2[o] + ((((acc[o][0] + acc[o][4]) + (acc[o][1] + acc[o][5]))
                         + ((acc[o][2] + acc[o][6]) + (acc[o][3] + acc[o][7]))) + t);
    }
}

#endif
