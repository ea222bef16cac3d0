"""What every classic study shares: scales, experiment templates, running
through the experiment layer, and the report (tables as CSV, figures as PNG
and SVG, one HTML page).

A study is a :class:`Study` subclass registered with :func:`register`. It
gives its experiments for a scale as TOML text, usually rendered from a
template beside it (``python/aqmlab/studies/<study>/*.toml.j2``, Jinja2, so a
template keeps the comments that say which choices the paper left open), and
an ``analyse`` method that turns the stored results into tables and figures
on a :class:`StudyReport`.

``reproduce`` writes, into one output folder:

- ``experiments/<name>.toml``: every experiment file used, as run (``aqmlab
  sweep`` accepts them as they are);
- ``results.duckdb``: the results store, so an interrupted reproduction
  resumes where it stopped and ``--executor dask`` spreads the runs;
- ``<table>.csv`` for every table and figure, ``<figure>.png`` and ``.svg``;
- ``report.html``: the page, with the scale, replications and intervals
  stated, the text of what the figures show, and the experiment files.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from aqmlab import _engine
from aqmlab.exceptions import AqmlabError
from aqmlab.experiment import Experiment
from aqmlab.files import write_atomic
from aqmlab.report import html_table, page_environment, save_figure  # also sets the Agg backend and SVG text
from aqmlab.stats import summarize
from aqmlab.store import Store
from aqmlab.sweep import execute

SCALES = ("smoke", "quick", "full")
#: How a study's runs are made: all simulated, or (``emulate``) its testbed
#: half both simulated and emulated through real Linux stacks, side by side.
MODES = ("simulate", "emulate")
SCALE_TEXT = {
    "smoke": "SMOKE scale: a few seconds of simulated time and two replications, to check that the study runs end "
             "to end. The numbers are not meant to be read.",
    "quick": "QUICK scale: shorter runs, fewer replications and fewer load points than the paper, so the study runs "
             "in minutes on a laptop. The intervals are wider than the paper's; read the trends, not the digits.",
    "full": "FULL scale: the paper's durations, load points and replication counts.",
}


class Study:
    """One published study: its experiments per scale and their analysis."""

    name: str = ""
    title: str = ""
    source: str = ""  # the paper(s)
    runtime: dict[str, str] = {}  # expected wall time per scale on 2 cores, e.g. {"quick": "3 min"}
    #: The heading of the claims on the page (a study of our own checks
    #: published expectations, not one paper's claims).
    claims_title: str = "The paper's claims"

    @property
    def folder(self) -> Path:
        return Path(__file__).parent / self.name.replace("-", "_")

    def experiments(self, scale: str) -> dict[str, str]:
        """Experiment name -> the experiment file's TOML text at `scale`."""
        raise NotImplementedError

    def more_experiments(self, scale: str, results: "StudyReport") -> dict[str, str]:
        """Experiments whose parameters are derived from results already
        stored (e.g. a buffer sized from a calibration run): called after the
        experiments run, again after any new ones ran, until it offers no
        experiment that has not run. `results` reads the store as
        ``analyse`` does."""
        return {}

    def analyse(self, report: "StudyReport") -> None:
        """Adds the study's tables, figures and text to `report`."""
        raise NotImplementedError

    def emulated_experiments(self, scale: str, results: "StudyReport | None" = None) -> dict[str, str]:
        """The experiments of the paper's testbed half, for ``--mode
        emulate``: each runs simulated and emulated (``aqmlab emulate``,
        real time) into one store, except those :meth:`simulated_only`
        names (a calibration whose result sets another's parameters). Called
        again with the results so far, as :meth:`more_experiments` is, until
        it offers nothing new. Empty for a study without a testbed."""
        return {}

    def simulated_only(self, experiment: str) -> bool:
        """Whether an experiment of :meth:`emulated_experiments` runs only
        simulated."""
        return False

    def analyse_emulation(self, report: "StudyReport") -> None:
        """Adds the emulated runs beside the simulated ones to `report`."""
        raise NotImplementedError

    def render(self, template: str, **context: Any) -> str:
        """Renders ``<study folder>/<template>`` (Jinja2; an undefined name is
        an error, not an empty string). The templates write TOML, not HTML, so
        nothing is HTML-escaped: a string's quotes must stay quotes."""
        env = Environment(loader=FileSystemLoader(self.folder), undefined=StrictUndefined, keep_trailing_newline=True,
                          autoescape=False)
        env.filters["toml"] = toml_value
        return env.get_template(template).render(**context)


def toml_value(v: Any, *, non_finite: bool = False) -> str:
    """A Python value as an inline TOML value (for templates). NaN and the
    infinities are refused unless `non_finite` (TOML writes them ``nan``,
    ``inf``, ``-inf``; the engine rejects them, which is what a test may
    want to see)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            if not non_finite:
                raise AqmlabError(f"cannot write {v} in an experiment file")
            return "nan" if math.isnan(v) else "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(toml_value(x, non_finite=non_finite) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(x, non_finite=non_finite)}"
                                for k, x in v.items()) + " }"
    raise AqmlabError(f"cannot write a {type(v).__name__} in an experiment file")


STUDIES: dict[str, Study] = {}


def register(cls: type[Study]) -> type[Study]:
    STUDIES[cls.name] = cls()
    return cls


@dataclass
class _Section:
    title: str
    items: list[dict[str, Any]] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return "s-" + "".join(c if c.isalnum() else "-" for c in self.title.lower()).strip("-")


#: What a claim's verdict may say. "same direction, different size": the
#: effect the paper reports is there, significantly, but its size is not.
VERDICTS = ("reproduced", "same direction, different size", "not reproduced", "inconclusive",
            "not run at this scale")

#: How many rows a table may have before the page shows it folded.
FOLD_ROWS = 40


def _shown(v: Any, column: str) -> str:
    """A number as the page shows it: rates in Mb/s, four significant digits,
    no exponent for numbers a reader meets in AQM tables."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
    if isinstance(v, float) and math.isnan(v):
        return "-"
    if column.endswith("_bps"):
        v = v / 1e6
    if isinstance(v, int) or float(v).is_integer() and abs(v) < 1e9:
        return f"{int(v):,}"
    a = abs(v)
    if 1e-4 <= a < 1e6:
        digits = max(0, 3 - math.floor(math.log10(a)))
        return f"{v:,.{digits}f}"
    return f"{v:.4g}"


def _header(column: str) -> str:
    return column.removesuffix("_bps") + " (Mb/s)" if column.endswith("_bps") else column


class StudyReport:
    """Where a study's ``analyse`` puts its results. Tables are written as
    CSV at once; figures as PNG and SVG; text and both go on the page in the
    order added, under the current section."""

    def __init__(self, study: Study, scale: str, out: Path, store: Store, experiments: dict[str, Experiment]):
        self.study, self.scale, self.out, self.store, self.experiments = study, scale, out, store, experiments
        self.sections: list[_Section] = [_Section("")]
        # The claims go first on the page and every run's raw rows last.
        self.claims_section: _Section | None = None
        self.raw_section = _Section("Raw data")

    # Reading results ----------------------------------------------------------

    def runs(self, experiment: str, flows: bool = False) -> pd.DataFrame:
        """The current ok runs of `experiment`: one row per run with columns
        point, replication, seed, one column per swept key path (its label),
        and ``summary`` (the run's summary as a dict; with `flows`, its
        per-flow rows too, under ``"flows"``), and ``engine``: ``aqmlab`` for
        a simulated run, ``emulation`` for an emulated one."""
        return pd.DataFrame([{"point": r.point, "replication": r.replication, "seed": r.seed, **r.labels,
                              "engine": r.engine, "summary": r.summary}
                             for r in self.store.ok_runs(experiment, flows)])

    def series(self, experiment: str, point: int, replication: int = 0) -> pd.DataFrame | None:
        """The time series of one run, if it traced."""
        key = self.store.run_key(experiment, point, replication)
        return None if key is None else self.store.series(key)

    # Writing the report ----------------------------------------------------------

    def section(self, title: str) -> None:
        self.sections.append(_Section(title))

    def text(self, *paragraphs: str) -> None:
        for p in paragraphs:
            self.sections[-1].items.append({"kind": "text", "text": p})

    def table(self, name: str, df: pd.DataFrame, caption: str, raw: bool = False) -> None:
        """Writes ``<name>.csv`` (every digit) and shows the table (rates in
        Mb/s, four significant digits). A `raw` table (one row per run or
        flow) goes to the page's last section, folded; a long one is folded
        where it stands."""
        path = self.out / f"{name}.csv"
        write_atomic(path, lambda tmp: df.to_csv(tmp, index=False, float_format="%.6g"))
        shown = df.copy()
        for c in shown.columns:
            shown[c] = [_shown(v, c) for v in shown[c]]
        shown.columns = [_header(c) for c in shown.columns]
        item = {"kind": "table", "name": name, "caption": caption, "html": html_table(shown, na_rep="-"),
                "folded": raw or len(df) > FOLD_ROWS, "rows": len(df)}
        (self.raw_section if raw else self.sections[-1]).items.append(item)

    def claims(self, rows: list[dict[str, str]], caption: str) -> None:
        """The paper's claims beside aqmlab's numbers: one row per claim
        with `claim`, `paper`, `aqmlab`, `verdict` (one of :data:`VERDICTS`)
        and `how` (the rule that decided it). Written to ``claims.csv`` and
        shown first on the page."""
        df = pd.DataFrame(rows, columns=["claim", "paper", "aqmlab", "verdict", "how"])
        bad = sorted(set(df["verdict"]) - set(VERDICTS))
        if bad:
            raise AqmlabError(f"claims: verdict {bad[0]!r} is not one of {', '.join(VERDICTS)}")
        write_atomic(self.out / "claims.csv", lambda tmp: df.to_csv(tmp, index=False))
        counts = ", ".join(f"{int((df['verdict'] == v).sum())} {v}" for v in VERDICTS if (df["verdict"] == v).any())
        self.claims_section = _Section(self.study.claims_title)
        self.claims_section.items += [
            {"kind": "text", "text": f"{len(df)} claims at this scale: {counts}."},
            {"kind": "claims", "name": "claims", "caption": caption, "rows": df.to_dict("records")}]

    def figure(self, name: str, fig: Any, caption: str) -> None:
        """Saves ``<name>.png`` and ``<name>.svg`` and shows the figure."""
        png = save_figure(fig, self.out, name)
        self.sections[-1].items.append({"kind": "figure", "name": name, "caption": caption, "png": png})

    def write_page(self, failed: int = 0) -> Path:
        """Writes ``report.html`` into the output folder from what
        ``analyse`` added (the claims first, the raw tables last) and the
        experiment files; `failed` runs are counted on the page. Returns the
        page's path."""
        sections = [s for s in self.sections[:1] if s.items]
        sections += [s for s in (self.claims_section,) if s is not None]
        sections += [s for s in self.sections[1:] + [self.raw_section] if s.items]
        page = page_environment().get_template("study.html.j2").render(
            study=self.study, scale=self.scale, scale_text=SCALE_TEXT[self.scale], engine=_engine.ENGINE_VERSION,
            sections=sections, failed=failed,
            experiments=[{"name": n, "runs": len(e.runs()), "replications": e.replications, "text": e.text or ""}
                         for n, e in self.experiments.items()])
        path = self.out / "report.html"
        write_atomic(path, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
        return path


class Claims(list):
    """The rows of a study's claims table, for :meth:`StudyReport.claims`."""

    def add(self, claim: str, paper: str, aqmlab: str, verdict: str, how: str) -> None:
        self.append({"claim": claim, "paper": paper, "aqmlab": aqmlab, "verdict": verdict, "how": how})


def effect_verdict(m: dict[str, float], lo: float, hi: float) -> str:
    """Verdict on an effect (a difference) the paper puts in [lo, hi], all
    on one side of 0, from aqmlab's mean and 95% interval `m` (as
    :func:`mean_ci` gives): reproduced when the interval lies within it,
    same direction when it lies on that side of 0 but not within, not
    reproduced when it lies on the other side, inconclusive when it holds 0."""
    if lo <= m["ci95_low"] and m["ci95_high"] <= hi:
        return "reproduced"
    positive = lo >= 0
    if (m["ci95_low"] > 0) if positive else (m["ci95_high"] < 0):
        return "same direction, different size"
    if (m["ci95_high"] < 0) if positive else (m["ci95_low"] > 0):
        return "not reproduced"
    return "inconclusive"


def range_verdict(m: dict[str, float], lo: float, hi: float) -> str:
    """Verdict on a level the paper puts in [lo, hi]: reproduced when
    aqmlab's 95% interval lies within it, not reproduced when it lies wholly
    outside, inconclusive otherwise."""
    if lo <= m["ci95_low"] and m["ci95_high"] <= hi:
        return "reproduced"
    return "not reproduced" if m["ci95_high"] < lo or m["ci95_low"] > hi else "inconclusive"


def within_bounds(m: dict[str, float], lo: float = -math.inf, hi: float = math.inf) -> dict[str, float]:
    """`m` with its interval cut to the values the metric can take (Jain's
    index is at most 1, a delay at least 0): the t-interval's part beyond
    them is not evidence either way, and must not make a verdict
    inconclusive."""
    return {**m, "ci95_low": max(m["ci95_low"], lo), "ci95_high": min(m["ci95_high"], hi)}


def combine_verdicts(verdicts: list[str]) -> str:
    """One verdict for a claim made of several: the weakest of them."""
    for v in ("not reproduced", "inconclusive", "same direction, different size", "not run at this scale"):
        if v in verdicts:
            return v
    return "reproduced"


def show_ci(m: dict[str, float], scale: float = 1.0, unit: str = "", signed: bool = False) -> str:
    """``mean [low, high]`` of :func:`mean_ci`'s result, times `scale`."""
    f = "+.3g" if signed else ".3g"
    return f"{m['mean'] * scale:{f}}{unit} [{m['ci95_low'] * scale:{f}}, {m['ci95_high'] * scale:{f}}]"


def mean_ci(values: Any, level: float = 0.95) -> dict[str, float]:
    """Mean, CI bounds and n of replication values, with the column names the
    study CSVs use (``ci95_low``/``ci95_high`` at the 95% level)."""
    s = summarize(values, level)
    tag = f"ci{round(100 * level)}"
    return {"mean": s.mean, f"{tag}_low": s.low, f"{tag}_high": s.high, "n": s.n}


def ci_columns(values: Any, name: str, prefix: bool = True) -> dict[str, float]:
    """``name``: the mean of replication values (None and NaN left out),
    with its 95% interval as ``<name>_ci95_low``/``_high``, or as plain
    ``ci95_low``/``ci95_high`` with ``prefix=False`` (a table of one metric)."""
    m = mean_ci(values)
    p = f"{name}_" if prefix else ""
    return {name: m["mean"], f"{p}ci95_low": m["ci95_low"], f"{p}ci95_high": m["ci95_high"]}


def summary_table(runs: pd.DataFrame, by: list[str], metrics: dict[str, Callable[[dict[str, Any]], float | None]],
                  rename: dict[str, dict[str, str]] | None = None) -> pd.DataFrame:
    """One row per group of `by` columns: for each metric (CSV name ->
    function of a run's summary) its mean over replications and, when there
    are several metrics, ``<metric>_ci95_low``/``_high``; with one metric,
    plain ``ci95_low``/``ci95_high``. `rename` maps a `by` column's labels to
    the names the paper uses."""
    rows = []
    for keys, group in runs.groupby(by, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        row: dict[str, Any] = {}
        for col, k in zip(by, keys):
            row[col] = (rename or {}).get(col, {}).get(k, k)
        for name, fn in metrics.items():
            row |= ci_columns([fn(s) for s in group["summary"]], name, prefix=len(metrics) > 1)
        row["n"] = len(group)
        rows.append(row)
    return pd.DataFrame(rows)


def errorbar_plot(ax: Any, df: pd.DataFrame, x: str, y: str, by: str, *, low: str = "ci95_low",
                  high: str = "ci95_high", fmt: str = "o-") -> None:
    """One line per value of `by`: `y` against `x` with its CI as error bars."""
    for name, g in df.groupby(by, sort=False):
        yerr = [g[y] - g[low], g[high] - g[y]]
        ax.errorbar(g[x], g[y], yerr=[[0 if math.isnan(v) else v for v in e] for e in yerr], fmt=fmt,
                    capsize=3, markersize=4, label=str(name))


def reproduce(name: str, scale: str = "quick", out: str | Path | None = None, *, executor: str = "local",
              jobs: int | None = None, scheduler: str | None = None, rerun: bool = False,
              progress: bool = False, log: Callable[[str], None] = lambda s: None, mode: str = "simulate") -> Path:
    """Runs study `name` at `scale` into `out` (default ``<name>-<scale>``,
    ``<name>-<scale>-emulate`` in emulate mode) and writes its report;
    returns the page's path. Runs already in the folder's store are not run
    again. With ``mode="emulate"`` only the paper's testbed half runs, each
    experiment simulated (on `executor`) and emulated (one run after
    another, in real time; needs root)."""
    if name not in STUDIES:
        raise AqmlabError(f"study: {name!r} is not known; allowed: {', '.join(STUDIES)}")
    if scale not in SCALES:
        raise AqmlabError(f"--scale: {scale!r} is not known; allowed: {', '.join(SCALES)}")
    if mode not in MODES:
        raise AqmlabError(f"--mode: {mode!r} is not known; allowed: {', '.join(MODES)}")
    study = STUDIES[name]
    emulate = mode == "emulate"
    if emulate and not study.emulated_experiments(scale):
        testbeds = [s.name for s in STUDIES.values() if s.emulated_experiments(scale)]
        raise AqmlabError(f"--mode emulate: study {name!r} has no testbed half to emulate; studies that have one: "
                          f"{', '.join(testbeds)}")
    if emulate:
        from aqmlab.emulation import unavailable

        why = unavailable()
        if why is not None:
            raise AqmlabError(f"--mode emulate: emulation is impossible on this machine: {why}")
    out = Path(out) if out is not None else Path(f"{name}-{scale}" + ("-emulate" if emulate else ""))
    if out.exists() and not out.is_dir():
        raise AqmlabError(f"--out: {out} exists and is not a folder")
    exps: dict[str, Experiment] = {}

    def add(batch: dict[str, str]) -> dict[str, Experiment]:
        # Every experiment of a batch is checked before any is written or run.
        new = {n: Experiment.from_toml(t, source=f"experiments/{n}.toml") for n, t in batch.items() if n not in exps}
        (out / "experiments").mkdir(parents=True, exist_ok=True)
        for n in new:
            write_atomic(out / "experiments" / f"{n}.toml",
                         lambda tmp, t=batch[n]: Path(tmp).write_text(t, encoding="utf-8"))
        exps.update(new)
        return new

    failed = 0
    batch = add(study.emulated_experiments(scale) if emulate else study.experiments(scale))
    with Store(out / "results.duckdb") as st:
        while batch:
            for n, exp in batch.items():
                engines = [False] + ([True] if emulate and not study.simulated_only(n) else [])
                log(f"{name}: experiment {n} ({len(exp.runs())} runs" +
                    (", simulated, then emulated in real time)" if len(engines) == 2 else ")"))
                for emulated in engines:
                    counts = execute(exp, st, executor="local" if emulated else executor,
                                     jobs=None if emulated else jobs, rerun=rerun,
                                     scheduler=None if emulated else scheduler, progress=progress,
                                     emulate=emulated)
                    failed += counts["failed"]
            results = StudyReport(study, scale, out, st, exps)
            batch = add(study.emulated_experiments(scale, results) if emulate
                        else study.more_experiments(scale, results))
    with Store(out / "results.duckdb", read_only=True) as st:
        report = StudyReport(study, scale, out, st, exps)
        if emulate:
            study.analyse_emulation(report)
        else:
            study.analyse(report)
        return report.write_page(failed)
