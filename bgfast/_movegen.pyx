# cython: language_level=3
"""Private kernel: every legal play for a roll, de-duplicated by result.

See ``bgfast.movegen`` for the public API and shared/RULES.md for the rules.
The generator is a depth-first search over the dice with in-place make/undo
moves on a 50-byte board.  Doubles play their four moves with non-increasing
source points (any play can be so ordered), so few duplicate paths arise.
Plays that use fewer dice than the best play are discarded; when only one die
of a non-double can be used, the higher die is kept if it can be played.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, int8_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free, calloc
from libc.string cimport memcpy, memset, memcmp

cdef extern from "<sys/mman.h>" nogil:
    int madvise(void* addr, size_t length, int advice)
    int MADV_HUGEPAGE

cdef extern from * nogil:
    int __builtin_clz(unsigned int x)

cdef extern from "<stdlib.h>" nogil:
    int posix_memalign(void** memptr, size_t alignment, size_t size)


cdef void* big_alloc(size_t size) noexcept nogil:
    """malloc, but large blocks are 2 MiB aligned and ask for huge pages
    (fewer page faults when a batch writes tens of megabytes)."""
    cdef void* p = NULL
    if size < (8 << 20):
        return malloc(size)
    size = (size + (2 << 20) - 1) & ~(<size_t>(2 << 20) - 1)
    if posix_memalign(&p, 2 << 20, size) != 0:
        return NULL
    madvise(p, size, MADV_HUGEPAGE)
    return p

cnp.import_array()

cdef enum:
    ERR_MEMORY = -1
    ERR_TOO_MANY = -2


# Additive hash keys: the hash of a board is sum(count[slot] * ZOB[slot]) mod 2**64,
# so moving one checker adds one key and subtracts another.  Equal hashes are
# always confirmed by comparing the boards.
cdef uint64_t ZOB[50]


cdef void _init_zobrist():
    cdef uint64_t x = 0x2545F4914F6CDD1DULL, z
    cdef int i
    for i in range(50):
        x += 0x9E3779B97F4A7C15ULL          # splitmix64
        z = x
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
        ZOB[i] = z ^ (z >> 31)


_init_zobrist()


cdef int movegen_init(MoveGen* g, Py_ssize_t cap, int record) noexcept nogil:
    memset(g, 0, sizeof(MoveGen))
    if cap < 64:
        cap = 64
    g.cap = cap
    g.record = record
    g.out = <uint8_t*>big_alloc(cap * 50)
    g.moves = <int8_t*>malloc(cap * 8) if record else NULL
    g.tstamp = <uint32_t*>calloc(MG_HASH_SIZE, sizeof(uint32_t))
    g.tindex = <uint32_t*>malloc(MG_HASH_SIZE * sizeof(uint32_t))
    g.thash = <uint64_t*>malloc(MG_HASH_SIZE * sizeof(uint64_t))
    if (g.out == NULL or g.tstamp == NULL or g.tindex == NULL or g.thash == NULL
            or (record and g.moves == NULL)):
        movegen_free(g)
        return ERR_MEMORY
    return 0


cdef void movegen_free(MoveGen* g) noexcept nogil:
    free(g.out)
    free(g.moves)
    free(g.tstamp)
    free(g.tindex)
    free(g.thash)
    g.thash = NULL
    g.out = NULL
    g.moves = NULL
    g.tstamp = NULL
    g.tindex = NULL


cdef inline int grow(MoveGen* g) noexcept nogil:
    cdef Py_ssize_t cap = g.cap * 2
    cdef uint8_t* out = <uint8_t*>realloc(g.out, cap * 50)
    if out == NULL:
        return ERR_MEMORY
    g.out = out
    if g.record:
        mv = <int8_t*>realloc(g.moves, cap * 8)
        if mv == NULL:
            return ERR_MEMORY
        g.moves = mv
    g.cap = cap
    return 0


cdef inline void reset_results(MoveGen* g) noexcept nogil:
    g.n = g.start
    g.stamp += 1
    if g.stamp == 0:  # wrapped: clear once every 4e9 resets
        memset(g.tstamp, 0, MG_HASH_SIZE * sizeof(uint32_t))
        g.stamp = 1


cdef inline void add_result(MoveGen* g) noexcept nogil:
    """Store the work board (swapped) unless an equal result is stored."""
    cdef uint64_t h = g.hash
    cdef uint32_t slot = <uint32_t>(h >> (64 - MG_HASH_BITS))
    cdef uint8_t* dst
    cdef uint32_t idx
    cdef Py_ssize_t k
    while g.tstamp[slot] == g.stamp:
        if g.thash[slot] == h:
            dst = g.out + (g.start + g.tindex[slot]) * 50
            if memcmp(dst, g.w + 25, 25) == 0 and memcmp(dst + 25, g.w, 25) == 0:
                return
        slot = (slot + 1) & (MG_HASH_SIZE - 1)
    if g.n - g.start >= MG_MAX_PLAYS:
        g.error = ERR_TOO_MANY
        return
    if g.n >= g.cap:
        if grow(g) != 0:
            g.error = ERR_MEMORY
            return
    g.tstamp[slot] = g.stamp
    g.thash[slot] = h
    g.tindex[slot] = <uint32_t>(g.n - g.start)
    dst = g.out + g.n * 50
    memcpy(dst, g.w + 25, 25)       # the side that moved becomes row 0
    memcpy(dst + 25, g.w, 25)       # the opponent is now on roll
    if g.record:
        memcpy(g.moves + g.n * 8, g.path, 8)
        for k in range(g.nmoves * 2, 8):
            g.moves[g.n * 8 + k] = -1
    g.n += 1


cdef inline void leaf(MoveGen* g, int used) noexcept nogil:
    if used < g.best:
        return
    if used > g.best:
        g.best = used
        reset_results(g)
    add_result(g)


# A move of the on-roll checker at index src (0..23 points, 24 bar) by die d.
# Returns the destination index (>= 0), -1 for bearing off, or -100 if illegal.
cdef inline int target(MoveGen* g, int src, int d) noexcept nogil:
    """Where the checker at index src (0..23 points, 24 bar) goes with die d:
    the destination index, -1 for bearing off, or -100 if the move is illegal.
    The opponent's made points never change during a move (a hit only
    empties a blot), so they are a constant bit mask."""
    cdef int dest = src - d
    if dest >= 0:
        return -100 if (g.blocked >> dest) & 1 else dest
    if g.outside:
        return -100
    if dest == -1:
        return -1
    # a larger die bears off only from the highest occupied point
    return -100 if (g.occ & 0x3F) >> (src + 1) else -1


cdef inline int make(MoveGen* g, int src, int dest) noexcept nogil:
    """Apply a move; return 1 if it hit a blot."""
    cdef uint8_t* me = g.w + 25
    cdef uint8_t* op = g.w
    cdef int hit = 0
    me[src] -= 1
    g.hash -= ZOB[25 + src]
    g.occ &= ~((<uint32_t>(me[src] == 0)) << src)
    if src >= 6 and dest < 6:
        g.outside -= 1
    if dest >= 0:
        me[dest] += 1
        g.hash += ZOB[25 + dest]
        g.occ |= (1u << dest)
        if op[23 - dest] == 1:
            op[23 - dest] = 0
            op[24] += 1
            g.hash += ZOB[24] - ZOB[23 - dest]
            hit = 1
    g.path[g.nmoves * 2] = <int8_t>(src + 1)
    g.path[g.nmoves * 2 + 1] = <int8_t>(dest + 1)
    g.nmoves += 1
    return hit


cdef inline void unmake(MoveGen* g, int src, int dest, int hit) noexcept nogil:
    cdef uint8_t* me = g.w + 25
    cdef uint8_t* op = g.w
    me[src] += 1
    g.hash += ZOB[25 + src]
    g.occ |= (1u << src)
    if src >= 6 and dest < 6:
        g.outside += 1
    if dest >= 0:
        me[dest] -= 1
        g.hash -= ZOB[25 + dest]
        g.occ &= ~((<uint32_t>(me[dest] == 0)) << dest)
        if hit:
            op[23 - dest] = 1
            op[24] -= 1
            g.hash -= ZOB[24] - ZOB[23 - dest]
    g.nmoves -= 1


cdef void search_nondouble(MoveGen* g, int first, int second, int depth,
                           int prune, int first_src, int first_dest,
                           const int* legal_at_root) noexcept nogil:
    """Play die ``first`` (depth 0) then die ``second`` (depth 1).

    With ``prune`` (the second dice order), a second move that is legal at the
    root, by a checker other than the one just moved, after a first move not
    from the bar, gives a play the first order already found: it is counted as
    playable but not searched.
    """
    cdef int d = first if depth == 0 else second
    cdef int src, dest, hit, moved = 0
    cdef uint32_t todo = (1u << 24) if g.w[25 + 24] else g.occ
    while todo:
        src = 31 - __builtin_clz(todo)
        todo &= ~(1u << src)
        dest = target(g, src, d)
        if dest != -100:
            moved = 1
            if (prune and depth == 1 and first_src != 24 and src != first_dest
                    and legal_at_root[src]):
                continue
            hit = make(g, src, dest)
            if depth == 0:
                search_nondouble(g, first, second, 1, prune, src, dest, legal_at_root)
            else:
                leaf(g, 2)
            unmake(g, src, dest, hit)
            if g.error:
                return
    if not moved:
        leaf(g, depth)


cdef void search_double(MoveGen* g, int d, int depth, int maxsrc) noexcept nogil:
    cdef int src, dest, hit, moved = 0
    cdef uint32_t todo
    if depth == 4:
        leaf(g, 4)
        return
    todo = (1u << 24) if g.w[25 + 24] else (g.occ & ((2u << maxsrc) - 1))
    while todo:
        src = 31 - __builtin_clz(todo)
        todo &= ~(1u << src)
        dest = target(g, src, d)
        if dest != -100:
            moved = 1
            hit = make(g, src, dest)
            search_double(g, d, depth + 1, src)
            unmake(g, src, dest, hit)
            if g.error:
                return
    if not moved:
        leaf(g, depth)


cdef Py_ssize_t movegen_plays(MoveGen* g, const uint8_t* board, int d1, int d2) noexcept nogil:
    """Append the legal plays of ``board`` for dice (d1, d2) to g.out.

    Returns the number of plays appended (0 when the roll cannot be played),
    or a negative error code.
    """
    cdef int i, hi, lo, outside = 0
    cdef int legal_hi[25]
    cdef Py_ssize_t first_pass
    memcpy(g.w, board, 50)
    memset(g.w + 50, 0, 14)
    for i in range(6, 25):
        outside += board[25 + i]
    g.outside = outside
    g.occ = 0
    g.blocked = 0
    for i in range(24):
        if board[23 - i] >= 2:
            g.blocked |= (1u << i)
    g.hash = 0
    for i in range(50):
        g.hash += board[i] * ZOB[i]
    for i in range(25):
        if board[25 + i]:
            g.occ |= (1u << i)
    g.best = 0
    g.nmoves = 0
    g.error = 0
    g.start = g.n
    reset_results(g)
    if d1 == d2:
        search_double(g, d1, 0, 24)
    else:
        hi = d1 if d1 > d2 else d2
        lo = d2 if d1 > d2 else d1
        search_nondouble(g, hi, lo, 0, 0, -1, -1, legal_hi)
        # plays of the higher die alone, if that is all pass 1 could do
        first_pass = g.n if g.best == 1 else g.start
        if not g.error:
            for i in range(25):
                legal_hi[i] = 1 if (board[25 + i] and target(g, i, hi) != -100) else 0
            search_nondouble(g, lo, hi, 0, 1, -1, -1, legal_hi)
        # only one die playable: the higher one must be played if it can be
        if g.best == 1 and first_pass > g.start:
            g.n = first_pass
    if g.error:
        g.n = g.start
        return g.error
    if g.best == 0:       # nothing playable: the turn is lost
        g.n = g.start
    return g.n - g.start


cdef class _Buffer:
    """Owns a malloc'ed block handed to numpy without a copy."""
    cdef void* ptr

    def __dealloc__(self):
        free(self.ptr)


cdef object _adopt(void* ptr, Py_ssize_t n, int nd, cnp.npy_intp* dims, int typenum):
    """Wrap ``ptr`` (malloc'ed, shrunk to size) as an ndarray that frees it."""
    cdef _Buffer owner = _Buffer.__new__(_Buffer)
    owner.ptr = ptr
    arr = cnp.PyArray_SimpleNewFromData(nd, dims, typenum, ptr)
    cnp.Py_INCREF(owner)
    cnp.PyArray_SetBaseObject(arr, owner)
    return arr


def legal_plays_batch(const uint8_t[:, :, ::1] boards, const int64_t[:, ::1] dice,
                      bint with_moves=False):
    """Kernel entry: see ``bgfast.movegen.legal_plays_batch``.

    Returns (offsets, results, moves or None, failure): failure is None, or
    (index of the first board that failed, error code).
    """
    cdef Py_ssize_t n = boards.shape[0], i
    cdef Py_ssize_t r = 0
    cdef MoveGen g
    cdef int err = 0
    cdef Py_ssize_t bad = -1
    cdef cnp.npy_intp dims[3]
    offsets = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    if movegen_init(&g, max(64, n * 32), 1 if with_moves else 0) != 0:
        raise MemoryError()
    try:
        with nogil:
            off[0] = 0
            for i in range(n):
                r = movegen_plays(&g, &boards[i, 0, 0], <int>dice[i, 0], <int>dice[i, 1])
                if r < 0:
                    err = <int>r
                    bad = i
                    break
                off[i + 1] = g.n
        if err:
            return None, None, None, (bad, err)
        # shrink the buffers to size and give them to numpy
        out = <uint8_t*>realloc(g.out, max(g.n, 1) * 50)
        if out == NULL:
            raise MemoryError()
        g.out = NULL
        dims[0] = g.n
        dims[1] = 2
        dims[2] = 25
        results = _adopt(out, g.n, 3, dims, cnp.NPY_UINT8)
        moves = None
        if with_moves:
            mv = <int8_t*>realloc(g.moves, max(g.n, 1) * 8)
            if mv == NULL:
                raise MemoryError()
            g.moves = NULL
            dims[1] = 4
            dims[2] = 2
            moves = _adopt(mv, g.n, 3, dims, cnp.NPY_INT8)
        return offsets, results, moves, None
    finally:
        movegen_free(&g)


def count_plays_batch(const uint8_t[:, :, ::1] boards, const int64_t[:, ::1] dice):
    """Number of legal plays per board, without materialising the results."""
    cdef Py_ssize_t n = boards.shape[0], i, r
    cdef MoveGen g
    counts = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] c = counts
    if movegen_init(&g, 4096, 0) != 0:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                g.n = 0
                r = movegen_plays(&g, &boards[i, 0, 0], <int>dice[i, 0], <int>dice[i, 1])
                c[i] = r
        return counts
    finally:
        movegen_free(&g)
