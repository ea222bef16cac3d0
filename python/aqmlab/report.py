"""Reports: plots and one self-contained HTML page from a results store.

For every experiment in the store:

- each metric against the swept parameter (the first axis whose labels are
  all numbers, else the first axis), one line per combination of the other
  axes' labels, with 95% confidence intervals as error bars;
- the consecutive-loss distribution of the bottleneck per sweep point
  (pooled over replications);
- where some runs were emulated (``aqmlab sweep --emulate``), each engine's
  runs apart: a line of their own in every plot (dashed for emulation;
  with nothing else swept, the engines side by side on the x axis), their
  own rows in the table, loss runs labelled with the engine;
- for replication 0 of each point that traced its queues: queue length and
  average queue, and the drop/mark probability, against time.

Plots go to the output folder as PNG and SVG; ``report.html`` embeds the
PNGs (so the page is one file) with the tables, the experiment file and the
engine version.

Every page aqmlab writes (this report, the study reports, the scorecard)
comes from :func:`page_environment`: names, labels and file text come from
experiment files that may be someone else's, so the templates escape
everything they are given, and the pages forbid scripts and outside
resources (:data:`PAGE_CSP`).
"""

from __future__ import annotations

import base64
import json
import math
import re
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
# Text stays text in the SVGs, so labels can be edited and searched.
matplotlib.rcParams["svg.fonttype"] = "none"
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from jinja2 import Environment, PackageLoader  # noqa: E402
from markupsafe import Markup  # noqa: E402

from aqmlab import _engine  # noqa: E402
from aqmlab.experiment import EMULATION  # noqa: E402
from aqmlab.files import write_atomic  # noqa: E402
from aqmlab.store import Store  # noqa: E402
from aqmlab.sweep import table  # noqa: E402

DEFAULT_METRICS = ["queues.bottleneck.loss_rate", "queues.bottleneck.qdelay_mean_s",
                   "queues.bottleneck.qlen_mean_pkts", "queues.bottleneck.utilization"]
# Trace columns that are a drop or mark probability, in order of preference.
_PROB_COLUMNS = ("p_a", "p_b", "drop_prob", "p_m")
_MAX_SERIES_PLOTS = 24

#: The Content-Security-Policy of every page aqmlab writes. A page is one
#: file: it loads nothing (its images are data: URIs), runs no script, and is
#: styled only by its own <style> element and the style attributes pandas puts
#: on table rows (hence 'unsafe-inline' for styles). base-uri and form-action
#: do not fall back to default-src, so they are closed by name.
PAGE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def page_environment() -> Environment:
    """The Jinja2 environment of the HTML pages (``templates/*.html.j2``).
    Autoescaping is on for every template whatever its name (the names end
    in ``.j2``, which extension-based selection would leave unescaped); HTML
    built on purpose in Python reaches a template only as :class:`Markup`
    built from escaped parts. Templates get the policy as ``csp``."""
    env = Environment(loader=PackageLoader("aqmlab", "templates"), autoescape=True)
    env.globals["csp"] = PAGE_CSP
    return env


def html_table(df: pd.DataFrame, **kwargs: Any) -> Markup:
    """`df` as an HTML table for a page, its headers and cells escaped."""
    return Markup(df.to_html(index=False, classes="results", border=0, escape=True, **kwargs))


def metric_label(metric: str) -> str:
    """An axis label with the metric's unit, from its name."""
    name = metric.rsplit(".", 1)[-1]
    units = [("_s", "s"), ("_bps", "b/s"), ("_pkts", "packets"), ("_bytes", "bytes")]
    for suffix, unit in units:
        if name.endswith(suffix):
            return f"{metric} ({unit})"
    if name in ("loss_rate", "utilization") or metric.startswith("fairness."):
        return f"{metric} (fraction)" if name != "jain" else f"{metric} (index, 0-1)"
    return f"{metric} (count)"


def _number(label: str) -> float | None:
    m = re.fullmatch(r"\s*(-?[0-9.]+(?:e-?\d+)?)\s*([A-Za-z]*)\s*", label)
    return float(m.group(1)) if m else None


def _x_axis(df: pd.DataFrame, axes: list[str]) -> str | None:
    """The swept key to put on the x axis: the first whose labels are all
    numbers (with or without a unit) and that takes more than one value."""
    for a in axes:
        labels = df[a].astype(str).unique()
        if len(labels) > 1 and all(_number(x) is not None for x in labels):
            return a
    varying = [a for a in axes if df[a].nunique() > 1]
    return varying[0] if varying else (axes[0] if axes else None)


def save_figure(fig: Any, out: Path, name: str) -> str:
    """Writes ``<name>.png`` and ``<name>.svg`` into `out` (each whole or not
    at all), closes the figure and returns the PNG as base64, for a page
    that embeds it."""
    png, svg = out / f"{name}.png", out / f"{name}.svg"
    write_atomic(png, lambda tmp: fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight"))
    write_atomic(svg, lambda tmp: fig.savefig(tmp, format="svg", bbox_inches="tight"))
    plt.close(fig)
    return base64.b64encode(png.read_bytes()).decode("ascii")


class _Figures:
    """Saves figures as PNG and SVG and keeps the PNGs for the page."""

    def __init__(self, out: Path):
        self.out = out
        self.items: list[dict[str, str]] = []

    def save(self, fig: Any, name: str, title: str) -> None:
        self.items.append({"name": name, "title": title, "png": save_figure(fig, self.out, name)})


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()


def _metric_plots(figs: _Figures, exp: str, df: pd.DataFrame, axes: list[str], metrics: list[str]) -> None:
    x = _x_axis(df, axes)
    engines = "engine" in df.columns  # the table keeps emulated runs apart
    if engines and (x is None or df[x].nunique() == 1):
        x = "engine"  # nothing swept varies: simulation and emulation side by side
    if x is None:
        return
    others = [a for a in axes if a != x and df[a].nunique() > 1]
    if engines and x != "engine":
        others.append("engine")
    numeric = all(_number(str(v)) is not None for v in df[x].unique())
    for metric in metrics:
        d = df[df.metric == metric]
        if d.empty:
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        groups = d.groupby(others, sort=False) if others else [((), d)]
        if others and len(groups) > 10:
            # More lines than the default ten colours: twenty, in pairs.
            ax.set_prop_cycle(color=list(plt.get_cmap("tab20").colors))
        for key, g in groups:
            key = key if isinstance(key, tuple) else (key,)
            xs = [(_number(str(v)) if numeric else str(v)) for v in g[x]]
            half = (g["ci_high"] - g["ci_low"]) / 2
            label = ", ".join(str(k) for k in key) or None
            emulated = "engine" in others and key[others.index("engine")] == EMULATION
            # Engines on the x axis are categories: points, no line between them.
            style = "none" if x == "engine" else "--" if emulated else "-"
            ax.errorbar(xs, g["mean"], yerr=half.fillna(0), marker="o", capsize=3, label=label, linestyle=style)
        ax.set_xlabel(x)
        ax.set_ylabel(metric_label(metric))
        ax.set_title(f"{exp}: {metric.rsplit('.', 1)[-1]} (mean, 95% CI)")
        ax.grid(alpha=0.3)
        if others:
            ax.legend(title=", ".join(others), fontsize="small")
        figs.save(fig, f"{_slug(exp)}-{_slug(metric)}", f"{metric} against {x}")


def _point_names(st: Store, exp: str) -> dict[str, str]:
    """A short name for each sweep point (by its labels as JSON text):
    ``key=label`` for the swept keys that take more than one value."""
    all_labels = st.point_labels(exp)
    varying = [k for k in (all_labels[0] if all_labels else {}) if len({d[k] for d in all_labels}) > 1]
    return {json.dumps(d): ", ".join(f"{k}={d[k]}" for k in varying) or exp for d in all_labels}


def _loss_run_plot(figs: _Figures, st: Store, exp: str, queue: str = "bottleneck", engines: bool = False) -> None:
    """With `engines`, each point's runs are pooled per engine, and the
    engine is in their name."""
    prefix = f"queues.{queue}.consecutive_loss.hist."
    rows = st.pooled_metrics(exp, prefix)
    if not rows:
        return
    names = _point_names(st, exp)
    hist: dict[str, dict[int, float]] = {}
    for labels, engine, metric, count in rows:
        name = names[json.dumps(labels)] + (f" [{engine}]" if engines else "")
        h = hist.setdefault(name, {})
        k = int(metric[len(prefix):])
        h[k] = h.get(k, 0) + count  # without `engines`, a point's engines (if several) pooled
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, h in hist.items():
        total = sum(h.values())
        ks = sorted(h)
        ax.plot(ks, [h[k] / total for k in ks], marker=".", label=name)
    ax.set_yscale("log")
    ax.set_xlabel("consecutive losses (packets)")
    ax.set_ylabel("fraction of loss runs")
    ax.set_title(f"{exp}: loss-run lengths at {queue}, pooled over replications")
    ax.grid(alpha=0.3)
    if len(hist) <= 12:
        ax.legend(fontsize="x-small")
    figs.save(fig, f"{_slug(exp)}-loss-runs", f"consecutive losses at {queue}")


def _series_plots(figs: _Figures, st: Store, exp: str, points: list[int] | None) -> None:
    rows = [(k, labels) for k, labels, p in st.traced_runs(exp) if points is None or p in points]
    rows = rows if points is not None else rows[:_MAX_SERIES_PLOTS]
    names = _point_names(st, exp)
    for key, labels in rows:
        df = st.series(key)
        if df is None or df.empty:
            continue
        queues = sorted({c.split(".")[0] for c in df.columns if c.endswith(".backlog_pkts")})
        name = names[json.dumps(labels)]
        for q in queues:
            prob = next((f"{q}.{c}" for c in _PROB_COLUMNS if f"{q}.{c}" in df.columns), None)
            fig, axs = plt.subplots(2 if prob else 1, 1, figsize=(7.2, 5.2 if prob else 3.2), sharex=True,
                                    squeeze=False)
            ax = axs[0][0]
            ax.plot(df["time_s"], df[f"{q}.backlog_pkts"], lw=0.8, label="queue length")
            if f"{q}.avg" in df.columns:
                ax.plot(df["time_s"], df[f"{q}.avg"], lw=1.2, label="average queue")
            ax.set_ylabel("packets")
            ax.legend(fontsize="small")
            ax.set_title(f"{exp} [{name}]: {q}, replication 0", fontsize="medium")
            ax.grid(alpha=0.3)
            if prob:
                axs[1][0].plot(df["time_s"], df[prob], lw=0.8, color="C3")
                axs[1][0].set_ylabel(f"{prob.split('.')[-1]} (probability)")
                axs[1][0].grid(alpha=0.3)
            axs[-1][0].set_xlabel("time (s)")
            figs.save(fig, f"{_slug(exp)}-series-{key[:12]}-{_slug(q)}", f"{name}: {q} over time")


def _results_table(df: pd.DataFrame) -> Markup:
    shown = df.copy()
    shown["95% CI"] = [("-" if math.isnan(lo) else f"[{lo:.5g}, {hi:.5g}]")
                       for lo, hi in zip(shown.pop("ci_low"), shown.pop("ci_high"))]
    return html_table(shown, float_format=lambda v: f"{v:.5g}")


def write_report(store_path: str | Path, out: str | Path, experiment: str | None = None,
                 metrics: list[str] | None = None, series_points: list[int] | None = None) -> Path:
    """Writes the plots and ``report.html`` into `out` (created if needed)
    and returns the page's path. Time series are drawn for replication 0 of
    the sweep points `series_points` (default: the first 24 that traced)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figs = _Figures(out)
    sections = []
    with Store(store_path, read_only=True) as st:
        for name, text, axes, exp_metrics in st.experiments():
            if experiment is not None and name != experiment:
                continue
            wanted = metrics or exp_metrics or DEFAULT_METRICS
            df = table(st, name, wanted)
            start = len(figs.items)
            if not df.empty:
                _metric_plots(figs, name, df, axes, wanted)
            _loss_run_plot(figs, st, name, engines="engine" in df.columns)
            _series_plots(figs, st, name, series_points)
            counts = st.status_counts(name)
            failed = [(json.dumps(labels), rep, error) for labels, rep, error in st.failed_runs(name)]
            sections.append({"name": name, "text": text or "", "ok": counts.get("ok", 0),
                             "failed": failed, "table": _results_table(df) if not df.empty else "",
                             "figures": figs.items[start:]})
    page = page_environment().get_template("report.html.j2").render(
        store=Path(store_path).name, engine=_engine.ENGINE_VERSION, sections=sections)
    path = out / "report.html"
    write_atomic(path, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    return path
