"""``bgfast serve``: the real server on a loopback port, called with httpx
and opened in Debian's headless Chromium."""
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from click.testing import CliRunner

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

from bgfast.cli import main  # noqa: E402
from bgfast.hint import hint  # noqa: E402
from bgfast.position import Position  # noqa: E402
from bgfast.rollout import RolloutSettings, rollout  # noqa: E402
from bgfast.svg import board_svg  # noqa: E402

from procs import bgfast, children, env  # noqa: E402

OPENING = "4HPwATDgc/ABMA"
XGID = "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:2:4:0:9:10"
MAX_TRIALS = 300


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start(*args):
    """Start ``bgfast serve --port 0 ARGS`` -> (process, base URL) once it is ready."""
    proc = subprocess.Popen(bgfast("serve", "--port", 0, *args), stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, env=env(), text=True)
    line = proc.stderr.readline()          # the ready line, printed once the workers are up
    if not line.startswith("bgfast serve: http://"):
        proc.kill()
        proc.wait()
        pytest.fail(f"the server did not start: {line!r} {proc.stderr.read()!r}")
    threading.Thread(target=proc.stderr.read, daemon=True).start()   # drain the rest
    return proc, line.split()[2].rstrip("/")


def _stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def server():
    proc, url = _start("--workers", 2, "--max-trials", MAX_TRIALS)
    try:
        yield url
    finally:
        _stop(proc)


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server, timeout=60) as c:
        yield c


def cli_json(*args):
    result = CliRunner().invoke(main, [*map(str, args), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


# ---------------------------------------------------------------- endpoints

def test_hint_ranks_the_plays_of_a_roll(client):
    r = client.post("/hint", json={"position": OPENING, "dice": "31", "ply": 0})
    assert r.status_code == 200
    doc = r.json()
    assert doc["plays"][0]["play"] == "8/5 6/5"          # the opening 31 makes the 5-point
    assert doc["ranked_by"] == "cubeful" and doc["dice"] == [3, 1]
    assert doc == json.loads(json.dumps(hint(OPENING, (3, 1), ply=0).to_dict()))
    assert client.post("/hint", json={"position": OPENING, "dice": [3, 1], "ply": 0}).json() == doc


#: the FIBS client protocol's example board: the opening, 2-3 in a 5-point match, 31 to play
FIBS_BOARD = ("board:You:Opponent:5:2:3:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:"
              "0:0:0:0:2:0:1:3:1:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0")


def test_a_fibs_board_is_read_with_its_dice_and_score(client):
    from bgfast.formats import parse_position_text

    pos, state, _ = parse_position_text(FIBS_BOARD)
    gnubg_id = f"{pos.position_id()}:{state.match_id()}"
    doc = client.post("/hint", json={"position": FIBS_BOARD, "ply": 0}).json()
    assert doc["dice"] == [3, 1] and doc["context"].startswith("2-3 to 5")
    assert doc == client.post("/hint", json={"position": gnubg_id, "ply": 0}).json()
    r = client.get("/board.svg", params={"position": FIBS_BOARD})
    assert r.status_code == 200 and r.text.startswith("<svg")


def test_hint_without_a_roll_is_the_cube_decision(client):
    doc = client.post("/hint", json={"position": OPENING, "ply": 0}).json()
    assert "plays" not in doc and doc["cube"]["action"] == "no_double"
    assert doc == json.loads(json.dumps(hint(OPENING, ply=0).to_dict()))


def test_hint_takes_the_cube_and_score_from_the_fields(client):
    doc = client.post("/hint", json={"position": OPENING, "dice": "31", "ply": 0,
                                     "score": "2-4", "length": 7, "top": 3}).json()
    assert doc["ranked_by"] == "mwc" and doc["context"].startswith("2-4 to 7")
    assert len(doc["plays"]) == 3 and "mwc" in doc["plays"][0]
    cubeless = client.post("/hint", json={"position": OPENING, "dice": "31", "ply": 0,
                                          "cubeless": True}).json()
    assert cubeless["ranked_by"] == "cubeless"


def test_evaluate_gives_the_documents_of_the_cli(client):
    assert client.post("/evaluate", json={"position": OPENING}).json() == \
        cli_json("evaluate", OPENING)
    ranked = client.post("/evaluate", json={"position": OPENING, "dice": "64",
                                            "money": True, "jacoby": True}).json()
    assert ranked == cli_json("evaluate", OPENING, "--dice", "64", "--jacoby")
    assert ranked["context"]["money"]["jacoby"] is True


def test_cube_takes_the_xgid_context_and_matches_the_cli(client):
    doc = client.post("/cube", json={"position": XGID}).json()
    assert doc == cli_json("cube", XGID)
    assert doc["mode"] == "match" and doc["cube"] == 2 and doc["owner"] == "me"
    over = client.post("/cube", json={"position": XGID, "cube": 4, "owner": "opp"}).json()
    assert over == cli_json("cube", XGID, "--cube", 4, "--owner", "opp")
    assert client.post("/cube", json={"position": OPENING, "ply": 1}).json() == \
        cli_json("cube", OPENING, "--ply", 1)


def test_rollout_is_the_seeded_rollout(client):
    doc = client.post("/rollout", json={"position": OPENING, "trials": 36, "seed": 5}).json()
    want = rollout(Position.from_position_id(OPENING),
                   RolloutSettings(trials=36, seed=5, backend="serial")).to_dict()
    assert doc == json.loads(json.dumps(want))
    plays = client.post("/rollout", json={"position": OPENING, "dice": "31", "trials": 12,
                                          "max_plays": 2}).json()
    assert plays["dice"] == [3, 1] and len(plays["plays"]) == 2
    assert all(p["games"] == 12 for p in plays["plays"])
    assert client.post("/rollout", json={"position": OPENING, "truncate": 2}).json()[
        "games"] == min(1296, MAX_TRIALS)


def test_board_svg_is_the_svg_module_picture(client):
    r = client.get("/board.svg", params={"position": OPENING})
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    pos = Position.from_position_id(OPENING)
    assert r.text == board_svg(pos, title=pos.position_id())


def test_docs_health_and_page(client):
    assert client.get("/health").json()["max_trials"] == MAX_TRIALS
    docs = client.get("/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/hint", "/evaluate", "/cube", "/rollout", "/board.svg"} <= set(paths)
    page = client.get("/")
    assert page.status_code == 200 and 'id="board"' in page.text and "/hint" in page.text


# ---------------------------------------------------------------- bad requests

BAD = [
    ("/hint", {"position": "not-an-id"}, "Position ID"),
    ("/hint", {"position": OPENING, "dice": "71"}, "die"),
    ("/hint", {"position": OPENING, "dice": [3]}, "two dice"),
    ("/hint", {"position": OPENING, "dice": [0, 2]}, "die"),
    ("/hint", {"position": OPENING, "cube": 3}, "power of 2"),
    ("/hint", {"position": OPENING, "cube": 2 ** 200, "owner": "me"}, "cube"),
    ("/hint", {"position": OPENING, "money": True, "score": "1-2"}, "money"),
    ("/hint", {"position": OPENING, "score": "9-2", "length": 7}, "score"),
    ("/hint", {"position": OPENING, "ply": 3}, "ply"),
    ("/hint", {"position": OPENING, "colour": "red"}, "colour"),
    ("/hint", {"dice": "31"}, "position"),
    ("/evaluate", {"position": OPENING, "evaluator": "nope"}, "unknown evaluator"),
    ("/evaluate", {"position": "XGID=garbage"}, "XGID"),
    ("/cube", {"position": OPENING, "ply": 1, "efficiency": 0.5}, "efficiency"),
    ("/cube", {"position": OPENING, "efficiency": 2}, "efficiency"),
    ("/cube", [1, 2], "body"),
    ("/rollout", {"position": OPENING, "trials": MAX_TRIALS + 1}, "limit"),
    ("/rollout", {"position": OPENING, "trials": 0}, "trials"),
    ("/rollout", {"position": OPENING, "dice": "66x", "trials": 10}, "dice"),
]


@pytest.mark.parametrize("path, body, word", BAD)
def test_bad_requests_are_400_with_one_line(client, path, body, word):
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert "\n" not in error and word.lower() in error.lower()


def test_bad_json_and_content_type_are_400(client):
    r = client.post("/hint", content=b'{"position": ', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"].startswith("bad JSON")
    r = client.post("/hint", content=b"position=x", headers={"content-type": "text/plain"})
    assert r.status_code == 400 and "application/json" in r.json()["error"]
    r = client.get("/board.svg", params={"position": "zz"})
    assert r.status_code == 400 and "Position ID" in r.json()["error"]
    assert client.get("/board.svg").status_code == 400
    assert client.get("/nowhere").status_code == 404


# ---------------------------------------------------------------- concurrency

def test_parallel_requests_complete(client, server):
    bodies = [{"position": OPENING, "dice": f"{a}{b}", "ply": 2}
              for a, b in [(3, 1), (6, 4), (5, 2), (4, 4), (6, 1), (2, 1)]]
    with ThreadPoolExecutor(len(bodies)) as ex:
        docs = list(ex.map(lambda b: httpx.post(server + "/hint", json=b, timeout=120), bodies))
    assert [r.status_code for r in docs] == [200] * len(bodies)
    assert [r.json()["dice"] for r in docs] == [[int(c) for c in b["dice"]] for b in bodies]


def test_the_loop_answers_while_a_rollout_runs(server):
    with ThreadPoolExecutor(1) as ex:
        running = ex.submit(httpx.post, server + "/rollout",
                            json={"position": OPENING, "trials": MAX_TRIALS}, timeout=300)
        time.sleep(0.5)
        t0 = time.perf_counter()
        health = httpx.get(server + "/health", timeout=10)
        took = time.perf_counter() - t0
        busy = not running.done()
        assert running.result().status_code == 200
    assert health.status_code == 200 and took < 1.0
    assert busy, "the rollout ended before /health was asked: it proves nothing"


# ---------------------------------------------------------------- the process

def test_sigterm_stops_the_server_and_its_workers():
    proc, url = _start("--workers", 2)
    workers = children(proc.pid)
    assert len(workers) >= 2
    assert httpx.get(url + "/health", timeout=10).status_code == 200
    assert _stop(proc) in (0, -signal.SIGTERM)       # uvicorn ends by the signal it caught
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in workers)


def test_a_busy_port_is_one_line_and_status_1():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run(bgfast("serve", "--port", port), capture_output=True, text=True,
                           env=env(), timeout=60)
    assert r.returncode == 1
    assert r.stderr.startswith(f"Error: cannot listen on 127.0.0.1:{port}")
    assert r.stderr.count("\n") == 1


# ---------------------------------------------------------------- the page in a browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def test_the_page_shows_the_board_and_the_plays(server):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed")
    if not os.path.exists(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail("Debian's chromium is missing in CI")
        pytest.skip("Debian's chromium is not installed")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(server + "/")
            page.fill("#position", OPENING)
            page.fill("#dice", "31")
            page.select_option("#ply", "0")
            page.click("#go")
            page.wait_for_selector("#plays tr.play-row", timeout=30_000)
            assert page.locator("#board svg circle").count() == 30
            assert page.locator("#plays tr.play-row td.play").first.inner_text() == "8/5 6/5"
            page.fill("#dice", "")
            page.click("#go")
            page.wait_for_selector("#cube", timeout=30_000)
            assert "No double" in page.inner_text("#cube h2")
            page.fill("#position", "nonsense")
            page.click("#go")
            page.wait_for_function("document.getElementById('error').textContent.length > 0")
            assert "Position ID" in page.inner_text("#error")
        finally:
            browser.close()
