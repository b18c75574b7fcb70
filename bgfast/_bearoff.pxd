# Bear-off kernels shared by the other Cython modules.
from libc.stdint cimport uint8_t, int64_t

# gnubg's one-sided index of checker counts c[0..P-1] (point 1..P).
cdef int64_t rank_counts(const uint8_t* c, int P) noexcept nogil
cdef void unrank_counts(int64_t idx, int P, uint8_t* c) noexcept nogil
# Distinct one-sided results of roll (d1, d2) from c, as gnubg indices
# (written to out, at most maxout); returns the count (-1 if out is too small).
cdef int successors(const uint8_t* c, int P, int d1, int d2,
                    int64_t* out, int maxout) noexcept nogil


# One-sided windows: row d (W values, P(exactly s + q rolls) for q < W).
cdef inline void window_tails(const float* d, int W, double* t) noexcept nogil:
    """t[q] = P(at least s + q rolls) of a window row starting at roll s (q <= W)."""
    cdef int q
    t[W] = 0.0
    for q in range(W - 1, -1, -1):
        t[q] = t[q + 1] + d[q]


cdef inline double window_at_least(const double* t, int s, int W, int k) noexcept nogil:
    """P(at least k rolls) from the tails t of a window row starting at roll s."""
    cdef int q = k - s
    return t[0] if q < 0 else (0.0 if q >= W else t[q])
