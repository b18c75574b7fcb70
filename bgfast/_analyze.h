/* C helpers of the analysis scan and row writer (bgfast/_analyze.pyx).

   bgv_row_pips: the pips of one side's row of 25 counts (slot i is i + 1
   pips away), and whether any of its checkers is outside the home board
   (slots 6..24).  SSE2 where the compiler has it (every x86-64), else a
   plain loop; both give the same integers.

   bgv_copy_short: memcpy for the short strings of a row (a Position ID, a
   line, a table entry) without a library call: overlapping 8- and 16-byte
   moves that read and write only the n bytes. */
#ifndef BGFAST_ANALYZE_H
#define BGFAST_ANALYZE_H

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
static inline void bgv_row_pips(const uint8_t *row, int *pips, int *outside)
{
    uint8_t buf[32] = {0};
    __m128i a, b, s, z = _mm_setzero_si128();
    uint32_t zero;
    memcpy(buf, row, 25);
    a = _mm_loadu_si128((const __m128i *)buf);
    b = _mm_loadu_si128((const __m128i *)(buf + 16));
    s = _mm_add_epi32(
        _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(a, z), _mm_setr_epi16(1, 2, 3, 4, 5, 6, 7, 8)),
                      _mm_madd_epi16(_mm_unpackhi_epi8(a, z),
                                     _mm_setr_epi16(9, 10, 11, 12, 13, 14, 15, 16))),
        _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi8(b, z),
                                     _mm_setr_epi16(17, 18, 19, 20, 21, 22, 23, 24)),
                      _mm_madd_epi16(_mm_unpackhi_epi8(b, z),
                                     _mm_setr_epi16(25, 26, 27, 28, 29, 30, 31, 32))));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    *pips = _mm_cvtsi128_si32(s);
    zero = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a, z))
           | ((uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, z)) << 16);
    *outside = (~zero & 0x1FFFFC0u) != 0;          /* a checker on slots 6..24 */
}
#else
static inline void bgv_row_pips(const uint8_t *row, int *pips, int *outside)
{
    int i, p = 0, out = 0;
    for (i = 0; i < 25; i++)
        p += (i + 1) * row[i];
    for (i = 6; i < 25; i++)
        out |= row[i];
    *pips = p;
    *outside = out != 0;
}
#endif

static inline void bgv_copy_short(char *dst, const char *src, size_t n)
{
    uint64_t a, b;
    if (n >= 16 && n <= 32) {
        char t[32];
        memcpy(t, src, 16);
        memcpy(t + 16, src + n - 16, 16);
        memcpy(dst, t, 16);
        memcpy(dst + n - 16, t + 16, 16);
    } else if (n >= 8 && n < 16) {
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n < 8) {
        while (n--)
            *dst++ = *src++;
    } else {
        memcpy(dst, src, n);
    }
}

/* The index of the last character of s[0..n-1] (n <= 8, s readable for 8
   bytes) that is not '0'; one must be.  Little-endian GCC/clang: the
   8 bytes as one word, the '0's zeroed, the highest non-zero byte (no
   loop to mispredict); elsewhere a loop. */
static inline int bgv_last_nonzero_digit(const char *s, int n)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w;
    memcpy(&w, s, 8);
    w ^= 0x3030303030303030ULL;
    if (n < 8)
        w &= (1ULL << (8 * n)) - 1;
    return (63 - __builtin_clzll(w)) >> 3;
#else
    int last = n - 1;
    while (s[last] == '0')
        last--;
    return last;
#endif
}

#endif
