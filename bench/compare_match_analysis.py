"""Match analysis beside gnubg's: per-player error rates and flagged decisions.

Five 7-point matches of gnubg against itself (both players at 0 plies for
checker play and cube, ``set seed S``; regenerated with ``--generate``,
committed as ``bench/data/gnubg-7pt-seed{S}.mat``) are analysed twice:

* by Debian's ``gnubg -t``: ``import mat``, ``analyse match`` at
  ``--gnubg-plies`` (checker play and cube), ``show statistics match`` (the
  per-player error rates in mEMG: checker play, cube, overall, and the luck
  rate) and ``export match text`` (each decision's equity loss, read from
  the move lists and cube analyses);
* by ``python -m bgfast analyze-match FILE --json -o rows.jsonl --ply P``
  (the summary's EMG fields where it has them, else its error rates; each
  decision's ``loss``).

Decisions are matched by (game, kind, Position ID, dice); one is *flagged*
by an engine when its loss there is at least ``--flag`` (default 0.04, the
"doubtful" threshold of both programs).  The two nets differ, so the
numbers are not equal: the report shows how close they are.

Usage::

    nice -n 10 python bench/compare_match_analysis.py [--generate] [--gnubg-plies 2] [--ply 1]
"""
from __future__ import annotations

import equal_settings  # noqa: F401 -- gnubg's bear-off handling, before bgfast
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
SEEDS = (1, 2, 3, 4, 5)
GNUBG = "/usr/games/gnubg"


def mat_path(seed: int) -> str:
    return os.path.join(DATA, f"gnubg-7pt-seed{seed}.mat")


def gnubg(script: str, binary: str, timeout: float) -> str:
    """Run a ``gnubg -t`` script (bounded by ``timeout`` seconds); its output."""
    return subprocess.run([binary, "-t", "-q"], input=script, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout).stdout


def generate(seed: int, binary: str, timeout: float) -> str:
    """gnubg plays a 7-point match against itself at ``seed``; the .mat path."""
    path = mat_path(seed)
    os.makedirs(DATA, exist_ok=True)
    if os.path.exists(path):
        os.remove(path)
    players = [f"set player {k} {what} evaluation plies 0"
               for k in (0, 1) for what in ("chequerplay", "cubedecision")]
    gnubg("\n".join([f"set seed {seed}", "set player 0 gnubg", "set player 1 gnubg", *players,
                     "set automatic game on", "set display off", "new match 7",
                     f"export match mat {path}"]) + "\n", binary, timeout)
    if not os.path.exists(path):
        raise RuntimeError(f"gnubg wrote no match for seed {seed}")
    return path


# -- gnubg's analysis ---------------------------------------------------------------

_RATE = re.compile(r"Error rate mEMG \(MWC\)\s+([+-]?\d+\.\d+)\s+\([^)]*\)\s+([+-]?\d+\.\d+)")
_LUCK = re.compile(r"Luck rate mEMG \(MWC\)\s+([+-]?\d+\.\d+)\s+\([^)]*\)\s+([+-]?\d+\.\d+)")
_COUNT = {key: re.compile(label + r"\s+(\d+)\s+(\d+)") for key, label in (
    ("unforced", "Unforced moves"), ("cube_close", "Close or actual cube decisions"),
    ("cube_total", "Total cube decisions"))}


def parse_statistics(text: str) -> list[dict]:
    """Per player (0, 1) of ``show statistics match``: checker, cube and
    overall error rates and the luck rate (mEMG, as positive losses / signed
    luck) and the decision counts."""
    chunk = text[text.index("Chequerplay statistics"):]
    rates = _RATE.findall(chunk)          # chequerplay, cube, overall (in that order)
    luck = _LUCK.search(chunk)
    out = []
    for k in (0, 1):
        row = {"checker": abs(float(rates[0][k])), "cube": abs(float(rates[1][k])),
               "overall": abs(float(rates[2][k])), "luck": float(luck.group(k + 1))}
        for key, rx in _COUNT.items():
            row[key] = int(rx.search(chunk).group(k + 1))
        out.append(row)
    return out


_CUBE_EQ = re.compile(r"\d\. (No double|No redouble|Double, pass|Redouble, pass|Double, take|"
                      r"Redouble, take)\s+([+-]?\d+\.\d+)")


def _cube_equities(block: str) -> dict | None:
    if "Cube analysis" not in block:
        return None
    eq = {}
    for m in _CUBE_EQ.finditer(block[block.index("Cube analysis"):]):
        eq[m.group(1).lower().replace("redouble", "double")] = float(m.group(2))
    return eq if len(eq) == 3 else None


def parse_decisions(text: str, game: int) -> dict:
    """{(game, kind, position_id, dice): gnubg's equity loss} of one game's
    ``export match text``; kind 'checker', 'cube' (the roller's double or
    no double) or 'take' (take or pass)."""
    out = {}
    for block in re.split(r"\nMove number \d+:\s+", "\n" + text)[1:]:
        head = block.split("\n", 1)[0]
        pid = re.search(r"Position ID: (\S+)", block)
        if pid is None:
            continue
        pid = pid.group(1)
        eq = _cube_equities(block.split("\nRolled")[0])
        m = re.match(r"(.+) to play (\d)(\d)", head)
        if m:
            d = "".join(sorted(m.group(2) + m.group(3), reverse=True))
            if eq is not None:
                out[(game, "cube", pid, "")] = max(
                    0.0, min(eq["double, take"], eq["double, pass"]) - eq["no double"])
            star = re.search(r"\n\*\s+\d+\. .*?Eq\.:\s*[+-]?\d+\.\d+(?:\s*\(([+-]\d+\.\d+)\))?",
                             block)
            forced = len(re.findall(r"\n[* ]\s+\d+\. ", block)) < 2     # one legal play
            if star is not None and not forced:
                out[(game, "checker", pid, d)] = -float(star.group(1)) if star.group(1) else 0.0
        elif "cube decision?" in head and eq is not None:
            if re.search(r"\n\* .+ doubles", block):
                out[(game, "cube", pid, "")] = max(
                    0.0, eq["no double"] - min(eq["double, take"], eq["double, pass"]))
        elif " doubles to " in head and eq is not None:
            take, drop = eq["double, take"], eq["double, pass"]        # the taker's view
            if re.search(r"\n\* .+ accepts", block):
                out[(game, "take", pid, "")] = max(0.0, drop - take)
            elif re.search(r"\n\* .+ rejects", block):
                out[(game, "take", pid, "")] = max(0.0, take - drop)
    return out


def gnubg_analysis(path: str, binary: str, plies: int, timeout: float):
    """(per-player statistics, per-decision losses) of gnubg's analysis."""
    with tempfile.TemporaryDirectory() as tmp:
        txt = os.path.join(tmp, "match.txt")
        out = gnubg("\n".join([
            "set output mwc off", "set output digits 4",
            f"set analysis chequerplay evaluation plies {plies}",
            f"set analysis cubedecision evaluation plies {plies}",
            f"import mat {path}", "analyse match", "show statistics match",
            f"export match text {txt}"]) + "\n", binary, timeout)
        files = [txt] + sorted(glob.glob(os.path.join(tmp, "match_*.txt")))
        losses = {}
        for g, f in enumerate(files, start=1):
            with open(f) as fh:
                losses.update(parse_decisions(fh.read(), g))
    return parse_statistics(out), losses


# -- bgfast's analysis --------------------------------------------------------------

#: summary fields, the EMG ones first (mEMG per decision), then the older ones
FIELDS = {
    "checker": ("checker_error_rate_memg", "checker_memg", "checker_error_rate_milli"),
    "cube": ("cube_error_rate_memg", "cube_memg", "cube_error_rate_milli"),
    "overall": ("error_rate_memg", "overall_memg", "error_rate_milli"),
    "luck": ("luck_rate_memg", "luck_memg", "luck_rate_milli"),
}


def pick(summary: dict, key: str):
    """(value, field name) of the first of FIELDS[key] in a player's summary,
    computed from the losses for the cube when no field has it; (None, '')."""
    for name in FIELDS[key]:
        if summary.get(name) is not None:
            return float(summary[name]), name
    if key == "cube" and summary.get("cube_decisions"):
        return (1000 * summary["cube_loss"] / summary["cube_decisions"],
                "1000 cube_loss/cube_decisions")
    return None, ""


def bgfast_analysis(path: str, plies: int, timeout: float):
    """(per-player summary, per-decision losses) of ``bgfast analyze-match``."""
    with tempfile.TemporaryDirectory() as tmp:
        rows = os.path.join(tmp, "rows.jsonl")
        proc = subprocess.run([sys.executable, "-m", "bgfast", "analyze-match", path, "--json",
                               "-o", rows, "--ply", str(plies), "-j", "1"],
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"bgfast analyze-match failed: {proc.stderr.strip()[-300:]}")
        summary = json.loads(proc.stdout)
        losses = {}
        with open(rows) as fh:
            for line in fh:
                r = json.loads(line)
                if "loss" in r and r.get("kind") in ("checker", "cube", "take"):
                    dice = "".join(sorted(str(r.get("dice") or ""), reverse=True))
                    losses[(r["game"], r["kind"], r["position_id"], dice)] = float(
                        r.get("loss_emg", r["loss"]))
    return summary["players"], losses


def flag_agreement(g: dict, b: dict, threshold: float) -> dict:
    """Counts over the decisions both analysed: by kind, flagged by both, by
    gnubg only, by bgfast only, and the decisions only one engine lists."""
    out = {}
    for key in sorted(set(g) & set(b)):
        s = out.setdefault(key[1], {"decisions": 0, "both": 0, "gnubg": 0, "bgfast": 0})
        s["decisions"] += 1
        fg, fb = g[key] >= threshold, b[key] >= threshold
        s["both"] += fg and fb
        s["gnubg"] += fg and not fb
        s["bgfast"] += fb and not fg
    out["unmatched"] = {"gnubg": len(set(g) - set(b)), "bgfast": len(set(b) - set(g))}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--generate", action="store_true", help="let gnubg play the matches again")
    ap.add_argument("--gnubg", default=GNUBG)
    ap.add_argument("--gnubg-plies", type=int, default=2)
    ap.add_argument("--ply", type=int, default=1, help="bgfast analyze-match --ply")
    ap.add_argument("--flag", type=float, default=0.04)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per program run")
    args = ap.parse_args(argv)
    totals = {}
    print(f"gnubg {args.gnubg_plies}-ply analysis beside bgfast analyze-match --ply {args.ply}; "
          f"error rates in mEMG per decision (gnubg's luck rate: mEMG per roll)")
    print("| match | player | checker gnubg / bgfast | cube gnubg / bgfast "
          "| overall gnubg / bgfast "
          "| luck gnubg / bgfast | decisions (unforced, cube close/all) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    names = set()
    for seed in SEEDS:
        path = generate(seed, args.gnubg, args.timeout) if args.generate else mat_path(seed)
        gs, gl = gnubg_analysis(path, args.gnubg, args.gnubg_plies, args.timeout)
        bs, bl = bgfast_analysis(path, args.ply, args.timeout)
        for k in (0, 1):
            cells = []
            for key in ("checker", "cube", "overall", "luck"):
                v, name = pick(bs[k], key)
                names.add(name)
                cells.append(f"{gs[k][key]:.1f} / " + ("-" if v is None else f"{v:.1f}"))
            print(f"| seed {seed} | {bs[k]['name']} | " + " | ".join(cells) +
                  f" | {gs[k]['unforced']}, {gs[k]['cube_close']}/{gs[k]['cube_total']} |")
        for kind, s in flag_agreement(gl, bl, args.flag).items():
            t = totals.setdefault(kind, {})
            for key, v in s.items():
                t[key] = t.get(key, 0) + v
    print(f"bgfast fields: {', '.join(sorted(n for n in names if n))}")
    print(f"\nflagged (loss >= {args.flag}) over the five matches:")
    print("| kind | decisions in both | flagged by both | gnubg only | bgfast only |")
    print("| --- | --- | --- | --- | --- |")
    for kind in ("checker", "cube", "take"):
        s = totals.get(kind)
        if s:
            print(f"| {kind} | {s['decisions']} | {s['both']} | {s['gnubg']} | {s['bgfast']} |")
    u = totals.get("unmatched", {})
    print(f"decisions listed by one engine only: gnubg {u.get('gnubg', 0)}, "
          f"bgfast {u.get('bgfast', 0)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
