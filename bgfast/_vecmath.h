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

/* e^x for the sigmoids: x = n ln2 + f with |f| <= ln2 / 2, e^f by a
   degree-4 polynomial 1 + f + f^2 q(f) (q fitted for the least maximum
   relative error), 2^n put straight into the exponent bits.  The argument
   is clamped to [-87, 88] (the normal range).  Relative error about 5e-6
   for |x| < 5; f = x - n ln2 in one step loses accuracy as |n| grows,
   where the sigmoid's slope (below 1e-2) makes it count for less.  So a
   sigmoid is within about 1.5e-6 of the exact one. */
static inline float bgv_expf(float x)
{
    float fn, f, z, p, scale;
    int32_t bits;
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    fn = x * 1.44269504088896341f + 12582912.0f;   /* 1.5 * 2^23: rounds to the nearest */
    fn = fn - 12582912.0f;
    f = x - fn * 0.693147181f;
    z = f * f;
    p = 4.1277628391981125e-2f;
    p = p * f + 1.6753533482551575e-1f;
    p = p * f + 5.000512003898621e-1f;
    p = p * z + f + 1.0f;
    bits = ((int32_t)fn + 127) << 23;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

static inline float bgv_sigmoid1(float x)
{
    return 1.0f / (1.0f + bgv_expf(-x));
}

#include "_bits.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(BGFAST_NO_CLONES)
#define BGV_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define BGV_CLONES
#endif

/* A helper that takes or returns a 32-byte vector by value is always
   inlined, at every optimisation level (-O0 included): such a value is
   passed in a ymm register inside the AVX2 clone but in memory elsewhere,
   so a real call from the AVX2 clone to the one non-AVX copy of the helper
   would read garbage (the BGFAST_DEBUG=1 build's crash).  Inlined, each
   clone gets its own copy and no vector crosses a call, which is why the
   ABI warning below can be silenced. */
#if defined(__GNUC__)
#define BGV_VECTOR_HELPER static inline __attribute__((always_inline))
#else
#define BGV_VECTOR_HELPER static inline
#endif
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"   /* no vector crosses a call: see BGV_VECTOR_HELPER */
#endif
typedef float bgv_f8 __attribute__((vector_size(32)));
typedef int32_t bgv_i8 __attribute__((vector_size(32)));

/* bgv_sigmoid1 of 8 values at once (the same operations, lane by lane) */
BGV_VECTOR_HELPER bgv_f8 bgv_sigmoid8(bgv_f8 x)
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
    f = x - fn * 0.693147181f;
    z = f * f;
    p = f * 4.1277628391981125e-2f + 1.6753533482551575e-1f;
    p = p * f + 5.000512003898621e-1f;
    p = p * z + f + 1.0f;
    bits = (__builtin_convertvector(fn, bgv_i8) + 127) << 23;
    scale = (bgv_f8)bits;
    return one / (one + p * scale);
}

/* Blocks of 32 hidden units as four 8-float vectors v0..v3 (kept in
   registers by the loops below): loaded from, and stored to, p[0..31]. */
#define BGV_LOAD32(v, p) (memcpy(&v##0, (p), 32), memcpy(&v##1, (p) + 8, 32), \
                          memcpy(&v##2, (p) + 16, 32), memcpy(&v##3, (p) + 24, 32))
#define BGV_STORE32(p, v) (memcpy((p), &v##0, 32), memcpy((p) + 8, &v##1, 32), \
                           memcpy((p) + 16, &v##2, 32), memcpy((p) + 24, &v##3, 32))

/* Blocks of 64 hidden units as eight 8-float vectors v0..v7. */
#define BGV_LOAD64(v, p) (memcpy(&v##0, (p), 32), memcpy(&v##1, (p) + 8, 32), \
                          memcpy(&v##2, (p) + 16, 32), memcpy(&v##3, (p) + 24, 32), \
                          memcpy(&v##4, (p) + 32, 32), memcpy(&v##5, (p) + 40, 32), \
                          memcpy(&v##6, (p) + 48, 32), memcpy(&v##7, (p) + 56, 32))
#define BGV_STORE64(p, v) (memcpy((p), &v##0, 32), memcpy((p) + 8, &v##1, 32), \
                           memcpy((p) + 16, &v##2, 32), memcpy((p) + 24, &v##3, 32), \
                           memcpy((p) + 32, &v##4, 32), memcpy((p) + 40, &v##5, 32), \
                           memcpy((p) + 48, &v##6, 32), memcpy((p) + 56, &v##7, 32))

/* h = b + the rows T[add[i] * H] - the rows T[sub[i] * H], added and then
   subtracted in the order given (b may be h).  The hidden units go in
   blocks of 64 (then 32) kept in registers while the rows are summed:
   eight independent chains of additions hide the adder's latency. */
BGV_CLONES
static void bgv_rows(float *h, const float *b, const float *restrict T,
                     const int32_t *add, int nadd, const int32_t *sub, int nsub, int H)
{
    int i, j0 = 0, l;
    bgv_f8 a0, a1, a2, a3, a4, a5, a6, a7, r0, r1, r2, r3, r4, r5, r6, r7;
    const float *rp;
    float t;
    for (; j0 + 64 <= H; j0 += 64) {
        BGV_LOAD64(a, b + j0);
        for (i = 0; i < nadd; i++) {
            rp = T + (size_t)add[i] * H + j0;
            BGV_LOAD64(r, rp);
            a0 += r0;
            a1 += r1;
            a2 += r2;
            a3 += r3;
            a4 += r4;
            a5 += r5;
            a6 += r6;
            a7 += r7;
        }
        for (i = 0; i < nsub; i++) {
            rp = T + (size_t)sub[i] * H + j0;
            BGV_LOAD64(r, rp);
            a0 -= r0;
            a1 -= r1;
            a2 -= r2;
            a3 -= r3;
            a4 -= r4;
            a5 -= r5;
            a6 -= r6;
            a7 -= r7;
        }
        BGV_STORE64(h + j0, a);
    }
    for (; j0 + 32 <= H; j0 += 32) {
        BGV_LOAD32(a, b + j0);
        for (i = 0; i < nadd; i++) {
            rp = T + (size_t)add[i] * H + j0;
            BGV_LOAD32(r, rp);
            a0 += r0;
            a1 += r1;
            a2 += r2;
            a3 += r3;
        }
        for (i = 0; i < nsub; i++) {
            rp = T + (size_t)sub[i] * H + j0;
            BGV_LOAD32(r, rp);
            a0 -= r0;
            a1 -= r1;
            a2 -= r2;
            a3 -= r3;
        }
        BGV_STORE32(h + j0, a);
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

/* h += sum over q < nf of f[q] * W[q * H ..], the q in order (rows with
   f[q] == 0 skipped), 64 (then 32) hidden units at a time in registers */
BGV_CLONES
static void bgv_axpys(float *h, const float *restrict W, const float *restrict f, int nf, int H)
{
    int q, j0 = 0, l;
    bgv_f8 a0, a1, a2, a3, a4, a5, a6, a7, r0, r1, r2, r3, r4, r5, r6, r7;
    const float *rp;
    float t;
    for (; j0 + 64 <= H; j0 += 64) {
        BGV_LOAD64(a, h + j0);
        for (q = 0; q < nf; q++) {
            if (f[q] == 0.0f)
                continue;
            rp = W + (size_t)q * H + j0;
            BGV_LOAD64(r, rp);
            a0 += f[q] * r0;
            a1 += f[q] * r1;
            a2 += f[q] * r2;
            a3 += f[q] * r3;
            a4 += f[q] * r4;
            a5 += f[q] * r5;
            a6 += f[q] * r6;
            a7 += f[q] * r7;
        }
        BGV_STORE64(h + j0, a);
    }
    for (; j0 + 32 <= H; j0 += 32) {
        BGV_LOAD32(a, h + j0);
        for (q = 0; q < nf; q++) {
            if (f[q] == 0.0f)
                continue;
            rp = W + (size_t)q * H + j0;
            BGV_LOAD32(r, rp);
            a0 += f[q] * r0;
            a1 += f[q] * r1;
            a2 += f[q] * r2;
            a3 += f[q] * r3;
        }
        BGV_STORE32(h + j0, a);
    }
    for (l = j0; l < H; l++) {
        t = h[l];
        for (q = 0; q < nf; q++)
            if (f[q] != 0.0f)
                t += f[q] * W[(size_t)q * H + l];
        h[l] = t;
    }
}

/* the 5 output sums b2[o] + sum_j sigmoid(h[j]) w2t[o * H + j]: the
   sigmoids of the hidden units first (8 at a time), then 5 x 8 partial
   sums (held in registers: eight lanes per output, j in order), added up
   in a fixed order at the end.  H is at most BGV_MAX_HIDDEN (at least
   bgfast/_net.pxd's NET_MAX_HIDDEN: _net checks it on import). */
#define BGV_MAX_HIDDEN 256
BGV_CLONES
static void bgv_output_sums(const float *restrict h, const float *restrict w2t,
                            const float *restrict b2, int H, float *restrict s)
{
    float sg[BGV_MAX_HIDDEN], acc[5][8], t;
    bgv_f8 x, a0, a1, a2, a3, a4, w;
    int j, l, o, J = H & ~7;
    for (j = 0; j < J; j += 8) {
        memcpy(&x, h + j, sizeof x);
        x = bgv_sigmoid8(x);
        memcpy(sg + j, &x, sizeof x);
    }
    a0 = a1 = a2 = a3 = a4 = (bgv_f8){0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    for (j = 0; j < J; j += 8) {
        memcpy(&x, sg + j, sizeof x);
        memcpy(&w, w2t + j, sizeof w);
        a0 += x * w;
        memcpy(&w, w2t + (size_t)H + j, sizeof w);
        a1 += x * w;
        memcpy(&w, w2t + (size_t)2 * H + j, sizeof w);
        a2 += x * w;
        memcpy(&w, w2t + (size_t)3 * H + j, sizeof w);
        a3 += x * w;
        memcpy(&w, w2t + (size_t)4 * H + j, sizeof w);
        a4 += x * w;
    }
    memcpy(acc[0], &a0, sizeof a0);
    memcpy(acc[1], &a1, sizeof a1);
    memcpy(acc[2], &a2, sizeof a2);
    memcpy(acc[3], &a3, sizeof a3);
    memcpy(acc[4], &a4, sizeof a4);
    for (o = 0; o < 5; o++) {
        t = 0.0f;
        for (l = J; l < H; l++)
            t += bgv_sigmoid1(h[l]) * w2t[(size_t)o * H + l];
        s[o] = b2[o] + ((((acc[o][0] + acc[o][4]) + (acc[o][1] + acc[o][5]))
                         + ((acc[o][2] + acc[o][6]) + (acc[o][3] + acc[o][7]))) + t);
    }
}


/* The plays of one roll against their base board: bit i of *diff set where
   r[i] != base[i], bit i of *nz where r[i] != 0 (i < 50: a board's two rows
   of 25 slots). */
static inline void bgv_board_masks(const uint8_t *r, const uint8_t *base, uint64_t *diff,
                                   uint64_t *nz)
{
#if defined(__SSE2__)
    const __m128i z = _mm_setzero_si128();
    __m128i a0 = _mm_loadu_si128((const __m128i *)r);
    __m128i a1 = _mm_loadu_si128((const __m128i *)(r + 16));
    __m128i a2 = _mm_loadu_si128((const __m128i *)(r + 32));
    __m128i a3 = _mm_loadu_si128((const __m128i *)(r + 34));    /* bytes 34..49 */
    uint64_t e, n;
    e = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a0, _mm_loadu_si128((const __m128i *)base)))
        | (uint64_t)(uint16_t)_mm_movemask_epi8(
              _mm_cmpeq_epi8(a1, _mm_loadu_si128((const __m128i *)(base + 16)))) << 16
        | (uint64_t)(uint16_t)_mm_movemask_epi8(
              _mm_cmpeq_epi8(a2, _mm_loadu_si128((const __m128i *)(base + 32)))) << 32
        | (uint64_t)((uint16_t)_mm_movemask_epi8(
              _mm_cmpeq_epi8(a3, _mm_loadu_si128((const __m128i *)(base + 34)))) >> 14) << 48;
    n = (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a0, z))
        | (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a1, z)) << 16
        | (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a2, z)) << 32
        | (uint64_t)((uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a3, z)) >> 14) << 48;
    *diff = ~e & 0x3FFFFFFFFFFFFULL;
    *nz = ~n & 0x3FFFFFFFFFFFFULL;
#else
    uint64_t d = 0, n = 0;
    int i;
    for (i = 0; i < 50; i++) {
        d |= (uint64_t)(r[i] != base[i]) << i;
        n |= (uint64_t)(r[i] != 0) << i;
    }
    *diff = d;
    *nz = n;
#endif
}

/* One play's evaluation from its base board's hidden sums hb, fused: h =
   hb + the rows T[add[i] * H] - the rows T[sub[i] * H] (in order), then h
   += fv[q] * W[fi[q] * H ..] for q < nfv in order (the hand-made inputs
   that differ from the base's, by how much), then the 5 output sums as
   bgv_output_sums computes them; hidden units in blocks of 32 held in
   registers. */
BGV_CLONES
static void bgv_eval_play(const float *hb, const float *restrict T, const int32_t *add, int nadd,
                          const int32_t *sub, int nsub, const float *restrict W,
                          const int32_t *fi, const float *restrict fv, int nfv,
                          const float *restrict w2t,
                          const float *restrict b2, int H, float *restrict s)
{
    bgv_f8 a0, a1, a2, a3, r0, r1, r2, r3, c0, c1, c2, c3, c4, w, x;
    float acc[5][8], t[5], v;
    const float *rp;
    int i, j0 = 0, l, o, q, J;
    c0 = c1 = c2 = c3 = c4 = (bgv_f8){0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
#define BGV_ACC(v, j)                                   \
    do {                                                \
        x = bgv_sigmoid8(v);                            \
        memcpy(&w, w2t + (j), sizeof w);                \
        c0 += x * w;                                    \
        memcpy(&w, w2t + (size_t)H + (j), sizeof w);    \
        c1 += x * w;                                    \
        memcpy(&w, w2t + (size_t)2 * H + (j), sizeof w); \
        c2 += x * w;                                    \
        memcpy(&w, w2t + (size_t)3 * H + (j), sizeof w); \
        c3 += x * w;                                    \
        memcpy(&w, w2t + (size_t)4 * H + (j), sizeof w); \
        c4 += x * w;                                    \
    } while (0)
    for (; j0 + 32 <= H; j0 += 32) {
        BGV_LOAD32(a, hb + j0);
        for (i = 0; i < nadd; i++) {
            rp = T + (size_t)add[i] * H + j0;
            BGV_LOAD32(r, rp);
            a0 += r0;
            a1 += r1;
            a2 += r2;
            a3 += r3;
        }
        for (i = 0; i < nsub; i++) {
            rp = T + (size_t)sub[i] * H + j0;
            BGV_LOAD32(r, rp);
            a0 -= r0;
            a1 -= r1;
            a2 -= r2;
            a3 -= r3;
        }
        for (q = 0; q < nfv; q++) {
            rp = W + (size_t)fi[q] * H + j0;
            BGV_LOAD32(r, rp);
            a0 += fv[q] * r0;
            a1 += fv[q] * r1;
            a2 += fv[q] * r2;
            a3 += fv[q] * r3;
        }
        BGV_ACC(a0, j0);
        BGV_ACC(a1, j0 + 8);
        BGV_ACC(a2, j0 + 16);
        BGV_ACC(a3, j0 + 24);
    }
    J = H & ~7;
    for (; j0 < J; j0 += 8) {
        memcpy(&a0, hb + j0, sizeof a0);
        for (i = 0; i < nadd; i++) {
            memcpy(&r0, T + (size_t)add[i] * H + j0, sizeof r0);
            a0 += r0;
        }
        for (i = 0; i < nsub; i++) {
            memcpy(&r0, T + (size_t)sub[i] * H + j0, sizeof r0);
            a0 -= r0;
        }
        for (q = 0; q < nfv; q++) {
            memcpy(&r0, W + (size_t)fi[q] * H + j0, sizeof r0);
            a0 += fv[q] * r0;
        }
        BGV_ACC(a0, j0);
    }
#undef BGV_ACC
    memcpy(acc[0], &c0, sizeof c0);
    memcpy(acc[1], &c1, sizeof c1);
    memcpy(acc[2], &c2, sizeof c2);
    memcpy(acc[3], &c3, sizeof c3);
    memcpy(acc[4], &c4, sizeof c4);
    for (o = 0; o < 5; o++)
        t[o] = 0.0f;
    for (l = J; l < H; l++) {
        v = hb[l];
        for (i = 0; i < nadd; i++)
            v += T[(size_t)add[i] * H + l];
        for (i = 0; i < nsub; i++)
            v -= T[(size_t)sub[i] * H + l];
        for (q = 0; q < nfv; q++)
            v += fv[q] * W[(size_t)fi[q] * H + l];
        v = bgv_sigmoid1(v);
        for (o = 0; o < 5; o++)
            t[o] += v * w2t[(size_t)o * H + l];
    }
    for (o = 0; o < 5; o++)
        s[o] = b2[o] + ((((acc[o][0] + acc[o][4]) + (acc[o][1] + acc[o][5]))
                         + ((acc[o][2] + acc[o][6]) + (acc[o][3] + acc[o][7]))) + t[o]);
}


/* The one-sided race net's output sums (bgfast/_net.pyx, _os_forward):
   z[o] = b2[o] + the sum over j in order of tanh(h[j]) * w2[j * no + o],
   tanh(x) = 2 bgv_sigmoid1(2x) - 1, for no a multiple of 64 and H <= 256;
   the outputs in blocks of 64 held in registers. */
BGV_CLONES
static void bgv_os_outputs(const float *h, int H, const float *restrict w2, const float *b2,
                           int no, float *restrict z)
{
    float t[256];
    bgv_f8 a0, a1, a2, a3, a4, a5, a6, a7, r0, r1, r2, r3, r4, r5, r6, r7, x;
    const float *rp;
    int j, o0;
    for (j = 0; j < H; j++)
        t[j] = 2.0f * bgv_sigmoid1(2.0f * h[j]) - 1.0f;
    for (o0 = 0; o0 + 64 <= no; o0 += 64) {
        BGV_LOAD64(a, b2 + o0);
        for (j = 0; j < H; j++) {
            rp = w2 + (size_t)j * no + o0;
            BGV_LOAD64(r, rp);
            x = (bgv_f8){t[j], t[j], t[j], t[j], t[j], t[j], t[j], t[j]};
            a0 += x * r0;
            a1 += x * r1;
            a2 += x * r2;
            a3 += x * r3;
            a4 += x * r4;
            a5 += x * r5;
            a6 += x * r6;
            a7 += x * r7;
        }
        BGV_STORE64(z + o0, a);
    }
}

#endif
