"""`aqmlab sweep --emulate`: an experiment's points emulated through real
Linux stacks, one after another, and stored beside the simulated runs of the
same points, each kind in rows of its own in `aqmlab table` and `aqmlab
report`.

The experiment is one 10 Mb/s link fed by CBR of 1000-byte packets, at 5 and
at 12 Mb/s. Below the link's rate CBR delivers its own rate, 5 Mb/s; above
it the link delivers its rate, 10 Mb/s, and the queue drops the other sixth
of the 12 Mb/s. Both hold for the simulator and for the emulator alike.
Each emulated run takes 3 s of real time; the tests emulate about 10 s in
all. The tests that emulate need root and network namespaces and are
skipped where those are missing; the refusals are checked everywhere.
"""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aqmlab import emulation
from aqmlab.exceptions import AqmlabError
from aqmlab.experiment import Experiment
from aqmlab.store import Store
from aqmlab.sweep import table
from conftest import ROOT

WHY = emulation.unavailable()
pytestmark = pytest.mark.emulation
needs_emulation = pytest.mark.skipif(WHY is not None, reason=f"emulation impossible here: {WHY}")

GOODPUT = "traffic.cbr.goodput_bps"
LOSS = "queues.link.loss_rate"

EXPERIMENT = f"""
name = "cbr-link"
replications = 1
metrics = ["{GOODPUT}", "{LOSS}"]

[scenario]
name = "cbr-link"
duration = "3s"
warmup = "1s"
[scenario.topology]
kind = "graph"
nodes = ["a", "b"]
[[scenario.topology.links]]
name = "link"
from = "a"
to = "b"
rate = "10Mbps"
delay = "10ms"
qdisc = {{ kind = "droptail", limit = "50pkt" }}
[[scenario.traffic]]
name = "cbr"
kind = "cbr"
src = "a"
dst = "b"
rate = "5Mbps"
size = "1000B"
start = "0s"

[sweep]
"traffic[0].rate" = ["5Mbps", "12Mbps"]
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "aqmlab", *args], capture_output=True, text=True, cwd=cwd)


def write_experiment(folder: Path) -> Path:
    path = folder / "cbr.toml"
    path.write_text(EXPERIMENT)
    return path


def runs(store: Path) -> list[tuple]:
    with Store(store, read_only=True) as st:
        return st.db.execute("SELECT point, replication, seed, simulator, status, key FROM runs "
                             "ORDER BY point, simulator").fetchall()


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """The experiment simulated, then emulated (6 s), into one store."""
    folder = tmp_path_factory.mktemp("sweep-emulate")
    path = write_experiment(folder)
    sim = cli("sweep", path.name, "-q", cwd=folder)
    assert sim.returncode == 0, sim.stderr
    emu = cli("sweep", path.name, "--emulate", "-q", cwd=folder)
    assert emu.returncode == 0, emu.stderr
    return folder, path, emu


@needs_emulation
def test_both_kinds_of_run_are_stored_with_their_engine(swept):
    folder, _, emu = swept
    assert "cbr-link: 2 runs ok, 0 failed, 0 already stored" in emu.stdout
    rows = runs(folder / "cbr.duckdb")
    assert [r[:5] for r in rows] == [(0, 0, 1, "aqmlab", "ok"), (0, 0, 1, "emulation", "ok"),
                                     (1, 0, 1, "aqmlab", "ok"), (1, 0, 1, "emulation", "ok")]
    # Same point, replication and seed: two runs, under two keys.
    assert len({r[5] for r in rows}) == 4
    with Store(folder / "cbr.duckdb", read_only=True) as st:
        engines = [s.summary.get("engine") for s in st.ok_runs("cbr-link")]
    assert engines == [None, "emulation", None, "emulation"]


@needs_emulation
def test_the_table_has_a_row_per_engine_with_the_known_rates(swept):
    folder, _, emu = swept
    with Store(folder / "cbr.duckdb", read_only=True) as st:
        t = table(st, "cbr-link", [GOODPUT, LOSS])
    assert list(t.columns) == ["point", "traffic[0].rate", "engine", "metric", "mean", "std", "n", "ci_low",
                               "ci_high"]
    good = t[t.metric == GOODPUT]
    assert list(zip(good["traffic[0].rate"], good["engine"])) == [
        ("5Mbps", "aqmlab"), ("5Mbps", "emulation"), ("12Mbps", "aqmlab"), ("12Mbps", "emulation")]
    assert list(good["n"]) == [1, 1, 1, 1]
    assert list(good["mean"]) == pytest.approx([5e6, 5e6, 10e6, 10e6], rel=0.01)
    loss = t[t.metric == LOSS]
    assert list(loss["mean"]) == pytest.approx([0, 0, 1 / 6, 1 / 6], abs=0.01)
    # The sweep printed the same table; `aqmlab table` too, with the column.
    assert "emulation" in emu.stdout and "engine" in emu.stdout
    r = cli("table", "cbr.duckdb", "-m", GOODPUT, "--csv", cwd=folder)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == "point,traffic[0].rate,engine,metric,mean,std,n,ci_low,ci_high"
    assert [line.split(",")[2] for line in r.stdout.splitlines()[1:]] == ["aqmlab", "emulation"] * 2


@needs_emulation
def test_sweeping_again_skips_the_stored_runs_of_either_kind(swept):
    folder, path, _ = swept
    before = runs(folder / "cbr.duckdb")
    again = cli("sweep", path.name, "--emulate", "-q", cwd=folder)
    assert again.returncode == 0, again.stderr
    assert "cbr-link: 0 runs ok, 0 failed, 2 already stored" in again.stdout
    # A simulated sweep after the emulated one keeps the emulated runs in
    # the experiment's tables.
    sim = cli("sweep", path.name, "-q", cwd=folder)
    assert "cbr-link: 0 runs ok, 0 failed, 2 already stored" in sim.stdout
    assert sim.stdout.count("emulation") == 4  # two points x two metrics
    assert runs(folder / "cbr.duckdb") == before


@needs_emulation
def test_the_report_shows_the_engines_side_by_side(swept, tmp_path):
    from aqmlab.report import write_report

    folder, _, _ = swept
    page = write_report(folder / "cbr.duckdb", tmp_path / "report").read_text()
    # The table's rows, one per engine, and one plot per metric with both.
    assert page.count("<td>emulation</td>") == 4 and page.count("<td>aqmlab</td>") == 4
    assert sorted(p.name for p in (tmp_path / "report").glob("*.png")) == [
        "cbr-link-queues-link-loss-rate.png", "cbr-link-traffic-cbr-goodput-bps.png"]
    svg = (tmp_path / "report" / "cbr-link-traffic-cbr-goodput-bps.svg").read_text()
    assert ">engine<" in svg and ">emulation<" in svg and ">aqmlab<" in svg


@needs_emulation
def test_ctrl_c_keeps_the_finished_runs_and_exits_130(tmp_path):
    path = write_experiment(tmp_path)
    cmd = [sys.executable, "-m", "aqmlab", "sweep", path.name, "--emulate"]
    # Ctrl-C's default action in the child, as from a terminal (see
    # test_experiment's Ctrl-C test).
    with subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as proc:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # written once the first run is stored
        # Into the second run's 3 s: the emulator watches for Ctrl-C from
        # the moment it has checked the scenario, a few milliseconds after
        # the line above; one that came sooner would stop the sweep only
        # after that run, which would then be stored too.
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()
        code = proc.wait()
    assert first.startswith("runs: 1 done"), first + err
    assert code == 130, err
    assert err.startswith("interrupted: the emulation under way was abandoned") and err.count("\n") == 1, err
    assert [r[:5] for r in runs(tmp_path / "cbr.duckdb")] == [(0, 0, 1, "emulation", "ok")]
    netns = Path("/run/netns")
    left = [p.name for p in netns.iterdir() if p.name.startswith(f"aqm{proc.pid}-")] if netns.exists() else []
    assert left == [], "the interrupted emulation's namespaces are removed"


# Refusals: checked before anything runs or is written -----------------------


@pytest.mark.parametrize("args, words", [
    (["--jobs", "2"], "--jobs 2: emulated runs take real time"),
    (["--executor", "dask"], "--executor dask: emulated runs take real time"),
    (["--scheduler", "tcp://127.0.0.1:1"], "--executor dask: emulated runs take real time"),
])
def test_parallel_emulation_is_refused(tmp_path, args, words):
    path = write_experiment(tmp_path)
    r = cli("sweep", path.name, "--emulate", *args, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {words}") and r.stderr.count("\n") == 1, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cbr.toml"]


def test_the_api_refuses_the_same(tmp_path):
    exp = Experiment.load(write_experiment(tmp_path))
    with pytest.raises(AqmlabError, match="--jobs 2: emulated runs"):
        exp.sweep(store=tmp_path / "x.duckdb", jobs=2, emulate=True)
    with pytest.raises(AqmlabError, match="--executor dask: emulated runs"):
        exp.sweep(store=tmp_path / "x.duckdb", executor="dask", emulate=True)
    assert not (tmp_path / "x.duckdb").exists()


def test_a_machine_that_cannot_emulate_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from aqmlab.cli import main

    path = write_experiment(tmp_path)
    monkeypatch.setattr(emulation, "unavailable", lambda: "emulation needs root (CAP_SYS_ADMIN)")
    with pytest.raises(SystemExit) as e:
        main(["sweep", str(path), "--emulate", "-q"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == "error: --emulate: emulation is impossible on this machine: emulation needs root (CAP_SYS_ADMIN)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cbr.toml"]


@needs_emulation
def test_a_point_the_emulator_cannot_run_is_refused_before_any_run(tmp_path):
    # Point 1 turns the CBR group into web sessions whose requests are too
    # small for emulation's 20-byte head: the sweep stops before its first
    # run, naming the key and the point.
    text = EXPERIMENT.replace('"traffic[0].rate" = ["5Mbps", "12Mbps"]',
                              '"traffic[0]" = [{ name = "cbr", kind = "cbr", src = "a", dst = "b", rate = "5Mbps", '
                              'size = "1000B", start = "0s" }, { name = "web", kind = "web", src = "a", dst = "b", '
                              'count = 2, packet_size = "16B" }]')
    path = tmp_path / "web.toml"
    path.write_text(text)
    r = cli("sweep", str(path), "--emulate", "--quiet", cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("error: traffic[0].packet_size (point traffic[0]=")
    assert "emulation's web requests carry a 20-byte head" in r.stderr
    assert not (tmp_path / "web.duckdb").exists()
