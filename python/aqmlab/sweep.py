"""Running an experiment's runs on an executor and summarising them.

An executor is anything with ``submit(fn, *args) -> future`` and a way to
iterate futures as they finish; :func:`execute` is the only place that
knows about them. Runs happen on the executor; results are written to the
store by the calling thread alone, each as soon as its run finishes.
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
from aqmlab.scenario import run_json
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
            scheduler: str | None = None, progress: bool = False) -> dict[str, int]:
    """Runs every run of `exp` not yet stored (all of them with `rerun`),
    writing each to `store` as it finishes. Returns counts of ok, failed and
    skipped runs."""
    if executor not in EXECUTORS:
        raise AqmlabError(f"executor: \"{executor}\" is not known; allowed: {', '.join(EXECUTORS)}")
    if scheduler is not None and executor != "dask":
        raise AqmlabError("--scheduler: a scheduler address needs --executor dask")
    if jobs is not None and jobs < 1:
        raise AqmlabError(f"jobs: must be at least 1, got {jobs}")
    runs = exp.runs()
    store.record_experiment(exp.name, exp.text, exp.axis_paths(), exp.metrics, [r.key for r in runs])
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
    replications, per sweep point and metric, from the ok runs of each
    experiment's latest sweep in `store`. Columns: experiment (only when
    there is more than one), point, one column per swept key path (the
    value's label), metric, mean, std, n, ci_low, ci_high."""
    # A point of an experiment's latest sweep has one set of labels.
    groups: dict[tuple[str, int, str], list[float | None]] = {}
    labels_of: dict[tuple[str, int], dict[str, str]] = {}
    for exp, point, labels, metric, value in store.metric_values(experiment, metrics):
        groups.setdefault((exp, point, metric), []).append(value)
        labels_of[exp, point] = labels
    order = {m: i for i, m in enumerate(metrics or [])}
    out = []
    for (exp, point, metric), values in groups.items():
        s = summarize(values, level)
        out.append({"experiment": exp, "point": point, **labels_of[exp, point], "metric": metric, "mean": s.mean,
                    "std": s.std, "n": s.n, "ci_low": s.low, "ci_high": s.high})
    df = pd.DataFrame(out)
    if df.empty:
        return pd.DataFrame(columns=["point", "metric", "mean", "std", "n", "ci_low", "ci_high"])
    df["_order"] = df["metric"].map(lambda m: order.get(m, len(order)))
    df = df.sort_values(["experiment", "point", "_order", "metric"], kind="stable").drop(columns="_order")
    if df["experiment"].nunique() == 1:
        df = df.drop(columns="experiment")
    return df.reset_index(drop=True)
