"""Running an experiment's runs on an executor and summarising them.

An executor is anything with ``submit(fn, *args) -> future`` and a way to
iterate futures as they finish; :func:`execute` is the only place that
knows about them. Runs happen on the executor; results are written to the
store by the calling thread alone, each as soon as its run finishes.
Emulated runs (``emulate=True``) take no executor: they take real time and
share one router, so the calling thread runs them one after another.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import os
import sys
import time
from typing import Any

import pandas as pd

from aqmlab import _engine
from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.experiment import EMULATION
from aqmlab.scenario import Scenario, run_json
from aqmlab.stats import summarize
from aqmlab.store import Store

EXECUTORS = ("local", "dask")


class LocalExecutor:
    """Runs on threads of this process (the engine releases the GIL)."""

    def __init__(self, jobs: int):
        self.pool = cf.ThreadPoolExecutor(max_workers=jobs)

    def submit(self, fn: Any, *args: Any) -> Any:
        return self.pool.submit(fn, *args)

    def as_completed(self, futures: Any) -> Any:
        return cf.as_completed(futures)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Runs on a Dask cluster: the scheduler at `scheduler`
    (``tcp://host:port``), or a LocalCluster of `jobs` single-threaded
    worker processes started for this sweep and stopped after it."""

    def __init__(self, jobs: int, scheduler: str | None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - distributed is a pinned dependency
            raise AqmlabError("executor: dask needs the 'distributed' package") from None
        self.cluster = None
        try:
            if scheduler is None:
                self.cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                            dashboard_address=None)
                self.client = Client(self.cluster)
            else:
                self.client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as e:
            if self.cluster is not None:
                self.cluster.close()
            raise AqmlabError(f"--scheduler: cannot reach the Dask scheduler {scheduler!r}: {e}") from None

    def submit(self, fn: Any, *args: Any) -> Any:
        return self.client.submit(fn, *args, pure=False)

    def as_completed(self, futures: Any) -> Any:
        from distributed import as_completed

        return as_completed(list(futures))

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def run_one(scenario_json: str, seed: int) -> dict[str, Any]:
    """Runs one scenario (its JSON text) with one seed; never raises: a
    scenario the engine rejects, or any other failure, comes back as
    ``{"status": "failed", "error": ...}``. Top-level, so a remote worker can
    unpickle it."""
    t0 = time.perf_counter()
    try:
        try:
            text = run_json(scenario_json, seed)
        except ConfigError as e:  # stored on one line
            raise AqmlabError("; ".join(e.lines())) from None
        result = json.loads(text)
        return {"status": "ok", "result": result, "wall_s": time.perf_counter() - t0}
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # noqa: BLE001 - a failed run (even an engine panic) is data, not a crash
        return {"status": "failed", "error": f"{type(e).__name__}: {e}", "wall_s": time.perf_counter() - t0}


def emulate_one(scenario: Scenario, seed: int) -> dict[str, Any]:
    """Emulates one scenario with one seed, as :func:`run_one` runs it:
    whatever goes wrong (the emulator refusing the scenario, the system
    refusing something) comes back as a failed run, its error starting with
    ``emulation:``. Only Ctrl-C gets through, as KeyboardInterrupt, after
    the emulation removed its namespaces."""
    from aqmlab.emulation import emulate

    t0 = time.perf_counter()
    try:
        res = emulate(scenario, seed=seed)
        # The engine's result as the simulator gives it: summary and series.
        return {"status": "ok", "result": {"summary": res.summary, "series": res._series},
                "wall_s": time.perf_counter() - t0}
    except (KeyboardInterrupt, SystemExit):
        raise
    except ConfigError as e:  # stored on one line
        error = f"emulation: {'; '.join(e.lines())}"
    except BaseException as e:  # noqa: BLE001 - a failed run is data, as with the simulator
        error = f"emulation: {type(e).__name__}: {e}"
    return {"status": "failed", "error": error, "wall_s": time.perf_counter() - t0}


def _check_emulation(executor: str, jobs: int | None) -> None:
    """Emulated runs take real time on one router: one at a time, here."""
    if executor != "local":
        raise AqmlabError(f"--executor {executor}: emulated runs take real time on this machine's router and run "
                          "one after another in this process; drop --executor and --scheduler with --emulate")
    if jobs is not None and jobs > 1:
        raise AqmlabError(f"--jobs {jobs}: emulated runs take real time on one router and run one after another; "
                          "drop --jobs with --emulate")
    from aqmlab.emulation import unavailable

    why = unavailable()
    if why is not None:
        raise AqmlabError(f"--emulate: emulation is impossible on this machine: {why}")


def _check_emulable(runs: list[Any]) -> None:
    """Refuses, before anything runs, a sweep with a point the emulator
    cannot run (traffic it does not emulate, say): every problem once, its
    key path prefixed with the point's labels."""
    problems: list[tuple[str, str]] = []
    seen: set[int] = set()
    for spec in runs:
        if spec.point.index in seen:
            continue
        seen.add(spec.point.index)
        labels = ", ".join(f"{k}={v}" for k, v in spec.point.labels().items())
        for path, message in _engine.emulate_check(spec.scenario.to_json(), spec.seed):
            problems.append((f"{path} (point {labels})" if labels else path, message))
    if problems:
        raise ConfigError(problems)


class _Progress:
    """done / failed / remaining / time left on one stderr line."""

    def __init__(self, total: int, skipped: int, quiet: bool):
        self.total, self.skipped, self.quiet = total, skipped, quiet
        self.done = self.failed = 0
        self.t0 = time.monotonic()
        self.tty = sys.stderr.isatty()

    def update(self, ok: bool, final: bool = False) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.show(final)

    def show(self, final: bool = False) -> None:
        if self.quiet:
            return
        finished = self.done + self.failed
        left = self.total - finished
        elapsed = time.monotonic() - self.t0
        eta = f"{elapsed / finished * left:.0f}s" if finished else "?"
        line = (f"runs: {self.done} done, {self.failed} failed, {left} remaining"
                f" ({self.skipped} already stored), time left {eta}")
        if self.tty:
            width = 24
            filled = width * finished // self.total if self.total else width
            bar = "[" + "#" * filled + "." * (width - filled) + "] "
            sys.stderr.write("\r" + bar + line + "\x1b[K" + ("\n" if final or left == 0 else ""))
        elif final or left == 0 or finished % max(1, self.total // 10) == 0:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def execute(exp: Any, store: Store, executor: str = "local", jobs: int | None = None, rerun: bool = False,
            scheduler: str | None = None, progress: bool = False, emulate: bool = False) -> dict[str, int]:
    """Runs every run of `exp` not yet stored (all of them with `rerun`),
    writing each to `store` as it finishes. Returns counts of ok, failed and
    skipped runs. With `emulate`, the emulated runs instead of the
    simulated ones, one after another (see :meth:`Experiment.sweep`)."""
    if executor not in EXECUTORS:
        raise AqmlabError(f"executor: \"{executor}\" is not known; allowed: {', '.join(EXECUTORS)}")
    if scheduler is not None and executor != "dask":
        raise AqmlabError("--scheduler: a scheduler address needs --executor dask")
    if jobs is not None and jobs < 1:
        raise AqmlabError(f"jobs: must be at least 1, got {jobs}")
    if emulate:
        _check_emulation(executor, jobs)
    runs = exp.runs(emulate=emulate)
    if emulate:
        _check_emulable(runs)
    # The experiment's current runs are its simulated and its emulated runs,
    # both of its current version: sweeping one kind keeps the other in the
    # tables. The other kind's keys are listed only if the store has any.
    keys = [r.key for r in runs]
    other = EMULATION if not emulate else "aqmlab"
    if store.has_runs(exp.name, other):
        keys += [r.key for r in exp.runs(emulate=not emulate)]
    store.record_experiment(exp.name, exp.text, exp.axis_paths(), exp.metrics, keys)
    stored = store.keys()
    done = set() if rerun else store.done_keys()
    todo = [r for r in runs if r.key not in done]
    bar = _Progress(len(todo), len(runs) - len(todo), quiet=not progress)
    counts = {"ok": 0, "failed": 0, "skipped": len(runs) - len(todo)}

    attempted: set[str] = set()

    def record(spec: Any, text: str, out: dict[str, Any]) -> None:
        row = {
            "key": spec.key, "experiment": exp.name, "point": spec.point.index, "labels": spec.point.labels(),
            "replication": spec.replication, "seed": spec.seed, "engine_version": _engine.ENGINE_VERSION,
            "scenario_hash": hashlib.sha256(text.encode()).hexdigest(), "status": out["status"],
            "error": out.get("error"), "wall_s": out["wall_s"], "scenario": text,
            "simulator": EMULATION if spec.emulated else "aqmlab",
        }
        # A write that a Ctrl-C interrupted may or may not have committed:
        # writing the run again then replaces whatever is there.
        replace = spec.key in stored or spec.key in attempted
        attempted.add(spec.key)
        store.write_run(row, out.get("result"), replace=replace)
        counts[out["status"]] += 1
        bar.update(out["status"] == "ok")

    texts = []
    for spec in todo:
        try:
            texts.append((spec, spec.scenario.to_json()))
        except AqmlabError as e:  # a value JSON cannot carry: the run fails, the sweep goes on
            record(spec, "", {"status": "failed", "error": str(e), "wall_s": 0.0})
    if not texts:
        bar.show(final=True)
        return counts
    if emulate:
        for spec, text in texts:
            out = emulate_one(spec.scenario, spec.seed)  # Ctrl-C: the run under way is abandoned
            try:
                record(spec, text, out)
            except KeyboardInterrupt:
                # The run had finished: store it (again, if the interrupted
                # write committed), then stop.
                record(spec, text, out)
                raise
        return counts
    workers = jobs or os.cpu_count() or 1
    pool: LocalExecutor | DaskExecutor = LocalExecutor(workers) if executor == "local" else \
        DaskExecutor(workers, scheduler)
    futures: dict[Any, tuple[Any, str]] = {}
    recorded: set[Any] = set()

    def collect(futs: Any) -> None:
        for fut in pool.as_completed(futs):
            spec, text = futures[fut]
            try:
                out = fut.result()
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as e:  # noqa: BLE001 - e.g. a Dask worker lost: this run failed
                out = {"status": "failed", "error": f"{type(e).__name__}: {e}", "wall_s": 0.0}
            record(spec, text, out)
            recorded.add(fut)

    try:
        futures = {pool.submit(run_one, text, spec.seed): (spec, text) for spec, text in texts}
        try:
            collect(futures)
        except KeyboardInterrupt:
            # Runs not started are dropped; runs under way are finished and
            # stored, unless a second Ctrl-C abandons them too.
            for f in futures:
                if f not in recorded:
                    f.cancel()
            running = [f for f in futures if f not in recorded and not f.cancelled()]
            if running:
                sys.stderr.write(f"\ninterrupted: finishing the {len(running)} runs under way "
                                 "(Ctrl-C again to abandon them)\n")
                collect(running)
            raise
    finally:
        pool.close()
    return counts


def table(store: Store, experiment: str | None = None, metrics: list[str] | None = None,
          level: float = 0.95) -> pd.DataFrame:
    """Mean, standard deviation, n and the Student-t confidence interval over
    replications, per sweep point, engine and metric, from the ok runs of
    each experiment's latest sweep in `store`. Columns: experiment (only
    when there is more than one), point, one column per swept key path (the
    value's label), engine (only when some runs were emulated, or some
    point was run by more than one engine: ``aqmlab`` for the simulator,
    ``emulation``, ``ns-2``), metric, mean, std, n, ci_low, ci_high. A
    point's simulated and emulated runs are always separate rows, each with
    its own statistics."""
    # A point of an experiment's latest sweep has one set of labels.
    groups: dict[tuple[str, int, str, str], list[float | None]] = {}
    labels_of: dict[tuple[str, int], dict[str, str]] = {}
    for exp, point, labels, engine, metric, value in store.metric_values(experiment, metrics):
        groups.setdefault((exp, point, engine, metric), []).append(value)
        labels_of[exp, point] = labels
    engines_of: dict[tuple[str, int], set[str]] = {}
    for exp, point, engine, _ in groups:
        engines_of.setdefault((exp, point), set()).add(engine)
    show_engine = any(EMULATION in e or len(e) > 1 for e in engines_of.values())
    order = {m: i for i, m in enumerate(metrics or [])}
    out = []
    for (exp, point, engine, metric), values in groups.items():
        s = summarize(values, level)
        out.append({"experiment": exp, "point": point, **labels_of[exp, point],
                    **({"engine": engine} if show_engine else {}), "metric": metric, "mean": s.mean,
                    "std": s.std, "n": s.n, "ci_low": s.low, "ci_high": s.high})
    df = pd.DataFrame(out)
    if df.empty:
        return pd.DataFrame(columns=["point", "metric", "mean", "std", "n", "ci_low", "ci_high"])
    df["_order"] = df["metric"].map(lambda m: order.get(m, len(order)))
    by = ["experiment", "point", "_order", "metric"]
    if show_engine:  # each metric's engines one below the other, the simulator first
        df["_engine"] = df["engine"].map(lambda e: "0" if e == "aqmlab" else "1" + e)
        by.append("_engine")
    df = df.sort_values(by, kind="stable").drop(columns=[c for c in ("_order", "_engine") if c in df])
    if df["experiment"].nunique() == 1:
        df = df.drop(columns="experiment")
    return df.reset_index(drop=True)
