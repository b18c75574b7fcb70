# cython: language_level=3
"""Private kernel: every legal play for a roll, de-duplicated by result.

See ``bgfast.movegen`` for the public API and docs/rules.md for the rules.
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

from bgfast._board cimport board_possible

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
    g.table = <Slot*>calloc(MG_HASH_SIZE, sizeof(Slot))
    if g.out == NULL or g.table == NULL or (record and g.moves == NULL):
        movegen_free(g)
        return ERR_MEMORY
    return 0


cdef void movegen_free(MoveGen* g) noexcept nogil:
    free(g.out)
    free(g.moves)
    free(g.table)
    g.table = NULL
    g.out = NULL
    g.moves = NULL


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
        memset(g.table, 0, MG_HASH_SIZE * sizeof(Slot))
        g.stamp = 1


cdef inline uint8_t* reserve(MoveGen* g) noexcept nogil:
    """The next free output slot (growing the buffer), or NULL on error."""
    if g.n - g.start >= MG_MAX_PLAYS:
        g.error = ERR_TOO_MANY
        return NULL
    if g.n >= g.cap and grow(g) != 0:
        g.error = ERR_MEMORY
        return NULL
    return g.out + g.n * 50


cdef inline void append(MoveGen* g, int src, int dest) noexcept nogil:
    """Keep the board just written at slot g.n (its moves from g.path, plus
    ``src``/``dest``, a last move not yet on g.path; src < 0: none)."""
    cdef int8_t* mv
    cdef int k
    if g.record:
        mv = g.moves + g.n * 8
        memcpy(mv, g.path, 8)
        k = g.nmoves * 2
        if src >= 0:
            mv[k] = <int8_t>(src + 1)
            mv[k + 1] = <int8_t>(dest + 1)
            k += 2
        while k < 8:
            mv[k] = -1
            k += 1
    g.n += 1


cdef inline void commit(MoveGen* g, uint64_t h, int src, int dest) noexcept nogil:
    """append() the board just written at slot g.n unless an equal one is
    stored (``h`` is its hash)."""
    cdef uint32_t slot = <uint32_t>(h >> (64 - MG_HASH_BITS))
    cdef uint8_t* cand = g.out + g.n * 50
    cdef Slot* e = &g.table[slot]
    while e.stamp == g.stamp:
        if e.hash == h and memcmp(g.out + (g.start + e.index) * 50, cand, 50) == 0:
            return
        slot = (slot + 1) & (MG_HASH_SIZE - 1)
        e = &g.table[slot]
    e.stamp = g.stamp
    e.hash = h
    e.index = <uint32_t>(g.n - g.start)
    append(g, src, dest)


cdef inline int new_best(MoveGen* g, int used) noexcept nogil:
    """Account for a play using ``used`` dice: 0 if it is to be dropped."""
    if used < g.best:
        return 0
    if used > g.best:
        g.best = used
        reset_results(g)
    return 1


cdef inline uint8_t* copy_out(MoveGen* g, int used) noexcept nogil:
    """Copy the work board into the next output slot for a play using
    ``used`` dice; NULL if the play is dropped or on an error."""
    cdef uint8_t* dst
    if not new_best(g, used):
        return NULL
    dst = reserve(g)
    if dst != NULL:
        memcpy(dst, g.w, 50)
    return dst


cdef inline void leaf(MoveGen* g, int used, bint dedup) noexcept nogil:
    """The work board is a finished play."""
    if copy_out(g, used) != NULL:
        if dedup:
            commit(g, g.hash, -1, -1)
        else:
            append(g, -1, -1)


cdef inline void leaf_move(MoveGen* g, int src, int dest, int used,
                           bint dedup) noexcept nogil:
    """The work board plus one last move src -> dest is a finished play:
    write it straight into the output slot (no make/unmake).  Without
    ``dedup`` the play is known to be new (doubles: see search_double)."""
    cdef uint8_t* dst = copy_out(g, used)
    cdef uint64_t h
    if dst == NULL:
        return
    dst[src] -= 1
    if not dedup:
        if dest >= 0:
            dst[dest] += 1
            if dst[48 - dest] == 1:         # the opponent's blot (its index 23 - dest)
                dst[48 - dest] = 0
                dst[49] += 1
        append(g, src, dest)
        return
    h = g.hash - ZOB[src]
    if dest >= 0:
        dst[dest] += 1
        h += ZOB[dest]
        if dst[48 - dest] == 1:
            dst[48 - dest] = 0
            dst[49] += 1
            h += ZOB[49] - ZOB[48 - dest]
    commit(g, h, src, dest)


cdef inline uint32_t movable(MoveGen* g, uint32_t cand, int d) noexcept nogil:
    """The sources among ``cand`` (a bit mask of occupied indices: 0..23
    points, 24 the bar) that can move with die d.  The opponent's made
    points never change during a play (a hit only empties a blot), so they
    are a constant mask, g.blocked.  A move stays on
    the board from src >= d unless index src - d is blocked; a checker bears
    off (all checkers home) from index d - 1, or from a lower index when it
    is the highest occupied one."""
    cdef uint32_t low = (1u << d) - 1
    cdef uint32_t m = cand & ~(g.blocked << d) & ~low
    cdef int top
    if g.outside == 0 and (cand & low):
        m |= cand & (1u << (d - 1))
        top = 31 - __builtin_clz(g.occ)
        if top < d - 1:
            m |= cand & (1u << top)
    return m


# The work board holds the side on roll at w[0..24] and the opponent at
# w[25..49] (the opponent's index j is at 25 + j; it faces my index 23 - j),
# which is already the layout of a result with the turn passed.

cdef inline int make(MoveGen* g, int src, int dest) noexcept nogil:
    """Apply a move; return 1 if it hit a blot."""
    cdef uint8_t* w = g.w
    cdef int hit = 0
    w[src] -= 1
    g.hash -= ZOB[src]
    g.occ &= ~((<uint32_t>(w[src] == 0)) << src)
    if src >= 6 and dest < 6:
        g.outside -= 1
    if dest >= 0:
        w[dest] += 1
        g.hash += ZOB[dest]
        g.occ |= (1u << dest)
        if w[48 - dest] == 1:
            w[48 - dest] = 0
            w[49] += 1
            g.hash += ZOB[49] - ZOB[48 - dest]
            hit = 1
    g.path[g.nmoves * 2] = <int8_t>(src + 1)
    g.path[g.nmoves * 2 + 1] = <int8_t>(dest + 1)
    g.nmoves += 1
    return hit


cdef inline void unmake(MoveGen* g, int src, int dest, int hit) noexcept nogil:
    cdef uint8_t* w = g.w
    w[src] += 1
    g.hash += ZOB[src]
    g.occ |= (1u << src)
    if src >= 6 and dest < 6:
        g.outside += 1
    if dest >= 0:
        w[dest] -= 1
        g.hash -= ZOB[dest]
        g.occ &= ~((<uint32_t>(w[dest] == 0)) << dest)
        if hit:
            w[48 - dest] = 1
            w[49] -= 1
            g.hash -= ZOB[49] - ZOB[48 - dest]
    g.nmoves -= 1


cdef inline int next_move(uint32_t* todo, int d, int* dest) noexcept nogil:
    """Take the highest source out of the mask ``todo`` (not empty); its
    destination with die d goes to ``dest`` (-1: borne off)."""
    cdef int src = 31 - __builtin_clz(todo[0])
    todo[0] &= ~(1u << src)
    dest[0] = src - d if src >= d else -1
    return src


cdef void search_nondouble(MoveGen* g, int first, int second, int depth,
                           int prune, int first_src, int first_dest,
                           uint32_t legal_at_root) noexcept nogil:
    """Play die ``first`` (depth 0) then die ``second`` (depth 1).

    With ``prune`` (the second dice order), a second move that is legal at the
    root, by a checker other than the one just moved, after a first move not
    from the bar, gives a play the first order already found: it is counted as
    playable but not searched.
    """
    cdef int d = first if depth == 0 else second
    cdef int src, dest, hit
    cdef uint32_t todo = movable(g, (1u << 24) if g.w[24] else g.occ, d)
    if not todo:
        leaf(g, depth, True)
        return
    if depth == 1 and prune and first_src != 24:
        todo &= ~(legal_at_root & ~(1u << first_dest))
    while todo:
        src = next_move(&todo, d, &dest)
        if depth == 1:
            leaf_move(g, src, dest, 2, True)
        else:
            hit = make(g, src, dest)
            search_nondouble(g, first, second, 1, prune, src, dest, legal_at_root)
            unmake(g, src, dest, hit)
        if g.error:
            return


cdef void search_double(MoveGen* g, int d, int depth, int maxsrc) noexcept nogil:
    """Play up to four moves of die d with non-increasing source indices.
    Every play is reached exactly once: its moves, sorted by source, are
    playable in that order (a checker that moves twice moves from the
    higher point first; a bear-off only gets easier after higher checkers
    moved), and all moves have the same length, so the result fixes the
    moves (how many checkers cross each point) and the points landed on
    (hits).  So doubles need no de-duplication."""
    cdef int src, dest, hit
    cdef uint32_t todo = movable(g, (1u << 24) if g.w[24] else (g.occ & ((2u << maxsrc) - 1)), d)
    if not todo:
        leaf(g, depth, False)
        return
    while todo:
        src = next_move(&todo, d, &dest)
        if depth == 3:
            leaf_move(g, src, dest, 4, False)
        else:
            hit = make(g, src, dest)
            search_double(g, d, depth + 1, src)
            unmake(g, src, dest, hit)
        if g.error:
            return


cdef Py_ssize_t movegen_plays(MoveGen* g, const uint8_t* board, int d1, int d2) noexcept nogil:
    """Append the legal plays of ``board`` for dice (d1, d2) to g.out.

    Returns the number of plays appended (0 when the roll cannot be played),
    or a negative error code: MG_ERR_DICE, before anything is touched, for
    a die outside 1..6 (the search indexes the board by point - die).
    """
    cdef int i, hi, lo, outside = 0
    cdef uint32_t legal_hi = 0
    cdef Py_ssize_t first_pass
    if d1 < 1 or d1 > 6 or d2 < 1 or d2 > 6:
        return MG_ERR_DICE
    memcpy(g.w, board + 25, 25)      # the side on roll first
    memcpy(g.w + 25, board, 25)
    memset(g.w + 50, 0, 14)
    # one pass: occupied points, checkers outside, made opposing points, hash
    cdef uint32_t occ = 0, blocked = 0
    cdef uint64_t h = 0
    cdef uint8_t c
    for i in range(25):
        c = g.w[i]
        if c:
            occ |= (1u << i)
            h += c * ZOB[i]
            if i >= 6:
                outside += c
        c = g.w[25 + i]
        if c:
            h += c * ZOB[25 + i]
            if c >= 2 and i < 24:
                blocked |= (1u << (23 - i))
    g.outside = outside
    g.occ = occ
    g.blocked = blocked
    g.hash = h
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
        search_nondouble(g, hi, lo, 0, 0, -1, -1, 0)
        # plays of the higher die alone, if that is all pass 1 could do
        first_pass = g.n if g.best == 1 else g.start
        if not g.error:
            legal_hi = movable(g, g.occ, hi)
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
    (index of the first board that failed, error code); dice outside 1..6
    fail with MG_ERR_DICE.
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
                r = movegen_plays(&g, &boards[i, 0, 0], mg_die(dice[i, 0]), mg_die(dice[i, 1]))
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
    """Number of legal plays per board, without materialising the results
    (a negative error code for a board that fails, MG_ERR_DICE for dice
    outside 1..6)."""
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
                r = movegen_plays(&g, &boards[i, 0, 0], mg_die(dice[i, 0]), mg_die(dice[i, 1]))
                c[i] = r
        return counts
    finally:
        movegen_free(&g)


# The generator of the single-board entry, kept between calls (its buffers and
# de-duplication table are reused: the table's stamps need no clearing).  Only
# used with the GIL held, so one caller at a time; _one_busy covers a call made
# from inside another (a finalizer run by the garbage collector while the
# output arrays are allocated), which takes the batch path instead.
cdef MoveGen _one
cdef bint _one_ready = False
cdef bint _one_busy = False


def legal_plays_one(object board, int d1, int d2, bint with_moves=False, bint validate=True):
    """Kernel entry for one board: ``(results uint8[n, 2, 25], moves
    int8[n, 4, 2] or None)``, the same plays in the same order as
    :func:`legal_plays_batch` gives for it.

    ``board`` must be a C-contiguous uint8 ndarray of shape (2, 25) or
    (1, 2, 25); for anything else, and with ``validate`` for a board that
    is impossible (a side above 15 checkers, a point held by both sides),
    returns None and the caller takes the batch path, which reports the
    error.  Dice outside 1..6 raise ValueError (callers check them first).
    """
    global _one_ready, _one_busy
    cdef cnp.ndarray arr
    cdef cnp.npy_intp dims[3]
    cdef Py_ssize_t n
    cdef const uint8_t* b
    if not cnp.PyArray_Check(board):
        return None
    arr = <cnp.ndarray>board
    if (cnp.PyArray_TYPE(arr) != cnp.NPY_UINT8 or not cnp.PyArray_IS_C_CONTIGUOUS(arr)
            or cnp.PyArray_SIZE(arr) != 50
            or not (cnp.PyArray_NDIM(arr) == 2 and cnp.PyArray_DIM(arr, 0) == 2
                    or cnp.PyArray_NDIM(arr) == 3 and cnp.PyArray_DIM(arr, 0) == 1
                    and cnp.PyArray_DIM(arr, 1) == 2)):
        return None
    b = <const uint8_t*>cnp.PyArray_DATA(arr)
    if validate and not board_possible(b):
        return None
    if _one_busy:
        return None
    if not _one_ready:
        if movegen_init(&_one, 256, 1) != 0:
            raise MemoryError()
        _one_ready = True
    _one_busy = True
    try:
        _one.n = 0
        n = movegen_plays(&_one, b, d1, d2)
        if n == MG_ERR_DICE:
            raise ValueError(f"dice ({d1}, {d2}) outside 1..6")
        if n < 0:
            raise MemoryError() if n == ERR_MEMORY else RuntimeError(
                "more plays than the generator allows")
        dims[0] = n
        dims[1] = 2
        dims[2] = 25
        results = cnp.PyArray_EMPTY(3, dims, cnp.NPY_UINT8, 0)
        if n:
            memcpy(cnp.PyArray_DATA(results), _one.out, n * 50)
        moves = None
        if with_moves:
            dims[1] = 4
            dims[2] = 2
            moves = cnp.PyArray_EMPTY(3, dims, cnp.NPY_INT8, 0)
            if n:
                memcpy(cnp.PyArray_DATA(moves), _one.moves, n * 8)
        return results, moves
    finally:
        _one_busy = False
