/* Bit masks of a board row, shared by the kernels that read boards as
   masks (bgfast/_board.pyx: the clash check; bgfast/_net.pyx: the net's
   table rows and features). */
#ifndef BGFAST_BITS_H
#define BGFAST_BITS_H

#include <stdint.h>
#include <string.h>

/* The points 0..23 of a board row with no checker, one, and two or more,
   as bit masks (bit i = point i). */
#if defined(__SSE2__)
#include <emmintrin.h>
static inline void bgv_point_masks(const uint8_t *row, uint32_t *zero, uint32_t *one,
                                   uint32_t *two)
{
    uint8_t buf[32] = {0};
    __m128i lo, hi, z = _mm_setzero_si128(), o = _mm_set1_epi8(1);
    uint32_t m0, m1;
    memcpy(buf, row, 24);
    lo = _mm_loadu_si128((const __m128i *)buf);
    hi = _mm_loadu_si128((const __m128i *)(buf + 16));
    m0 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(lo, z))
         | ((uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(hi, z)) << 16);
    m1 = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(lo, o))
         | ((uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(hi, o)) << 16);
    *zero = m0 & 0xFFFFFF;
    *one = m1 & 0xFFFFFF;
    *two = ~(m0 | m1) & 0xFFFFFF;
}
#else
static inline void bgv_point_masks(const uint8_t *row, uint32_t *zero, uint32_t *one,
                                   uint32_t *two)
{
    uint32_t z = 0, o = 0, t = 0;
    int i;
    for (i = 0; i < 24; i++) {
        z |= (uint32_t)(row[i] == 0) << i;
        o |= (uint32_t)(row[i] == 1) << i;
        t |= (uint32_t)(row[i] >= 2) << i;
    }
    *zero = z;
    *one = o;
    *two = t;
}
#endif

/* the set bits of m: the processor's instruction where the build may use
   it, else a few shifts and adds (no call into the compiler's library) */
static inline int bgv_popcount32(uint32_t m)
{
#if defined(__POPCNT__)
    return __builtin_popcount(m);
#else
    m = m - ((m >> 1) & 0x55555555u);
    m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
    m = (m + (m >> 4)) & 0x0F0F0F0Fu;
    return (int)((m * 0x01010101u) >> 24);
#endif
}

/* the 24-bit mask m mirrored: bit i goes to bit 23 - i (a byte at a time) */
static inline uint32_t bgv_mirror24(uint32_t m)
{
    static const uint8_t rev[256] = {
        0, 128, 64, 192, 32, 160, 96, 224, 16, 144, 80, 208, 48, 176, 112, 240,
        8, 136, 72, 200, 40, 168, 104, 232, 24, 152, 88, 216, 56, 184, 120, 248,
        4, 132, 68, 196, 36, 164, 100, 228, 20, 148, 84, 212, 52, 180, 116, 244,
        12, 140, 76, 204, 44, 172, 108, 236, 28, 156, 92, 220, 60, 188, 124, 252,
        2, 130, 66, 194, 34, 162, 98, 226, 18, 146, 82, 210, 50, 178, 114, 242,
        10, 138, 74, 202, 42, 170, 106, 234, 26, 154, 90, 218, 58, 186, 122, 250,
        6, 134, 70, 198, 38, 166, 102, 230, 22, 150, 86, 214, 54, 182, 118, 246,
        14, 142, 78, 206, 46, 174, 110, 238, 30, 158, 94, 222, 62, 190, 126, 254,
        1, 129, 65, 193, 33, 161, 97, 225, 17, 145, 81, 209, 49, 177, 113, 241,
        9, 137, 73, 201, 41, 169, 105, 233, 25, 153, 89, 217, 57, 185, 121, 249,
        5, 133, 69, 197, 37, 165, 101, 229, 21, 149, 85, 213, 53, 181, 117, 245,
        13, 141, 77, 205, 45, 173, 109, 237, 29, 157, 93, 221, 61, 189, 125, 253,
        3, 131, 67, 195, 35, 163, 99, 227, 19, 147, 83, 211, 51, 179, 115, 243,
        11, 139, 75, 203, 43, 171, 107, 235, 27, 155, 91, 219, 59, 187, 123, 251,
        7, 135, 71, 199, 39, 167, 103, 231, 23, 151, 87, 215, 55, 183, 119, 247,
        15, 143, 79, 207, 47, 175, 111, 239, 31, 159, 95, 223, 63, 191, 127, 255};
    return ((uint32_t)rev[m & 0xFF] << 16) | ((uint32_t)rev[(m >> 8) & 0xFF] << 8)
           | (uint32_t)rev[(m >> 16) & 0xFF];
}

#endif
