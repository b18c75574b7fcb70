"""bgfast: a fast backgammon analysis engine.

>>> from bgfast import Position
>>> pos = Position.initial()
>>> pos.position_id()
'4HPwATDgc/ABMA'
>>> len(pos.legal_plays(3, 1))
16
"""
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
