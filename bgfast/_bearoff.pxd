# Bear-off kernels shared by the other Cython modules.
from libc.stdint cimport uint8_t, int64_t

# gnubg's one-sided index of checker counts c[0..P-1] (point 1..P).
cdef int64_t rank_counts(const uint8_t* c, int P) noexcept nogil
cdef void unrank_counts(int64_t idx, int P, uint8_t* c) noexcept nogil
# Distinct one-sided results of roll (d1, d2) from c, as gnubg indices
# (written to out, at most maxout); returns the count (-1 if out is too small).
cdef int successors(const uint8_t* c, int P, int d1, int d2,
                    int64_t* out, int maxout) noexcept nogil
