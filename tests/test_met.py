"""Match equity tables: shipped data, lookups, the generator, the CLI."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import met
from bgfast.errors import BgfastError, MissingTableError
from bgfast.met import InvalidScoreError, MatchScore, compare, get_table
from bgfast.metgen import generate

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "met"


def cli(*args):
    from bgfast.cli import main

    return CliRunner().invoke(main, list(args))


# -- shipped tables ----------------------------------------------------------

@pytest.mark.parametrize("name", met.TABLE_NAMES)
def test_shipped_table_shape_and_symmetry(name):
    t = get_table(name)
    assert t.max_away == 25
    assert t.pre.shape == (25, 25) and t.post.shape == (25,)
    # MWC(i, j) + MWC(j, i) = 1 for every cell
    np.testing.assert_allclose(t.pre + t.pre.T, 1.0, atol=1e-5)
    assert np.all(np.diag(t.pre) == 0.5)
    # more points needed -> fewer chances, along every row and column
    assert np.all(np.diff(t.pre[1:, 1:], axis=0) < 0)
    assert np.all(np.diff(t.pre[1:, 1:], axis=1) > 0)
    assert t.post[0] == 0.5 and np.all(np.diff(t.post) < 0)


@pytest.mark.parametrize("name", met.TABLE_NAMES)
def test_copyright_notice_kept(name):
    t = get_table(name)
    assert t.notice.startswith("Copyright (C)")
    assert "Kazaross" in t.notice and "notice are preserved" in t.notice
    for kind in ("pre", "post"):
        path = met.DATA_DIR / f"{name}.{kind}-crawford.csv"
        assert path.read_text().startswith("# Copyright (C)")


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared data folder not present")
@pytest.mark.parametrize("name", met.TABLE_NAMES)
def test_shipped_files_identical_to_shared_data(name):
    for kind in ("pre", "post"):
        f = f"{name}.{kind}-crawford.csv"
        assert (met.DATA_DIR / f).read_bytes() == (SHARED / f).read_bytes()


def test_known_values_kazaross_xg2():
    t = get_table()  # the default
    assert t.name == "Kazaross-XG2"
    assert t.mwc(3, 5) == pytest.approx(0.64795)
    assert t.mwc(5, 3) == pytest.approx(0.35205, abs=1e-5)
    assert t.mwc(1, 2) == pytest.approx(0.67736)  # Crawford game
    assert t.mwc(1, 2, crawford=True) == pytest.approx(0.67736)
    assert t.mwc(2, 1, post_crawford=True) == pytest.approx(0.48803)
    assert t.mwc(1, 3, post_crawford=True) == pytest.approx(1 - 0.32264)
    assert t.mwc(1, 1) == 0.5
    assert t.mwc(0, 4) == 1.0 and t.mwc(4, -1) == 0.0
    r = get_table("rockwell-kazaross")  # case-insensitive
    assert r.mwc(2, 3) == pytest.approx(0.598994)


def test_lookup_errors():
    t = get_table()
    with pytest.raises(MissingTableError, match="up to 25-away"):
        t.mwc(26, 3)
    with pytest.raises(InvalidScoreError, match="Crawford"):
        t.mwc(3, 5, crawford=True)
    with pytest.raises(InvalidScoreError):
        t.mwc(1, 1, post_crawford=True)
    with pytest.raises(MissingTableError, match="unknown match equity table"):
        get_table("Woolsey")


def test_match_score_validation():
    s = MatchScore(7, 2, 4)
    assert (s.away_me, s.away_opp, s.post_crawford) == (5, 3, False)
    assert MatchScore(7, 6, 4).post_crawford
    assert not MatchScore(7, 6, 4, crawford=True).post_crawford
    assert MatchScore.parse("2-4", 7) == s
    with pytest.raises(InvalidScoreError, match="not below the match length"):
        MatchScore(7, 7, 0)
    with pytest.raises(InvalidScoreError, match="cannot be the Crawford game"):
        MatchScore(7, 2, 4, crawford=True)
    with pytest.raises(InvalidScoreError, match="both sides need 1 point"):
        MatchScore(7, 6, 6, crawford=True)
    with pytest.raises(InvalidScoreError, match="above the match length"):
        MatchScore.from_away(9, 3, length=7)
    with pytest.raises(InvalidScoreError):
        MatchScore.parse("2:x", 7)
    assert issubclass(InvalidScoreError, BgfastError)


def test_csv_roundtrip(tmp_path):
    t = get_table("Rockwell-Kazaross")
    t.write_csv(tmp_path)
    u = met.load_csv(tmp_path / "Rockwell-Kazaross.pre-crawford.csv",
                     tmp_path / "Rockwell-Kazaross.post-crawford.csv")
    np.testing.assert_allclose(u.pre, t.pre, atol=1e-6)
    np.testing.assert_allclose(u.post, t.post, atol=1e-6)
    assert u.notice == t.notice


def test_corrupt_csv(tmp_path):
    (tmp_path / "x.pre-crawford.csv").write_text("0.5,0.6\n0.4\n")
    (tmp_path / "x.post-crawford.csv").write_text("0.5,0.4\n")
    with pytest.raises(met.DatabaseError, match="square"):
        met.load_csv(tmp_path / "x.pre-crawford.csv", tmp_path / "x.post-crawford.csv")


# -- generator ---------------------------------------------------------------

def test_post_crawford_recursion_by_hand():
    g = 0.3
    t = generate(6, gammon_rate=g, free_drops={2: 0.01, 4: 0.004})
    assert t.post[0] == 0.5
    assert t.post[1] == pytest.approx(0.5 - 0.01)  # 2-away: any win wins, less the free drop
    assert t.post[2] == pytest.approx(0.5 * ((1 - g) * 0.5 + g * 1.0))
    assert t.post[3] == pytest.approx(0.5 * ((1 - g) * 0.49 + g * 1.0) - 0.004)
    # Crawford game: the trailer 2-away wins 1 -> post-Crawford 1-away, gammon -> wins
    assert t.pre[1, 0] == pytest.approx(0.5 * ((1 - g) * 0.5 + g))


def test_generator_leader_and_trailer_gammon_rates():
    t = generate(8, gammon_rate=(0.35, 0.2))
    # post-Crawford and Crawford rows use the trailer's rate
    assert t.post[2] == pytest.approx(0.5 * ((1 - 0.2) * 0.5 + 0.2))
    assert t.pre[1, 0] == pytest.approx(0.5 * ((1 - 0.2) * 0.5 + 0.2))
    same = generate(8, gammon_rate=0.2)
    np.testing.assert_allclose(t.post, same.post)
    # more gammons for the leader: the leader's chances go up
    lead = t.pre[np.triu_indices(8, 1)][7:]  # rows >= 2, leader (fewer away) first
    assert np.all(lead >= same.pre[np.triu_indices(8, 1)][7:] - 1e-12)
    assert "0.35, 0.2" in t.notice
    r = cli("met", "--generate", "--length", "5", "--gammon-rate", "0.35",
            "--gammon-rate-trailer", "0.2", "--json")
    assert json.loads(r.stdout)["pre_crawford"][2][4] == pytest.approx(t.pre[2, 4], abs=1e-6)


def test_generated_table_is_a_met():
    t = generate(12)
    np.testing.assert_allclose(t.pre + t.pre.T, 1.0, atol=1e-12)
    assert np.all(np.diff(t.pre[1:, 1:], axis=0) < 0)
    assert np.all(np.diff(t.pre[1:, 1:], axis=1) > 0)


def test_generated_table_close_to_kazaross_xg2():
    """Documented distance of the default generator from Kazaross-XG2 (25x25)."""
    c = compare(generate(25))
    assert c["reference"] == "Kazaross-XG2"
    assert c["mean_abs"] < 0.0015  # measured 0.0009
    assert c["max_abs"] < 0.012  # measured 0.0103, at 2-away vs 4-away
    assert c["post_max_abs"] < 0.007  # measured 0.0064
    # a poor assumption is measurably worse
    assert compare(generate(25, gammon_rate=0.15))["mean_abs"] > 3 * c["mean_abs"]


def test_zadeh_method_and_extension_to_64():
    z = generate(9, method="zadeh")
    j = generate(9, method="janowski", efficiency=1.0)
    np.testing.assert_allclose(z.pre, j.pre)
    assert compare(z, length=9)["max_abs"] < 0.03
    big = generate(64)
    assert big.max_away == 64
    assert big.mwc(64, 64) == 0.5 and 0.5 < big.mwc(60, 64) < 0.6
    np.testing.assert_allclose(big.pre[:25, :25], generate(25).pre, atol=1e-12)


def test_generator_bad_input():
    with pytest.raises(BgfastError, match="gammon rate"):
        generate(5, gammon_rate=1.5)
    with pytest.raises(BgfastError, match="unknown method"):
        generate(5, method="woolsey")


# -- CLI ---------------------------------------------------------------------

def test_cli_met_table():
    r = cli("met", "--length", "5")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert "Kazaross-XG2" in lines[0]
    row3 = next(line for line in lines if line.startswith("  3 "))
    assert row3.split() == ["3", "24.9", "40.1", "50.0", "57.1", "64.8"]
    assert "Copyright (C) 2011 Neil Kazaross" in r.output


def test_cli_met_json_and_lookup():
    r = cli("met", "--table", "Rockwell-Kazaross", "--length", "3", "--json")
    doc = json.loads(r.stdout)
    assert doc["name"] == "Rockwell-Kazaross" and doc["max_away"] == 3
    assert doc["pre_crawford"][1][2] == pytest.approx(0.598994)
    assert "Copyright" in doc["notice"]
    r = cli("met", "--away", "1-3", "--post-crawford", "--json")
    assert json.loads(r.stdout)["mwc"] == pytest.approx(1 - 0.32264)


def test_cli_met_errors():
    r = cli("met", "--away", "3-5", "--crawford")
    assert r.exit_code == 2 and "Crawford" in r.output
    r = cli("met", "--table", "nope")
    assert r.exit_code == 2 and "unknown match equity table" in r.output
    r = cli("met", "--length", "30")
    assert r.exit_code == 2 and "--generate" in r.output


def test_cli_met_generate_compare(tmp_path):
    r = cli("met", "--generate", "--length", "30", "--compare", "--output", str(tmp_path), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["max_away"] == 30 and len(doc["pre_crawford"]) == 30
    assert doc["compare"]["length"] == 25 and doc["compare"]["mean_abs"] < 0.0015
    t = met.load_csv(tmp_path / "generated-janowski.pre-crawford.csv",
                     tmp_path / "generated-janowski.post-crawford.csv")
    assert t.max_away == 30
    # the written table can be used by name of its path prefix
    prefix = str(tmp_path / "generated-janowski")
    assert get_table(prefix).mwc(30, 29) == pytest.approx(t.mwc(30, 29))
    r = cli("cube", "--probs", "0.6,0.1,0,0.1,0", "--score", "0-0", "--length", "30",
            "--table", prefix, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["match"]["away"] == [30, 30]
