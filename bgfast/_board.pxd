# Board kernels shared by the other Cython modules.
from libc.stdint cimport uint8_t

cdef void pack_key(const uint8_t* board, uint8_t* key) noexcept nogil
cdef int unpack_key(const uint8_t* key, uint8_t* board) noexcept nogil
# 1 when no side has more than 15 checkers and no point is held by both sides
cdef bint board_possible(const uint8_t* b) noexcept nogil
# PositionClass codes of bgfast.position (OVER 0, BEAROFF 1, RACE 2, CONTACT 3):
# a side has no checker left; contact, when a checker of one side still has an
# opposing checker in front of it; bear-off, when both sides are home; else race
cdef int board_class(const uint8_t* b) noexcept nogil
cdef bint board_contact(const uint8_t* b) noexcept nogil
# A 14-character Position ID (base64 without padding) -> its 10 key bytes:
# 0, or -1 for a character outside base64, -2 for non-zero padding bits
cdef int decode_position_id(const uint8_t* t, uint8_t* key) noexcept nogil
# 1 when each of the n characters is in base64's alphabet
cdef bint all_base64(const uint8_t* t, Py_ssize_t n) noexcept nogil
