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
    (["--cube", str(2 ** 41), "--owner", "me"], "at most 2**40"),
    (["--cube", str(2 ** 200), "--owner", "me"], "at most 2**40"),
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


# -- the kernel's context layout -------------------------------------------------

def test_the_kernel_row_layout_is_named_alike_in_the_kernel_and_in_python():
    from bgfast import _cube as k
    from bgfast.cube import _OWNER_CODES, ContextColumn, ContextState

    assert {c.name.lower(): int(c) for c in ContextColumn} == k.CONTEXT_LAYOUT
    assert tuple(c.name.lower() for c in ContextColumn) == k.CONTEXT_COLUMNS
    assert {s.name.lower(): int(s) for s in ContextState} == k.STATE_CODES
    assert _OWNER_CODES == k.OWNER_CODES
    row = CubeContext.match(7, 2, 4, cube=2, owner="opp", post_crawford=None).kernel_row()
    assert len(row) == len(ContextColumn)
    assert (row[ContextColumn.MATCH], row[ContextColumn.AWAY_ME], row[ContextColumn.AWAY_OPP],
            row[ContextColumn.CUBE], row[ContextColumn.OWNER]) == (1, 5, 3, 2, k.OWNER_CODES["opp"])
    assert row[ContextColumn.STATE] == ContextState.PRE_CRAWFORD
    post = CubeContext.match(5, 1, 4).kernel_row()
    assert post[ContextColumn.STATE] == ContextState.POST_CRAWFORD
    crawford = CubeContext.match(5, 1, 4, crawford=True).kernel_row()
    assert crawford[ContextColumn.STATE] == ContextState.CRAWFORD
    money = CubeContext.money(4, "me", jacoby=True, beavers=True).kernel_row()
    assert (money[ContextColumn.MATCH], money[ContextColumn.JACOBY],
            money[ContextColumn.BEAVERS], money[ContextColumn.OWNER]) == (0, 1, 1, 1)


# -- cube decisions at n plies ----------------------------------------------------

@pytest.mark.parametrize("position, args", [
    ("4HPwATDgc/ABMA", []),
    (XGID_2_4, []),
    ("4HPwATDgc/ABMA", ["--score", "4-2", "--length", "5", "--post-crawford"]),
])
def test_cube_at_n_plies_is_the_cubeful_search(position, args):
    from bgfast.cli import PositionParam
    from bgfast.evaluate import evaluate_cube

    from bgfast.cli._options import resolve_context

    arg = PositionParam().convert(position, None, None)
    ctx = arg.context
    if args:
        ctx = resolve_context(ctx, score="4-2", length=5, post_crawford=True)
    for ply in (1, 2):
        doc = context_of(position, "--ply", str(ply), *args)
        want = evaluate_cube(arg.position, ctx, plies=ply).to_dict()
        assert doc["plies"] == ply and "cubeful search" in doc["source"]
        for key in ("equities", "action", "probs", "mwc"):
            assert doc.get(key) == want.get(key), key
        assert doc["context"] == ctx.to_dict()
    # the default stays 0 plies: the cube model on the evaluator's probabilities
    zero = context_of(position, *args)
    assert zero["plies"] == 0 and zero["equities"] == evaluate_cube(
        arg.position, ctx, plies=0).to_dict()["equities"]
    assert zero["equities"] != context_of(position, "--ply", "2", *args)["equities"]


def test_cube_ply_refuses_what_it_cannot_search():
    for args, message in ((list(PROBS) + ["--ply", "1"], "--probs are decided at 0 plies"),
                          (["4HPwATDgc/ABMA", "--ply", "2", "--efficiency", "0.7"],
                           "--efficiency is for the 0-ply decision"),
                          (["4HPwATDgc/ABMA", "--ply", "3"], "not in the range")):
        r = cli("cube", *args)
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
        assert message in r.stderr


def test_hint_without_a_roll_is_the_cubeful_search_at_its_plies():
    from bgfast.cli import PositionParam
    from bgfast.evaluate import evaluate_cube

    arg = PositionParam().convert(XGID_2_4, None, None)
    for ply in (1, 2):
        r = cli("hint", XGID_2_4, "--ply", str(ply), "--json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        want = evaluate_cube(arg.position, arg.context, plies=ply).to_dict()
        assert doc["ply"] == ply and doc["cube"]["equities"] == want["equities"]
        assert doc["cube"]["action"] == want["action"] and doc["cube"]["mwc"] == want["mwc"]


def test_levels_decide_the_cube_by_the_search_at_their_plies():
    from bgfast.cube import decide_cube
    from bgfast.evaluate import evaluate_cube, get_evaluator
    from bgfast.game import Game
    from bgfast.players import make_level_player

    g = Game(match_length=7, score=(2, 4))
    pos = g.position()
    ctx = CubeContext.from_game(g, g.turn)
    assert ctx == CubeContext.match(7, *((2, 4) if g.turn == 0 else (4, 2)))
    for name, plies in (("hard", 1), ("expert", 2)):
        got = make_level_player(name, seed=1).cube_decision(g)
        assert got.to_dict() == evaluate_cube(pos, ctx, plies=plies).to_dict(), name
    medium = make_level_player("medium", seed=1).cube_decision(g)
    probs = get_evaluator("net").evaluate(pos).probs
    assert medium.to_dict() == decide_cube(pos, ctx, probs).to_dict()


# -- checker play at the cube and score -------------------------------------------

# At double match point (6-6 to 7) gammons count for nothing: the net's best 5-3
# here is 24/19*/16, by 2.2% MWC, where money's (and cubeless) is 24/19* 6/3.
DMP_POSITION, DMP_DICE = "dlsAAHjbCQDAAQ", "53"


def _ranked(*args) -> dict:
    r = cli("evaluate", DMP_POSITION, "--dice", DMP_DICE, *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_evaluate_ranks_plays_cubefully_by_default_and_cubeless_on_request():
    from bgfast.evaluate import rank_plays
    from bgfast.position import Position

    pos = Position.from_position_id(DMP_POSITION)
    money = _ranked()
    assert money["ranked_by"] == "cubeful" and money["context"] == CubeContext().to_dict()
    assert money["plays"][0]["play"] == "24/19* 6/3"
    want = rank_plays(pos, 5, 3, cube=CubeContext())
    assert [p["cubeful_equity"] for p in money["plays"]] == [r.cubeful for r in want]
    assert [p["equity"] for p in money["plays"]] == [r.equity for r in want]
    assert all("mwc" not in p for p in money["plays"])

    dmp = _ranked("--score", "6-6", "--length", "7")
    ctx = CubeContext.match(7, 6, 6)
    assert dmp["ranked_by"] == "mwc" and dmp["context"] == ctx.to_dict()
    assert dmp["context"]["match"]["away"] == [1, 1]
    assert dmp["plays"][0]["play"] == "24/19*/16"
    want = rank_plays(pos, 5, 3, cube=ctx)
    assert [(p["play"], p["mwc"], p["emg"], p["equity"]) for p in dmp["plays"]] == [
        (r.play.notation, r.mwc, r.cubeful, r.equity) for r in want]
    mwcs = [p["mwc"] for p in dmp["plays"]]
    assert mwcs == sorted(mwcs, reverse=True)
    money_best = next(p for p in dmp["plays"] if p["play"] == "24/19* 6/3")
    assert dmp["plays"][0]["mwc"] - money_best["mwc"] > 0.01

    cubeless = _ranked("--cubeless")
    assert cubeless["ranked_by"] == "cubeless" and cubeless["context"] is None
    assert cubeless["plays"][0]["play"] == "24/19* 6/3"
    assert all("cubeful_equity" not in p and "mwc" not in p for p in cubeless["plays"])
    eqs = [p["equity"] for p in cubeless["plays"]]
    assert eqs == sorted(eqs, reverse=True)
    assert eqs == [r.equity for r in rank_plays(pos, 5, 3)]


def test_evaluate_text_names_what_it_ranks_by():
    lines = cli("evaluate", DMP_POSITION, "-d", DMP_DICE, "--score", "6-6", "--length", "7"
                ).stdout.splitlines()
    assert lines[0].startswith("by match winning chance") and "1-away, 1-away" in lines[0]
    assert "24/19*/16" in lines[1]
    assert cli("evaluate", DMP_POSITION, "-d", DMP_DICE, "--cubeless").stdout.startswith(
        "by cubeless equity\n")
    assert cli("evaluate", DMP_POSITION, "-d", DMP_DICE).stdout.startswith(
        "by cubeful equity at money, cube 1 centred\n")


@pytest.mark.parametrize("args, message", [
    (["--cubeless", "--score", "1-1", "--length", "5"], "--cubeless takes no cube or score"),
    (["--cubeless", "--money"], "--cubeless takes no cube or score"),
    (["--score", "1-1", "--length", "5", "--crawford"], "cannot be the Crawford game"),
    (["--cube", "3", "--owner", "me"], "power of 2"),
])
def test_evaluate_bad_contexts_are_one_line(args, message):
    r = cli("evaluate", DMP_POSITION, "-d", DMP_DICE, *args)
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr


def test_hint_takes_the_context_options_over_its_text():
    r = cli("hint", DMP_POSITION, DMP_DICE, "--ply", "0", "--score", "6-6", "--length", "7",
            "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["context"] == "6-6 to 7, cube 1 (centre)" and doc["ranked_by"] == "mwc"
    assert doc["plays"][0]["play"] == "24/19*/16"
    doc = json.loads(cli("hint", XGID_2_4, "--ply", "0", "--money", "--json").stdout)
    assert doc["context"] == "money, cube 2 (me)" and doc["cube"]["mode"] == "money"
    doc = json.loads(cli("hint", XGID_2_4, "--ply", "0", "--json").stdout)
    assert doc["context"] == "2-4 to 9, cube 2 (me)"
    r = cli("hint", XGID_2_4, "--cube", "6")
    assert r.exit_code == 2 and "power of 2" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["cube", "4HPwATDgc/ABMA", "--score", "4-2", "--length", "5", "--crawford", "--cube", "2",
      "--owner", "me"], "Error: no doubling in the Crawford game: the cube must be centred at 1"),
    (["evaluate", "4HPwATDgc/ABMA", "--dice", "31", "--cube", "3", "--owner", "me"],
     "Error: cube value must be a power of 2 (1, 2, 4, ...), not 3"),
])
def test_the_documented_bad_contexts(args, message):
    """The examples of docs/cubeful.md ("The context on the command line")."""
    r = cli(*args)
    assert r.exit_code == 2 and r.stderr.strip() == message
