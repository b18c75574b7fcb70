# cython: language_level=3
"""Private kernels: gnubg's 10-byte position key, packed and unpacked in
bulk, decoded from its Position ID, the check that a board is possible,
and the position class.

A board is ``uint8[2, 25]`` (row 0 = player not on roll, row 1 = player on
roll; 0..23 = points 1..24 from that row's side, 24 = bar).  The key writes,
for row 0 then row 1 and each of the 25 slots in order, ``n`` one-bits then
a zero-bit, padded with zeros to 80 bits, least significant bit first.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int8_t, uint8_t, uint32_t
from libc.string cimport memcpy, memset
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING

cnp.import_array()


cdef void pack_key(const uint8_t* board, uint8_t* key) noexcept nogil:
    cdef int bit = 0, i, k, n
    memset(key, 0, 10)
    for i in range(50):
        n = board[i]
        for k in range(n):
            if bit < 80:
                key[bit >> 3] |= <uint8_t>(1 << (bit & 7))
            bit += 1
        bit += 1


# per key byte (bits from the lowest): the runs of ones that end at each of
# its zero bits, those zeros' positions, their number and the ones after the
# last zero (8 when it has none)
cdef uint8_t RUNS[256][8]
cdef uint8_t ZPOS[256][8]
cdef uint8_t NZ[256]
cdef uint8_t TAIL[256]


cdef void _init_unpack_tables() noexcept:
    cdef int v, bit, k, run
    for v in range(256):
        k = 0
        run = 0
        memset(RUNS[v], 0, 8)
        memset(ZPOS[v], 0, 8)
        for bit in range(8):
            if (v >> bit) & 1:
                run += 1
            else:
                RUNS[v][k] = <uint8_t>run
                ZPOS[v][k] = <uint8_t>bit
                k += 1
                run = 0
        NZ[v] = <uint8_t>k
        TAIL[v] = <uint8_t>run


_init_unpack_tables()


cdef int unpack_key(const uint8_t* key, uint8_t* board) noexcept nogil:
    """Decode a key, a key byte at a time (a slot ends at each zero bit).
    Returns 0, or -1 if the bits do not describe 50 slots (too few
    separators), or -2 if non-zero bits follow the 50th slot; the board is
    left all zero unless 0 is returned."""
    cdef uint8_t runs[88]
    cdef int byte, v, j = 0, carry = 0, z50 = -1
    memset(board, 0, 50)
    for byte in range(10):
        v = key[byte]
        memcpy(&runs[j], RUNS[v], 8)
        if NZ[v]:
            runs[j] = <uint8_t>(runs[j] + carry)
            if j < 50 <= j + NZ[v]:
                z50 = 8 * byte + ZPOS[v][49 - j]       # where the 50th slot ends
            j += NZ[v]
            carry = TAIL[v]
        else:
            carry += 8
    if j < 50:
        return -1
    # the ones after the 50th slot: all the ones, less those in the 50 slots
    if (80 - j) - (z50 - 49):
        return -2
    memcpy(board, runs, 50)
    return 0


def pack(const uint8_t[:, :, ::1] boards):
    """``uint8[N, 2, 25]`` boards -> ``uint8[N, 10]`` keys (no validation)."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.empty((n, 10), dtype=np.uint8)
    cdef uint8_t[:, ::1] o = out
    with nogil:
        for i in range(n):
            pack_key(&boards[i, 0, 0], &o[i, 0])
    return out


def pack_bytes(boards):
    """The keys of :func:`pack` as one ``bytes`` of ``10 N`` bytes, for a
    C-ordered ``uint8[N, 2, 25]`` array (raw pointers, not memoryviews: a
    Position is made from one board, where their set-up would cost more
    than the work)."""
    if (not isinstance(boards, np.ndarray) or boards.dtype != np.uint8 or boards.ndim != 3
            or boards.shape[1] != 2 or boards.shape[2] != 25 or not boards.flags.c_contiguous):
        raise ValueError("boards must be a C-ordered uint8[N, 2, 25] array")
    cdef Py_ssize_t n = boards.shape[0], i
    cdef const uint8_t* src = <const uint8_t*>cnp.PyArray_DATA(boards)
    out = PyBytes_FromStringAndSize(NULL, 10 * n)
    cdef uint8_t* o = <uint8_t*>PyBytes_AS_STRING(out)
    with nogil:
        for i in range(n):
            pack_key(src + 50 * i, o + 10 * i)
    return out


def unpack(const uint8_t[:, ::1] keys):
    """``uint8[N, 10]`` keys -> (``uint8[N, 2, 25]`` boards, ``int8[N]`` status).

    status is 0 for a well-formed key, -1 for too few slot separators and
    -2 for set bits after the last slot.
    """
    cdef Py_ssize_t n = keys.shape[0], i
    out = np.empty((n, 2, 25), dtype=np.uint8)
    status = np.empty(n, dtype=np.int8)
    cdef uint8_t[:, :, ::1] o = out
    cdef signed char[::1] st = status
    with nogil:
        for i in range(n):
            st[i] = <signed char>unpack_key(&keys[i, 0], &o[i, 0, 0])
    return out, status


# ---------------------------------------------------------------------------
# Position IDs: the key in 14 characters of base64, without padding
# ---------------------------------------------------------------------------

cdef int8_t B64[256]
cdef int _i
for _i in range(256):
    B64[_i] = -1
cdef const char* _ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
for _i in range(64):
    B64[<uint8_t>_ALPHABET[_i]] = _i


cdef bint all_base64(const uint8_t* t, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    cdef int8_t acc = 0
    for j in range(n):                 # no early exit: IDs are mostly good
        acc |= B64[t[j]]
    return acc >= 0


cdef int decode_position_id(const uint8_t* t, uint8_t* key) noexcept nogil:
    cdef int s[14]
    cdef int j, acc = 0
    for j in range(14):
        s[j] = B64[t[j]]
        acc |= s[j]
    if acc < 0:
        return -1
    if s[13] & 15:                     # 84 bits carry 80: the last 4 are zero
        return -2
    for j in range(3):
        key[3 * j] = <uint8_t>((s[4 * j] << 2) | (s[4 * j + 1] >> 4))
        key[3 * j + 1] = <uint8_t>(((s[4 * j + 1] & 15) << 4) | (s[4 * j + 2] >> 2))
        key[3 * j + 2] = <uint8_t>(((s[4 * j + 2] & 3) << 6) | s[4 * j + 3])
    key[9] = <uint8_t>((s[12] << 2) | (s[13] >> 4))
    return 0


def position_id_key(const uint8_t[::1] text):
    """The 10 key bytes of a 14-byte Position ID, or the status of
    :func:`decode_position_id` (-1, -2) as an int when it does not decode."""
    cdef uint8_t key[10]
    cdef int status
    if text.shape[0] != 14:
        raise ValueError("a Position ID has 14 characters")
    status = decode_position_id(&text[0], key)
    if status:
        return status
    return key[:10]


cdef inline int board_too_many(const uint8_t* b) noexcept nogil:
    """0, or the row (1 + row) of a side with more than 15 checkers (row 1
    first), or 3 when neither side has a checker left (both cannot have
    borne off all 15)."""
    cdef int i, t0 = 0, t1 = 0
    for i in range(25):
        t0 += b[i]
        t1 += b[25 + i]
    if t1 > 15:
        return 2
    if t0 > 15:
        return 1
    if t0 == 0 and t1 == 0:
        return 3
    return 0


cdef extern from "_bits.h" nogil:
    void bgv_point_masks(const uint8_t* row, uint32_t* zero, uint32_t* one, uint32_t* two)
    uint32_t bgv_mirror24(uint32_t m)
    int __builtin_ctz(unsigned int)


cdef inline int board_clash(const uint8_t* b) noexcept nogil:
    """0, or 1 + the first point p (0..23 of row 0) that both sides hold:
    row 0's occupied points against row 1's, mirrored (its point 23 - p is
    row 0's p), as bit masks."""
    cdef uint32_t z0, z1, one, two, both
    bgv_point_masks(b, &z0, &one, &two)
    bgv_point_masks(b + 25, &z1, &one, &two)
    both = ~z0 & bgv_mirror24(~z1 & 0xFFFFFF) & 0xFFFFFF
    return __builtin_ctz(both) + 1 if both else 0


cdef bint board_possible(const uint8_t* b) noexcept nogil:
    return board_too_many(b) == 0 and board_clash(b) == 0


cdef Py_ssize_t _first(const uint8_t[:, :, ::1] boards, bint clash, int* k) noexcept nogil:
    """The first board with too many checkers (or, ``clash``, a point both
    sides hold), -1 if none; its board_too_many / board_clash code in k."""
    cdef Py_ssize_t i
    for i in range(boards.shape[0]):
        k[0] = board_clash(&boards[i, 0, 0]) if clash else board_too_many(&boards[i, 0, 0])
        if k[0]:
            return i
    return -1


def first_impossible(const uint8_t[:, :, ::1] boards):
    """``(i, kind, detail)`` of the first impossible board, or None: the
    first board with a side above 15 checkers or with no checker on either
    side (kind 0, detail 0 = row 0 above 15, 1 = row 1 above 15, 2 = no
    checker), else the first with a point held by both sides (kind 1,
    detail = the point's index p in row 0)."""
    cdef Py_ssize_t bad
    cdef int k = 0, kind
    for kind in range(2):
        with nogil:
            bad = _first(boards, kind == 1, &k)
        if bad >= 0:
            return int(bad), kind, k - 1
    return None


def key_board(const uint8_t[::1] key):
    """The board of one 10-byte key, ``uint8[2, 25]`` and read-only, or None
    when the key does not decode (see :func:`unpack`) or gives an impossible
    board (see :func:`first_impossible`): the general path says why."""
    cdef uint8_t b[50]
    if key.shape[0] != 10 or unpack_key(&key[0], b) != 0 or not board_possible(b):
        return None
    out = np.empty((2, 25), dtype=np.uint8)
    cdef uint8_t[:, ::1] o = out
    memcpy(&o[0, 0], b, 50)
    out.flags.writeable = False
    return out


# ---------------------------------------------------------------------------
# the position class (bgfast.position.PositionClass), for every kernel
# ---------------------------------------------------------------------------

cdef inline int _rearmost(const uint8_t* row) noexcept nogil:
    """The highest slot (0..24) holding a checker of this row, or -1 for none."""
    cdef int i = 24
    while i >= 0 and not row[i]:
        i -= 1
    return i


cdef bint board_contact(const uint8_t* b) noexcept nogil:
    cdef int b0 = _rearmost(b), b1 = _rearmost(b + 25)
    return b0 >= 0 and b1 >= 0 and b0 + b1 >= 23


cdef int board_class(const uint8_t* b) noexcept nogil:
    cdef int b0 = _rearmost(b), b1 = _rearmost(b + 25)
    if b0 < 0 or b1 < 0:               # a side has no checker left
        return 0
    if b0 + b1 >= 23:
        return 3
    if b0 <= 5 and b1 <= 5:
        return 1
    return 2


def board_classes(const uint8_t[:, :, ::1] boards):
    """PositionClass codes ``int8[N]`` of ``uint8[N, 2, 25]`` boards."""
    cdef Py_ssize_t n = boards.shape[0], i
    out = np.empty(n, dtype=np.int8)
    cdef signed char[::1] o = out
    with nogil:
        for i in range(n):
            o[i] = <signed char>board_class(&boards[i, 0, 0])
    return out
