"""The CLI's shared options (bgfast.cli._options): --json, the cube context, --cubeless."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bgfast.cli import main
from bgfast.cube import CubeContext, MoneyRules, Owner

PROBS = ("--probs", "0.6,0.15,0.01,0.1,0.005")
# 2-4 to 9, cube 2 owned by the player on roll (bottom), no dice
XGID_2_4 = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:9:10"
# 4-2 to 9 (gnubg ID), cube 2 owned by the opponent, dice 5-2
GNUBG_52 = "4HPwATDgc/ABMA:QYkqASAAIAAA"


def cli(*args):
    return CliRunner().invoke(main, list(args))


def context_of(*args) -> dict:
    """The context ``bgfast cube ... --json`` decided at."""
    r = cli("cube", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.parametrize("args, mode, cube, owner, extra", [
    ([], "money", 1, "centre", {"jacoby": False, "beavers": False}),
    (["--money"], "money", 1, "centre", {"jacoby": False, "beavers": False}),
    (["--money", "--jacoby"], "money", 1, "centre", {"jacoby": True, "beavers": False}),
    (["--jacoby", "--beaver"], "money", 1, "centre", {"jacoby": True, "beavers": True}),
    (["--beavers", "--cube", "4", "--owner", "opp"], "money", 4, "opp",
     {"jacoby": False, "beavers": True}),
    (["--score", "3-1", "--length", "7"], "match", 1, "centre",
     {"away": [4, 6], "crawford": False, "post_crawford": False}),
    (["--length", "5"], "match", 1, "centre",
     {"away": [5, 5], "crawford": False, "post_crawford": False}),
    (["--score", "4-2", "--length", "5", "--crawford"], "match", 1, "centre",
     {"away": [1, 3], "crawford": True, "post_crawford": False}),
    (["--score", "4-2", "--length", "5", "--post-crawford", "--cube", "2", "--owner", "me"],
     "match", 2, "me", {"away": [1, 3], "crawford": False, "post_crawford": True}),
    (["--score", "2-4", "--length", "5"], "match", 1, "centre",
     {"away": [3, 1], "crawford": False, "post_crawford": True}),
    (["--score", "0-0", "--length", "7", "--cube", "4", "--owner", "opp"], "match", 4, "opp",
     {"away": [7, 7], "crawford": False, "post_crawford": False}),
])
def test_every_option_combination_gives_its_context(args, mode, cube, owner, extra):
    doc = context_of(*PROBS, *args)
    assert (doc["mode"], doc["cube"], doc["owner"]) == (mode, cube, owner)
    if mode == "money":
        assert doc["money"] == extra
    else:
        assert {k: doc["match"][k] for k in extra} == extra


@pytest.mark.parametrize("args, message", [
    (["--score", "2-7", "--length", "7"], "not below the match length"),
    (["--score", "2-x", "--length", "7"], "cannot parse score"),
    (["--score", "2-4", "--length", "7", "--crawford"], "cannot be the Crawford game"),
    (["--score", "2-4", "--length", "7", "--post-crawford"], "cannot be post-Crawford"),
    (["--score", "4-2", "--length", "5", "--crawford", "--post-crawford"],
     "either the Crawford game or post-Crawford"),
    (["--score", "4-2", "--length", "5", "--crawford", "--cube", "2", "--owner", "me"],
     "no doubling in the Crawford game"),
    (["--score", "2-4"], "needs --length"),
    (["--crawford"], "needs --length"),
    (["--length", "0"], "0 is not in the range"),
    (["--length", "7", "--jacoby"], "money games"),
    (["--money", "--post-crawford"], "money games"),
    (["--cube", "2"], "--owner"),
    (["--cube", "3", "--owner", "me"], "power of 2"),
    (["--cube", "0"], "power of 2"),
    (["--owner", "me"], "a cube at 1 is centred"),
    (["--money", "--table", "Rockwell-Kazaross"], "--table needs a match"),
    (["--score", "1-1", "--length", "5", "--table", "no-such-table"],
     "unknown match equity table"),
])
def test_bad_contexts_are_one_line_and_exit_2(args, message):
    r = cli("cube", *PROBS, *args)
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], r.stderr
    assert r.stdout == ""


def test_the_position_context_is_the_base_the_options_override():
    doc = context_of(GNUBG_52)
    assert (doc["mode"], doc["match"]["away"], doc["cube"], doc["owner"]) == (
        "match", [5, 7], 2, "opp")
    doc = context_of(GNUBG_52, "--post-crawford", "--score", "8-2")
    assert doc["match"]["away"] == [1, 7] and doc["match"]["post_crawford"]
    doc = context_of(GNUBG_52, "--money", "--beaver")
    assert (doc["mode"], doc["cube"], doc["owner"], doc["money"]["beavers"]) == (
        "money", 2, "opp", True)
    doc = context_of(XGID_2_4, "--owner", "opp", "--cube", "8")
    assert (doc["cube"], doc["owner"], doc["match"]["away"]) == (8, "opp", [7, 5])


def test_position_arg_carries_a_cube_context():
    from bgfast.cli import PositionParam

    arg = PositionParam().convert(XGID_2_4, None, None)
    assert arg.context == CubeContext.match(9, 2, 4, cube=2, owner="me")
    assert PositionParam().convert(GNUBG_52, None, None).context.owner == Owner.OPP
    bare = PositionParam().convert("4HPwATDgc/ABMA", None, None)
    assert bare.context == CubeContext() and bare.context.rules == MoneyRules()


def test_every_json_flag_is_the_shared_option():
    """Each command's --json is the one flag (keyword as_json) of json_option."""
    import click

    seen = 0

    def walk(cmd):
        nonlocal seen
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                walk(sub)
            return
        for p in cmd.params:
            if "--json" in p.opts:
                seen += 1
                assert p.name == "as_json" and p.is_flag and p.opts == ["--json"], cmd.name

    walk(main)
    assert seen >= 18
