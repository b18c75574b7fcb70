"""bgfast: a fast backgammon analysis engine.

>>> from bgfast import Position
>>> pos = Position.initial()
>>> pos.position_id()
'4HPwATDgc/ABMA'
>>> len(pos.legal_plays(3, 1))
16
"""
import os as _os

# The kernels' OpenMP threads sleep, rather than spin, while they wait for
# each other: on a machine whose cores are busy with other work a spinning
# thread keeps the one it waits for off the CPU (a one-sided build on two
# spinning threads takes 1.2 s there, on two sleeping ones 0.11 s).  Set before the first kernel
# loads the OpenMP runtime; an explicit setting in the environment wins.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .errors import (BgfastError, DatabaseError, IllegalActionError, InvalidCubeError,
                     InvalidDiceError, InvalidIdError, InvalidMoveError, InvalidPositionError,
                     InvalidRecordError, InvalidScoreError, MissingTableError)
from .movegen import Play, count_shots, legal_plays, legal_plays_batch
from .position import Position, PositionClass, pack, position_ids, unpack

__version__ = "0.1.0"

__all__ = [
    "Position", "PositionClass", "Play", "legal_plays", "legal_plays_batch", "count_shots",
    "pack", "unpack", "position_ids",
    "BgfastError", "InvalidPositionError", "InvalidIdError", "InvalidDiceError",
    "InvalidMoveError", "InvalidRecordError", "InvalidScoreError", "InvalidCubeError",
    "IllegalActionError", "DatabaseError", "MissingTableError",
]
