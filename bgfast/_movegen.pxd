# Move generation kernel, shared with other Cython modules (rollouts, evaluators).
from libc.stdint cimport uint8_t, int8_t, int64_t, uint32_t, uint64_t

cdef enum:
    MG_HASH_BITS = 14
    MG_HASH_SIZE = 1 << MG_HASH_BITS
    MG_MAX_PLAYS = 12000          # guard; real positions stay far below
    MG_ERR_DICE = -3              # movegen_plays: a die outside 1..6


cdef inline int mg_die(int64_t d) noexcept nogil:
    """A die of an int64 dice array as movegen_plays takes it: d for 1..6,
    else 0, which movegen_plays refuses (a plain cast could wrap a large
    value into 1..6)."""
    return <int>d if 1 <= d <= 6 else 0

cdef struct Slot:
    # one entry of the de-duplication table (one cache line holds four)
    uint64_t hash
    uint32_t stamp
    uint32_t index

cdef struct MoveGen:
    # work board: w[0..24] = player on roll, w[25..49] = the opponent (result layout)
    uint8_t w[64]
    int outside          # on-roll checkers outside the home board (bar included)
    uint32_t blocked     # bit i set when the on-roll side may not land on index i
    uint32_t occ         # bit i set when the on-roll side has checkers at index i
    uint64_t hash        # Zobrist hash of the work board, updated move by move
    int best             # most dice used by any play found so far
    int record           # record the checker moves of each play
    int nmoves           # moves on the current path
    int8_t path[8]       # (from, to) pairs of the current path, points 25=bar 0=off
    # results (swapped: row 0 = the side that just moved, turn passed)
    uint8_t* out         # cap * 50 bytes
    int8_t* moves        # cap * 8 bytes (when record)
    Py_ssize_t n         # results in the buffer
    Py_ssize_t start     # first result of the current board
    Py_ssize_t cap
    int error
    # de-duplication: open addressing with generation stamps (no clearing)
    uint32_t stamp
    Slot* table

cdef int movegen_init(MoveGen* g, Py_ssize_t cap, int record) noexcept nogil
cdef void movegen_free(MoveGen* g) noexcept nogil
# The legal plays of board for (d1, d2) appended to g.out: their number, or a
# negative error (MG_ERR_DICE for a die outside 1..6: nothing is written).
cdef Py_ssize_t movegen_plays(MoveGen* g, const uint8_t* board, int d1, int d2) noexcept nogil
