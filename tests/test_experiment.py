"""Experiments: sweep points, the results store, resuming, failures and
confidence intervals."""

import json
import math
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from scipy import stats

import aqmlab
from aqmlab import _engine
from aqmlab.experiment import Experiment
from aqmlab.stats import batch_means, summarize
from aqmlab.store import Store, flatten_metrics
from aqmlab.sweep import execute, table
from conftest import EXAMPLES, ROOT

MM1K = str(EXAMPLES / "mm1k.toml")
METRICS = ["queues.q.loss_rate", "queues.q.qlen_mean_pkts"]


def _experiment(tmp_path: Path, replications: int = 3, rates=("5Mbps", "8Mbps", "9Mbps", "12Mbps"),
                duration: str = "20s") -> Path:
    values = ", ".join(f'"{r}"' for r in rates)
    text = f"""
name = "mm1k-load"
scenario = "{MM1K}"
replications = {replications}
metrics = {METRICS!r}
[sweep]
duration = ["{duration}"]
"traffic[0].rate" = [{values}]
"""
    path = tmp_path / "exp.toml"
    path.write_text(text.replace("'", '"'))
    return path


def _stored(store: Path) -> list[tuple]:
    """Every stored metric value, in a fixed order, for comparing stores."""
    db = duckdb.connect(str(store), read_only=True)
    try:
        return db.execute("SELECT r.point, r.replication, r.seed, m.metric, m.value FROM runs r JOIN metrics m "
                          "USING (key) ORDER BY 1, 2, 4").fetchall()
    finally:
        db.close()


# Statistics ----------------------------------------------------------------


@pytest.mark.parametrize("xs", [[1.0, 2.0, 4.0], [0.05, 0.051, 0.049, 0.0502, 0.0511], list(range(30))])
def test_confidence_interval_matches_scipy(xs):
    s = summarize(xs)
    lo, hi = stats.t.interval(0.95, len(xs) - 1, loc=sum(xs) / len(xs), scale=stats.sem(xs))
    assert s.n == len(xs)
    assert s.mean == pytest.approx(sum(xs) / len(xs), rel=1e-15)
    assert s.std == pytest.approx(stats.tstd(xs), rel=1e-12)
    assert (s.low, s.high) == (pytest.approx(lo, rel=1e-12), pytest.approx(hi, rel=1e-12))


def test_hand_computed_interval_and_missing_values():
    # 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653, half-width 4.302653 / sqrt(3).
    s = summarize([1, None, 2, float("nan"), 3])
    assert s.n == 3 and s.mean == 2 and s.std == 1
    assert s.high - s.mean == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    one = summarize([5.0])
    assert one.mean == 5 and math.isnan(one.half_width) and summarize([]).n == 0


def test_batch_means():
    # Batches of 3: means 2, 5, 8 (the trailing 10 is dropped).
    s = batch_means([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], batches=3)
    assert (s.mean, s.std, s.n) == (5, 3, 3)
    with pytest.raises(ValueError):
        batch_means([1.0], batches=2)


# Experiment files ----------------------------------------------------------


def test_cross_product_zip_and_labels():
    base = aqmlab.Scenario.load(MM1K).to_dict()
    exp = Experiment.from_dict({"scenario": base, "sweep": {"duration": ["1s", "2s", "3s"], "warmup": ["0s", "0.5s"]}})
    assert len(exp.points()) == 6
    assert [p.labels() for p in exp.points()][:2] == [{"duration": "1s", "warmup": "0s"},
                                                       {"duration": "1s", "warmup": "0.5s"}]
    z = Experiment.from_dict({"scenario": base, "zip": [["duration", "warmup"]],
                              "sweep": {"duration": ["1s", "2s"], "warmup": {"values": ["0s", "1s"],
                                                                             "labels": ["none", "one"]}}})
    assert [p.labels() for p in z.points()] == [{"duration": "1s", "warmup": "none"},
                                                {"duration": "2s", "warmup": "one"}]
    q = Experiment.from_dict({"scenario": base, "sweep": {"topology.links[0].qdisc": [
        {"kind": "droptail", "limit": "9pkt"}, {"kind": "codel"}]}})
    assert [p.labels() for p in q.points()] == [{"topology.links[0].qdisc": "droptail"},
                                                {"topology.links[0].qdisc": "codel"}]
    # Tables of one kind are labelled by their text.
    r = Experiment.from_dict({"scenario": base, "sweep": {"topology.links[0].qdisc": [
        {"kind": "droptail", "limit": "9pkt"}, {"kind": "droptail", "limit": "5pkt"}]}})
    assert [p.labels()["topology.links[0].qdisc"] for p in r.points()] == [
        '{"kind": "droptail", "limit": "9pkt"}', '{"kind": "droptail", "limit": "5pkt"}']


def test_common_random_numbers_across_points(tmp_path):
    exp = Experiment.load(_experiment(tmp_path, replications=2))
    runs = exp.runs()
    assert [(r.point.index, r.replication, r.seed) for r in runs[:4]] == [(0, 0, 1), (0, 1, 2), (1, 0, 1), (1, 1, 2)]
    assert len({r.key for r in runs}) == len(runs)


@pytest.mark.parametrize("data, path, words", [
    ({"scenario": {}, "replicas": 3}, "replicas", "unknown key"),
    ({"scenario": {}, "replications": 0}, "replications", "from 1 to 100000, got 0"),
    ({"scenario": 3}, "scenario", "path or an inline table"),
    ({"scenario": {}, "sweep": {"duration": []}}, 'sweep."duration"', "non-empty list"),
    ({"scenario": {}, "sweep": {"duration": {"values": ["1s"], "labels": ["a", "b"]}}},
     'sweep."duration".labels', "1 strings"),
    ({"scenario": {}, "sweep": {"duration": ["1s"], "warmup": ["0s", "1s"]}, "zip": [["duration", "warmup"]]},
     "zip[0]", "equal lengths"),
    ({"scenario": {}, "sweep": {"traffic[3].count": [1]}}, 'sweep."traffic[3].count"', "out of range"),
])
def test_bad_experiments_name_the_key(data, path, words):
    with pytest.raises(aqmlab.ConfigError) as e:
        Experiment.from_dict(data)
    assert any(p == path and words in m for p, m in e.value.problems), e.value.problems


def test_cli_bad_experiment_exits_2(cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('scenario = "nowhere.toml"\nreplications = -1\n')
    r = cli("sweep", str(bad), "-q")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "replications: must be a whole number" in r.stderr and "nowhere.toml" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


# Sweeps and the store -------------------------------------------------------


def test_resume_skips_stored_runs_and_adds_new_replications(tmp_path):
    path = _experiment(tmp_path)
    store = tmp_path / "exp.duckdb"
    with Store(store) as st:
        assert execute(Experiment.load(path), st) == {"ok": 12, "failed": 0, "skipped": 0}
        assert execute(Experiment.load(path), st) == {"ok": 0, "failed": 0, "skipped": 12}
        assert execute(Experiment.load(_experiment(tmp_path, replications=4)), st) == \
            {"ok": 4, "failed": 0, "skipped": 12}
        assert st.db.execute("SELECT count(*), count(DISTINCT key) FROM runs").fetchone() == (16, 16)
        # The file now asks for 4 replications; --rerun runs all 16 again,
        # replacing their rows.
        assert execute(Experiment.load(path), st, rerun=True)["ok"] == 16
        assert st.db.execute("SELECT count(*) FROM runs").fetchone() == (16,)


def test_two_jobs_store_the_same_as_one(tmp_path):
    path = _experiment(tmp_path)
    for jobs in (1, 2):
        with Store(tmp_path / f"j{jobs}.duckdb") as st:
            execute(Experiment.load(path), st, jobs=jobs)
    one, two = _stored(tmp_path / "j1.duckdb"), _stored(tmp_path / "j2.duckdb")
    assert len(one) > 12 * 20 and one == two


def test_table_matches_theory_and_scipy(tmp_path):
    # M/M/1/K with K = 10 at load 0.9: loss 0.050814 (mm1k.toml's header).
    path = _experiment(tmp_path, replications=5, rates=("9Mbps",), duration="400s")
    df = Experiment.load(path).run(store=tmp_path / "s.duckdb", jobs=2)
    row = df[df.metric == "queues.q.loss_rate"].iloc[0]
    values = [v for (_, _, _, m, v) in _stored(tmp_path / "s.duckdb") if m == "queues.q.loss_rate"]
    lo, hi = stats.t.interval(0.95, 4, loc=sum(values) / 5, scale=stats.sem(values))
    assert row["n"] == 5 and row["ci_low"] == pytest.approx(lo) and row["ci_high"] == pytest.approx(hi)
    assert abs(row["mean"] - 0.050814) < 3 * (hi - lo) / 2 + 1e-4


def test_store_keeps_each_flow_row_once_and_every_metric(tmp_path):
    """A run's per-flow rows go to `flows` (in order, as the engine wrote
    them), its summary to `runs` without them, and its numbers to
    `metrics`, NULL where the engine had none."""
    sc = aqmlab.Scenario.load(EXAMPLES / "tcp-dumbbell.toml").with_(duration="5s", warmup="1s")
    result = json.loads(_engine.run(sc.to_json(), 3))
    flows = result["summary"]["flows"]
    assert len(flows) > 1
    row = {"key": "k", "experiment": "e", "point": 0, "labels": {}, "replication": 0, "seed": 3,
           "engine_version": _engine.ENGINE_VERSION, "scenario_hash": "h", "status": "ok", "error": None,
           "wall_s": 0.0, "scenario": sc.to_json()}
    with Store(tmp_path / "s.duckdb") as st:
        st.write_run(row, result, replace=False)
        summary = json.loads(st.db.execute("SELECT summary FROM runs").fetchone()[0])
        stored = [json.loads(d) for (d,) in st.db.execute("SELECT data FROM flows ORDER BY flow").fetchall()]
        metrics = st.db.execute("SELECT metric, value FROM metrics ORDER BY rowid").fetchall()
    assert "flows" not in summary and summary == {k: v for k, v in result["summary"].items() if k != "flows"}
    assert stored == flows
    expected = list(flatten_metrics(result["summary"]))
    assert metrics == expected and any(v is None for _, v in expected)


def test_a_failing_run_is_stored_with_its_message(tmp_path):
    path = _experiment(tmp_path, replications=2, rates=("5Mbps", "fast", "9Mbps"))
    with Store(tmp_path / "f.duckdb") as st:
        assert execute(Experiment.load(path), st) == {"ok": 4, "failed": 2, "skipped": 0}
        failed = st.db.execute("SELECT point, error FROM runs WHERE status = 'failed'").fetchall()
        assert [p for p, _ in failed] == [1, 1]
        assert all('traffic[0].rate: "fast" is not a rate' in e for _, e in failed)
        assert len(table(st, metrics=["queues.q.loss_rate"])) == 2


def test_cli_sweep_and_table(cli, tmp_path):
    path = _experiment(tmp_path, replications=2, rates=("5Mbps", "9Mbps"))
    r = cli("sweep", str(path), "--jobs", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "4 runs ok, 0 failed, 0 already stored" in r.stdout and "queues.q.loss_rate" in r.stdout
    r = cli("table", str(tmp_path / "exp.duckdb"), "--metrics", "queues.q.loss_rate", "--csv")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "point,duration,traffic[0].rate,metric,mean,std,n,ci_low,ci_high" and len(lines) == 3
    r = cli("table", str(tmp_path / "missing.duckdb"))
    assert r.returncode == 2 and "no such results store" in r.stderr


def _count_engine_reads(monkeypatch) -> dict[str, int]:
    """Counts the engine's two ways of reading a scenario: `validate` and
    `run` (which validates as it reads)."""
    calls = {"validate": 0, "run": 0}
    for name in calls:
        real = getattr(_engine, name)

        def counted(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(_engine, name, counted)
    return calls


def _main(*args: str) -> int:
    from aqmlab.cli import main

    with pytest.raises(SystemExit) as e:
        main(list(args))
    return e.value.code


def test_sweep_validates_the_experiment_once_and_each_run_only_in_the_engine(tmp_path, monkeypatch):
    path = _experiment(tmp_path, replications=2, rates=("5Mbps", "9Mbps"))
    calls = _count_engine_reads(monkeypatch)
    assert _main("sweep", str(path), "--jobs", "2", "--quiet") == 0
    assert calls == {"validate": 1, "run": 4}
    # Sweeping again checks the experiment again (its file may have
    # changed) and runs nothing: every run is stored.
    assert _main("sweep", str(path), "--quiet") == 0
    assert calls == {"validate": 2, "run": 4}


def test_run_validates_the_scenario_only_in_the_engine(monkeypatch, capsys):
    calls = _count_engine_reads(monkeypatch)
    assert _main("run", MM1K, "--json") == 0
    assert calls == {"validate": 0, "run": 1}
    assert _main("run", MM1K, "--set", "traffic[0].rate=fast") == 2
    assert calls == {"validate": 0, "run": 2}
    err = capsys.readouterr().err
    assert 'error: traffic[0].rate: "fast" is not a rate' in err and "Traceback" not in err


def test_kill_9_loses_no_finished_run(tmp_path):
    """A sweep killed at a random moment, then resumed, stores every run
    once and ends with the same table as an uninterrupted sweep."""
    rates = [f"{r}Mbps" for r in range(5, 15)]
    # 20 runs of about 0.1 s each, so the kill lands mid-sweep.
    path = _experiment(tmp_path, replications=2, rates=rates, duration="600s")
    cmd = [sys.executable, "-m", "aqmlab", "sweep", str(path), "--jobs", "1"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Wait until some runs are reported done, then kill at a random moment.
    reported = 0
    assert proc.stderr is not None
    for line in proc.stderr:
        reported = int(line.split()[1])
        if reported >= 2:
            break
    time.sleep(random.uniform(0, 0.2))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    store = tmp_path / "exp.duckdb"
    with Store(store) as st:
        stored = st.db.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert reported <= stored < 20, "the kill came too late to test anything"
    r = subprocess.run(cmd + ["--quiet"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"{20 - stored} runs ok, 0 failed, {stored} already stored" in r.stdout
    with Store(tmp_path / "clean.duckdb") as st:
        execute(Experiment.load(path), st)
    assert _stored(store) == _stored(tmp_path / "clean.duckdb")
    with Store(store) as a, Store(tmp_path / "clean.duckdb") as b:
        assert table(a).equals(table(b))
    with Store(store) as st:
        assert st.db.execute("SELECT count(*), count(DISTINCT key) FROM runs").fetchone() == (20, 20)


def test_dask_executor_stores_the_same_as_serial(tmp_path):
    """A LocalCluster of 2 worker processes, and an existing cluster reached
    by its scheduler address, store exactly the serial run's metrics."""
    from distributed import LocalCluster

    path = _experiment(tmp_path, replications=2)
    with Store(tmp_path / "serial.duckdb") as st:
        execute(Experiment.load(path), st, jobs=1)
    with Store(tmp_path / "dask.duckdb") as st:
        assert execute(Experiment.load(path), st, executor="dask", jobs=2)["ok"] == 8
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Store(tmp_path / "remote.duckdb") as st:
            assert execute(Experiment.load(path), st, executor="dask", scheduler=cluster.scheduler_address)["ok"] == 8
    serial = _stored(tmp_path / "serial.duckdb")
    assert len(serial) > 8 * 20
    assert _stored(tmp_path / "dask.duckdb") == serial and _stored(tmp_path / "remote.duckdb") == serial


def test_unreachable_scheduler_is_an_error_and_leaves_no_store(cli, tmp_path):
    path = _experiment(tmp_path, replications=1, rates=("5Mbps",))
    # Port 1 on the loopback refuses at once; Dask retries until its timeout.
    r = cli("sweep", str(path), "--scheduler", "tcp://127.0.0.1:1", "--quiet")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--scheduler: cannot reach the Dask scheduler 'tcp://127.0.0.1:1'" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp.toml"]


def test_same_scenario_at_two_points_and_two_experiments_in_one_store(tmp_path):
    base = aqmlab.Scenario.load(MM1K).with_(duration="5s", warmup="0s").to_dict()
    twice = Experiment.from_dict({"name": "e0", "scenario": base,
                                  "sweep": {"duration": {"values": ["5s", "5s"], "labels": ["a", "b"]}}})
    e1 = Experiment.from_dict({"name": "e1", "scenario": base, "sweep": {"traffic[0].rate": ["5Mbps", "9Mbps"]}})
    e2 = Experiment.from_dict({"name": "e2", "scenario": base, "sweep": {"traffic[0].rate": ["9Mbps", "12Mbps"]}})
    with Store(tmp_path / "s.duckdb") as st:
        assert execute(twice, st)["ok"] == 2
        assert execute(e1, st)["ok"] == 2
        # e2's 9 Mbps point is its own run, not e1's.
        assert execute(e2, st) == {"ok": 2, "failed": 0, "skipped": 0}
        assert execute(e2, st, rerun=True)["ok"] == 2
        for name in ("e1", "e2"):
            t = table(st, name, ["queues.q.loss_rate"])
            assert len(t) == 2 and (t["n"] == 1).all()
        assert set(table(st)["experiment"]) == {"e0", "e1", "e2"}


def test_a_changed_experiment_uses_only_its_current_runs(tmp_path):
    path = _experiment(tmp_path, replications=2, rates=("9Mbps",))
    with Store(tmp_path / "s.duckdb") as st:
        execute(Experiment.load(path), st)
        path.write_text(path.read_text().replace('duration = ["20s"]', 'duration = ["30s"]'))
        assert execute(Experiment.load(path), st)["ok"] == 2
        t = table(st, "mm1k-load", ["queues.q.loss_rate"])
        assert t["n"].tolist() == [2] and t["duration"].tolist() == ["30s"]
        assert st.db.execute("SELECT count(*) FROM runs").fetchone() == (4,)  # the old runs are kept


def test_a_problem_every_point_has_is_an_experiment_error(cli, tmp_path):
    base = aqmlab.Scenario.load(MM1K).to_dict()
    with pytest.raises(aqmlab.ConfigError) as e:
        Experiment.from_dict({"scenario": base, "sweep": {"traffic[0].rat": ["5Mbps", "9Mbps"]}})
    assert any(p == "traffic[0].rat" and "unknown key" in m for p, m in e.value.problems), e.value.problems
    with pytest.raises(aqmlab.ConfigError) as e:
        Experiment.from_dict({"scenario": base, "sweep": {"topology": {"links": []}}})
    assert "must be quoted" in str(e.value)


def test_cli_reports_failed_runs(cli, tmp_path):
    path = _experiment(tmp_path, replications=1, rates=("5Mbps", "fast"))
    r = cli("sweep", str(path), "--quiet")
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert "1 runs ok, 1 failed" in r.stdout
    assert 'failed: 1 run(s) at {"duration": "20s", "traffic[0].rate": "fast"}: ' in r.stderr


def test_metrics_of_queues_named_like_settings_are_kept():
    summary = {"seed": 1, "wall_s": 0.1, "queues": {"link": {"loss_rate": 0.5, "qdisc": {"max_p": 0.1},
                                                             "link": {"rate_bps": 10}}},
               "fairness": {"jain": 1.0}, "flows": [{"sent": 3}]}
    assert dict(flatten_metrics(summary)) == {"queues.link.loss_rate": 0.5, "fairness.jain": 1.0}


def test_a_foreign_duckdb_file_is_refused(cli, tmp_path):
    other = tmp_path / "other.duckdb"
    db = duckdb.connect(str(other))
    db.execute("CREATE TABLE runs (x INTEGER)")
    db.close()
    for args in (("table", str(other)), ("report", str(other))):
        r = cli(*args)
        assert r.returncode == 2 and "not a results store of this aqmlab version" in r.stderr, r.stderr
    r = cli("sweep", str(_experiment(tmp_path, replications=1, rates=("5Mbps",))), "--store", str(other), "-q")
    assert r.returncode == 2 and "not a results store" in r.stderr


def test_ctrl_c_finishes_and_stores_the_run_under_way(tmp_path):
    # 200 runs, so that on a loaded machine the sweep cannot finish before
    # the signal arrives (with 20 it once did, and exited 0); Ctrl-C stops it
    # after the runs under way, so the test stays short.
    rates = [f"{r}Mbps" for r in range(5, 105)]
    path = _experiment(tmp_path, replications=2, rates=rates, duration="600s")
    cmd = [sys.executable, "-m", "aqmlab", "sweep", str(path), "--jobs", "1"]
    # The child starts with Ctrl-C's default action, as from a terminal: a
    # child inherits an ignored SIGINT, and Python then never raises
    # KeyboardInterrupt (in the whole suite something leaves it ignored).
    with subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)) as proc:
        assert proc.stderr is not None
        reported = int(proc.stderr.readline().split()[1])
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()
        code = proc.wait()
    assert code == 130, err[-3000:]
    assert "interrupted: finishing the " in err and "Traceback" not in err
    with Store(tmp_path / "exp.duckdb") as st:
        stored = st.db.execute("SELECT count(*) FROM runs WHERE status = 'ok'").fetchone()[0]
    # The run under way at the interrupt was stored; none was started after it.
    assert reported + 1 <= stored <= reported + 2 and stored < 200, (reported, stored, err)
