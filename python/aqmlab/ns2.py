"""aqmlab beside ns-2.35: the same scenario as an ns-2 Tcl script, run by
``ns``, and the two simulators' results compared metric by metric.

ns-2 is optional: :func:`export` needs only the engine; :func:`run_ns` and
:func:`crosscheck` need the ``ns`` command (Debian's ``ns2`` package).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import subprocess
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from aqmlab.exceptions import AqmlabError, ConfigError
from aqmlab.scenario import Scenario

#: Relative difference above which a significant difference fails a crosscheck.
TOLERANCE = 0.02


def export(scenario: Scenario, seed: int | None = None) -> str:
    """The ns-2.35 Tcl script for ``scenario`` run with ``seed`` (the
    scenario's own if None). Raises :class:`ConfigError` for an invalid
    scenario and for every setting ns-2.35 cannot express, each at its key."""
    from aqmlab import _engine

    try:
        return _engine.export_ns2(scenario.to_json(), seed)
    except ValueError as e:
        raise ConfigError([tuple(p) for p in e.args[0]]) from None


def find_ns() -> str | None:
    """The path of the ``ns`` command (``$AQMLAB_NS`` if set), or None."""
    return shutil.which(os.environ.get("AQMLAB_NS", "ns"))


def run_script(script: str, seed: int, ns: str | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Runs an exported script with ``seed`` in a scratch directory (its
    packet trace is written there and removed) and returns its summary."""
    ns = ns or find_ns()
    if ns is None:
        raise AqmlabError("ns-2 is not installed: the 'ns' command was not found (Debian: apt-get install ns2)")
    with tempfile.TemporaryDirectory(prefix="aqmlab-ns2-") as tmp:
        path = os.path.join(tmp, "run.tcl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(script)
        p = subprocess.run([ns, path, str(seed)], cwd=tmp, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0 or not p.stdout.strip():
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-5:])
        raise AqmlabError(f"ns exited with status {p.returncode}: {tail}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def run_ns(scenario: Scenario, seed: int | None = None, ns: str | None = None) -> dict[str, Any]:
    """Exports ``scenario`` and runs it in ns-2; returns ns-2's summary (the
    keys of ``aqmlab run --json``, with ``simulator = "ns-2"``)."""
    seed = scenario.seed if seed is None else seed
    return run_script(export(scenario, seed), seed, ns)


# ---------------------------------------------------------------------------
# Crosscheck


@dataclass(frozen=True)
class Comparison:
    """One metric: aqmlab's and ns-2's means over replications with their
    95% intervals, the relative difference, Welch's test, and the verdict."""

    metric: str
    headline: bool
    aqmlab_mean: float
    aqmlab_half: float
    ns2_mean: float
    ns2_half: float
    n: int
    diff: float  # (ns2 - aqmlab) / |aqmlab|
    p_value: float
    #: Headline metrics: Holm's adjustment over all of them, so that the
    #: chance of calling any of them different when none is stays at 5%.
    #: Other metrics: the raw p-value.
    p_adjusted: float

    @property
    def significant(self) -> bool:
        return self.p_adjusted < 0.05

    @property
    def fails(self) -> bool:
        """A headline metric that differs significantly by more than 2%."""
        return self.headline and self.significant and abs(self.diff) > TOLERANCE


#: ns-2's packet trace prints times rounded to the microsecond, so the ns-2
#: summary's sojourn times and backlog integrals carry errors of that order.
#: A queue whose mean sojourn is below this (the ACK queues of a dumbbell,
#: the queues of fast links) cannot be compared to within 2%: its delay and
#: length are reported but not judged.
TRACE_RESOLVABLE_DELAY_S = 50e-6


def headline_metrics(summary: dict[str, Any], other: list[dict[str, Any]] | None = None) -> list[str]:
    """The metrics a crosscheck judges: per reported queue its loss rate,
    mean queueing delay, mean queue length and mean loss run; per traffic
    group its goodput and loss rate. A queue's delay and length are left out
    when its mean sojourn is below :data:`TRACE_RESOLVABLE_DELAY_S` in
    ``summary`` and in every summary of ``other``."""
    out = []
    for q, qs in summary["queues"].items():
        delays = [qs.get("qdelay_mean_s")] + [o["queues"].get(q, {}).get("qdelay_mean_s") for o in other or []]
        resolvable = any(d is not None and d >= TRACE_RESOLVABLE_DELAY_S for d in delays)
        judged = ("loss_rate", "qdelay_mean_s", "qlen_mean_pkts", "consecutive_loss.mean") if resolvable \
            else ("loss_rate", "consecutive_loss.mean")
        out += [f"queues.{q}.{m}" for m in judged]
    for g in summary["traffic"]:
        out += [f"traffic.{g}.{m}" for m in ("goodput_bps", "loss_rate")]
    return out


def _flatten(d: Any, prefix: str = "") -> dict[str, float]:
    out: dict[str, float] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            if k in ("qdisc", "link", "run_totals", "hist"):
                continue
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else k))
    elif isinstance(d, (int, float)) and not isinstance(d, bool):
        out[prefix] = float(d)
    return out


_COMPARED_TOP = ("queues", "traffic", "fairness")


def compare(aq: list[dict[str, Any]], ns: list[dict[str, Any]]) -> list[Comparison]:
    """Every metric both simulators report, headline metrics first."""
    from scipy import stats as st

    from aqmlab.stats import summarize

    flat_a = [_flatten({k: s[k] for k in _COMPARED_TOP if k in s}) for s in aq]
    flat_b = [_flatten({k: s[k] for k in _COMPARED_TOP if k in s}) for s in ns]
    keys = [k for k in flat_a[0] if all(k in f for f in flat_b)]
    heads = set(headline_metrics(aq[0], aq[1:] + ns))
    out = []
    for k in keys:
        xa = [f[k] for f in flat_a if k in f and math.isfinite(f[k])]
        xb = [f[k] for f in flat_b if k in f and math.isfinite(f[k])]
        if not xa or not xb:
            continue
        a, b = summarize(xa), summarize(xb)
        if a.mean == b.mean:
            p = 1.0
        elif a.n > 1 and b.n > 1 and (a.std > 0 or b.std > 0):
            with warnings.catch_warnings():
                # Nearly equal samples (a queue that is almost always empty)
                # make scipy warn about precision; the p-value is still right.
                warnings.simplefilter("ignore", RuntimeWarning)
                p = float(st.ttest_ind(xa, xb, equal_var=False).pvalue)
        else:
            p = 0.0
        diff = (b.mean - a.mean) / abs(a.mean) if a.mean != 0 else (0.0 if b.mean == 0 else math.inf)
        out.append(Comparison(k, k in heads, a.mean, a.half_width, b.mean, b.half_width, min(a.n, b.n), diff, p, p))
    adjusted = holm([c.p_value for c in out if c.headline])
    it = iter(adjusted)
    out = [dataclasses.replace(c, p_adjusted=next(it)) if c.headline else c for c in out]
    out.sort(key=lambda c: (not c.headline, keys.index(c.metric)))
    return out


def holm(ps: list[float]) -> list[float]:
    """Holm's step-down adjustment of the p-values ``ps`` (same order)."""
    m = len(ps)
    order = sorted(range(m), key=lambda i: ps[i])
    out = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * ps[i]))
        out[i] = running
    return out


def crosscheck(scenario: Scenario, replications: int = 10, jobs: int | None = None,
               progress: Callable[[int, int], None] | None = None,
               store: str | None = None) -> tuple[list[Comparison], list[dict], list[dict]]:
    """Runs ``scenario`` ``replications`` times in aqmlab and in ns-2 (seeds
    seed, seed + 1, ...; the two simulators draw independently) and compares
    them. Returns the comparisons and both simulators' summaries. With
    ``store``, every run is also written to that results store as the
    experiment ``crosscheck-<scenario name>``, one sweep point per simulator
    (see :func:`store_runs`)."""
    import time

    import aqmlab

    if replications < 2:
        raise AqmlabError(f"--replications must be at least 2 for confidence intervals, got {replications}")
    seed0 = scenario.seed
    seeds = [seed0 + r for r in range(replications)]
    script = export(scenario, seed0)
    ns = find_ns()
    if ns is None:
        raise AqmlabError("ns-2 is not installed: the 'ns' command was not found (Debian: apt-get install ns2)")
    jobs = jobs or os.cpu_count() or 1
    aq_out: dict[int, dict] = {}
    ns_out: dict[int, dict] = {}
    total, done = 2 * replications, 0
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futs: dict[Any, tuple[str, int]] = {}
        def timed(fn: Callable[[], dict]) -> tuple[dict, float]:
            t0 = time.perf_counter()
            return fn(), time.perf_counter() - t0

        for s in seeds:
            futs[pool.submit(timed, lambda s=s: aqmlab.run(scenario, seed=s).summary)] = ("aqmlab", s)
            futs[pool.submit(timed, lambda s=s: run_script(script, s, ns))] = ("ns-2", s)
        for fut in as_completed(futs):
            who, s = futs[fut]
            (aq_out if who == "aqmlab" else ns_out)[s] = fut.result()
            done += 1
            if progress:
                progress(done, total)
    aq = [aq_out[s][0] for s in seeds]
    nsr = [ns_out[s][0] for s in seeds]
    if store is not None:
        store_runs(store, scenario, seeds, [aq_out[s][1] for s in seeds], aq, [ns_out[s][1] for s in seeds], nsr)
    return compare(aq, nsr), aq, nsr


def store_runs(path: str, scenario: Scenario, seeds: list[int], aq_wall: list[float], aq: list[dict],
               ns_wall: list[float], ns: list[dict]) -> None:
    """Writes a crosscheck's runs to the results store at ``path``: the
    experiment ``crosscheck-<name>`` swept over ``simulator`` (point 0 is
    aqmlab, point 1 ns-2), so that ``aqmlab table`` and ``aqmlab report``
    show the two side by side; the runs' ``simulator`` column says which ran
    them. A run is keyed by the simulator, scenario, seed and versions, and
    written again when the crosscheck is."""
    import hashlib

    from aqmlab import _engine
    from aqmlab.store import Store

    name = f"crosscheck-{scenario.to_dict().get('name', 'scenario')}"
    text = scenario.to_json()
    keys = []
    with Store(path) as st:
        rows = []
        for point, (sim, walls, summaries) in enumerate([("aqmlab", aq_wall, aq), ("ns-2", ns_wall, ns)]):
            version = _engine.ENGINE_VERSION if sim == "aqmlab" else f"ns-2.35 (aqmlab {_engine.ENGINE_VERSION} export)"
            for r, (seed, wall, summary) in enumerate(zip(seeds, walls, summaries)):
                blob = json.dumps({"experiment": name, "simulator": sim, "scenario": scenario.to_dict(),
                                   "seed": seed, "version": version}, sort_keys=True, default=str)
                key = hashlib.sha256(blob.encode()).hexdigest()
                keys.append(key)
                rows.append(({"key": key, "experiment": name, "point": point, "labels": {"simulator": sim},
                              "replication": r, "seed": seed, "engine_version": version,
                              "scenario_hash": hashlib.sha256(text.encode()).hexdigest(), "status": "ok",
                              "wall_s": wall, "scenario": text, "simulator": sim}, {"summary": summary}))
        st.record_experiment(name, text, ["simulator"], headline_metrics(aq[0]), keys)
        for row, result in rows:
            st.write_run(row, result)


def format_table(rows: Iterable[Comparison], all_metrics: bool = False) -> str:
    """The comparison as an aligned text table."""
    def fmt(x: float) -> str:
        return "nan" if not math.isfinite(x) else f"{x:.6g}"

    def fmt2(x: float) -> str:
        return "nan" if not math.isfinite(x) else f"{x:.2g}"

    lines = [f"{'metric':48s} {'aqmlab':>24s} {'ns-2':>24s} {'diff':>8s} {'p':>6s}  verdict"]
    # p: Welch's t-test, Holm-adjusted over the headline metrics.
    for c in rows:
        if not (c.headline or all_metrics):
            continue
        verdict = "DIFFERS" if c.fails else ("significant, within 2%" if c.significant and c.headline
                                             else ("significant" if c.significant else "agree"))
        a = f"{fmt(c.aqmlab_mean)} +- {fmt2(c.aqmlab_half)}"
        b = f"{fmt(c.ns2_mean)} +- {fmt2(c.ns2_half)}"
        d = f"{100 * c.diff:+.2f}%" if math.isfinite(c.diff) else "inf"
        lines.append(f"{c.metric:48s} {a:>24s} {b:>24s} {d:>8s} {c.p_adjusted:6.3f}  {verdict}")
    return "\n".join(lines)
