"""Saved matches (bgfast.savegame): signed, refused when edited, and any bytes
are either a match bgfast wrote or one InvalidRecordError."""
import json
import os
import stat

import pytest
from hypothesis import given, settings, strategies as st

from bgfast import savegame
from bgfast.errors import BgfastError, InvalidRecordError
from bgfast.game import Match


def _match() -> Match:
    """A money game stopped with a roll pending (phase MOVE)."""
    m = Match(0, seed=21, names=("Ann", "Bob"))
    g = m.new_game()
    g.start()
    g.play(g.legal_plays()[0])
    g.roll()
    return m


def _doc(m: Match | None = None) -> dict:
    return json.loads(savegame.dumps(_match() if m is None else m))


def _signed(body) -> bytes:
    """A saved-match document around any ``body``, signed with the test key."""
    mac = savegame._mac(savegame.install_key(), body)
    return json.dumps({"format": savegame.FORMAT, "version": savegame.VERSION,
                       "match": body, "mac": mac}).encode()


def test_round_trip_continues_with_the_same_dice(tmp_path):
    m = _match()
    path = tmp_path / "m.json"
    savegame.save(m, path)
    again = savegame.load(path)
    assert [a.to_list() for a in again.game.actions] == [a.to_list() for a in m.game.actions]
    assert again.game.dice == m.game.dice
    assert again.rng.integers(1 << 40, size=4).tolist() == m.rng.integers(1 << 40, size=4).tolist()


def test_the_key_is_private_and_made_once():
    path = savegame.key_path()
    assert not path.exists()
    key = savegame.install_key()
    assert len(key) == 32 and savegame.install_key() == key
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


@pytest.mark.parametrize("edit", [
    lambda d: d["match"]["games"][0][-1].__setitem__(2, [6, 6]),          # the pending roll
    lambda d: d["match"]["rng_state"]["state"].__setitem__("state", 1),    # the dice generator
    lambda d: d["match"]["rng_state"]["state"].update(state=0, inc=0),     # the hanging state
    lambda d: d["match"].__setitem__("names", ["Ann", "Bob", "Cid"]),
    lambda d: d["match"].__setitem__("length", 10 ** 30),
    lambda d: d.__setitem__("mac", d["mac"][::-1]),
    lambda d: d.__setitem__("mac", 5),
])
def test_an_edited_file_is_refused(edit):
    d = _doc()
    assert d["match"]["games"][0][-1][0] == "roll"
    edit(d)
    with pytest.raises(InvalidRecordError, match="changed after bgfast wrote it"):
        savegame.loads(json.dumps(d))


def test_a_file_of_another_installation_is_refused(monkeypatch, tmp_path):
    text = savegame.dumps(_match())
    monkeypatch.setenv("BGFAST_CONFIG_DIR", str(tmp_path / "other"))
    with pytest.raises(InvalidRecordError, match="another installation"):
        savegame.loads(text)          # no key here at all
    savegame.install_key()
    with pytest.raises(InvalidRecordError, match="another installation"):
        savegame.loads(text)          # a different key


def test_a_damaged_key_is_reported():
    savegame.key_path().parent.mkdir(parents=True, exist_ok=True)
    savegame.key_path().write_text("not hex\n")
    with pytest.raises(BgfastError, match="damaged"):
        savegame.install_key()


@pytest.mark.parametrize("body, message", [
    ({"games": [], "rng_state": {"bit_generator": "PCG64", "state": {"state": 0, "inc": 0},
                                 "has_uint32": 0, "uinteger": 0}}, "PCG64"),
    ({"games": [], "names": ["a", "b", "c"]}, "two player names"),
    ({"games": [], "names": ["a\nb", "c"]}, "U\\+000A"),
    ({"games": [], "length": 10 ** 30}, "32767"),
    ({"games": [], "length": 100}, "up to 99 points"),
    ([1, 2, 3], "JSON object"),
    ({"games": [[["roll", 0, [1, 2]]]]}, "cannot roll now"),
])
def test_signed_but_impossible_states_are_refused(body, message):
    with pytest.raises(InvalidRecordError, match=message):
        savegame.loads(_signed(body))


@pytest.mark.parametrize("data, message", [
    (b"[1, 2, 3]", "not a saved bgfast match"),
    (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
    (b'{"format": "bgfast saved match", "version": 1, "match": {}, "mac": NaN}', "NaN"),
    (b"\xff\xfe\x00garbage", "not a saved bgfast match"),
    (b"1" * 5000, "not a saved bgfast match"),
    (b"", "not a saved bgfast match"),
    (b'{"format": "bgfast saved match", "version": 2, "match": {}, "mac": ""}', "version 2"),
])
def test_malformed_files(data, message):
    with pytest.raises(InvalidRecordError, match=message):
        savegame.loads(data)


def test_deep_json_inside_a_signed_document():
    deep = {"games": []}
    node = deep
    for _ in range(400):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(InvalidRecordError):
        savegame.loads(_signed(deep))


def test_too_large_a_file_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(savegame, "MAX_BYTES", 500)
    path = tmp_path / "big.json"
    savegame.save(_match(), path)
    assert path.stat().st_size > 500
    with pytest.raises(InvalidRecordError, match="more than"):
        savegame.load(path)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 130, 2 ** 130)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_any_bytes(data):
    with pytest.raises(InvalidRecordError):
        savegame.loads(data)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_fuzz_any_json(doc):
    with pytest.raises(InvalidRecordError):
        savegame.loads(json.dumps(doc))


@settings(max_examples=200, deadline=None)
@given(_json)
def test_fuzz_any_signed_json_body(body):
    try:
        m = savegame.loads(_signed(body))
    except InvalidRecordError:
        return
    assert isinstance(m, Match) and m.length <= savegame.MAX_LENGTH


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10 ** 6), st.integers(0, 255))
def test_fuzz_one_byte_changed(pos, value):
    data = bytearray(savegame.dumps(_match()).encode())
    i = pos % len(data)
    if data[i] == value:
        return
    data[i] = value
    try:
        m = savegame.loads(bytes(data))
    except InvalidRecordError:
        return
    # only a change that leaves the JSON meaning alone can pass (e.g. a space)
    assert m.to_dict() == _match().to_dict()
