"""Saved matches: what ``bgfast play --save FILE`` writes (any name but
``.mat``) and ``bgfast play --resume FILE`` reads.

A saved match is one JSON object::

    {"format": "bgfast saved match", "version": 1,
     "match": {... Match.to_dict(): rules, names, every action, the dice generator ...},
     "mac": "<64 hex digits>"}

``mac`` is HMAC-SHA256 over the canonical JSON of ``match`` (sorted keys,
no spaces, ASCII), keyed with a secret of this installation: 32 random
bytes kept in ``save-key`` in the user's bgfast configuration directory
(``$BGFAST_CONFIG_DIR``, else ``click.get_app_dir("bgfast")``, i.e.
``~/.config/bgfast`` on Linux), made with mode 0600 at the first save.

What this protects against: any edit of a saved file -- the pending roll,
the dice generator's ``rng_state``, the score, a name -- by someone who does
not have the key, so a saved game cannot be doctored to change the dice.
It does not stop a determined user who reads their own key file and signs
an edited file again.  The price of the key: a file saved under one user
account or machine is refused on another (it cannot be told from an edited
one).

Besides the MAC, :func:`loads` refuses what the program could not have
written: anything but the object above, a match :meth:`Match.from_dict`
refuses (illegal actions, a dice generator state PCG64 never takes, names
with control characters, ...), and a match longer than ``bgfast play``
plays (:data:`MAX_LENGTH`).  Every refusal is an
:class:`bgfast.errors.InvalidRecordError`, whatever the bytes.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

from ._files import atomic_write, read_input
from .errors import BgfastError, InvalidRecordError
from .game import Match, quote

__all__ = ["dumps", "loads", "save", "load", "install_key", "key_path", "MAX_LENGTH",
           "MAX_BYTES"]

FORMAT = "bgfast saved match"
VERSION = 1

#: The longest match ``bgfast play`` plays (``--match``), hence saves.
MAX_LENGTH = 99

#: The largest saved match :func:`load` reads (a long money session is a few MB).
MAX_BYTES = 64 << 20

_KEY_NAME = "save-key"


# ---------------------------------------------------------------------------
# the key
# ---------------------------------------------------------------------------

def key_path() -> Path:
    """Where this installation's save key is kept."""
    base = os.environ.get("BGFAST_CONFIG_DIR")
    if not base:
        import click

        base = click.get_app_dir("bgfast")
    return Path(base) / _KEY_NAME


def _read_key(path: Path) -> bytes | None:
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BgfastError(f"cannot read the save key {path}: {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise BgfastError(f"the save key {path} is damaged (it must hold 64 hex digits); "
                          "remove it to make a new one (files saved with it can then "
                          "no longer be resumed)")
    return key


def install_key() -> bytes:
    """This installation's save key, made (mode 0600) if there is none yet;
    a directory or key that cannot be made raises :class:`BgfastError`."""
    path = key_path()
    key = _read_key(path)
    if key is not None:
        return key
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:        # made meanwhile by another bgfast
        return _read_key(path)
    except OSError as exc:
        raise BgfastError(f"cannot make the save key {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_hex(32) + "\n")
    return _read_key(path)


# ---------------------------------------------------------------------------
# the file
# ---------------------------------------------------------------------------

def _canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def _mac(key: bytes, body) -> str:
    return hmac.new(key, _canonical(body), hashlib.sha256).hexdigest()


def dumps(match: Match, key: bytes | None = None) -> str:
    """The saved-match text of ``match``, signed with ``key`` (default:
    :func:`install_key`)."""
    body = match.to_dict()
    mac = _mac(install_key() if key is None else key, body)
    return json.dumps({"format": FORMAT, "version": VERSION, "match": body, "mac": mac})


def _refuse(constant):
    raise ValueError(f"{constant} is not a number the program writes")


def loads(data: bytes | str, key: bytes | None = None) -> Match:
    """The match in a saved-match text (bytes or str), checked as the module
    docstring says; ``key`` defaults to this installation's.  Anything else
    raises :class:`InvalidRecordError`."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if not isinstance(data, (bytes, bytearray)):
        raise InvalidRecordError(f"a saved match is bytes or text, not {type(data).__name__}")
    if len(data) > MAX_BYTES:
        raise InvalidRecordError(f"not a saved bgfast match: {len(data)} bytes is more than "
                                 f"the {MAX_BYTES >> 20} MiB a saved match takes")
    try:
        doc = json.loads(bytes(data), parse_constant=_refuse)
    except RecursionError:
        raise InvalidRecordError("not a saved bgfast match: the JSON is nested too deeply") from None
    except ValueError as exc:       # JSONDecodeError, UnicodeDecodeError, int digit limits
        raise InvalidRecordError(f"not a saved bgfast match: {_first_line(exc)}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise InvalidRecordError("not a saved bgfast match (no \"format\": "
                                 f"\"{FORMAT}\" object)")
    if set(doc) != {"format", "version", "match", "mac"}:
        raise InvalidRecordError("not a saved bgfast match: the fields are format, version, "
                                 "match and mac")
    if doc["version"] != VERSION or isinstance(doc["version"], bool):
        raise InvalidRecordError(f"a saved match of version {quote(doc['version'])}; "
                                 f"this bgfast reads version {VERSION}")
    if key is None:
        key = _read_key(key_path())
    mac = doc["mac"]
    try:
        expected = None if key is None else _mac(key, doc["match"])
    except (RecursionError, ValueError, TypeError):
        expected = None
    if not isinstance(mac, str) or expected is None \
            or not hmac.compare_digest(mac.encode("utf-8", "replace"), expected.encode("ascii")):
        raise InvalidRecordError("the saved match was changed after bgfast wrote it, or was "
                                 "saved by another installation (its check does not match); "
                                 "refusing to resume it")
    try:
        match = Match.from_dict(doc["match"])
    except RecursionError:
        raise InvalidRecordError("not a saved bgfast match: nested too deeply") from None
    except InvalidRecordError:
        raise
    except BgfastError as exc:
        raise InvalidRecordError(f"not a saved bgfast match: {exc}") from None
    if match.length > MAX_LENGTH:
        raise InvalidRecordError(f"a {match.length}-point match: bgfast play plays matches "
                                 f"of up to {MAX_LENGTH} points")
    return match


def _first_line(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:200]


def save(match: Match, path) -> None:
    """Write ``match`` to ``path`` (atomically), signed with this installation's key."""
    atomic_write(path, dumps(match))


def load(path) -> Match:
    """Read a match written by :func:`save` (see :func:`loads`)."""
    data = read_input(path, InvalidRecordError, limit=MAX_BYTES, binary=True)
    try:
        return loads(data)
    except InvalidRecordError as exc:
        raise InvalidRecordError(f"{path}: {exc}") from None
