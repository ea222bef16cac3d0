"""Study B: analytic evaluation of RED against Tail Drop.

T. Bonald, M. May, J.-C. Bolot, "Analytic evaluation of RED performance",
IEEE INFOCOM 2000. The open-loop part (B1-B4) puts one queue under Poisson,
batch-Poisson and bursty-plus-Poisson input and lays the paper's Markov
chains (``aqmlab.models.bonald``) over the simulated points; the
closed-loop part (B5-B8) runs TCP NewReno flows and CBR UDP through a 10 Mb/s
bottleneck, with the UDP packets' delay and jitter, Tail Drop beside RED in
the instantaneous queue of the paper's Fig. 15, and a sensitivity of Table
V's goodput to what the paper leaves open (the b5_* experiments).

The queue convention is the simulator's throughout: an aqmlab queue with a
limit of 40 packets holds 41 in the system, and RED decides on the backlog
behind the packet in transmission, without the arrival. The models are
evaluated with that convention (``K = 41, count_arrival=False,
count_in_service=False``) so that model and simulation describe the same
queue; the experiment templates say why.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from aqmlab import models
from aqmlab.models.plots import model_curve
from aqmlab.result import Summary
from aqmlab.studies.framework import (Claims, Study, StudyReport, ci_columns, combine_verdicts, effect_verdict,
                                     errorbar_plot, mean_ci, range_verdict, register, show_ci)

# Every number that changes with the scale. Open loop: one run per point and
# replication; "trace" samples the backlog for the queue-size histograms.
# Closed loop: flows start in the first 10 s.
SCALES: dict[str, dict[str, Any]] = {
    "smoke": {
        "open": {"duration": "20s", "warmup": "2s", "reps": 2, "trace": "20ms"},
        "loads": [1.0, 2.0], "batches": [1, 3],
        "fractions": [0.1, 0.9], "mix_loads": [1.0, 2.0],
        "closed": {"duration": "20s", "warmup": "5s", "reps": 2, "trace": "100ms"},
        "flows": [10, 100], "b8_flows": [25, 100],
    },
    "quick": {
        "open": {"duration": "200s", "warmup": "10s", "reps": 5, "trace": "10ms"},
        "loads": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0], "batches": [1, 3, 5, 10],
        "fractions": [0.1, 0.3, 0.5, 0.7, 0.9], "mix_loads": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
        "closed": {"duration": "200s", "warmup": "50s", "reps": 5, "trace": "20ms"},
        "flows": [10, 25, 50, 75, 100, 150], "b8_flows": [25, 50, 75, 100],
    },
    "full": {
        "open": {"duration": "1000s", "warmup": "50s", "reps": 10, "trace": "10ms"},
        "loads": [0.5 + 0.25 * i for i in range(11)], "batches": [1, 3, 5, 10],
        "fractions": [0.1 * i for i in range(1, 10)], "mix_loads": [0.5 + 0.25 * i for i in range(11)],
        "closed": {"duration": "500s", "warmup": "100s", "reps": 10, "trace": "20ms"},
        "flows": [10 * i for i in range(1, 16)], "b8_flows": [25, 50, 75, 100],
    },
}

# The open-loop queue (see _open_scenario.j2 for the mapping of the paper's
# K = 40): limit 40 packets behind the one in service, 41 in the system.
LIMIT = 40
K = LIMIT + 1
CONV = {"count_arrival": False, "count_in_service": False}
RATE_BPS = 10e6
MEAN_PKT_BITS = 8000.0
MU = RATE_BPS / MEAN_PKT_BITS  # packets/s
EX1 = models.Red(20, 40, 1.0)
EX2 = models.Red(10, 30, 0.1)
EX2_WQ = 0.002
B3_WQ = [0.1, 0.01, 0.001]
MIX_B = 3
MIX_LOAD = 2.0
PARETO_SHAPE = 1.4
B34_LOAD = 2.0
# Closed loop.
ACCESS_DELAYS_MS = [10, 20, 30, 40, 50, 60]
B5_FLOWS = 100
TCP_PAYLOAD_BYTES, TCP_HEADER_BYTES = 1000, 40  # as _closed_scenario.j2 chooses
UDP_RATE_BPS = 1e6
B5_FLOWS_FOR_RTT = B5_FLOWS  # "spread": one sender host, so one round trip, per flow
B6_BUFFERS = [40, 150]
B6_WINDOW_S = 30.0  # the time series plot shows this much, so single oscillations stay visible
B8_RED = {"limit": 200, "min_th": 50, "max_th": 150}
# Table V's sensitivity (b5s.toml.j2 says why each change): one change each
# from the study's default, keyed by the label the report shows.
B5_BUFFERS = [20, 80]
B5_RTT_MS = {"spread": [10 + 50 * i / (B5_FLOWS_FOR_RTT - 1) for i in range(B5_FLOWS_FOR_RTT)],
             "all 120": [10.0], "all 220": [60.0]}
B5_TCP = {"SACK": {"variant": "sack"}, "RTO min 1 s": {"variant": "newreno", "rto": "rfc6298"},
          "delayed ACKs": {"variant": "newreno", "delayed_ack": True}}
B5_SIZES = ["500B", "1500B"]


def _red(limit: float, red: models.Red, w_q: float, instantaneous: bool) -> dict[str, Any]:
    """A RED table with the study's rule: d(avg) on every arrival, no gentle
    region, no count spacing, no exemption of the first arrival."""
    return {"kind": "red", "limit": f"{limit:g}pkt", "min_th": f"{red.min_th:g}pkt", "max_th": f"{red.max_th:g}pkt",
            "max_p": red.max_p, "w_q": w_q, "avg_of": "instantaneous" if instantaneous else "average",
            "gentle": False, "drop_spacing": "none", "exempt_first": False}


def _td(limit: int) -> dict[str, Any]:
    return {"kind": "droptail", "limit": f"{limit}pkt"}


TD = {"label": "TD", "qdisc": _td(LIMIT)}
RED_EX1 = {"label": "RED ex1", "qdisc": _red(LIMIT, EX1, 1, True)}
RED_EX2 = {"label": "RED ex2", "qdisc": _red(LIMIT, EX2, EX2_WQ, False)}


def _wq_label(w_q: float) -> str:
    return f"RED ex2 w_q={w_q:g}"


def _load_label(rho: float) -> str:
    return f"{rho:.4g}"


def _rate(rho: float) -> str:
    return f"{rho * RATE_BPS / 1e6:.6g}Mbps"


def _mix_pairs(sc: dict[str, Any]) -> list[tuple[float, float]]:
    """(bursty load, smooth load) of every B2 point: the fractions at load 2,
    then the loads at 10% and 90% bursty, without repeats."""
    pairs: list[tuple[float, float]] = []
    wanted = [(f, MIX_LOAD) for f in sc["fractions"]] + [(f, r) for f in (0.1, 0.9) for r in sc["mix_loads"]]
    for f, r in wanted:
        pair = (round(f * r, 9), round((1 - f) * r, 9))
        if pair not in pairs:
            pairs.append(pair)
    return pairs


@register
class Bonald(Study):
    name = "bonald"
    title = "Study B: analytic evaluation of RED vs Tail Drop, open and closed loop"
    source = ("T. Bonald, M. May, J.-C. Bolot, \"Analytic evaluation of RED performance\", IEEE INFOCOM 2000. "
              "Markov chains of Tail Drop and RED (aqmlab.models.bonald) overlaid on simulations.")
    runtime = {"smoke": "30 s", "quick": "3 min", "full": "~5 min"}

    # Experiments ---------------------------------------------------------------

    def experiments(self, scale: str) -> dict[str, str]:
        sc = SCALES[scale]
        ctx = {"open": sc["open"], "closed": sc["closed"], "ex2_wq": EX2_WQ}
        out: dict[str, str] = {}
        loads = [{"label": _load_label(r), "rate": _rate(r)} for r in sc["loads"]]
        out["b1"] = self.render("b1.toml.j2", name="b1", trace=False, schemes=[TD, RED_EX1],
                                qdisc_path="topology.links[0].qdisc", batches=sc["batches"], loads=loads, **ctx)
        pairs = _mix_pairs(sc)
        for pareto in (False, True):
            rows = []
            for rho_b, rho_s in pairs:
                bursty: Any = ({"dist": "pareto", "shape": PARETO_SHAPE,
                                "mean": f"{MIX_B * MEAN_PKT_BITS / (rho_b * RATE_BPS) * 1e9:.0f}ns"}
                               if pareto else _rate(rho_b))
                rows.append({"rho_b": _load_label(rho_b), "rho_s": _load_label(rho_s), "bursty": bursty,
                             "smooth": _rate(rho_s)})
            for key in ("rho_b", "rho_s"):
                labels = [r[key] for r in rows]
                if len(set(labels)) != len(labels):
                    raise AssertionError(f"B2: two points share the {key} label; choose other loads")
            name = "b2_pareto" if pareto else "b2_poisson"
            out[name] = self.render("b2.toml.j2", name=name, trace=False,
                                    schemes=[TD, RED_EX2], qdisc_path="topology.links[0].qdisc", pairs=rows,
                                    pareto=pareto, pareto_shape=PARETO_SHAPE,
                                    bursty_path="traffic[0].gap" if pareto else "traffic[0].rate", **ctx)
        b34 = [TD, RED_EX1, RED_EX2] + [{"label": _wq_label(w), "qdisc": _red(LIMIT, EX2, w, False)} for w in B3_WQ]
        out["b34"] = self.render("b34.toml.j2", name="b34", trace=True, schemes=b34,
                                 qdisc_path="topology.links[0].qdisc", load=B34_LOAD, rate=_rate(B34_LOAD), **ctx)
        closed = {"access_delays": ACCESS_DELAYS_MS, **ctx}
        out["b57"] = self.render(
            "closed.toml.j2", name="b57", trace=False, flows=sc["flows"],
            what="B5 and B7: UDP loss rate, TCP loss rate and TCP goodput against the number of TCP flows, buffer 40.",
            schemes=_closed_schemes(40), **closed)
        out["b6"] = self.render(
            "closed.toml.j2", name="b6", trace=True, flows=[B5_FLOWS],
            what=f"B6: queueing delay over time with {B5_FLOWS} TCP flows, buffers of 40 and 150 packets.",
            schemes=[s for b in B6_BUFFERS for s in _closed_schemes(b, with_buffer=True)], **closed)
        out["b8"] = self.render(
            "closed.toml.j2", name="b8", trace=True, flows=sc["b8_flows"],
            what="B8: the instantaneous queue over time against the number of TCP flows, buffer 200, Tail Drop and "
                 "RED (the paper's Fig. 15 contrast).",
            schemes=[{"label": "TD", "qdisc": _td(B8_RED["limit"])},
                     {"label": "RED", "qdisc": _red(B8_RED["limit"], models.Red(B8_RED["min_th"], B8_RED["max_th"],
                                                                               0.1), EX2_WQ, False)}], **closed)
        sens = {"flows": [B5_FLOWS], "trace": False, "schemes": _closed_schemes(40), **closed}
        out["b5_buffer"] = self.render(
            "b5s.toml.j2", name="b5_buffer", axis="buffer",
            **{**sens, "schemes": [s for b in B5_BUFFERS for s in _closed_schemes(b, with_buffer=True)]})
        out["b5_rtt"] = self.render(
            "b5s.toml.j2", name="b5_rtt", axis="rtt",
            rtt=[{"label": k, "senders": [{"delay": f"{round(d * 1000)}us"} for d in v]} for k, v in B5_RTT_MS.items()],
            **sens)
        out["b5_tcp"] = self.render("b5s.toml.j2", name="b5_tcp", axis="tcp",
                                    tcp=[{"label": k, "tcp": v} for k, v in B5_TCP.items()], **sens)
        out["b5_pkt"] = self.render("b5s.toml.j2", name="b5_pkt", axis="packet size", sizes=B5_SIZES, **sens)
        return out

    # Analysis ------------------------------------------------------------------

    def analyse(self, report: StudyReport) -> None:
        report.text(
            f"Open loop: one 10 Mb/s queue with exponential packet sizes (mean 1000 B, mu = {MU:g} packets/s), "
            f"limit {LIMIT} packets behind the one in transmission ({K} in the system). Models: Bonald et al.'s "
            f"chains with K = {K}, RED's d evaluated at the backlog behind the packet in service without the "
            "arrival (the simulator's decision). RED Example 1: min_th 20, max_th 40, max_p 1, instantaneous queue; "
            f"Example 2: min_th 10, max_th 30, max_p 0.1, w_q {EX2_WQ}. RED drops with d(avg), no gentle region, "
            "no count spacing.")
        _b1(report)
        _b2(report)
        _b3(report)
        _b4(report)
        _b57(report)
        _b5_sensitivity(report)
        _b6(report)
        _b8(report)
        _claims(report)


def _closed_schemes(buffer: int, with_buffer: bool = False) -> list[dict[str, Any]]:
    red = models.Red(buffer / 4, 3 * buffer / 4, 0.1)
    tag = f" {buffer}" if with_buffer else ""
    return [{"label": f"TD{tag}", "qdisc": _td(buffer)},
            {"label": f"RED{tag}", "qdisc": _red(buffer, red, EX2_WQ, False)}]


# Helpers ---------------------------------------------------------------------


def _reps_text(report: StudyReport, experiment: str) -> str:
    exp = report.experiments[experiment]
    return f"{exp.replications} replications per point, 95% confidence intervals"


def _inside(row: pd.Series, value: float, low: str = "ci95_low", high: str = "ci95_high") -> bool:
    return bool(row[low] <= value <= row[high])


def _points(ax: Any, df: pd.DataFrame, x: str, y: str, label: str, color: str, low: str = "ci95_low",
            high: str = "ci95_high", marker: str = "o") -> None:
    """Simulated means with their 95% CI as error bars, in one colour (the
    model drawn for the same scheme uses it too)."""
    df = df.sort_values(x)
    yerr = [(df[y] - df[low]).fillna(0).clip(lower=0), (df[high] - df[y]).fillna(0).clip(lower=0)]
    ax.errorbar(df[x], df[y], yerr=yerr, fmt=marker, color=color, capsize=3, markersize=4, label=label)


# One colour per scheme and stream, shared by the simulated points and the model.
COLORS = {("TD", "bursty"): "C0", ("TD", "smooth"): "C2", ("RED ex2", "bursty"): "C1", ("RED ex2", "smooth"): "C3",
          ("TD", ""): "C0", ("RED ex1", ""): "C1"}


def _fmt(x: float) -> str:
    return "nan" if x is None or not math.isfinite(x) else f"{x:.4g}"


# B1 --------------------------------------------------------------------------


def sequential_batch_drop(rho: float, B: int, red: models.Red | None) -> float:
    """Drop probability of batch-Poisson input when each packet of a batch
    decides on the queue it finds, the packets of its batch accepted before
    it included (what a simulator does with packets that arrive at the same
    instant), instead of Approximation 1's queue at the batch's first packet.
    Same queue and conventions as the study's chains (K, CONV). Written here
    as a check of Approximation 1; ``aqmlab.models`` does not offer it."""
    d = models.bonald.drop_vector(K, red, **CONV)
    rates = np.zeros((K + 1, K + 1))
    rates[np.arange(1, K + 1), np.arange(K)] = 1.0  # services, mu = 1
    dropped = np.zeros(K + 1)
    for k in range(K + 1):
        state = np.zeros(K + 1)  # where the batch has left the queue so far
        state[k] = 1.0
        for _ in range(B):
            moved = state * (1 - d)
            state = state * d + np.concatenate([[0.0], moved[:-1]])
        ends = np.arange(K + 1)
        dropped[k] = state @ (B - (ends - k))
        rates[k, k + 1:] += (rho / B) * state[k + 1:]
    pi = models.bonald.stationary(rates)
    return float(pi @ dropped / B)


def _b1(report: StudyReport) -> None:
    runs = report.runs("b1")
    report.section("B1: drop probability of batch-Poisson input against load")
    if runs.empty:
        report.text("No B1 runs finished.")
        return
    qcol, bcol, lcol = "topology.links[0].qdisc", "traffic[0].batch", "traffic[0].rate"
    rows = []
    for (scheme, batch, load), g in runs.groupby([qcol, bcol, lcol], sort=False):
        B, rho = int(batch), float(load)
        red = EX1 if scheme == "RED ex1" else None
        rows.append({"scheme": scheme, "B": B, "load": rho,
                     **ci_columns([Summary(s).queue("q").loss_rate for s in g["summary"]], "loss_rate", prefix=False),
                     "n": len(g), "model": float(models.drop_probability(rho, K, B, red, **CONV)),
                     "model_sequential": sequential_batch_drop(rho, B, red)})
    df = pd.DataFrame(rows)
    report.table("b1_drop_probability", df,
                 f"B1: packet drop probability (loss_rate) against offered load per batch size B; model = the "
                 f"batch-Poisson chain (Bonald et al., Approximation 1 for RED), K = {K}; model_sequential = the "
                 "same chain with each packet of a batch deciding on the queue it finds (equal to model for TD and "
                 "for B = 1). " + _reps_text(report, "b1") + ".")
    batches = sorted(df["B"].unique())
    fig, axes = plt.subplots(2, len(batches), figsize=(4 * len(batches), 7), sharex=True, squeeze=False)
    grid = np.linspace(min(df["load"]), max(df["load"]), 41)
    for col, B in enumerate(batches):
        for row, log in enumerate((False, True)):
            ax = axes[row][col]
            for scheme, red in (("TD", None), ("RED ex1", EX1)):
                color = COLORS[(scheme, "")]
                pts = df[(df["B"] == B) & (df["scheme"] == scheme)]
                _points(ax, pts[pts["loss_rate"] > 0] if log else pts, "load", "loss_rate", f"{scheme} simulation",
                        color)
                model_curve(ax, grid, models.drop_probability(grid, K, int(B), red, **CONV), f"{scheme} chain",
                            color=color)
                if red is not None and B > 1:
                    model_curve(ax, grid, [sequential_batch_drop(r, int(B), red) for r in grid],
                                f"{scheme} chain, packets in sequence", color=color, linestyle=":")
            if log:
                ax.set_yscale("log")
                ax.set_ylim(1e-5, 1)
                ax.set_xlabel("offered load rho")
            else:
                ax.set_title(f"B = {B}")
            ax.grid(alpha=0.3)
        if col:
            axes[0][col].sharey(axes[0][0])
    axes[0][0].set_ylabel("drop probability")
    axes[1][0].set_ylabel("drop probability (log)")
    axes[0][-1].legend(fontsize=7)
    report.figure("b1_drop_probability", fig,
                  "B1: drop probability against load, simulation (points, 95% CI) and chain (dashed; dotted: RED "
                  "with each packet of a batch deciding on the queue it finds), per batch size; linear and log "
                  "scale.")
    # What the numbers say.
    inside = df.apply(lambda r: _inside(r, r["model"]) if r["n"] > 1 and r["ci95_high"] > r["ci95_low"] else
                      math.isclose(r["loss_rate"], r["model"], abs_tol=1e-4), axis=1)
    parts = []
    for scheme in ("TD", "RED ex1"):
        for B in batches:
            s = df[(df.scheme == scheme) & (df.B == B)]
            err = (s["loss_rate"] - s["model"]).abs().max()
            parts.append(f"{scheme} B = {B}: largest |simulation - model| {_fmt(err)}, model inside the CI at "
                         f"{int(inside[s.index].sum())} of {len(s)} loads")
    text = ["; ".join(parts) + "."]
    piv = df.pivot_table(index=["B", "load"], columns="scheme", values=["loss_rate", "ci95_low", "ci95_high"])
    if {"TD", "RED ex1"} <= set(piv["loss_rate"].columns):
        above = [f"B = {B} load {rho:g}" for (B, rho) in piv.index
                 if piv.loc[(B, rho), ("ci95_low", "RED ex1")] > piv.loc[(B, rho), ("ci95_high", "TD")]]
        below = [f"B = {B} load {rho:g}" for (B, rho) in piv.index
                 if piv.loc[(B, rho), ("ci95_high", "RED ex1")] < piv.loc[(B, rho), ("ci95_low", "TD")]]
        text.append(f"RED ex1 drops more than TD, with the intervals apart, at {len(above)} of {len(piv)} points"
                    + (f" ({', '.join(above)})" if above else "") + f", and less at {len(below)}"
                    + (f" ({', '.join(below)})" if below else "") + ".")
        lo = min(df["load"])
        low = piv["loss_rate"].xs(lo, level="load")
        text.append(f"At load {lo:g} the simulated drop probability against B is TD "
                    + ", ".join(f"{_fmt(low.loc[B, 'TD'])} (B = {B})" for B in low.index) + " and RED ex1 "
                    + ", ".join(f"{_fmt(low.loc[B, 'RED ex1'])}" for B in low.index) + ".")
    red = df[(df["scheme"] == "RED ex1") & (df["B"] > 1)]
    if len(red):
        ok = red.apply(lambda r: _inside(r, r["model_sequential"]), axis=1)
        gap = (red["model_sequential"] - red["model"]) / red["model"]
        text.append("For B > 1 RED's chain is the paper's Approximation 1 (every packet of a batch sees the queue its "
                    "first packet found); in the simulator each packet of a batch sees the packets accepted before "
                    f"it. The chain that lets it (model_sequential) is inside the CI at {int(ok.sum())} of {len(red)}"
                    f" RED points with B > 1; Approximation 1 lies up to {_fmt(100 * gap.max())}% below it.")
    report.text(*text)


# B2 --------------------------------------------------------------------------


def _b2_frame(report: StudyReport, experiment: str, pareto: bool) -> pd.DataFrame:
    runs = report.runs(experiment)
    if runs.empty:
        return pd.DataFrame()
    qcol = "topology.links[0].qdisc"
    bcol = "traffic[0].gap" if pareto else "traffic[0].rate"
    rows = []
    for (scheme, lb, ls), g in runs.groupby([qcol, bcol, "traffic[1].rate"], sort=False):
        rho_b, rho_s = float(lb), float(ls)
        rho, frac = rho_b + rho_s, rho_b / (rho_b + rho_s)
        red = EX2 if scheme == "RED ex2" else None
        if pareto:
            mb = ms = math.nan
        else:
            mb, ms = models.mix_drop_probability(rho, frac, K, MIX_B, red, **CONV)
        for stream, model in (("bursty", mb), ("smooth", ms)):
            vals = [Summary(s).group(stream).loss_rate for s in g["summary"]]
            rows.append({"bursts": "Pareto" if pareto else "Poisson", "scheme": scheme, "stream": stream,
                         "load": round(rho, 6), "bursty_fraction": round(frac, 6),
                         **ci_columns(vals, "loss_rate", prefix=False), "n": len(g), "model": float(model)})
    return pd.DataFrame(rows)


def _b2_panel(ax: Any, sub: pd.DataFrame, x: str, grid: np.ndarray, chain: Any) -> None:
    """Each scheme's and stream's simulated drop probability against `x`,
    with the chain's (`chain(red)` -> (bursty, smooth) over `grid`) if given."""
    for scheme, red in (("TD", None), ("RED ex2", EX2)):
        curves = dict(zip(("bursty", "smooth"), chain(red))) if chain is not None else {}
        for stream in ("bursty", "smooth"):
            color = COLORS[(scheme, stream)]
            _points(ax, sub[(sub["scheme"] == scheme) & (sub["stream"] == stream)], x, "loss_rate",
                    f"{scheme} {stream}", color, marker="o" if stream == "bursty" else "s")
            if stream in curves:
                model_curve(ax, grid, curves[stream], f"{scheme} {stream} chain", color=color)


def _b2(report: StudyReport) -> None:
    report.section("B2: a bursty stream (batches of 3) and a Poisson stream")
    df = pd.concat([_b2_frame(report, "b2_poisson", False), _b2_frame(report, "b2_pareto", True)],
                   ignore_index=True)
    if df.empty:
        report.text("No B2 runs finished.")
        return
    report.table("b2_drop_probability", df,
                 "B2: drop probability (loss_rate) of each stream; bursts at Poisson or Pareto (shape 1.4) times; "
                 f"model = the two-stream chain (Bonald et al., instantaneous queue for RED ex2, K = {K}), Poisson "
                 "bursts only. " + _reps_text(report, "b2_poisson") + ".")
    at2 = df[np.isclose(df["load"], MIX_LOAD)]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    grid = np.linspace(0.0, 1.0, 41)
    for ax, bursts in zip(axes, ("Poisson", "Pareto")):
        _b2_panel(ax, at2[at2["bursts"] == bursts], "bursty_fraction", grid,
                  (lambda red: models.mix_drop_probability(MIX_LOAD, grid, K, MIX_B, red, **CONV))
                  if bursts == "Poisson" else None)
        ax.set_title(f"load {MIX_LOAD:g}, bursts at {bursts} times")
        ax.set_xlabel("bursty fraction rho_b / rho")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("drop probability")
    report.figure("b2_fraction", fig, "B2: each stream's drop probability against the bursty fraction at load 2 "
                                      "(points: simulation, 95% CI; dashed: chain, RED on the instantaneous queue).")
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.2), sharey=True, sharex=True)
    lgrid = np.linspace(min(df["load"]), max(df["load"]), 40)
    for i, bursts in enumerate(("Poisson", "Pareto")):
        for j, frac in enumerate((0.1, 0.9)):
            ax = axes[i][j]
            _b2_panel(ax, df[(df["bursts"] == bursts) & np.isclose(df["bursty_fraction"], frac)], "load", lgrid,
                      (lambda red, frac=frac: models.mix_drop_probability(lgrid, frac, K, MIX_B, red, **CONV))
                      if bursts == "Poisson" else None)
            ax.set_title(f"{frac:.0%} bursty, bursts at {bursts} times")
            ax.grid(alpha=0.3)
            if i == 1:
                ax.set_xlabel("offered load rho")
            if j == 0:
                ax.set_ylabel("drop probability")
    axes[0][0].legend(fontsize=7)
    report.figure("b2_load", fig, "B2: each stream's drop probability against the load, 10% and 90% bursty, bursts "
                                  "at Poisson times (with the chain, dashed) and at Pareto times (simulation only).")
    text = []
    for bursts in ("Poisson", "Pareto"):
        sub = at2[at2["bursts"] == bursts]
        ratios = {}
        for scheme in ("TD", "RED ex2"):
            s = sub[sub["scheme"] == scheme].pivot(index="bursty_fraction", columns="stream", values="loss_rate")
            if {"bursty", "smooth"} <= set(s.columns):
                ratios[scheme] = (s["bursty"] / s["smooth"]).replace([np.inf], np.nan)
        if ratios:
            text.append(f"Bursts at {bursts} times, load {MIX_LOAD:g}: the bursty stream's drop probability divided "
                        "by the smooth stream's is " + "; ".join(
                            f"{k} {_fmt(v.min())} to {_fmt(v.max())}" for k, v in ratios.items())
                        + " over the bursty fractions simulated.")
    pois = df[df["bursts"] == "Poisson"]
    err = (pois["loss_rate"] - pois["model"]).abs()
    for scheme in ("TD", "RED ex2"):
        s = pois[pois["scheme"] == scheme]
        if len(s):
            text.append(f"{scheme}, Poisson bursts: largest |simulation - chain| {_fmt(err[s.index].max())} in drop "
                        "probability" + (" (the chain's RED decides on the instantaneous queue, the simulated RED on "
                                         f"the average with w_q = {EX2_WQ})" if scheme != "TD" else "") + ".")
    both = df.pivot_table(index=["scheme", "stream", "load", "bursty_fraction"], columns="bursts",
                          values="loss_rate")
    if {"Poisson", "Pareto"} <= set(both.columns):
        d = both["Pareto"] - both["Poisson"]
        text.append(f"Pareto bursts change the drop probability by {_fmt(d.min())} to {_fmt(d.max())} against "
                    "Poisson bursts at the same points.")
    report.text(*text)


# B3 --------------------------------------------------------------------------


def _b34_runs(report: StudyReport) -> pd.DataFrame:
    return report.runs("b34")


def _b3(report: StudyReport) -> None:
    report.section(f"B3: consecutive drops, Poisson input at load {B34_LOAD:g}")
    runs = _b34_runs(report)
    if runs.empty:
        report.text("No B3 runs finished.")
        return
    qcol = "topology.links[0].qdisc"
    td = models.consecutive_drops_td(B34_LOAD)
    ex1 = models.consecutive_drops_red(B34_LOAD, K, EX1, method="exact", **CONV)
    ap2 = models.consecutive_drops_red(B34_LOAD, K, EX1, method="approx2", **CONV)
    chains = {"TD": (td, None), "RED ex1": (ex1, ap2)}
    rows, dist_rows, pooled = [], [], {}
    for scheme, g in runs.groupby(qcol, sort=False):
        cl = [Summary(s).queue("q").consecutive_loss for s in g["summary"]]
        model, approx = chains.get(scheme, (None, None))
        rows.append({"scheme": scheme, **ci_columns([c["mean"] for c in cl], "consecutive_loss_mean"),
                     **ci_columns([c["var"] for c in cl], "consecutive_loss_var"), "n": len(g),
                     "model_mean": model.mean if model else math.nan, "model_var": model.var if model else math.nan,
                     "approx2_mean": approx.mean if approx else math.nan,
                     "approx2_var": approx.var if approx else math.nan})
        hist: dict[int, int] = {}
        for c in cl:
            for length, count in c["hist"].items():
                hist[int(length)] = hist.get(int(length), 0) + count
        total = sum(hist.values())
        pooled[scheme] = hist, total
        top = max(hist) if hist else 0
        for length in range(1, top + 1):
            dist_rows.append({"scheme": scheme, "run_length": length,
                              "probability": hist.get(length, 0) / total if total else math.nan,
                              "runs": hist.get(length, 0),
                              "model": _pmf(model, length), "approx2": _pmf(approx, length)})
    summary = pd.DataFrame(rows)
    report.table("b3_loss_runs", summary,
                 "B3: mean and variance of the number of consecutive drops (a loss run), simulation with 95% CI; "
                 "model = the exact chain (TD: the geometric law, mean rho + 1, variance rho (rho + 1)), approx2 = "
                 "the paper's Approximation 2 for RED ex1. " + _reps_text(report, "b34") + ".")
    dist = pd.DataFrame(dist_rows)
    report.table("b3_loss_run_distribution", dist,
                 "B3: distribution of loss-run lengths, simulation pooled over replications (runs = how many), "
                 "with the chain's and Approximation 2's P(N = n).")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    ax = axes[0]
    n_max = 15
    for scheme in ("TD", "RED ex1"):
        d = dist[(dist["scheme"] == scheme) & (dist["run_length"] <= n_max) & (dist["probability"] > 0)]
        (pts,) = ax.plot(d["run_length"], d["probability"], "o", label=f"{scheme} simulation")
        model, approx = chains[scheme]
        n = np.arange(1, n_max + 1)
        model_curve(ax, n, [_pmf(model, k) for k in n], f"{scheme} chain", color=pts.get_color())
        if approx is not None:
            model_curve(ax, n, [_pmf(approx, k) for k in n], f"{scheme} Approximation 2", color=pts.get_color(),
                        linestyle=":")
    ax.set_title("TD and RED ex1 (instantaneous queue)")
    ax = axes[1]
    n_max2 = 60
    for scheme in ["RED ex2"] + [_wq_label(w) for w in B3_WQ]:
        d = dist[(dist["scheme"] == scheme) & (dist["run_length"] <= n_max2) & (dist["probability"] > 0)]
        ax.plot(d["run_length"], d["probability"], "o-", markersize=3, linewidth=0.8, label=scheme)
    ax.set_title("RED ex2 thresholds, averaged queue")
    for ax in axes:
        ax.set_yscale("log")
        ax.set_xlabel("consecutive drops n")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("P(N = n)")
    report.figure("b3_loss_runs", fig, "B3: distribution of consecutive drops at load 2, Poisson input "
                                       "(simulation pooled over replications; chains dashed/dotted).")
    text = []
    for scheme in ("TD", "RED ex1"):
        r = summary[summary["scheme"] == scheme]
        if len(r):
            r = r.iloc[0]
            text.append(f"{scheme}: mean run {_fmt(r['consecutive_loss_mean'])} "
                        f"[{_fmt(r['consecutive_loss_mean_ci95_low'])}, {_fmt(r['consecutive_loss_mean_ci95_high'])}]"
                        f" against the chain's {_fmt(r['model_mean'])}"
                        + (f" (Approximation 2: {_fmt(r['approx2_mean'])})" if math.isfinite(r["approx2_mean"]) else "")
                        + f"; variance {_fmt(r['consecutive_loss_var'])} "
                        f"[{_fmt(r['consecutive_loss_var_ci95_low'])}, {_fmt(r['consecutive_loss_var_ci95_high'])}]"
                        f" against {_fmt(r['model_var'])}"
                        + (f" ({_fmt(r['approx2_var'])})" if math.isfinite(r["approx2_var"]) else "") + ".")
    wq = summary[summary["scheme"].str.startswith("RED ex2")].sort_values("consecutive_loss_mean")
    if len(wq):
        text.append("With RED ex2's thresholds the mean run is " + ", ".join(
            f"{_fmt(r['consecutive_loss_mean'])} ({r['scheme']})" for _, r in wq.iterrows())
            + "; the longest run seen: " + ", ".join(
                f"{max(pooled[s][0]) if pooled[s][0] else 0} ({s})" for s in wq["scheme"]) + ".")
    report.text(*text)


def _pmf(run: models.bonald.RunLength | None, n: int) -> float:
    if run is None:
        return math.nan
    return float(run.distribution[n - 1]) if n <= len(run.distribution) else 0.0


# B4 --------------------------------------------------------------------------


def _waiting(q: models.bonald.QueueSize) -> np.ndarray:
    """The number waiting behind the one in service, max(k - 1, 0), from
    the number in the system k: what the simulator's backlog counts."""
    w = np.zeros(len(q.distribution) - 1)
    w[0] = q.distribution[0] + q.distribution[1]
    w[1:] = q.distribution[2:]
    return w


def _b4(report: StudyReport) -> None:
    report.section(f"B4: queue size, Poisson input at load {B34_LOAD:g}")
    runs = _b34_runs(report)
    if runs.empty:
        report.text("No B4 runs finished.")
        return
    qcol = "topology.links[0].qdisc"
    chains = {"TD": models.queue_distribution(B34_LOAD, K, None, **CONV),
              "RED ex1": models.queue_distribution(B34_LOAD, K, EX1, **CONV)}
    rows, dist_rows = [], []
    for scheme, g in runs.groupby(qcol, sort=False):
        if scheme not in ("TD", "RED ex1", "RED ex2"):
            continue
        qs = [s["queues"]["q"] for s in g["summary"]]
        q = chains.get(scheme)
        w = _waiting(q) if q is not None else None
        x = np.arange(LIMIT + 1)
        wm = float(x @ w) if w is not None else math.nan
        wv = float(((x - wm) ** 2) @ w) if w is not None else math.nan
        rows.append({"scheme": scheme, **ci_columns([v["qlen_mean_pkts"] for v in qs], "qlen_mean_pkts"),
                     **ci_columns([v["qlen_var_pkts"] for v in qs], "qlen_var_pkts"),
                     **ci_columns([v["qlen_mean_pkts"] + v["utilization"] for v in qs], "system_mean_pkts"),
                     **ci_columns([v["qdelay_mean_s"] for v in qs], "qdelay_mean_s"),
                     "n": len(g), "model_mean": wm, "model_var": wv,
                     "model_system_mean": q.mean if q is not None else math.nan,
                     "model_qdelay_s": q.wait_mean / MU if q is not None else math.nan})
        counts = np.zeros(LIMIT + 1)
        warm = float(g["summary"].iloc[0]["warmup_s"])
        for rep, point in zip(g["replication"], g["point"]):
            series = report.series("b34", int(point), int(rep))
            if series is None:
                continue
            b = series.loc[series["time_s"] >= warm, "q.backlog_pkts"].to_numpy().astype(int)
            counts += np.bincount(b, minlength=LIMIT + 1)[:LIMIT + 1]
        total = counts.sum()
        for k in x:
            dist_rows.append({"scheme": scheme, "backlog_pkts": int(k),
                              "probability": counts[k] / total if total else math.nan,
                              "model": float(w[k]) if w is not None else math.nan})
    summary = pd.DataFrame(rows)
    report.table("b4_queue_size", summary,
                 "B4: time-averaged backlog (packets waiting behind the one in transmission) and its variance, and "
                 "the mean number in the system (backlog + utilisation), simulation with 95% CI; model = the "
                 f"birth-death chain (Bonald et al.), K = {K}, converted to the backlog max(k - 1, 0). "
                 + _reps_text(report, "b34") + ".")
    dist = pd.DataFrame(dist_rows)
    report.table("b4_queue_distribution", dist,
                 "B4: distribution of the backlog, from samples of the queue every "
                 f"{report.experiments['b34'].base.to_dict()['trace']['interval']} pooled over replications, and the "
                 "chain's.")
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for scheme in ("TD", "RED ex1", "RED ex2"):
        d = dist[dist["scheme"] == scheme]
        if d.empty:
            continue
        seen = d[d["probability"] > 0]
        (pts,) = ax.plot(seen["backlog_pkts"], seen["probability"], "o", markersize=4, label=f"{scheme} simulation")
        if scheme in chains:
            model_curve(ax, d["backlog_pkts"], d["model"], f"{scheme} chain", color=pts.get_color(),
                        drawstyle="steps-mid")
    ax.set_yscale("log")
    ax.set_ylim(1e-5, 1)
    ax.set_xlabel("backlog (packets waiting)")
    ax.set_ylabel("probability")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    report.figure("b4_queue_distribution", fig, "B4: queue-size distribution at load 2, Poisson input (points: "
                                                "sampled backlog; dashed: chain).")
    text = []
    for _, r in summary.iterrows():
        t = (f"{r['scheme']}: mean backlog {_fmt(r['qlen_mean_pkts'])} [{_fmt(r['qlen_mean_pkts_ci95_low'])}, "
             f"{_fmt(r['qlen_mean_pkts_ci95_high'])}], variance {_fmt(r['qlen_var_pkts'])}, mean queueing delay "
             f"{_fmt(1e3 * r['qdelay_mean_s'])} ms")
        if math.isfinite(r["model_mean"]):
            t += (f" (chain: {_fmt(r['model_mean'])}, {_fmt(r['model_var'])}, "
                  f"{_fmt(1e3 * r['model_qdelay_s'])} ms by Little's law)")
        text.append(t + ".")
    report.text(" ".join(text))


# B5-B8 -----------------------------------------------------------------------


def _closed_metrics(s: dict[str, Any]) -> dict[str, float]:
    t = s["traffic"]
    return {"udp_loss": t["udp"]["loss_rate"], "tcp_loss": t["tcp"]["loss_rate"],
            "goodput": t["tcp"]["goodput_bps"]}


#: What the report calls jitter: the standard deviation of the one-way delay
#: of a traffic's packets (the paper ties jitter to the variance of the
#: queue, its Table III, which is this delay's variance less the constant
#: propagation and transmission times).
JITTER_TEXT = ("delay = one-way delay of the packets delivered (source to sink), mean over the window; jitter = "
               "its standard deviation")


def _delay_columns(traffics: list[dict[str, Any]], prefix: str = "") -> dict[str, float]:
    """Mean one-way delay and jitter (see JITTER_TEXT) of one traffic group
    over replications, with 95% intervals."""
    return {**ci_columns([t["delay_mean_s"] for t in traffics], f"{prefix}delay_mean_s"),
            **ci_columns([t["delay_std_s"] for t in traffics], f"{prefix}jitter_s")}


def _b57(report: StudyReport) -> None:
    runs = report.runs("b57")
    report.section("B5 and B7: TCP NewReno and CBR UDP, buffer 40")
    if runs.empty:
        report.text("No B5/B7 runs finished.")
        return
    report.text(f"Closed loop: TCP NewReno flows (1000 B payload) and 1 Mb/s of CBR UDP (10% of the 10 Mb/s "
                f"bottleneck); round-trip propagation delays {2 * (ACCESS_DELAYS_MS[0] + 50)} to "
                f"{2 * (ACCESS_DELAYS_MS[-1] + 50)} ms. RED: min_th = 1/4 and max_th = 3/4 of the buffer, "
                f"max_p 0.1, w_q {EX2_WQ}, d(avg) without count spacing.")
    qcol = "topology.qdisc"
    ncol = "traffic[0].count"
    rows = []
    for (scheme, n), g in runs.groupby([qcol, ncol], sort=False):
        m = [_closed_metrics(s) for s in g["summary"]]
        for traffic, key in (("TCP", "tcp_loss"), ("UDP", "udp_loss")):
            row = {"scheme": scheme, "flows": int(n), "traffic": traffic,
                   **ci_columns([x[key] for x in m], "loss_rate")}
            row.update(ci_columns([x["goodput"] for x in m], "goodput_bps") if traffic == "TCP" else
                       {"goodput_bps": math.nan, "goodput_bps_ci95_low": math.nan, "goodput_bps_ci95_high": math.nan})
            row.update(_delay_columns([s["traffic"][traffic.lower()] for s in g["summary"]]))
            row["n"] = len(g)
            rows.append(row)
    df = pd.DataFrame(rows)
    b5 = df[df["flows"] == B5_FLOWS].drop(columns="flows")
    report.table("b5_tcp_udp", b5, f"B5: loss rates of UDP and TCP, TCP goodput, and each traffic's delay and "
                                   f"jitter ({JITTER_TEXT}) with {B5_FLOWS} TCP flows, buffer 40. "
                                   + _reps_text(report, "b57") + ".")
    if len(b5):
        piv = b5.set_index(["scheme", "traffic"])
        parts = []
        for scheme in ("TD", "RED"):
            if (scheme, "TCP") in piv.index and (scheme, "UDP") in piv.index:
                parts.append(f"{scheme}: UDP loss {_fmt(piv.loc[(scheme, 'UDP'), 'loss_rate'])}, TCP loss "
                             f"{_fmt(piv.loc[(scheme, 'TCP'), 'loss_rate'])}, TCP goodput "
                             f"{_fmt(piv.loc[(scheme, 'TCP'), 'goodput_bps'] / 1e6)} Mb/s")
        report.text("With " + str(B5_FLOWS) + " flows: " + "; ".join(parts) + ".")
        if {("TD", "UDP"), ("RED", "UDP")} <= set(piv.index):
            report.text("UDP delay and jitter (the paper measured them; it gives no numbers to compare with here): "
                        + "; ".join(f"{s} delay {_ci_ms(piv.loc[(s, 'UDP')], 'delay_mean_s')}, jitter "
                                    f"{_ci_ms(piv.loc[(s, 'UDP')], 'jitter_s')}" for s in ("TD", "RED")) + ".")
    report.table("b7_against_flows", df, "B7: TCP goodput, loss rates, delay and jitter against the number of TCP "
                 f"flows, buffer 40 ({JITTER_TEXT}). " + _reps_text(report, "b57") + ".")
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained")
    tcp, udp = df[df["traffic"] == "TCP"], df[df["traffic"] == "UDP"]
    errorbar_plot(axes[0], tcp.assign(goodput_mbps=tcp["goodput_bps"] / 1e6, lo=tcp["goodput_bps_ci95_low"] / 1e6,
                                      hi=tcp["goodput_bps_ci95_high"] / 1e6),
                  "flows", "goodput_mbps", "scheme", low="lo", high="hi")
    axes[0].set_ylabel("TCP goodput (Mb/s)")
    errorbar_plot(axes[1], udp, "flows", "loss_rate", "scheme", low="loss_rate_ci95_low", high="loss_rate_ci95_high")
    axes[1].set_ylabel("UDP loss rate")
    errorbar_plot(axes[2], tcp, "flows", "loss_rate", "scheme", low="loss_rate_ci95_low", high="loss_rate_ci95_high")
    axes[2].set_ylabel("TCP loss rate")
    for ax, key, scale in zip(axes, ("goodput", "udp_loss", "tcp_loss"), (1e-6, 1.0, 1.0)):
        _paper_markers(ax, {s: PAPER_TABLE_V[(s, key)] * scale for s in ("TD", "RED")}, B5_FLOWS)
        ax.set_xlabel("TCP flows")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    report.figure("b7_against_flows", fig, "B7: TCP goodput, UDP loss rate and TCP loss rate against the number of "
                                           f"TCP flows, buffer 40 (95% CI); stars: the paper's Table V at {B5_FLOWS} "
                                           "flows.")
    text = []
    for what, d in (("UDP loss", udp), ("TCP loss", tcp)):
        p = d.pivot(index="flows", columns="scheme", values="loss_rate")
        if {"TD", "RED"} <= set(p.columns):
            diff = p["RED"] - p["TD"]
            text.append(f"{what}: RED minus TD from {_fmt(diff.min())} to {_fmt(diff.max())} over "
                        f"{p.index.min()}..{p.index.max()} flows (RED above TD at {int((diff > 0).sum())} of "
                        f"{len(diff)} points).")
    p = tcp.pivot(index="flows", columns="scheme", values="goodput_bps")
    if {"TD", "RED"} <= set(p.columns):
        rel = (p["RED"] / p["TD"] - 1).abs()
        text.append(f"TCP goodput: RED within {_fmt(100 * rel.max())}% of TD at every number of flows; it ranges "
                    f"over {_fmt(p.min().min() / 1e6)} to {_fmt(p.max().max() / 1e6)} Mb/s.")
    report.text(*text)


# Table V's sensitivity ----------------------------------------------------------

#: How near the paper's goodput a setting must come to count as near: its 95%
#: interval within this fraction of the paper's 5.55 Mb/s (the claims' rule).
B5_NEAR = 0.15


def _b5_paper_text(axis: str, setting: str) -> str:
    """Whether the paper's text allows a setting of Table V's sensitivity
    (what the paper states and what it leaves open), and why not."""
    if axis == "default":
        return "yes"
    if axis == "flows":
        return f"no: the paper has {B5_FLOWS} flows"
    if axis == "buffer":
        return "no: the paper has 40 packets"
    if axis == "round trips":
        return "yes: the paper gives only the range" if setting == "spread" else "no: the paper spreads 120..220 ms"
    if axis == "TCP":
        return "no: the paper names NewReno" if setting == "SACK" else "yes: the paper does not say"
    return "yes: the paper does not say"


def _b5_groups(report: StudyReport) -> list[tuple[str, str, str, list[dict[str, Any]]]]:
    """(axis, setting, scheme, run summaries) of every setting of Table V's
    sensitivity: the study's default and other numbers of flows from b57, a
    buffer of 150 from b6, and the b5_* experiments."""
    out = []
    runs = report.runs("b57")
    if not runs.empty:
        for (scheme, n), g in runs.groupby(["topology.qdisc", "traffic[0].count"], sort=False):
            axis, setting = ("default", "study default") if int(n) == B5_FLOWS else ("flows", f"{n} flows")
            out.append((axis, setting, scheme, list(g["summary"])))
    for name in ("b6", "b5_buffer"):
        runs = report.runs(name)
        for label, g in (runs.groupby("topology.qdisc", sort=False) if not runs.empty else ()):
            scheme, buffer = label.split()
            if int(buffer) != 40:
                out.append(("buffer", f"{buffer} packets", scheme, list(g["summary"])))
    for name, axis, col in (("b5_rtt", "round trips", "topology.senders"), ("b5_tcp", "TCP", "traffic[0].tcp"),
                            ("b5_pkt", "packet size", "traffic[0].packet_size")):
        runs = report.runs(name)
        for (scheme, setting), g in (runs.groupby(["topology.qdisc", col], sort=False) if not runs.empty else ()):
            out.append((axis, setting, scheme, list(g["summary"])))
    order = ["default", "flows", "buffer", "round trips", "TCP", "packet size"]
    return sorted(out, key=lambda x: order.index(x[0]))


def _b5_sensitivity(report: StudyReport) -> None:
    report.section("B5: what moves Table V's goodput")
    groups = _b5_groups(report)
    if not groups:
        report.text("No B5 sensitivity runs finished.")
        return
    report.text(f"aqmlab's TCP goodput in Table V's setting is well above the paper's 5.55 Mb/s. Each row below "
                "changes one thing the paper leaves open (or states, to measure its weight) from the study's "
                f"default, {B5_FLOWS} NewReno flows and a buffer of 40 packets; the experiment files say why each "
                "change is tried.")
    rows = []
    for axis, setting, scheme, summaries in groups:
        m = [_closed_metrics(x) for x in summaries]
        paper = PAPER_TABLE_V[(scheme, "goodput")]
        good = mean_ci([x["goodput"] for x in m])
        rows.append({"axis": axis, "setting": setting, "scheme": scheme,
                     **ci_columns([x["goodput"] for x in m], "goodput_bps"),
                     **ci_columns([x["tcp_loss"] for x in m], "tcp_loss"),
                     **ci_columns([x["udp_loss"] for x in m], "udp_loss"),
                     **ci_columns([Summary(x).bottleneck.utilization for x in summaries], "utilization"),
                     "n": len(m), "paper_goodput_bps": paper,
                     "near_paper": range_verdict(good, paper * (1 - B5_NEAR), paper * (1 + B5_NEAR)),
                     "paper_text": _b5_paper_text(axis, setting)})
    df = pd.DataFrame(rows)
    report.table("b5_sensitivity", df,
                 f"B5 sensitivity: TCP goodput and the loss rates with one change each from the study's default "
                 f"({B5_FLOWS} flows, buffer 40), beside the paper's Table V goodput; near_paper: the goodput's 95% "
                 f"interval within {B5_NEAR:.0%} of the paper's (reproduced), wholly outside (not reproduced) or "
                 "across the bound (inconclusive); paper_text: whether the paper's text allows the setting; "
                 "utilization: the fraction of the time the bottleneck link transmits. "
                 + _reps_text(report, "b57") + ".")
    labels = list(dict.fromkeys(f"{a}: {s}" for a, s in zip(df["axis"], df["setting"])))
    fig, axes = plt.subplots(1, 3, figsize=(13, 1.2 + 0.32 * len(labels)), sharey=True, layout="constrained")
    panels = (("goodput_bps", 1e-6, "TCP goodput (Mb/s)", "goodput"), ("tcp_loss", 1.0, "TCP loss rate", "tcp_loss"),
              ("udp_loss", 1.0, "UDP loss rate", "udp_loss"))
    for ax, (col, scale, xlabel, key) in zip(axes, panels):
        for i, scheme in enumerate(("TD", "RED")):
            d = df[df["scheme"] == scheme]
            y = np.array([labels.index(f"{a}: {s}") for a, s in zip(d["axis"], d["setting"])]) + (i - 0.5) * 0.25
            x = d[col].to_numpy() * scale
            err = [np.clip(x - d[f"{col}_ci95_low"].to_numpy() * scale, 0, None),
                   np.clip(d[f"{col}_ci95_high"].to_numpy() * scale - x, 0, None)]
            ax.errorbar(x, y, xerr=np.nan_to_num(err), fmt="o", color=f"C{i}", capsize=2, markersize=4, label=scheme)
            ax.axvline(PAPER_TABLE_V[(scheme, key)] * scale, color=f"C{i}", linestyle="--", linewidth=1,
                       label=f"paper {scheme}")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_yticks(range(len(labels)), labels, fontsize=8)
    axes[0].invert_yaxis()
    axes[0].legend(fontsize=7)
    report.figure("b5_sensitivity", fig, "B5 sensitivity: each setting's TCP goodput and loss rates (95% CI), Tail "
                                         "Drop and RED; dashed: the paper's Table V.")
    far = (df["goodput_bps"] - df["paper_goodput_bps"]).abs() / df["paper_goodput_bps"]
    best = df.loc[far.idxmin()]
    low, high = df.loc[df["goodput_bps"].idxmin()], df.loc[df["goodput_bps"].idxmax()]
    text = [f"Across the {len(labels)} settings the TCP goodput ranges from {_fmt(low['goodput_bps'] / 1e6)} Mb/s "
            f"({low['scheme']}, {low['axis']}: {low['setting']}) to {_fmt(high['goodput_bps'] / 1e6)} Mb/s "
            f"({high['scheme']}, {high['axis']}: {high['setting']}); the paper's is 5.55 (TD) and 5.56 (RED). "
            f"Nearest: {best['scheme']} with {best['axis']}: {best['setting']}, {_fmt(best['goodput_bps'] / 1e6)} "
            f"Mb/s, {_fmt(100 * far.min())}% from the paper's."]
    near = df[df["near_paper"] == "reproduced"]
    if near.empty:
        text.append(f"No setting brings the goodput's 95% interval within {B5_NEAR:.0%} of the paper's, so one "
                    "change from the study's default cannot account for Table V's goodput; the paper's setting "
                    "cannot be found among these.")
    else:
        allowed = near[near["paper_text"].str.startswith("yes")]
        text.append(f"Within {B5_NEAR:.0%} of the paper's goodput: " + ", ".join(
            f"{r['scheme']} {r['axis']}: {r['setting']}" for _, r in near.iterrows()) + "; of these the paper's "
            "text allows " + (", ".join(f"{r['scheme']} {r['axis']}: {r['setting']}" for _, r in allowed.iterrows())
                              if len(allowed) else "none") + ".")
    def accounted(goodput: float, udp_loss: float, payload: float = TCP_PAYLOAD_BYTES) -> float:
        """The fraction of 10 Mb/s that a TCP goodput (with its headers) and
        the UDP delivered make up."""
        return (goodput * (payload + TCP_HEADER_BYTES) / payload + UDP_RATE_BPS * (1 - udp_loss)) / RATE_BPS

    paper = {k: accounted(PAPER_TABLE_V[(k, "goodput")], PAPER_TABLE_V[(k, "udp_loss")]) for k in ("TD", "RED")}
    at = df[df["axis"] != "flows"]  # Table V's number of flows
    ours = pd.Series([accounted(r["goodput_bps"], r["udp_loss"], float(r["setting"].removesuffix("B"))
                                if r["axis"] == "packet size" else TCP_PAYLOAD_BYTES) for _, r in at.iterrows()])
    text.append(f"With {B5_FLOWS} flows, in every setting, the bottleneck transmits "
                f"{_fmt(100 * at['utilization'].min())}% to {_fmt(100 * at['utilization'].max())}% of the time, and the TCP goodput (with {TCP_HEADER_BYTES} "
                "B of header per packet) and the UDP delivered make up "
                f"{_fmt(100 * ours.min())}% to {_fmt(100 * ours.max())}% of 10 Mb/s; the rest of the busy time is "
                f"retransmitted duplicates. The paper's Table V (with {TCP_PAYLOAD_BYTES} B payloads) makes up "
                f"{_fmt(100 * paper['TD'])}% (TD) and "
                f"{_fmt(100 * paper['RED'])}% (RED): with 100 flows that lose a tenth of their packets, its link "
                "either stood idle or carried duplicates a third of the time, or its goodput is not the quantity "
                "measured here (payload delivered in order to the receivers over the measurement window).")
    default = df[df["axis"] == "default"].set_index("scheme")
    if "TD" in default.index:
        td = df[(df["scheme"] == "TD") & (df["axis"] != "default")]
        drop = (default.loc["TD", "goodput_bps"] - td["goodput_bps"]) / 1e6
        i, base = drop.idxmax(), default.loc["TD", "goodput_bps"] / 1e6
        text.append(f"Under Tail Drop the largest fall from the default's {_fmt(base)} Mb/s is {_fmt(drop[i])} Mb/s "
                    f"({td.loc[i, 'axis']}: {td.loc[i, 'setting']}); the paper's goodput is "
                    f"{_fmt(base - PAPER_TABLE_V[('TD', 'goodput')] / 1e6)} Mb/s below the default's.")
    report.text(*text)


def _ci_ms(row: pd.Series, column: str) -> str:
    """`column` (seconds) with its 95% interval, in ms."""
    return (f"{_fmt(1e3 * row[column])} ms [{_fmt(1e3 * row[column + '_ci95_low'])}, "
            f"{_fmt(1e3 * row[column + '_ci95_high'])}]")


def _paper_markers(ax: Any, values: dict[str, float], x: float) -> None:
    """The paper's value per scheme at `x`, as a star in the colour of the
    scheme's simulated line on `ax` (drawn by errorbar_plot)."""
    colors = {c.get_label(): c.lines[0].get_color() for c in ax.containers if c.lines[0] is not None}
    for scheme, y in values.items():
        ax.plot([x], [y], "*", markersize=11, markeredgecolor="black", markeredgewidth=0.6,
                color=colors.get(scheme, "black"), label=f"paper {scheme}", linestyle="none")


def _series_window(report: StudyReport, experiment: str, point: int, column: str) -> pd.DataFrame | None:
    s = report.series(experiment, point, 0)
    if s is None or column not in s:
        return None
    return s


def _b6(report: StudyReport) -> None:
    runs = report.runs("b6")
    report.section("B6: queueing delay over time, buffers 40 and 150")
    if runs.empty:
        report.text("No B6 runs finished.")
        return
    qcol = "topology.qdisc"
    rows = []
    for label, g in runs.groupby(qcol, sort=False):
        scheme, buffer = label.split()
        qs = [s["queues"]["bottleneck"] for s in g["summary"]]
        rows.append({"scheme": scheme, "buffer_pkts": int(buffer),
                     **ci_columns([q["qdelay_mean_s"] for q in qs], "qdelay_mean_s"),
                     **ci_columns([q["qdelay_std_s"] for q in qs], "qdelay_std_s"),
                     **ci_columns([q["loss_rate"] for q in qs], "loss_rate"),
                     **ci_columns([Summary(s).group("tcp").goodput_bps for s in g["summary"]], "goodput_bps"),
                     **_delay_columns([s["traffic"]["udp"] for s in g["summary"]], "udp_"),
                     "n": len(g)})
    df = pd.DataFrame(rows)
    report.table("b6_queueing_delay", df,
                 f"B6: queueing delay (sojourn before transmission) at the bottleneck, its standard deviation, the "
                 f"bottleneck's loss rate, the TCP goodput and the UDP packets' delay and jitter ({JITTER_TEXT}), "
                 f"{B5_FLOWS} TCP flows. " + _reps_text(report, "b6") + ".")
    warm = float(runs["summary"].iloc[0]["warmup_s"])
    fig, axes = plt.subplots(len(B6_BUFFERS), 1, figsize=(10, 3 * len(B6_BUFFERS)), sharex=True, squeeze=False)
    for (label, point), _ in runs.groupby([qcol, "point"], sort=False):
        scheme, buffer = label.split()
        s = _series_window(report, "b6", int(point), "bottleneck.backlog_bytes")
        if s is None:
            continue
        s = s[(s["time_s"] >= warm) & (s["time_s"] <= warm + B6_WINDOW_S)]
        ax = axes[B6_BUFFERS.index(int(buffer))][0]
        ax.plot(s["time_s"], s["bottleneck.backlog_bytes"] * 8 / RATE_BPS * 1e3, linewidth=0.7, label=scheme)
        ax.set_title(f"buffer {buffer} packets")
        ax.set_ylabel("queueing delay (ms)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    axes[-1][0].set_xlabel("time (s)")
    report.figure("b6_queueing_delay", fig, "B6: queueing delay over time (the backlog in bytes over the link rate, "
                                            f"sampled), replication 0, the first {B6_WINDOW_S:g} s after the warm-up.")
    text = []
    for b in B6_BUFFERS:
        d = df[df["buffer_pkts"] == b].set_index("scheme")
        if {"TD", "RED"} <= set(d.index):
            text.append(f"Buffer {b}: mean queueing delay TD {_fmt(1e3 * d.loc['TD', 'qdelay_mean_s'])} ms, RED "
                        f"{_fmt(1e3 * d.loc['RED', 'qdelay_mean_s'])} ms; standard deviation TD "
                        f"{_fmt(1e3 * d.loc['TD', 'qdelay_std_s'])} ms, RED {_fmt(1e3 * d.loc['RED', 'qdelay_std_s'])}"
                        f" ms; goodput TD {_fmt(d.loc['TD', 'goodput_bps'] / 1e6)}, RED "
                        f"{_fmt(d.loc['RED', 'goodput_bps'] / 1e6)} Mb/s; UDP delay TD "
                        f"{_ci_ms(d.loc['TD'], 'udp_delay_mean_s')}, RED {_ci_ms(d.loc['RED'], 'udp_delay_mean_s')}; "
                        f"UDP jitter TD {_ci_ms(d.loc['TD'], 'udp_jitter_s')}, RED "
                        f"{_ci_ms(d.loc['RED'], 'udp_jitter_s')}.")
    report.text(*text)


def _b8(report: StudyReport) -> None:
    runs = report.runs("b8")
    report.section("B8: the instantaneous queue against the number of flows, buffer 200, Tail Drop and RED")
    if runs.empty:
        report.text("No B8 runs finished.")
        return
    qcol, ncol = "topology.qdisc", "traffic[0].count"
    rows = []
    for (scheme, n), g in runs.groupby([qcol, ncol], sort=False):
        qs = [s["queues"]["bottleneck"] for s in g["summary"]]
        rows.append({"scheme": scheme, "flows": int(n),
                     **ci_columns([q["qlen_mean_pkts"] for q in qs], "qlen_mean_pkts"),
                     **ci_columns([q["qlen_var_pkts"] for q in qs], "qlen_var_pkts"),
                     **ci_columns([q["loss_rate"] for q in qs], "loss_rate"),
                     **ci_columns([Summary(s).group("tcp").goodput_bps for s in g["summary"]], "goodput_bps"),
                     "n": len(g)})
    df = pd.DataFrame(rows)
    report.table("b8_queue", df, f"B8: time-averaged queue, its variance, the loss rate and the TCP goodput against "
                                 f"the number of TCP flows; Tail Drop and RED (min_th {B8_RED['min_th']}, max_th "
                                 f"{B8_RED['max_th']}, max_p 0.1, w_q {EX2_WQ}) with a buffer of {B8_RED['limit']}. "
                                 + _reps_text(report, "b8") + ".")
    warm = float(runs["summary"].iloc[0]["warmup_s"])
    schemes = [s for s in ("TD", "RED") if s in set(runs[qcol])]
    flows = list(dict.fromkeys(runs[ncol]))
    fig, axes = plt.subplots(len(flows), len(schemes), figsize=(6 * len(schemes), 2.4 * len(flows)), sharex=True,
                             sharey=True, squeeze=False, layout="constrained")
    for (scheme, n), g in runs.groupby([qcol, ncol], sort=False):
        ax = axes[flows.index(n)][schemes.index(scheme)]
        s = _series_window(report, "b8", int(g["point"].iloc[0]), "bottleneck.backlog_pkts")
        if s is None:
            continue
        s = s[s["time_s"] >= warm]
        ax.plot(s["time_s"], s["bottleneck.backlog_pkts"], linewidth=0.6, label="queue")
        if scheme == "RED":
            if "bottleneck.avg" in s:
                ax.plot(s["time_s"], s["bottleneck.avg"], linewidth=1.2, label="avg")
            for th in (B8_RED["min_th"], B8_RED["max_th"]):
                ax.axhline(th, color="grey", linewidth=0.8, linestyle=":")
        ax.axhline(B8_RED["limit"], color="black", linewidth=0.8, linestyle="--")
        ax.set_title(f"{scheme}, {n} flows", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    for row in axes:
        row[0].set_ylabel("packets")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    report.figure("b8_queue", fig, "B8 (the paper's Fig. 15): the instantaneous queue over time, Tail Drop (left) "
                                   "beside RED with its average (right), same axes, replication 0 after the warm-up; "
                                   "dashed: the buffer, dotted: min_th and max_th.")
    text = []
    for scheme in schemes:
        d = df[df["scheme"] == scheme].sort_values("flows")
        text.append(f"{scheme}: mean queue " + ", ".join(
            f"{_fmt(r['qlen_mean_pkts'])} [{_fmt(r['qlen_mean_pkts_ci95_low'])}, "
            f"{_fmt(r['qlen_mean_pkts_ci95_high'])}] packets, standard deviation {_fmt(math.sqrt(r['qlen_var_pkts']))}"
            f" with {r['flows']} flows" for _, r in d.iterrows()) + ".")
    p = df.pivot(index="flows", columns="scheme", values="qlen_var_pkts")
    if {"TD", "RED"} <= set(p.columns):
        ratio = np.sqrt(p["RED"] / p["TD"])
        text.append("The standard deviation of RED's queue over Tail Drop's: " + ", ".join(
            f"{_fmt(v)} with {n} flows" for n, v in ratio.items()) + ".")
    report.text(*text)


# The paper's numbers (Bonald, May and Bolot, Tables I-V): (mean, variance).
PAPER_K = 40  # the room in the system of the paper's open-loop examples
PAPER_RUNS_MODEL = {"TD": (3.0, 6.0), "RED ex1": (2.3, 4.1)}
PAPER_RUNS_SIM = {"TD": (3.0, 6.0), _wq_label(0.1): (5.9, 40.0), _wq_label(0.01): (7.7, 170.0),
                  _wq_label(0.001): (7.2, 190.0)}
PAPER_QUEUE_MODEL = {"TD": (39.0, 2.0), "RED ex1": (29.0, 10.0)}
PAPER_QUEUE_SIM = {"TD": 39.0, "RED ex2": 29.9}
PAPER_TABLE_V = {("TD", "udp_loss"): 0.051, ("RED", "udp_loss"): 0.083, ("TD", "tcp_loss"): 0.102,
                 ("RED", "tcp_loss"): 0.102, ("TD", "goodput"): 5.55e6, ("RED", "goodput"): 5.56e6}


def _claims(report: StudyReport) -> None:
    """The paper's tables beside aqmlab's chains and simulations, each with a
    verdict."""
    claims = Claims()
    add = claims.add

    def close(x: float, paper: float, tol: float) -> str:
        return "reproduced" if abs(x - paper) <= tol * abs(paper) else "not reproduced"

    # Tables I and III: the models as the paper evaluates them (K = 40 in the
    # system, the arriving packet counted in RED's d), exact chains.
    models_of = {
        "Table I (model): consecutive drops": (PAPER_RUNS_MODEL, {
            "TD": models.consecutive_drops_td(B34_LOAD),
            "RED ex1": models.consecutive_drops_red(B34_LOAD, PAPER_K, EX1, method="exact")}),
        "Table III (model): queue size": (PAPER_QUEUE_MODEL, {
            "TD": models.queue_distribution(B34_LOAD, PAPER_K, None),
            "RED ex1": models.queue_distribution(B34_LOAD, PAPER_K, EX1)}),
    }
    for table, (paper, chains) in models_of.items():
        for scheme, (m, v) in paper.items():
            c = chains[scheme]
            add(f"{table} under {scheme}, mean and variance", f"{m} / {v}", f"{c.mean:.3g} / {c.var:.3g}",
                combine_verdicts([close(c.mean, m, 0.05), close(c.var, v, 0.05)]),
                "aqmlab's exact chain (queue size: the number in the system) with the paper's K = 40 and "
                "conventions within 5% of the paper's value, mean and variance")
    # Tables II and IV: the simulations.
    runs = _b34_runs(report)
    if not runs.empty:
        by = {k: list(g["summary"]) for k, g in runs.groupby("topology.links[0].qdisc", sort=False)}
        for scheme, (m, v) in PAPER_RUNS_SIM.items():
            if scheme not in by:
                continue
            cl = [Summary(x).queue("q").consecutive_loss for x in by[scheme]]
            cm, cv = mean_ci([c["mean"] for c in cl]), mean_ci([c["var"] for c in cl])
            add(f"Table II (simulation): consecutive drops under {scheme}, mean and variance", f"{m} / {v}",
                f"{show_ci(cm)} / {show_ci(cv)}",
                combine_verdicts([range_verdict(cm, m / 1.15, m * 1.15), range_verdict(cv, v / 1.3, v * 1.3)]),
                "95% intervals within 15% of the paper's mean and 30% of its variance")
        for scheme, m in PAPER_QUEUE_SIM.items():
            if scheme not in by:
                continue
            qm = mean_ci([Summary(x).queue("q").qlen_mean_pkts + Summary(x).queue("q").utilization for x in by[scheme]])
            add(f"Table IV (simulation): mean queue size under {scheme}", f"{m}", show_ci(qm),
                range_verdict(qm, m * 0.95, m * 1.05),
                "mean number in the system (backlog + utilisation), 95% interval within 5% of the paper's")
    # Table V: the closed loop.
    runs = report.runs("b57")
    if not runs.empty:
        sel = runs[runs["traffic[0].count"] == str(B5_FLOWS)]
        per = {(scheme, k): pd.Series([_closed_metrics(x)[k] for x in g["summary"]], index=list(g["replication"]))
               for scheme, g in sel.groupby("topology.qdisc") for k in ("udp_loss", "tcp_loss", "goodput")}
        for (scheme, k), paper in PAPER_TABLE_V.items():
            if (scheme, k) not in per:
                continue
            m = mean_ci(per[(scheme, k)])
            scale, unit = (1e-6, " Mb/s") if k == "goodput" else (1.0, "")
            add(f"Table V: {k.replace('_', ' ')} under {scheme}, {B5_FLOWS} flows", f"{paper * scale:g}{unit}",
                show_ci(m, scale, unit), range_verdict(m, paper / 1.15, paper * 1.15),
                "95% interval within 15% of the paper's")
        if all((s, k) in per for s in ("TD", "RED") for k in ("udp_loss", "tcp_loss", "goodput")):
            up = mean_ci(per[("RED", "udp_loss")] - per[("TD", "udp_loss")])
            paper_up = PAPER_TABLE_V[("RED", "udp_loss")] - PAPER_TABLE_V[("TD", "udp_loss")]
            add("Table V: RED raises the UDP loss", f"{paper_up:+.3f}", show_ci(up, signed=True),
                effect_verdict(up, paper_up / 2, paper_up * 2),
                "per-replication difference RED - TD; its 95% interval within a factor 2 of the paper's")
            for k, what in (("tcp_loss", "TCP loss"), ("goodput", "TCP goodput")):
                rel = mean_ci((per[("RED", k)] - per[("TD", k)]) / per[("TD", k)])
                add(f"Table V: RED leaves the {what} unchanged", "unchanged", show_ci(rel, 100, "%", signed=True),
                    range_verdict(rel, -0.05, 0.05), "per-replication relative difference RED vs TD within +-5%")
    # Fig. 15's contrast, at Table V's number of flows.
    runs = report.runs("b8")
    if not runs.empty:
        sel = runs[runs["traffic[0].count"] == str(B5_FLOWS)]
        std = {scheme: pd.Series([math.sqrt(Summary(x).bottleneck.qlen_var_pkts) for x in g["summary"]],
                                 index=list(g["replication"])) for scheme, g in sel.groupby("topology.qdisc")}
        if {"TD", "RED"} <= set(std):
            d = mean_ci(std["RED"] - std["TD"])
            add(f"Fig. 15: the instantaneous queue varies more under RED than under TD, {B5_FLOWS} flows, buffer "
                f"{B8_RED['limit']}", "RED more", show_ci(d, unit=" packets", signed=True),
                effect_verdict(d, 0.0, math.inf),
                "per-replication difference of the queue's standard deviation, RED - TD: reproduced when its 95% "
                "interval lies above 0, not reproduced when below, inconclusive when it holds 0")
    report.claims(claims, "Each number and claim of the paper's Tables I-V beside aqmlab's (its chains for the "
                          "model tables, its simulations for the others), and the verdict by the rule shown.")
