"""Supervised training on rollout labels (bgfast.train.fit, ``bgfast train supervised``)."""
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bgfast import _net
from bgfast import net as netmod
from bgfast import traindata as td
from bgfast import train as trainmod
from bgfast.cli import main
from bgfast.errors import BgfastError, DatabaseError
from bgfast.evaluate import equity
from bgfast.position import pack

TEACHER_SEED = 5
#: the net whose self-play gives the boards: a kept file, so that the data
#: do not change when the shipped net does
BOARDS_NET = Path(__file__).resolve().parents[1] / "data" / "net" / "td-net.npz"


def _boards(games=12, seed=3):
    """Distinct boards of a few 0-ply self-play games of the TD-trained net."""
    b = netmod.load(BOARDS_NET).model.selfplay_states(seed, 0, games)
    _, first = np.unique(pack(b), axis=0, return_index=True)
    b = b[np.sort(first)]
    return b[~td.exact_covered(b)]


def _labels(boards, seed=TEACHER_SEED):
    """A LabelSet whose targets are the raw outputs of a random 'teacher' net."""
    teacher = netmod.random_net(6, seed, scale=0.4)
    probs = teacher.evaluate_batch(boards, tables=False)
    n = len(boards)
    mean = np.concatenate([probs, equity(probs)[:, None]], axis=1)
    se = np.full((n, 6), 0.01)
    se[:, 0] = np.linspace(0.005, 0.02, n)
    return td.LabelSet(np.arange(n, dtype=np.int64), pack(boards), td.classify(boards), mean, se,
                       np.full(n, 72, np.int32), np.full(n, 20.0), {"settings": "teacher"})


@pytest.fixture(scope="module")
def lab():
    return _labels(_boards())


def _write_dir(lab, path):
    """``lab`` as a labels directory of one shard (what ``bgfast data label`` writes)."""
    path.mkdir()
    td._write(path / "shard-000000.bgtd", "labels",
              {"index": lab.index, "key": lab.keys, "cls": lab.classes, "mean": lab.mean,
               "stderr": lab.stderr, "games": lab.games, "plies": lab.plies},
              {"settings": {"trials": 72}, "positions": "x", "net": "y", "shard_size": 4096,
               "shard": 0, "start": 0})
    return path


def test_the_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    n, d, h = 9, 7, 4
    p = {"w1": rng.normal(0, 0.7, (d, h)), "b1": rng.normal(0, 0.3, h),
         "w2": rng.normal(0, 0.7, (h, 5)), "b2": rng.normal(0, 0.3, 5)}
    X = rng.uniform(0, 1.5, (n, d))
    Y = rng.uniform(0, 1, (n, 5))
    c = {k: v + rng.normal(0, 0.2, v.shape) for k, v in p.items()}
    for W, l2, center in ((None, 0.0, None), (rng.uniform(0.2, 3, (n, 5)), 0.05, None),
                          (None, 0.3, c)):
        loss, g = trainmod.loss_and_grad(p, X, Y, W, l2, center=center)
        for name, a in p.items():
            num = np.zeros_like(a)
            for i in np.ndindex(a.shape):
                old = a[i]
                a[i] = old + 1e-6
                up = trainmod.loss_and_grad(p, X, Y, W, l2, grad=False, center=center)[0]
                a[i] = old - 1e-6
                down = trainmod.loss_and_grad(p, X, Y, W, l2, grad=False, center=center)[0]
                a[i] = old
                num[i] = (up - down) / 2e-6
            assert np.allclose(g[name], num, rtol=1e-5, atol=1e-8), name
        # the loss itself: the weighted cross-entropy, by its definition
        s = 1 / (1 + np.exp(-(1 / (1 + np.exp(-(X @ p["w1"] + p["b1"]))) @ p["w2"] + p["b2"])))
        ce = -(Y * np.log(s) + (1 - Y) * np.log(1 - s)) * (1 if W is None else W)
        z = center or {"w1": 0, "w2": 0}
        want = ce.sum() / n + 0.5 * l2 * (((p["w1"] - z["w1"]) ** 2).sum()
                                          + ((p["w2"] - z["w2"]) ** 2).sum())
        assert loss == pytest.approx(want, rel=1e-12)


def test_the_validation_split_is_by_position_and_seeded():
    keys = pack(_boards(6))
    m = trainmod.validation_mask(keys, 0.3, 7)
    assert 0 < m.sum() < len(keys)
    assert (trainmod.validation_mask(keys, 0.3, 7) == m).all()
    assert (trainmod.validation_mask(keys, 0.3, 8) != m).any()
    # a position's side of the split does not depend on the other positions
    assert (trainmod.validation_mask(keys[::-1], 0.3, 7) == m[::-1]).all()
    assert not trainmod.validation_mask(keys, 0.0, 7).any()


def test_training_reduces_the_validation_loss(lab, tmp_path):
    r = trainmod.fit(lab, tmp_path / "n.npz", init="random", hidden=8, epochs=25, batch=32,
                     lr=0.01, val_fraction=0.25, seed=2, progress=False)
    assert set(r["nets"]) == {"contact", "race"}
    for name, n in r["nets"].items():
        assert n["val_loss_after"] < n["val_loss_before"] - 0.05, name
        h = [e["train_loss"] for e in n["history"]]
        assert h[-1] < h[0]
    for name in ("contact", "race"):
        assert r["after"][name]["equity_mae"] < r["before"][name]["equity_mae"]
    c = r["counts"]
    assert sum(v["labels"] for v in c.values()) == len(lab)
    assert r["net_of_class"] == {"contact": 0, "crashed": 0, "race": 1}


def test_class_weights_scale_that_class_rows_in_the_loss(lab):
    st = trainmod.FitSettings(class_weights="crashed=4", val_fraction=0.25, seed=2).check()
    d = trainmod._Data(lab, st)
    tr = d.rows[0][0]
    w = d.weights(tr)[tr]
    crashed = d.cls[tr] == td.CRASHED
    assert crashed.any() and (~crashed).any()
    assert np.allclose(w[crashed], 4 * w[~crashed][0]) and np.allclose(w[~crashed], w[~crashed][0])
    assert np.allclose(w.mean(axis=0), 1.0)
    va = d.rows[0][1]
    vw = d.val_weights(va)
    vc = d.cls[va] == td.CRASHED
    assert vc.any() and np.allclose(vw[vc], 4 * vw[~vc][0]) and np.allclose(vw.mean(), 1.0)
    # with the stderr weighting the two multiply (the validation loss takes the class weights only)
    both = trainmod._Data(lab, trainmod.FitSettings(class_weights="crashed=4", weighting="stderr",
                                                    val_fraction=0.25, seed=2).check())
    se = trainmod._Data(lab, trainmod.FitSettings(weighting="stderr", val_fraction=0.25,
                                                  seed=2).check())
    ratio = both.W / se.W
    assert np.allclose(ratio[d.cls == td.CRASHED], 4) and np.allclose(ratio[d.cls != td.CRASHED], 1)
    assert np.array_equal(both.val_weights(va), vw) and se.val_weights(va) is None
    assert st.class_weights == "crashed=4"
    assert trainmod.FitSettings(class_weights=" race=0.5 , crashed=2.0").check().class_weights \
        == "crashed=2,race=0.5"


def test_a_weighted_class_is_fitted_closer(lab, tmp_path):
    """Seeded runs from the same random net: weighting the crashed rows lowers
    the contact net's loss on them and raises it on the contact rows."""
    loss = {}
    for cw in ("", "crashed=20"):
        out = tmp_path / f"n{len(cw)}.npz"
        trainmod.fit(lab, out, init="random", hidden=8, epochs=10, batch=32, lr=0.01,
                     val_fraction=0.25, seed=2, classes=("contact", "crashed"), class_weights=cw,
                     progress=False)
        p = trainmod._net_params(netmod.load(out), 0)
        d = trainmod._Data(lab, trainmod.FitSettings(val_fraction=0.25, seed=2))
        tr = d.rows[0][0]
        loss[cw] = [trainmod._batched_loss(p, d.X[r], d.Y[r])
                    for r in (tr[d.cls[tr] == td.CONTACT], tr[d.cls[tr] == td.CRASHED])]
    assert loss["crashed=20"][1] < loss[""][1]
    assert loss["crashed=20"][0] > loss[""][0]


def test_widen_to_trains_a_larger_net_from_the_same_start(lab, tmp_path):
    small = tmp_path / "small.npz"
    netmod.save(netmod.random_net(6, 3, scale=0.4), small)
    kw = dict(init=str(small), epochs=2, batch=32, val_fraction=0.25, seed=2, progress=False)
    plain = trainmod.fit(lab, tmp_path / "a.npz", **kw)
    wide = trainmod.fit(lab, tmp_path / "b.npz", widen_to=10, **kw)
    assert netmod.load(tmp_path / "b.npz").hidden == 10 and netmod.load(tmp_path / "a.npz").hidden == 6
    assert wide["before"] == plain["before"]              # it starts as the small net
    assert wide["settings"]["widen_to"] == 10
    with pytest.raises(BgfastError, match="hidden units"):
        trainmod.fit(lab, tmp_path / "c.npz", widen_to=4, **kw)
    r = CliRunner().invoke(main, ["train", "supervised", str(_write_dir(lab, tmp_path / "l")),
                                  "-o", str(tmp_path / "d.npz"), "--init", str(small),
                                  "--widen-to", "4"])
    assert r.exit_code != 0 and "hidden units" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "c.npz").exists() and not (tmp_path / "d.npz").exists()


def test_bad_class_weights_are_refused(lab, tmp_path):
    for cw in ("crashed", "crashed=0", "crashed=-1", "bogus=2", "crashed=x", "race=nan"):
        with pytest.raises(BgfastError, match="class weight"):
            trainmod.fit(lab, tmp_path / "n.npz", class_weights=cw, progress=False)
    r = CliRunner().invoke(main, ["train", "supervised", str(_write_dir(lab, tmp_path / "l")),
                                  "-o", str(tmp_path / "n.npz"), "--class-weight", "crashed=0"])
    assert r.exit_code != 0 and "class weight" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "n.npz").exists()


def test_one_class_trains_its_net_only(lab, tmp_path):
    r = trainmod.fit(lab, tmp_path / "n.npz", classes=("race",), epochs=2, progress=False)
    assert list(r["nets"]) == ["race"]
    a, s = netmod.load(tmp_path / "n.npz").arrays(), netmod.default_net().arrays()
    assert all((a[k][0] == s[k][0]).all() for k in a)          # the contact net as shipped
    assert any((a[k][1] != s[k][1]).any() for k in a)


#: round 9 of tools/contact-net.sh: its race net reads 128 units and no feature group
ROUND_NINE = str(Path(__file__).resolve().parents[1] / "data" / "net" / "round-9.npz")


def test_keep_shape_trains_only_what_a_net_reads(lab, tmp_path):
    nine = netmod.load(ROUND_NINE)
    assert nine.model.read_hidden[1] < nine.hidden and nine.model.read_groups[1] == 0
    h = nine.model.read_hidden[1]
    kw = dict(classes=("race",), epochs=2, batch=32, progress=False, init=ROUND_NINE)
    trainmod.fit(lab, tmp_path / "k.npz", keep_shape=True, **kw)
    kept = netmod.load(tmp_path / "k.npz")
    assert kept.model.read_hidden == nine.model.read_hidden
    assert kept.model.read_groups == nine.model.read_groups
    a, s = kept.arrays(), nine.arrays()
    # the units it does not read keep their weights (zero output weights), and it reads no group
    assert not a["w2"][1][h:].any()
    assert (a["w1"][1][:, h:] == s["w1"][1][:, h:]).all() and (a["b1"][1][h:] == s["b1"][1][h:]).all()
    assert not a["w1"][1][netmod.INPUTS:].any()
    assert (a["w1"][1][:netmod.INPUTS, :h] != s["w1"][1][:netmod.INPUTS, :h]).any()
    assert kept.meta["fit"]["settings"]["keep_shape"] is True
    # without it the race net grows into the units and groups its file has room for
    trainmod.fit(lab, tmp_path / "g.npz", **kw)
    grown = netmod.load(tmp_path / "g.npz").model
    assert grown.read_hidden[1] > h and grown.read_groups[1] != 0
    # a resumed run ends with the same bits as one run
    trainmod.fit(lab, tmp_path / "r.npz", keep_shape=True, max_steps=3, **kw)
    trainmod.fit(lab, tmp_path / "r.npz", resume=True, **kw)
    assert all((netmod.load(tmp_path / "r.npz").arrays()[n] == a[n]).all() for n in a)
    # a net that reads everything trains as without it
    trainmod.fit(lab, tmp_path / "c1.npz", keep_shape=True, **dict(kw, classes=("contact",)))
    trainmod.fit(lab, tmp_path / "c2.npz", **dict(kw, classes=("contact",)))
    c1, c2 = netmod.load(tmp_path / "c1.npz").arrays(), netmod.load(tmp_path / "c2.npz").arrays()
    assert all((c1[n] == c2[n]).all() for n in c1) and (c1["w1"][0] != s["w1"][0]).any()
    # with features, it learns their rows as well, and no other group's
    trainmod.fit(lab, tmp_path / "o.npz", keep_shape=True, features="off", **kw)
    o = netmod.load(tmp_path / "o.npz")
    assert o.model.read_hidden == nine.model.read_hidden
    assert o.model.read_groups == (nine.groups, netmod.group_mask("off"), nine.groups)
    (_bit, a0, a1), = [r for r in netmod.group_rows(o.groups) if r[0] == 5]
    w = o.arrays()["w1"][1]
    assert np.abs(w[a0:a1, :h]).max() > 0 and not w[a0:a1, h:].any()
    assert not w[netmod.INPUTS:a0].any()
    with pytest.raises(BgfastError, match="keep_shape"):
        trainmod.fit(lab, tmp_path / "x.npz", keep_shape=True, widen_to=256, **kw)
    r = CliRunner().invoke(main, ["train", "supervised", str(_write_dir(lab, tmp_path / "l")),
                                  "-o", str(tmp_path / "x.npz"), "--keep-shape",
                                  "--widen-to", "256"])
    assert r.exit_code == 2 and "keep_shape" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "x.npz").exists()


def _final(path):
    n = netmod.load(path)
    rep = dict(n.meta["fit"])
    rep.pop("seconds")
    return n.arrays(), rep


@pytest.mark.parametrize("stop", [3, 26, 83])
def test_a_resumed_run_ends_bit_identical(lab, tmp_path, stop):
    kw = dict(init="random", hidden=5, epochs=3, batch=16, lr=0.003, val_fraction=0.2, seed=4,
              weighting="stderr", l2=1e-3, l2_anchor="init", progress=False)
    trainmod.fit(lab, tmp_path / "a.npz", **kw)
    # stopped after `stop` steps: inside the first epoch, at its end (26 steps
    # an epoch for the contact net's 414 training positions), in the race net's stage
    b = tmp_path / "b.npz"
    part = trainmod.fit(lab, b, max_steps=stop, checkpoint_steps=2, **kw)
    assert part["steps"] == stop and "after" not in part
    assert ("contact" in part["nets"]) == (stop > 78)        # the contact stage done
    assert trainmod.checkpoint_path(b).exists()
    netmod.load(b)                                   # a usable net meanwhile
    trainmod.fit(lab, b, resume=True, progress=False)
    wa, ra = _final(tmp_path / "a.npz")
    wb, rb = _final(b)
    for k in wa:
        assert wa[k].tobytes() == wb[k].tobytes(), k
    assert ra == rb


def test_resume_refuses_other_settings_or_data(lab, tmp_path):
    out = tmp_path / "n.npz"
    trainmod.fit(lab, out, epochs=2, max_steps=1, progress=False)
    with pytest.raises(BgfastError, match="lr"):
        trainmod.fit(lab, out, resume=True, lr=0.5, progress=False)
    other = _labels(_boards(), seed=TEACHER_SEED + 1)
    with pytest.raises(DatabaseError, match="digest"):
        trainmod.fit(other, out, resume=True, progress=False)
    trainmod.checkpoint_path(out).write_bytes(b"junk")
    with pytest.raises(DatabaseError, match="checkpoint"):
        trainmod.fit(lab, out, resume=True, progress=False)


def test_bad_settings_are_refused_before_work(lab, tmp_path):
    for kw, msg in (({"lr": 0}, "learning rate"), ({"val_fraction": 1.0}, "validation"),
                    ({"weighting": "x"}, "weighting"), ({"classes": ("bogus",)}, "class"),
                    ({"epochs": 0}, "at least 1")):
        with pytest.raises(BgfastError, match=msg):
            trainmod.fit(lab, tmp_path / "n.npz", progress=False, **kw)
    with pytest.raises(BgfastError, match="directory"):
        trainmod.fit(lab, tmp_path / "no" / "n.npz", progress=False)
    with pytest.raises(netmod.NetFileError):
        trainmod.fit(lab, tmp_path / "n.npz", init=str(tmp_path / "none.npz"), progress=False)
    assert not list(tmp_path.iterdir())


def test_the_output_loads_and_evaluates(lab, tmp_path, monkeypatch):
    out = tmp_path / "n.npz"
    trainmod.fit(lab, out, epochs=2, progress=False)
    n = netmod.load(out)
    p = n.evaluate_batch(lab.boards)
    assert p.shape == (len(lab), 5) and (p >= 0).all() and (p <= 1).all()
    assert n.meta["fit"]["finished"] and n.meta["fit"]["data_digest"]
    assert (netmod.NetEvaluator(out).evaluate_batch(lab.boards[:4]) == p[:4]).all()
    # $BGFAST_NET makes it the net of every evaluator named "net"
    monkeypatch.setattr(netmod, "_DEFAULT", None)
    monkeypatch.setenv(netmod.WEIGHTS_ENV, str(out))
    from bgfast.evaluate import get_evaluator

    assert (get_evaluator("net").evaluate_batch(lab.boards[:4]) == p[:4]).all()
    monkeypatch.setattr(netmod, "_DEFAULT", None)
    monkeypatch.setenv(netmod.WEIGHTS_ENV, str(tmp_path / "missing.npz"))
    with pytest.raises(netmod.NetFileError, match="BGFAST_NET"):
        netmod.default_net()


def test_cli_trains_and_resumes(lab, tmp_path):
    labels = _write_dir(lab, tmp_path / "L")
    out = tmp_path / "n.npz"
    runner = CliRunner()
    r = runner.invoke(main, ["train", "supervised", str(labels), "-o", str(out), "--epochs", "2",
                             "--batch", "64", "--seed", "3", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.output)
    assert rep["out"] == str(out) and rep["settings"]["seed"] == 3 and rep["finished"]
    netmod.load(out)
    # resumed with the checkpoint's settings (only --epochs may change)
    r = runner.invoke(main, ["train", "supervised", str(labels), "-o", str(out), "--resume",
                             "--epochs", "3"])
    assert r.exit_code == 0, r.output
    assert "contact net: validation loss" in r.output and "equity MAE" in r.output
    r = runner.invoke(main, ["train", "supervised", str(labels), "-o", str(out), "--resume",
                             "--lr", "0.1"])
    assert r.exit_code == 2 and r.output.startswith("Error:") and "lr" in r.output
    assert len(r.output.strip().splitlines()) == 1
    # the TD mode, by name or by default
    for args in (["train", "td", str(tmp_path / "td.npz")], ["train", str(tmp_path / "td2.npz")]):
        r = runner.invoke(main, args + ["--games", "8", "--hidden", "4", "--round-games", "8",
                                        "--quiet"])
        assert r.exit_code == 0 and "8 games" in r.output, r.output
    r = runner.invoke(main, ["train", str(tmp_path / "td3.npz"), "--games", "8",
                             "--hidden", str(netmod.MAX_HIDDEN + 1)])
    assert r.exit_code == 2 and f"1<=x<={netmod.MAX_HIDDEN}" in r.output
    assert not (tmp_path / "td3.npz").exists()


def test_several_label_directories_train_as_one_set(lab, tmp_path):
    n = len(lab)
    half = n // 2
    parts = [td.LabelSet(np.arange(sl.stop - sl.start, dtype=np.int64),    # each its own file's
                         *(getattr(lab, f)[sl] for f in ("keys", "classes", "mean", "stderr",
                                                         "games", "plies")), {"part": i})
             for i, sl in enumerate((slice(0, half), slice(half, n)))]
    a = _write_dir(parts[0], tmp_path / "A")
    b = _write_dir(parts[1], tmp_path / "B")
    both = td.concat_labels([a, b])
    assert both.keys.tobytes() == lab.keys.tobytes() and both.mean.tobytes() == lab.mean.tobytes()
    assert len(both.meta["parts"]) == 2
    kw = dict(epochs=2, batch=64, seed=3, progress=False)
    whole = trainmod.fit(lab, tmp_path / "whole.npz", **kw)
    r = CliRunner().invoke(main, ["train", "supervised", str(a), str(b), "-o",
                                  str(tmp_path / "ab.npz"), "--epochs", "2", "--batch", "64",
                                  "--seed", "3", "--json", "--quiet"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["counts"] == whole["counts"]
    wa, wb = netmod.load(tmp_path / "whole.npz").arrays(), netmod.load(tmp_path / "ab.npz").arrays()
    assert all((wa[k] == wb[k]).all() for k in wa)               # the same weights, bit for bit
    one = trainmod.fit([a], tmp_path / "a.npz", **kw)
    assert sum(v["labels"] for v in one["counts"].values()) == half
    with pytest.raises(BgfastError, match="no labels given"):
        td.concat_labels([])


@pytest.mark.parametrize("args, code, words", [
    (["{L}", "-o", "{T}/no/n.npz"], 2, "does not exist"),
    (["{T}/missing", "-o", "{T}/n.npz"], 2, "does not exist"),
    (["{T}/empty", "-o", "{T}/n.npz"], 2, "no labels"),
    (["{L}", "-o", "{T}"], 2, "directory"),
    (["{L}", "-o", "{T}/n.npz", "--lr", "0"], 2, "--lr"),
    (["{L}", "-o", "{T}/n.npz", "--class", "bogus"], 2, "--class"),
    (["{L}", "-o", "{T}/n.npz", "--val-fraction", "1"], 2, "--val-fraction"),
    (["{L}", "-o", "{T}/n.npz", "--init", "{T}/none.npz"], 2, "cannot read net weights"),
    (["{L}", "-o", "{T}/n.npz", "--init", "{L}/shard-000000.bgtd"], 2, "not a net weights"),
    (["{L}", "-o", "{T}/n.npz", "--widen-to", str(netmod.MAX_HIDDEN + 1)], 2,
     f"0<=x<={netmod.MAX_HIDDEN}"),
    (["{L}", "-o", "{T}/n.npz", "--hidden", str(netmod.MAX_HIDDEN + 1)], 2,
     f"1<=x<={netmod.MAX_HIDDEN}"),
])
def test_cli_errors_are_one_line(lab, tmp_path, args, code, words):
    labels = _write_dir(lab, tmp_path / "L")
    (tmp_path / "empty").mkdir()
    args = [a.format(L=labels, T=tmp_path) for a in args]
    r = CliRunner().invoke(main, ["train", "supervised", *args])
    assert r.exit_code == code, r.output
    assert r.output.startswith("Error:") and words in r.output
    assert len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "n.npz").exists()


def _assert_resumes_bit_for_bit(lab, tmp_path, kw, want):
    """A run of ``fit(lab, **kw)`` stopped after one step and resumed ends
    with ``want``, the w1 of an uninterrupted run; returns its weights file."""
    part = tmp_path / "p.npz"
    trainmod.fit(lab, part, max_steps=1, **kw)
    trainmod.fit(lab, part, resume=True, **kw)
    assert netmod.load(part).arrays()["w1"].tobytes() == want.tobytes()
    return part


def _train_from_the_cli(lab, tmp_path, init, cls, flag):
    """``bgfast train supervised`` on ``lab`` from ``init``, class ``cls``,
    with ``flag``, one epoch: its JSON report and the net it wrote."""
    r = CliRunner().invoke(main, ["train", "supervised", str(_write_dir(lab, tmp_path / "l")),
                                  "-o", str(tmp_path / "c.npz"), "--init", init, "--class", cls,
                                  flag, "--epochs", "1", "--quiet", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output), netmod.load(tmp_path / "c.npz")


def test_a_crashed_net_trains_on_the_crashed_positions_alone(tmp_path):
    lab = _labels(_boards(40, 5))
    assert (lab.classes == td.CRASHED).sum() >= 40
    out = tmp_path / "n.npz"
    two = str(Path(__file__).resolve().parents[1] / "data" / "net" / "four-rounds.npz")
    r = trainmod.fit(lab, out, init=two, classes=("crashed",), crashed_net=True, epochs=2,
                     batch=16, lr=0.003, val_fraction=0.25, progress=False)
    assert list(r["nets"]) == ["crashed"] and r["net_of_class"]["crashed"] == 2
    assert r["nets"]["crashed"]["train"] + r["nets"]["crashed"]["validation"] == \
        int(((lab.classes == td.CRASHED) & ~td.exact_covered(lab.boards)).sum())
    n, s = netmod.load(out), netmod.load(two)
    assert s.nets == 2 and n.nets == 3 and n.meta["crashed_added"]["checksum"] == netmod.checksum(**s.arrays())
    a, b = n.arrays(), s.arrays()
    for k in a:                  # the contact and race nets as they were, the crashed net trained
        assert (a[k][:2] == b[k]).all()
        assert (a[k][2] != b[k][0]).any()
    # it starts as the net of two: the crashed positions' loss before is the contact net's
    assert r["before"] == trainmod.label_metrics(s, lab, val_fraction=0.25)
    assert r["after"]["crashed"]["loss"] < r["before"]["crashed"]["loss"]
    assert r["after"]["contact"] == r["before"]["contact"]
    # resumed with the flag repeated, refused without the checkpoint's setting
    kw = dict(init=two, classes=("crashed",), crashed_net=True, epochs=2, batch=16, lr=0.003,
              val_fraction=0.25, progress=False)
    part = _assert_resumes_bit_for_bit(lab, tmp_path, kw, a["w1"])
    with pytest.raises(BgfastError, match="crashed_net"):
        trainmod.fit(lab, part, resume=True, crashed_net=False, progress=False)
    # the CLI flag
    report, net = _train_from_the_cli(lab, tmp_path, two, "crashed", "--crashed-net")
    assert report["net_of_class"]["crashed"] == 2
    assert net.nets == 3


def test_plan_nets_train_each_band_of_the_contact_positions_alone(tmp_path):
    lab = _labels(_boards(30, 6))
    out = tmp_path / "n.npz"
    two = str(Path(__file__).resolve().parents[1] / "data" / "net" / "four-rounds.npz")
    kw = dict(init=two, classes=("contact",), plan_nets=True, epochs=2, batch=16, lr=0.003,
              val_fraction=0.25, progress=False)
    r = trainmod.fit(lab, out, **kw)
    n, s = netmod.load(out), netmod.load(two)
    assert n.nets == netmod.PLAN_NETS and n.meta["plan_added"]["edges"] == list(_net.PLAN_EDGES)
    assert list(r["nets"]) == ["contact", "contact-behind", "contact-even", "contact-ahead"]
    # each net trained on the contact positions of its band, by the kernel's rule
    rows = trainmod.nets_of_rows(lab.boards, lab.classes, netmod.PLAN_NETS)
    contact = (lab.classes == td.CONTACT) & ~td.exact_covered(lab.boards)
    for k, name in ((0, "contact"), (3, "contact-behind"), (4, "contact-even"), (5, "contact-ahead")):
        got = r["nets"][name]["train"] + r["nets"][name]["validation"]
        assert got == int((contact & (rows == k)).sum()) > 0
    np.testing.assert_array_equal(rows[contact], n.model.net_of(np.ascontiguousarray(lab.boards[contact])))
    a, b = n.arrays(), s.arrays()
    for key in a:                # the race net as it was, the crashed net its contact net's copy
        assert (a[key][1] == b[key][1]).all() and (a[key][2] == b[key][0]).all()
        for k in (0, 3, 4, 5):
            assert (a[key][k] != b[key][0]).any()
    assert r["after"]["contact"]["loss"] < r["before"]["contact"]["loss"]
    # resumed from a checkpoint: the same bits
    _assert_resumes_bit_for_bit(lab, tmp_path, kw, a["w1"])
    # the CLI flag
    report, net = _train_from_the_cli(lab, tmp_path, two, "contact", "--plan-nets")
    assert sorted(report["nets"]) == ["contact", "contact-ahead", "contact-behind", "contact-even"]
    assert net.nets == netmod.PLAN_NETS


def test_crashed_sides_train_a_crashed_net_per_side_crashed(tmp_path):
    boards = _boards(40, 8)
    lab = _labels(boards)
    out = tmp_path / "n.npz"
    four = str(Path(__file__).resolve().parents[1] / "data" / "net" / "four-rounds.npz")
    kw = dict(init=four, classes=("crashed",), crashed_sides=True, epochs=2, batch=16, lr=0.003,
              val_fraction=0.25, progress=False)
    r = trainmod.fit(lab, out, **kw)
    n, s = netmod.load(out), netmod.load(four)
    assert n.nets == netmod.SIDE_NETS and "sides_added" in n.meta and "plan_added" in n.meta
    assert list(r["nets"]) == ["crashed", "crashed-other"]
    # each crashed net trained on the crashed positions of its side, by the kernel's rule
    rows = trainmod.nets_of_rows(lab.boards, lab.classes, netmod.SIDE_NETS)
    crashed = (lab.classes == td.CRASHED) & ~td.exact_covered(lab.boards)
    in_play = td.checkers_in_play(lab.boards)
    np.testing.assert_array_equal(rows[crashed] == 6, in_play[crashed, 1] > td.CRASHED_IN_PLAY)
    for k, name in ((2, "crashed"), (6, "crashed-other")):
        got = r["nets"][name]["train"] + r["nets"][name]["validation"]
        assert got == int((crashed & (rows == k)).sum()) > 0
    np.testing.assert_array_equal(rows[crashed], n.model.net_of(np.ascontiguousarray(lab.boards[crashed])))
    a, b = n.arrays(), s.arrays()
    for key in a:                # the contact, race and plan nets as they were
        for k in (0, 3, 4, 5):
            assert (a[key][k] == b[key][0]).all()
        assert (a[key][1] == b[key][1]).all()
        assert (a[key][2] != a[key][6]).any()
    # resumed from a checkpoint: the same bits
    _assert_resumes_bit_for_bit(lab, tmp_path, kw, a["w1"])
    # the CLI flag
    report, net = _train_from_the_cli(lab, tmp_path, four, "crashed", "--crashed-sides")
    assert sorted(report["nets"]) == ["crashed", "crashed-other"]
    assert net.nets == netmod.SIDE_NETS


@pytest.mark.parametrize("env, message", [
    ({"ROUNDS": "19"}, "ROUNDS must be 2 to 18"),
    ({"ROUNDS": "1"}, "ROUNDS must be 2 to 18"),
    ({"ROUNDS": "4", "HIDDEN": "192"}, "HIDDEN applies to rounds 5 to 18 only"),
])
def test_the_contact_net_script_refuses_bad_settings_before_any_work(tmp_path, env, message):
    import os
    import subprocess

    script = Path(__file__).resolve().parents[1] / "tools" / "contact-net.sh"
    # a python on PATH that fails at once: a script that let the settings
    # through fails fast here instead of starting hours of training
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python").write_text("#!/bin/sh\nexit 3\n")
    (fake / "python").chmod(0o755)
    path = f"{fake}{os.pathsep}{os.environ.get('PATH', '')}"
    r = subprocess.run(["sh", str(script), str(tmp_path / "out.npz"), str(tmp_path / "work")],
                       env={**os.environ, **env, "PATH": path}, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and message in r.stderr
    assert not (tmp_path / "work").exists() and not (tmp_path / "out.npz").exists()
