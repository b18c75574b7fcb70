import numpy as np
import numpy.typing as npt

CUBE: int
CHECKER: int
VERBATIM: int
OVER: int

def scan(lines: list, first: int) -> dict: ...
def scan_packed(blob: bytes | memoryview | npt.NDArray[np.uint8], ends: npt.NDArray[np.int64],
                first: int) -> dict: ...
def int_text(v: int) -> str: ...
def float_text(x: float, digits: int = 6) -> str: ...
def float_texts(x: npt.NDArray[np.float64], digits: int = 6) -> list[str]: ...
COLUMN_TYPES: dict[str, int]

def format_rows(csv: bool, kind: npt.NDArray[np.int8], columns: list, end: bytes,
                text: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64],
                table: npt.NDArray[np.uint8], table_offsets: npt.NDArray[np.int64],
                extra: npt.NDArray[np.uint8], extra_offsets: npt.NDArray[np.int64],
                into: bytearray | memoryview | None = None) -> bytes | memoryview: ...
