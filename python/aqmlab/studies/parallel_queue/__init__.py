"""Study C: parallel queues and Adaptive RED with dynamic thresholds
(Jou, Tan, Baras).

- C1: one Feng-style Adaptive RED queue, 20 FTP flows and 20 more in the
  middle third of the run, fixed against dynamic thresholds: time series and
  a summary table.
- C2: RED+Tail (web and CBR in a drop-tail queue, FTP in an Adaptive RED
  queue) against one drop-tail and one Adaptive RED queue: per-class loss,
  delay and rate, and the delivery time of the small web files, pooled and
  per file size (the paper's Fig. 4).
- C3: the delivery time of a small file over TCP Reno against a fixed random
  drop probability.
- C4: the queue-dynamics model of :mod:`aqmlab.models.jou`: the map for
  S = 0.5, 1 and 2 RTT with its fixed point (Fig. 9), its Lyapunov exponent
  against S, trajectories without noise and, through C1's load schedule,
  with noise beside the queue and one flow's rate measured in C1 (Figs. 7
  and 10), and the stationary distribution by Markov chain and by the
  Gaussian approximation next to the queue histogram measured in C1.

The experiments are the templates beside this file; C4 runs nothing of its
own, it reads C1's traces.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from aqmlab.exceptions import AqmlabError, ModelError
from aqmlab.models import jou
from aqmlab.models.plots import lindley_map, model_curve
from aqmlab.result import Summary
from aqmlab.studies.framework import (Claims, Study, StudyReport, ci_columns, combine_verdicts, effect_verdict,
                                     errorbar_plot, mean_ci, range_verdict, register, show_ci, summary_table)

# Everything that changes with the scale. Times in seconds.
SCALES: dict[str, dict[str, Any]] = {
    "smoke": {
        "c1": {"duration_s": 40, "join_s": 10, "leave_s": 30, "replications": 2, "settle_s": 5},
        "c2": {"duration_s": 20, "warmup_s": 5, "replications": 2},
        "c3": {"duration_s": 40, "replications": 2, "p": [0.0, 0.1], "sizes_kb": [30, 210]},
    },
    "quick": {
        "c1": {"duration_s": 400, "join_s": 100, "leave_s": 300, "replications": 5, "settle_s": 50},
        "c2": {"duration_s": 300, "warmup_s": 50, "replications": 5},
        "c3": {"duration_s": 600, "replications": 5, "p": [0.0, 0.02, 0.05, 0.1], "sizes_kb": [30, 90, 150, 210]},
    },
    "full": {
        "c1": {"duration_s": 400, "join_s": 100, "leave_s": 300, "replications": 10, "settle_s": 50},
        "c2": {"duration_s": 600, "warmup_s": 100, "replications": 10},
        "c3": {"duration_s": 2000, "replications": 10, "p": [round(0.01 * i, 2) for i in range(11)],
               "sizes_kb": [30, 60, 90, 120, 150, 180, 210]},
    },
}

# C4's model parameters and the simulated queue they are set
# against (C1's: 6 Mb/s, 64 ms, packets of 1000 B payload + 40 B header).
W_BAR_BITS = 6.02e4
C_BPS = 6e6
D_S = 0.064
SIGMA_BPS = {20: 77021.0, 40: 128490.0}
S_RTT = (0.5, 1.0, 2.0)
WIRE_BITS = 1040 * 8
C1_LIMIT_PKTS = 500
B_BITS = C1_LIMIT_PKTS * WIRE_BITS

# The figure of the model with noise: the flow whose rate C1 traces, and
# the seed of the model's noise (its first load phase; +1, +2 the others).
TRACED_FLOW = "ftp[0]"
NOISE_SEED = 1
# The sensitivity of the map's dynamics to S: the Lyapunov exponent over a
# range of S around the paper's 2 RTT.
LYAPUNOV_S_RTT = (0.5, 1.0, 1.5, 2.0, 2.25, 2.5, 2.75, 3.0, 3.5, 4.0)
LYAPUNOV_STEPS, LYAPUNOV_SKIP = 4000, 1000
# A path is called chaotic when nearby paths separate by at least 1% per step.
CHAOS_LAMBDA = 0.01

C2_LIMIT_PKTS = 160
C2_WEB_HOSTS = 100
# The RED+Tail sweep labels as (scheme, thresholds), as the study's tables name them.
C2_SCHEMES = {
    "DropTail": ("DropTail", "-"),
    "Adaptive RED fixed": ("Adaptive RED", "fixed"),
    "Adaptive RED dynamic": ("Adaptive RED", "dynamic"),
    "RED+Tail fixed": ("RED+Tail", "fixed"),
    "RED+Tail dynamic": ("RED+Tail", "dynamic"),
}
C2_CLASSES = {"FTP": "ftp", "WEB": "web", "CBR": "cbr"}

# The paper sets the delivery time of small files apart from that of all
# web responses: its argument is that most web files are small and their
# TCP connections spend their life in slow start, where one loss costs a
# timeout. Chosen: "small" is a response of at most 30 packets (30 KB), the
# most that TCP's slow start from an initial window of 2 delivers in 4
# round trips (2 + 4 + 8 + 16), and the smallest file size of C3; with the
# Pareto sizes (K = 2.3 KB, alpha = 1.3) that is 96.5% of the responses.
SMALL_FILE_PKTS = 30

QDISC_AXIS = "topology.qdisc"
C1_AXIS = "topology.qdisc.dynamic_thresholds"
C3_P_AXIS, C3_SIZE_AXIS = "topology.qdisc.p", "traffic[0].size"
C3_GAP_S = 2.0


def _phase_windows(c1: dict[str, Any]) -> dict[int, list[tuple[float, float]]]:
    """The windows of C1 in which N flows are active, each starting
    `settle_s` after the load changed (the queue needs that long to settle)."""
    t0, t1, t2, s = c1["join_s"], c1["leave_s"], c1["duration_s"], c1["settle_s"]
    return {20: [(s, t0), (t1 + s, t2)], 40: [(t0 + s, t1)]}


def _in_windows(t: pd.Series, windows: list[tuple[float, float]]) -> pd.Series:
    mask = pd.Series(False, index=t.index)
    for a, b in windows:
        mask |= (t >= a) & (t < b)
    return mask


def _by_size(s: dict[str, Any]) -> list[dict[str, Any]]:
    """A C2 run's web response times per response size, refusing a run
    stored before the engine reported them (it would read as no files)."""
    web = s["traffic"]["web"]
    if "responses_by_size" not in web:
        raise AqmlabError("c2-red-tail: a stored run has no traffic.web.responses_by_size (an engine before it was "
                          "reported stored it); reproduce the study again with --rerun")
    rows: list[dict[str, Any]] = web["responses_by_size"]
    return rows


def _small_files(s: dict[str, Any]) -> dict[str, float]:
    """Count, mean and standard deviation (over n) of the delivery times of
    a run's web responses of at most SMALL_FILE_PKTS packets, pooled from
    the engine's rows per response size."""
    rows = [r for r in _by_size(s) if r["pkts"] <= SMALL_FILE_PKTS]
    n = sum(r["count"] for r in rows)
    if n == 0:
        return {"count": 0, "mean_s": math.nan, "std_s": math.nan}
    mean = sum(r["count"] * r["mean_s"] for r in rows) / n
    square = sum(r["count"] * (r["std_s"] ** 2 + r["mean_s"] ** 2) for r in rows) / n
    return {"count": n, "mean_s": mean, "std_s": math.sqrt(max(0.0, square - mean * mean))}


def _window_loss(series: pd.DataFrame, windows: list[tuple[float, float]]) -> float:
    """Drops / arrivals at the bottleneck over the windows, from the traced
    cumulative counters."""
    t = series["time_s"].to_numpy()
    arr, drop = series["bottleneck.arrivals"].to_numpy(), series["bottleneck.drops"].to_numpy()
    a = d = 0.0
    for lo, hi in windows:
        i, j = np.searchsorted(t, lo), min(np.searchsorted(t, hi), len(t) - 1)
        a += arr[j] - arr[i]
        d += drop[j] - drop[i]
    return d / a if a > 0 else math.nan



def _mark_c1_schedule(axes: Any, c1: dict[str, Any]) -> None:
    """Vertical lines where C1's extra flows join and leave, and a legend."""
    for ax in axes:
        ax.axvline(c1["join_s"], color="k", linewidth=0.5)
        ax.axvline(c1["leave_s"], color="k", linewidth=0.5)
        ax.legend(fontsize=7, loc="upper right")

@register
class ParallelQueue(Study):
    name = "parallel-queue"
    title = "Study C: parallel queues and Adaptive RED with dynamic thresholds"
    source = ("J.-S. Jou, X. Tan, J. S. Baras, \"A Parallel Queue Structure for Active Queue Management\", "
              "Proc. 38th CISS, Princeton, 2004; J.-S. Jou, J. S. Baras, \"A Parallel Virtual Queue Structure for "
              "Active Queue Management\", CSHCN TR 2003-4, University of Maryland, 2003.")
    runtime = {"smoke": "5 s", "quick": "7 s", "full": "~1 min"}

    def experiments(self, scale: str) -> dict[str, str]:
        s = SCALES[scale]
        c1 = s["c1"]
        c3 = s["c3"]
        return {
            "c1-ared-thresholds": self.render(
                "c1.toml.j2", duration_s=c1["duration_s"], join_s=c1["join_s"], leave_s=c1["leave_s"],
                on_s=c1["leave_s"] - c1["join_s"], replications=c1["replications"], trace_interval="100ms"),
            "c2-red-tail": self.render(
                "c2.toml.j2", limit_pkts=C2_LIMIT_PKTS, web_hosts=C2_WEB_HOSTS,
                web_src=[f"s{i}" for i in range(C2_WEB_HOSTS)], **s["c2"]),
            "c3-file-delay": self.render(
                "c3.toml.j2", duration_s=c3["duration_s"], replications=c3["replications"],
                p_values=[float(p) for p in c3["p"]], p_labels=[f"{p:g}" for p in c3["p"]],
                size_values=[f"{k}KB" for k in c3["sizes_kb"]], size_labels=[str(k) for k in c3["sizes_kb"]]),
        }

    def analyse(self, report: StudyReport) -> None:
        scale = SCALES[report.scale]
        hist = self._c1(report, scale["c1"])
        self._c2(report)
        self._c3(report, scale["c3"])
        self._c4(report, hist, scale["c1"])
        lyapunov = self._c4_lyapunov(report)
        self._c4_noise(report, scale["c1"])
        self._claims(report, scale["c1"], lyapunov)

    # C1 ----------------------------------------------------------------------

    def _c1(self, report: StudyReport, c1: dict[str, Any]) -> dict[int, list[np.ndarray]]:
        """C1's table and time series; returns, for C4, the queue samples (bits)
        of the dynamic-threshold runs per N, one array per replication."""
        exp = "c1-ared-thresholds"
        report.section("C1: Adaptive RED with fixed and dynamic thresholds")
        runs = report.runs(exp, flows=True)
        windows = _phase_windows(c1)
        on_s = c1["leave_s"] - c1["join_s"]
        rows = []
        series: dict[str, pd.DataFrame] = {}
        samples: dict[int, list[np.ndarray]] = {20: [], 40: []}
        for label in ("fixed", "dynamic"):
            g = runs[runs[C1_AXIS] == label]
            sums = list(g["summary"])
            traces = [report.series(exp, int(p), int(r)) for p, r in zip(g["point"], g["replication"])]
            traces = [t for t in traces if t is not None]
            if traces:
                series[label] = traces[0]
            q = [s["queues"]["bottleneck"] for s in sums]
            late = [[f for f in s["flows"] if f["group"] == "ftp_late"] for s in sums]
            row: dict[str, Any] = {"thresholds": label}
            row |= ci_columns([x["loss_rate"] for x in q], "loss_rate")
            for n, w in windows.items():
                row |= ci_columns([_window_loss(t, w) for t in traces], f"loss_rate_n{n}")
            row |= ci_columns([x["qdelay_mean_s"] for x in q], "qdelay_mean_s")
            row |= ci_columns([x["utilization"] for x in q], "utilization")
            row |= ci_columns([Summary(s).group("ftp").goodput_bps / Summary(s).group("ftp").flows for s in sums], "goodput_bps")
            row |= ci_columns([sum(f["delivered_bytes"] for f in fl) * 8 / on_s / len(fl) for fl in late], "goodput_bps_late")
            row |= ci_columns([s["fairness"]["jain"] for s in sums], "jain")
            row["n"] = len(sums)
            rows.append(row)
            if label == "dynamic":
                for t in traces:
                    bits = t["bottleneck.backlog_bytes"] * 8
                    for n, w in windows.items():
                        samples[n].append(bits[_in_windows(t["time_s"], w)].to_numpy())
        table = pd.DataFrame(rows)
        report.table("c1_summary", table,
                     "C1: mean drop probability (drops / arrivals at the bottleneck: whole run, and with N = 20 and "
                     "N = 40 flows active, from " f"{c1['settle_s']} s after each change), mean queueing delay, "
                     "utilisation, goodput per flow (the 20 persistent flows over the run; the 20 late flows over "
                     "their ON period) and Jain's index, with 95% CIs over replications")

        if series:
            fig, axes = plt.subplots(3, 1, figsize=(9, 8.5), sharex=True)
            for label, t in series.items():
                tt = t["time_s"]
                (line,) = axes[0].plot(tt, t["bottleneck.avg"], linewidth=0.9, label=f"avg, {label}")
                axes[0].plot(tt, t["bottleneck.min_th"], "--", color=line.get_color(), linewidth=0.8,
                             label=f"min_th, {label}")
                axes[1].plot(tt, t["bottleneck.p_a"], linewidth=0.6, label=label)
                # Averaged drop probability: drops / arrivals over 1 s windows.
                sec = t.set_index("time_s")[["bottleneck.arrivals", "bottleneck.drops"]]
                step = max(1, int(round(1.0 / float(np.median(np.diff(tt))))))
                d = sec.iloc[::step].diff()
                axes[2].plot(d.index, d["bottleneck.drops"] / d["bottleneck.arrivals"].where(d["bottleneck.arrivals"] > 0),
                             linewidth=0.9, label=f"drops/arrivals per 1 s, {label}")
                if "bottleneck.P_d" in t:
                    axes[2].plot(tt, t["bottleneck.P_d"], linewidth=0.9, label=f"P_d (EWMA), {label}")
            for y in (0.01, 0.02):
                axes[2].axhline(y, color="grey", linewidth=0.6, linestyle=":")
            axes[0].set_ylabel("average queue, packets")
            axes[1].set_ylabel("drop probability p_a")
            axes[2].set_ylabel("averaged drop probability")
            axes[2].set_xlabel("time, s")
            _mark_c1_schedule(axes, c1)
            report.figure("c1_timeseries", fig,
                          "C1, replication 0: average queue and min_th (top), the drop probability p_a of the "
                          "arrival at each sample (middle), and the averaged drop probability (bottom; dotted: "
                          "P_L and P_U); 20 more flows between the vertical lines")

        by = table.set_index("thresholds")
        txt = []
        for n in (20, 40):
            f, d = by.loc["fixed"], by.loc["dynamic"]
            txt.append(f"With N = {n} flows the drop probability is {f[f'loss_rate_n{n}']:.4f} "
                       f"({f[f'loss_rate_n{n}_ci95_low']:.4f}-{f[f'loss_rate_n{n}_ci95_high']:.4f}) with fixed "
                       f"thresholds and {d[f'loss_rate_n{n}']:.4f} ({d[f'loss_rate_n{n}_ci95_low']:.4f}-"
                       f"{d[f'loss_rate_n{n}_ci95_high']:.4f}) with dynamic ones")
        inside = [f"N = {n}" for n in (20, 40) if 0.01 <= by.loc["dynamic", f"loss_rate_n{n}"] <= 0.02]
        report.text(
            "; ".join(txt) + ". The mean dynamic-threshold drop probability lies inside the target band "
            f"[P_L, P_U] = [0.01, 0.02] for {' and '.join(inside) if inside else 'neither N'}. "
            f"Mean queueing delay: {by.loc['fixed', 'qdelay_mean_s']:.3f} s fixed, "
            f"{by.loc['dynamic', 'qdelay_mean_s']:.3f} s dynamic; utilisation {by.loc['fixed', 'utilization']:.4f} "
            f"and {by.loc['dynamic', 'utilization']:.4f}; goodput per persistent flow "
            f"{by.loc['fixed', 'goodput_bps'] / 1e3:.1f} and {by.loc['dynamic', 'goodput_bps'] / 1e3:.1f} kb/s. "
            + ("With dynamic thresholds the queue is longer on average (min_th rises with the load)."
               if by.loc["dynamic", "qdelay_mean_s"] > by.loc["fixed", "qdelay_mean_s"]
               else "Dynamic thresholds do not lengthen the queue here."))
        return samples

    # C2 ----------------------------------------------------------------------

    def _c2(self, report: StudyReport) -> None:
        exp = "c2-red-tail"
        report.section("C2: RED+Tail with web, CBR and FTP traffic")
        runs = report.runs(exp, flows=True)
        runs = runs.assign(scheme=[C2_SCHEMES[x][0] for x in runs[QDISC_AXIS]],
                           thresholds=[C2_SCHEMES[x][1] for x in runs[QDISC_AXIS]])

        def qdelay(group: str):
            # One-way delay minus one-way propagation (half the round trip),
            # weighted by delivered packets: queueing plus transmission times.
            def fn(s: dict[str, Any]) -> float | None:
                fl = [f for f in s["flows"] if f["group"] == group and f["delivered"] > 0 and f["delay_mean_s"] is not None]
                n = sum(f["delivered"] for f in fl)
                return sum(f["delivered"] * (f["delay_mean_s"] - f["rtt_prop_s"] / 2) for f in fl) / n if n else None
            return fn

        rows = []
        red_tail = runs[runs["scheme"] == "RED+Tail"]
        for cls, group in C2_CLASSES.items():
            t = summary_table(red_tail, ["thresholds"], {
                "loss_rate": lambda s, g=group: Summary(s).group(g).loss_rate,
                "delay_mean_s": lambda s, g=group: Summary(s).group(g).delay_mean_s,
                "qdelay_mean_s": qdelay(group),
                "goodput_bps": lambda s, g=group: Summary(s).group(g).goodput_bps,
            })
            t.insert(1, "class", cls)
            rows.append(t)
        classes = pd.concat(rows, ignore_index=True)
        order = {"fixed": 0, "dynamic": 1} | {c: i for i, c in enumerate(C2_CLASSES)}
        classes = classes.sort_values(["thresholds", "class"], key=lambda c: c.map(order)).reset_index(drop=True)
        report.table("c2_classes", classes,
                     "C2, RED+Tail: per class, loss rate (x100 for %), mean one-way delay of delivered packets "
                     "(delay_mean_s), the same less the one-way propagation delay (qdelay_mean_s: queueing and "
                     "transmission) and rate (goodput_bps; / 8000 for KB/s), fixed and dynamic thresholds")

        delivery = summary_table(runs, ["scheme", "thresholds"], {
            "small_mean_s": lambda s: _small_files(s)["mean_s"],
            "small_std_s": lambda s: _small_files(s)["std_s"],
            "small_count": lambda s: _small_files(s)["count"],
            "responses_mean_s": lambda s: s["traffic"]["web"]["responses"]["mean_s"],
            "responses_std_s": lambda s: s["traffic"]["web"]["responses"]["std_s"],
            "responses_count": lambda s: s["traffic"]["web"]["responses"]["count"],
            "ftp_goodput_bps": lambda s: Summary(s).group("ftp").goodput_bps,
            "cbr_loss_rate": lambda s: Summary(s).group("cbr").loss_rate,
        })
        report.table("c2_delivery", delivery,
                     f"C2: delivery time (request sent to last byte delivered) of the small files (small_: responses "
                     f"of at most {SMALL_FILE_PKTS} packets) and of all web responses (responses_): mean and standard "
                     "deviation within a run and the count, averaged over replications; FTP goodput and CBR loss; "
                     "for one drop-tail queue, one Adaptive RED queue and RED+Tail")

        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        x = np.arange(len(delivery))
        names = [f"{a}\n{b}" if b != "-" else a for a, b in zip(delivery["scheme"], delivery["thresholds"])]
        m = delivery["small_mean_s"]
        axes[0].bar(x, m, yerr=[m - delivery["small_mean_s_ci95_low"], delivery["small_mean_s_ci95_high"] - m],
                    capsize=3, color="#7aa6d6")
        axes[0].plot(x, delivery["small_std_s"], "k_", markersize=18, label="std within a run")
        axes[0].set_xticks(x, names, fontsize=7)
        axes[0].set_ylabel(f"small-file (<= {SMALL_FILE_PKTS} KB) delivery time, s")
        axes[0].legend(fontsize=8)
        width = 0.38
        for i, th in enumerate(("fixed", "dynamic")):
            g = classes[classes["thresholds"] == th]
            axes[1].bar(np.arange(3) + (i - 0.5) * width, 100 * g["loss_rate"], width,
                        yerr=[100 * (g["loss_rate"] - g["loss_rate_ci95_low"]), 100 * (g["loss_rate_ci95_high"] - g["loss_rate"])],
                        capsize=3, label=f"{th} thresholds")
        axes[1].set_xticks(np.arange(3), list(C2_CLASSES))
        axes[1].set_ylabel("loss, %")
        axes[1].legend(fontsize=8)
        report.figure("c2_delivery", fig, f"C2: delivery time of the small files (at most {SMALL_FILE_PKTS} packets of "
                      "1000 B) per scheme (bars: mean with 95% CI; black marks: standard deviation within a run), "
                      "and RED+Tail's loss per class")

        # Delivery time against the size of a small file, per scheme.
        size_rows = []
        for (scheme, th), g in runs.groupby(["scheme", "thresholds"], sort=False):
            per_run = [{r["pkts"]: r["mean_s"] for r in _by_size(s) if r["pkts"] <= SMALL_FILE_PKTS}
                       for s in g["summary"]]
            for k in sorted({k for d in per_run for k in d}):
                vals = [d[k] for d in per_run if k in d]
                size_rows.append({"scheme": scheme, "thresholds": th, "size_pkts": k,
                                  **ci_columns(vals, "delivery_mean_s", prefix=False), "n": len(vals)})
        by_size = pd.DataFrame(size_rows, columns=["scheme", "thresholds", "size_pkts", "delivery_mean_s", "ci95_low",
                                                   "ci95_high", "n"])
        report.table("c2_small_files", by_size,
                     f"C2: mean delivery time of the web responses of each size up to {SMALL_FILE_PKTS} packets, per "
                     "scheme (a run's mean for that size, averaged over the replications in which the size occurred; "
                     "n: those replications)")
        fig, ax = plt.subplots(figsize=(9, 4.5))
        by_size = by_size.assign(label=[f"{a}{'' if b == '-' else ' ' + b}"
                                        for a, b in zip(by_size["scheme"], by_size["thresholds"])])
        errorbar_plot(ax, by_size, "size_pkts", "delivery_mean_s", "label", fmt=".-")
        ax.set_xlabel("response size, packets of 1000 B")
        ax.set_ylabel("mean delivery time, s")
        ax.legend(fontsize=7)
        report.figure("c2_small_files", fig, f"C2: mean delivery time of the small files (at most {SMALL_FILE_PKTS} "
                      "packets) against their size, one line per scheme (95% CIs over replications)")

        d = delivery.set_index(["scheme", "thresholds"])["small_mean_s"]
        best = min(d.items(), key=lambda kv: kv[1])
        c = classes.set_index(["thresholds", "class"])
        report.text(
            f"Mean small-file (at most {SMALL_FILE_PKTS} packets) delivery time: "
            + ", ".join(f"{a}{'' if b == '-' else ' (' + b + ')'} {v:.3f} s" for (a, b), v in d.items())
            + f". The shortest is {best[0][0]}{'' if best[0][1] == '-' else ' (' + best[0][1] + ')'}. "
            f"In RED+Tail with dynamic thresholds FTP loses {100 * c.loc[('dynamic', 'FTP'), 'loss_rate']:.2f}% "
            f"(fixed: {100 * c.loc[('fixed', 'FTP'), 'loss_rate']:.2f}%), web {100 * c.loc[('dynamic', 'WEB'), 'loss_rate']:.2f}% "
            f"({100 * c.loc[('fixed', 'WEB'), 'loss_rate']:.2f}%), CBR {100 * c.loc[('dynamic', 'CBR'), 'loss_rate']:.2f}% "
            f"({100 * c.loc[('fixed', 'CBR'), 'loss_rate']:.2f}%); FTP's rate is "
            f"{c.loc[('dynamic', 'FTP'), 'goodput_bps'] / 8e3:.1f} KB/s with dynamic and "
            f"{c.loc[('fixed', 'FTP'), 'goodput_bps'] / 8e3:.1f} KB/s with fixed thresholds.")

    # C3 ----------------------------------------------------------------------

    def _c3(self, report: StudyReport, c3: dict[str, Any]) -> None:
        exp = "c3-file-delay"
        report.section("C3: small-file delivery time against a random drop probability")
        runs = report.runs(exp)

        def coverage(s: dict[str, Any]) -> float:
            # Share of the run spent in completed transfers and their gaps: a
            # flow that stalls (no transfer completes) shows as a low share.
            t = s["traffic"]["file"]["transfers"]
            return t["count"] * ((t["mean_s"] or 0.0) + C3_GAP_S) / s["duration_s"]

        table = summary_table(runs, [C3_P_AXIS, C3_SIZE_AXIS], {
            "transfer_mean_s": lambda s: s["traffic"]["file"]["transfers"]["mean_s"],
            "loss_rate": lambda s: Summary(s).bottleneck.loss_rate,
            "transfers": lambda s: s["traffic"]["file"]["transfers"]["count"],
            "coverage": coverage,
        })
        table = table.rename(columns={C3_P_AXIS: "P_d", C3_SIZE_AXIS: "size_KB"})
        table["P_d"] = table["P_d"].astype(float)
        table["size_KB"] = table["size_KB"].astype(int)
        report.table("c3_delivery", table,
                     "C3: mean delivery time of a file (SYN to last byte) over TCP Reno at 3 Mb/s and 128 ms, "
                     "against the random drop probability P_d; loss_rate is the drop rate measured at the "
                     "bottleneck; coverage is the share of the run taken by completed transfers and gaps")

        fig, ax = plt.subplots(figsize=(7, 4.5))
        errorbar_plot(ax, table, "P_d", "transfer_mean_s", "size_KB", low="transfer_mean_s_ci95_low",
                      high="transfer_mean_s_ci95_high")
        ax.set_xlabel("drop probability P_d")
        ax.set_ylabel("mean delivery time, s")
        ax.legend(title="file size, KB", fontsize=8)
        report.figure("c3_delivery", fig, "C3: mean file delivery time against P_d, one line per file size "
                      "(95% CIs over replications)")

        p = sorted(table["P_d"].unique())
        lo, hi = p[0], p[-1]
        ratio = [(k, table[(table.P_d == hi) & (table.size_KB == k)]["transfer_mean_s"].iloc[0]
                  / table[(table.P_d == lo) & (table.size_KB == k)]["transfer_mean_s"].iloc[0])
                 for k in sorted(table["size_KB"].unique())]
        err = (table["loss_rate"] - table["P_d"]).abs().max()
        report.text(
            f"From P_d = {lo:g} to {hi:g} the mean delivery time grows by a factor of "
            + ", ".join(f"{r:.2f} ({k} KB)" for k, r in ratio)
            + f". The measured drop rate is within {err:.4f} of the configured P_d at every point; completed "
            f"transfers and gaps cover at least {table['coverage'].min():.2f} of every run (the rest is the "
            "transfer in progress at the end).")

    # C4 ----------------------------------------------------------------------

    def _c4(self, report: StudyReport, samples: dict[int, list[np.ndarray]], c1: dict[str, Any]) -> None:
        report.section("C4: queue-dynamics model against the C1 queue")
        rows, map_rows, traj_rows, dist_rows, hist_rows = [], [], [], [], []
        fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))
        fig_map, map_axes = plt.subplots(1, 2, figsize=(11, 4.8))
        bins = np.arange(0, B_BITS + WIRE_BITS, WIRE_BITS)
        for col, (N, sigma) in enumerate(SIGMA_BPS.items()):
            d = jou.delays(N, D_S)
            rtt = N * W_BAR_BITS / C_BPS  # the round trip at equilibrium, d + q_e/C
            q_e = jou.equilibrium(W_bar=W_BAR_BITS, C=C_BPS, d=d)
            sim = samples.get(N, [])
            sim_means = mean_ci([float(x.mean()) for x in sim if len(x)])
            pooled = np.concatenate(sim) if sim else np.array([])
            if pooled.size:
                h, _ = np.histogram(pooled, bins=bins)
                h = h / h.sum()
                hist_rows += [{"N": N, "q_bits": float(b), "p_sim": float(v)} for b, v in zip(bins[:-1], h)]
            ax_dist = axes[1, col]
            for S_rtt in S_RTT:
                S = S_rtt * rtt
                st = jou.stability(S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d)
                chain = jou.stationary_distribution(S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d, B=B_BITS, sigma=sigma,
                                                    L=WIRE_BITS)
                try:
                    g = jou.gaussian_approximation(S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d, sigma=sigma)
                    g_mean, g_std = g.mean_bits, math.sqrt(g.var_bits)
                except ModelError:
                    g_mean = g_std = math.nan
                rows.append({"N": N, "sigma_bps": sigma, "S_rtt": S_rtt, "S_s": S, "q_e_bits": q_e,
                             "f_prime": st.f_prime, "gas": st.gas, "chain_mean_bits": chain.mean_bits,
                             "chain_std_bits": math.sqrt(chain.var_bits), "chain_p_full": float(chain.pi[-1]),
                             "gauss_mean_bits": g_mean,
                             "gauss_std_bits": g_std,
                             "gauss_std_rel_diff": g_std / math.sqrt(chain.var_bits) - 1,
                             "sim_mean_bits": sim_means["mean"], "sim_ci95_low": sim_means["ci95_low"],
                             "sim_ci95_high": sim_means["ci95_high"],
                             "sim_std_bits": float(pooled.std()) if pooled.size else math.nan, "n": sim_means["n"]})
                # From half the equilibrium queue, over 40 round trips.
                steps = int(math.ceil(40 * rtt / S))
                traj = jou.trajectory(S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d, B=B_BITS, q0=q_e / 2, steps=steps)
                traj_rows += [{"N": N, "S_rtt": S_rtt, "step": i, "time_s": i * S, "q_bits": q}
                              for i, q in enumerate(traj)]
                axes[0, col].plot(np.arange(steps + 1) * S, traj, ".-", markersize=3, linewidth=0.8,
                                  label=f"S = {S_rtt:g} RTT")
                gauss_p = np.full(chain.q_bits.size, math.nan)
                if math.isfinite(g_std):
                    z = (chain.q_bits + WIRE_BITS / 2 - g_mean) / g_std
                    gauss_p = np.exp(-0.5 * z * z) / (g_std * math.sqrt(2 * math.pi)) * WIRE_BITS
                dist_rows += [{"N": N, "S_rtt": S_rtt, "q_bits": q, "pi_chain": pi, "p_gauss": pg}
                              for q, pi, pg in zip(chain.q_bits, chain.pi, gauss_p)]
                line = model_curve(ax_dist, chain.q_bits + WIRE_BITS / 2, chain.pi, f"chain, S = {S_rtt:g} RTT")
                if math.isfinite(g_std):
                    model_curve(ax_dist, chain.q_bits + WIRE_BITS / 2, gauss_p, f"Gaussian, S = {S_rtt:g} RTT",
                                color=line.get_color(), linestyle=":")
                # The paper's Fig. 9: the map for each S with the diagonal
                # (drawn with the last S), and a cobweb of the path above.
                qq = np.linspace(0, B_BITS, 400)
                map_rows += [{"N": N, "S_rtt": S_rtt, "q_bits": q, "f_bits": f} for q, f in
                             zip(qq, np.clip(jou.drift_map(qq, S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d), 0, B_BITS))]
                mline = lindley_map(map_axes[col], S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d, B=B_BITS,
                                    label=f"S = {S_rtt:g} RTT, f'(q_e) = {st.f_prime:.3g}",
                                    reference=S_rtt == S_RTT[-1])
                cobweb = np.repeat(traj[:7], 2)
                map_axes[col].plot(cobweb[:-1], cobweb[1:], color=mline.get_color(), linewidth=0.6, alpha=0.7)
            if pooled.size:
                ax_dist.bar(bins[:-1] + WIRE_BITS / 2, h, width=WIRE_BITS, color="grey", alpha=0.45,
                            label="C1 dynamic, measured")
            lo, hi = max(0.0, q_e - 6 * sigma * math.sqrt(N) * rtt), min(B_BITS, q_e + 6 * sigma * math.sqrt(N) * rtt)
            ax_dist.set_xlim(lo, hi)
            # The height of what is inside the window (an empty-queue bar at 0 is not).
            shown = [max(r["pi_chain"] for r in dist_rows if r["N"] == N and lo <= r["q_bits"] <= hi)]
            if pooled.size:
                shown.append(float(h[(bins[:-1] >= lo) & (bins[:-1] <= hi)].max()))
            ax_dist.set_ylim(0, 1.15 * max(shown))
            ax_dist.set_xlabel("queue q, bits")
            ax_dist.set_ylabel("probability per packet-sized bin")
            ax_dist.set_title(f"N = {N}, sigma = {sigma:g} bit/s", fontsize=9)
            ax_dist.legend(fontsize=6)
        for col, N in enumerate(SIGMA_BPS):
            axes[0, col].set_xlabel("time, s")
            axes[0, col].set_ylabel("q, bits (no noise, from q_e / 2)")
            axes[0, col].set_title(f"trajectories, N = {N}", fontsize=9)
            axes[0, col].legend(fontsize=6)
            map_axes[col].set_title(f"N = {N}: q[n+1] = f(q[n]) clipped to [0, B]", fontsize=9)
            map_axes[col].legend(fontsize=7, loc="upper right")
        table = pd.DataFrame(rows)
        report.table("c4_model", table,
                     f"C4: Jou-Tan-Baras model with W_bar = {W_BAR_BITS:g} bits, C = {C_BPS:g} b/s, d = {D_S} s, "
                     f"B = {B_BITS:g} bits (C1's {C1_LIMIT_PKTS}-packet buffer), chain states of one {WIRE_BITS}-bit "
                     "packet; S in units of the equilibrium round trip N W_bar / C; the queue measured in C1 with "
                     "dynamic thresholds (mean with 95% CI over replications, std of the pooled samples)")
        report.table("c4_map", pd.DataFrame(map_rows), "C4: the map f(q) clipped to [0, B], S = 0.5, 1 and 2 RTT")
        fig_map.tight_layout()
        report.figure("c4_map", fig_map,
                      "C4 (the paper's Fig. 9): the map f for S = 0.5, 1 and 2 RTT, with the diagonal and the fixed "
                      "point q_e where every map crosses it; thin lines: the first six steps from q_e / 2. The slope "
                      "f'(q_e) = 1 - S/RTT decides: 0.5 (monotone approach), 0 (one step), -1 (alternation that "
                      "does not shrink to first order)")
        report.table("c4_trajectories", pd.DataFrame(traj_rows), "C4: noiseless trajectories from q_e / 2")
        report.table("c4_distribution", pd.DataFrame(dist_rows),
                     "C4: stationary distribution by the Markov chain and the Gaussian approximation (per bin)")
        if hist_rows:
            report.table("c4_histogram", pd.DataFrame(hist_rows),
                         "C4: queue histogram measured in C1 with dynamic thresholds (per packet-sized bin)")
        fig.tight_layout()
        report.figure("c4_model", fig,
                      "C4: noiseless trajectories from q_e / 2 for S = 0.5, 1 and 2 RTT (top, N = 20 and 40), and "
                      "the stationary distribution by the chain (dashed) and the Gaussian approximation (dotted) "
                      "against the queue measured in C1 (grey)")

        texts = []
        for N in SIGMA_BPS:
            t = table[table.N == N].set_index("S_rtt")
            rel = t["gauss_std_rel_diff"].dropna().abs()
            texts.append(
                f"N = {N}: q_e = {t['q_e_bits'].iloc[0]:.4g} bits; f'(q_e) = "
                + ", ".join(f"{v:.3g} at S = {s:g} RTT" for s, v in t["f_prime"].items())
                + f"; the Gaussian standard deviation differs from the chain's by "
                + ", ".join(f"{100 * v:.0f}%" for v in rel) + " at S = "
                + ", ".join(f"{s:g}" for s in rel.index) + " RTT; the queue measured in C1 has mean "
                f"{t['sim_mean_bits'].iloc[0]:.4g} bits (CI {t['sim_ci95_low'].iloc[0]:.4g}-{t['sim_ci95_high'].iloc[0]:.4g}) "
                f"and standard deviation {t['sim_std_bits'].iloc[0]:.4g} bits, against the chain's "
                + ", ".join(f"{m:.4g} +- {s:.3g}" for m, s in zip(t["chain_mean_bits"], t["chain_std_bits"]))
                + f" bits; the chain's probability of a full buffer at S = 2 RTT is {t.loc[2.0, 'chain_p_full']:.3g}.")
        tr = pd.DataFrame(traj_rows)
        tr = tr[tr.S_rtt == 2.0].merge(table[table.S_rtt == 2.0][["N", "q_e_bits"]], on="N")
        tr["dev"] = (tr["q_bits"] - tr["q_e_bits"]).abs() / tr["q_e_bits"]
        decay = ", ".join(f"N = {n}: |q - q_e| = {g['dev'].iloc[1:3].max():.3f} q_e after the first steps, "
                          f"{g['dev'].iloc[-2:].max():.3f} q_e after {int(g['step'].max())} steps"
                          for n, g in tr.groupby("N"))
        report.text(
            *texts,
            "At S = 2 RTT the homogeneous map has f'(q_e) = -1 exactly: the linearisation is marginal, so the "
            "noiseless trajectory alternates about q_e and the alternation shrinks only through the map's "
            f"curvature ({decay}); this is slow convergence, not chaos. The Gaussian approximation has no "
            "stationary law there and is left out. The model takes W_bar and sigma as given (fixed inputs of the study), not derived from the "
            "simulated TCP flows, so the measured histogram is a check of the model's shape and location, not "
            "a fit.")

    def _c4_lyapunov(self, report: StudyReport) -> pd.DataFrame:
        """How the noiseless map's dynamics change with S: its Lyapunov
        exponent (negative: paths close in; positive: chaos) and the spread
        of the path it settles on, for S around the paper's 2 RTT."""
        rows = []
        for N in SIGMA_BPS:
            d = jou.delays(N, D_S)
            q_e = jou.equilibrium(W_bar=W_BAR_BITS, C=C_BPS, d=d)
            for S_rtt in LYAPUNOV_S_RTT:
                kw = {"S": S_rtt * N * W_BAR_BITS / C_BPS, "W_bar": W_BAR_BITS, "C": C_BPS, "d": d, "B": B_BITS,
                      "q0": q_e / 2, "steps": LYAPUNOV_STEPS}
                lam = jou.lyapunov_exponent(**kw, skip=LYAPUNOV_SKIP)
                path = jou.trajectory(**kw)[LYAPUNOV_SKIP:]
                rows.append({"N": N, "S_rtt": S_rtt, "lyapunov_per_step": lam,
                             "q_min_over_q_e": float(path.min()) / q_e, "q_max_over_q_e": float(path.max()) / q_e,
                             "chaotic": bool(lam >= CHAOS_LAMBDA)})
        table = pd.DataFrame(rows)
        report.table("c4_lyapunov", table,
                     f"C4: Lyapunov exponent of the noiseless map (mean of ln|f'(q[n])| over steps {LYAPUNOV_SKIP} to "
                     f"{LYAPUNOV_STEPS} from q_e / 2; -inf where the path is clipped at 0 or B) and the range of the "
                     f"path over those steps, against S; chaotic: exponent at least {CHAOS_LAMBDA}")
        chaos = table[table.chaotic]
        report.text(
            "Sensitivity of the map to S (what the paper's 'chaotic for S = 2 RTT' depends on): at S = 2 RTT the "
            "exponent is " + " and ".join(f"{v:.2g}" for v in table[table.S_rtt == 2.0]["lyapunov_per_step"])
            + " per step (N = 20 and 40), just below 0: the map is marginal there, not chaotic. "
            + ("Of the S tried, a positive exponent (chaos) appears only at " + ", ".join(
                f"S = {r.S_rtt:g} RTT (N = {r.N})" for r in chaos.itertuples()) if len(chaos)
               else "No S tried gives a positive exponent")
            + "; beyond 2 RTT the fixed point repels and the path settles on a cycle or, where the buffer or the "
            "empty queue clips it, on the edges.")
        return table

    def _c4_noise(self, report: StudyReport, c1: dict[str, Any]) -> None:
        """The paper's Figs. 7 and 10: the model driven with noise through
        C1's load schedule, beside the queue and one connection's rate
        measured in C1 (dynamic thresholds)."""
        exp = "c1-ared-thresholds"
        runs = report.runs(exp)
        g = runs[runs[C1_AXIS] == "dynamic"]
        traces = [report.series(exp, int(p), int(r)) for p, r in zip(g["point"], g["replication"])]
        traces = [t for t in traces if t is not None and f"{TRACED_FLOW}.cwnd" in t]
        windows = _phase_windows(c1)

        def rate(t: pd.DataFrame) -> pd.Series:
            # The window over the smoothed round trip, in bits on the wire:
            # the model's W/(d + q/C) for this one flow.
            srtt = t[f"{TRACED_FLOW}.srtt_s"].where(t[f"{TRACED_FLOW}.srtt_s"] > 0)
            return t[f"{TRACED_FLOW}.cwnd"] * WIRE_BITS / srtt

        rate_rows = []
        for N, sigma in SIGMA_BPS.items():
            means = [float(rate(t)[_in_windows(t["time_s"], windows[N])].mean()) for t in traces]
            stds = [float(rate(t)[_in_windows(t["time_s"], windows[N])].std()) for t in traces]
            rate_rows.append({"N": N, "model_rate_bps": C_BPS / N, "sigma_paper_bps": sigma,
                              **ci_columns(means, "rate_mean_bps"), **ci_columns(stds, "sigma_sim_bps"),
                              "n": len(traces)})
        rates = pd.DataFrame(rate_rows)
        report.table("c4_flow_rate", rates,
                     f"C4: the rate cwnd x {WIRE_BITS} bits / srtt of one persistent flow ({TRACED_FLOW}) in C1 with "
                     "dynamic thresholds, sampled every 100 ms while N flows are active: its mean and standard "
                     "deviation (95% CIs over replications) against the model's mean rate C/N and the paper's sigma")

        # The model through C1's schedule: N = 20, 40, 20 flows, S the
        # equilibrium round trip of the flows present (or twice it).
        phases = [(0.0, float(c1["join_s"]), 20), (float(c1["join_s"]), float(c1["leave_s"]), 40),
                  (float(c1["leave_s"]), float(c1["duration_s"]), 20)]
        traj_rows = []
        for S_rtt in (1.0, 2.0):
            q = jou.equilibrium(W_bar=W_BAR_BITS, C=C_BPS, d=jou.delays(20, D_S))
            for k, (a, b, N) in enumerate(phases):
                S = S_rtt * N * W_BAR_BITS / C_BPS
                steps = max(1, int(round((b - a) / S)))
                path = jou.trajectory(S=S, W_bar=W_BAR_BITS, C=C_BPS, d=jou.delays(N, D_S), B=B_BITS, q0=q,
                                      steps=steps, sigma=SIGMA_BPS[N], seed=NOISE_SEED + k)
                traj_rows += [{"S_rtt": S_rtt, "N": N, "time_s": a + i * S, "q_bits": float(x)}
                              for i, x in enumerate(path) if i > 0 or k == 0]
                q = float(path[-1])
        noisy = pd.DataFrame(traj_rows)
        report.table("c4_noisy_trajectory", noisy,
                     "C4: the model driven with noise through C1's schedule (20, 40, 20 flows), S = 1 and 2 RTT")

        fig, (ax_rate, ax_q) = plt.subplots(2, 1, figsize=(10, 7.5), sharex=True)
        if traces:
            t = traces[0]
            ax_rate.plot(t["time_s"], rate(t) / 1e3, color="grey", linewidth=0.6, label=f"{TRACED_FLOW}, C1 dynamic")
            ax_q.plot(t["time_s"], t["bottleneck.backlog_bytes"] * 8, color="grey", linewidth=0.6,
                      label="queue measured in C1 (dynamic)")
        for i, (a, b, N) in enumerate(phases):
            m, sd = C_BPS / N / 1e3, SIGMA_BPS[N] / 1e3
            ax_rate.plot([a, b], [m, m], "k--", linewidth=1.0, label="model mean rate C/N" if i == 0 else None)
            for y in (m - sd, m + sd):
                ax_rate.plot([a, b], [y, y], "r--", linewidth=0.9,
                             label="C/N +- the paper's sigma" if i == 0 and y < m else None)
            q_e = jou.equilibrium(W_bar=W_BAR_BITS, C=C_BPS, d=jou.delays(N, D_S))
            ax_q.plot([a, b], [q_e, q_e], "k--", linewidth=0.9, label="q_e" if i == 0 else None)
        for S_rtt, gq in noisy.groupby("S_rtt"):
            ax_q.plot(gq["time_s"], gq["q_bits"], ".-", markersize=2, linewidth=0.7,
                      label=f"model with noise, S = {S_rtt:g} RTT")
        ax_rate.set_ylabel("one flow's rate, kb/s")
        ax_q.set_ylabel("queue, bits")
        ax_q.set_xlabel("time, s")
        _mark_c1_schedule((ax_rate, ax_q), c1)
        report.figure("c4_noise", fig,
                      "C4 (the paper's Figs. 7 and 10): top, the rate cwnd/srtt of one FTP flow in C1 (dynamic "
                      "thresholds, replication 0) against the model's mean rate C/N and the paper's sigma (dashed); "
                      "bottom, the model's queue driven with noise through the same schedule for S = 1 and 2 RTT, "
                      "with the equilibrium q_e (dashed) and the queue measured in C1 (grey)")
        r = rates.set_index("N")
        spread = {S: noisy[(noisy.S_rtt == S) & (noisy.N == 40)]["q_bits"].std() for S in (1.0, 2.0)}
        report.text(
            "Noise model: xi[n] independent and normal with mean 0 and variance N S^2 sigma^2 (the model's "
            "equation (2)), sigma = 77021 b/s for N = 20 and 128490 b/s for N = 40, the paper's values for the "
            "spread of one flow's rate, which the model takes as inputs; numpy's default generator seeded "
            f"{NOISE_SEED}, {NOISE_SEED + 1} and {NOISE_SEED + 2} for the three load phases, so the figure is the "
            "same on every run. The path starts at q_e for 20 flows and each phase continues from where the last "
            f"ended. With 40 flows its standard deviation is {spread[1.0]:.3g} bits at S = RTT and "
            f"{spread[2.0]:.3g} bits at S = 2 RTT. The measured flow's rate has standard deviation "
            + " and ".join(f"{r.loc[N, 'sigma_sim_bps'] / 1e3:.1f} kb/s [{r.loc[N, 'sigma_sim_bps_ci95_low'] / 1e3:.1f}, "
                           f"{r.loc[N, 'sigma_sim_bps_ci95_high'] / 1e3:.1f}] with N = {N} (the paper's sigma: "
                           f"{SIGMA_BPS[N] / 1e3:.1f} kb/s; mean rate {r.loc[N, 'rate_mean_bps'] / 1e3:.1f} kb/s "
                           f"against C/N = {C_BPS / N / 1e3:.1f} kb/s)" for N in SIGMA_BPS)
            + ". The window over the smoothed round trip is the flow's sending rate as the model defines it, "
            "sampled every 100 ms, not averaged over S; it is a check of the noise's size, not a fit.")

    # The paper's claims ------------------------------------------------------

    # Table I of the paper (RED+Tail, 3 Mb/s): per thresholds and class, loss
    # (%), mean delay (s) and rate (KB/s).
    PAPER_TABLE_I = {
        ("fixed", "FTP"): (2.747, 0.184, 209.465), ("fixed", "WEB"): (1.278, 0.114, 144.455),
        ("fixed", "CBR"): (0.300, 0.109, 19.867),
        ("dynamic", "FTP"): (0.899, 0.318, 209.455), ("dynamic", "WEB"): (2.306, 0.093, 144.505),
        ("dynamic", "CBR"): (0.519, 0.091, 19.827),
    }

    def _claims(self, report: StudyReport, c1: dict[str, Any], lyapunov: pd.DataFrame) -> None:
        """The paper's claims on C1, Table I and the model beside aqmlab's numbers."""
        claims = Claims()
        add = claims.add

        def by_rep(runs: pd.DataFrame, axis: str, label: str, fn: Any) -> pd.Series:
            g = runs[runs[axis] == label]
            return pd.Series([fn(x) for x in g["summary"]], index=list(g["replication"]), dtype=float)

        exp = "c1-ared-thresholds"
        runs = report.runs(exp)
        if not runs.empty:
            windows = _phase_windows(c1)[40]

            def loss40(label: str) -> pd.Series:
                g = runs[runs[C1_AXIS] == label]
                vals = []
                for p, r in zip(g["point"], g["replication"]):
                    t = report.series(exp, int(p), int(r))
                    vals.append(_window_loss(t, windows) if t is not None else math.nan)
                return pd.Series(vals, index=list(g["replication"]), dtype=float)

            fixed, dynamic = mean_ci(loss40("fixed")), mean_ci(loss40("dynamic"))
            add("C1: with 40 flows, fixed thresholds give a drop probability around 0.05", "0.05",
                show_ci(fixed), range_verdict(fixed, 0.05 / 1.5, 0.05 * 1.5),
                "drops / arrivals with 40 flows active; 95% interval within a factor 1.5 of 0.05")
            add("C1: dynamic thresholds hold it around 0.014, inside [P_L, P_U] = [0.010, 0.020]", "0.014",
                show_ci(dynamic), range_verdict(dynamic, 0.010, 0.020), "95% interval inside [0.010, 0.020]")
            delay = {lb: by_rep(runs, C1_AXIS, lb, lambda x: Summary(x).bottleneck.qdelay_mean_s)
                     for lb in ("fixed", "dynamic")}
            d = mean_ci((delay["dynamic"] - delay["fixed"]).dropna())
            add("C1: dynamic thresholds pay with a higher queueing delay", "higher",
                show_ci(d, 1e3, " ms", signed=True), effect_verdict(d, 0.0, math.inf),
                "per-replication difference of the mean queueing delay, dynamic - fixed, above 0")
            util = [by_rep(runs, C1_AXIS, lb, lambda x: Summary(x).bottleneck.utilization).mean()
                    for lb in ("fixed", "dynamic")]
            add("C1: utilisation 100% with both", "100%", f"{100 * util[0]:.2f}% and {100 * util[1]:.2f}%",
                "reproduced" if min(util) >= 0.99 else "not reproduced", "both means at least 99%")

        runs = report.runs("c2-red-tail", flows=True)
        if not runs.empty:
            names = {"fixed": "RED+Tail fixed", "dynamic": "RED+Tail dynamic"}
            metrics = {"loss": lambda g: lambda x: 100 * Summary(x).group(g).loss_rate,
                       "delay": lambda g: lambda x: Summary(x).group(g).delay_mean_s,
                       "rate": lambda g: lambda x: Summary(x).group(g).goodput_bps / 8e3}
            units = {"loss": "%", "delay": " s", "rate": " KB/s"}
            vals = {(th, cls, m): by_rep(runs, QDISC_AXIS, names[th], metrics[m](group))
                    for th in names for cls, group in C2_CLASSES.items() for m in metrics}
            for (th, cls), paper in self.PAPER_TABLE_I.items():
                for k, m in enumerate(metrics):
                    ci = mean_ci(vals[(th, cls, m)].dropna())
                    add(f"Table I, {th} thresholds, {cls} {m}", f"{paper[k]}{units[m]}", show_ci(ci, unit=units[m]),
                        range_verdict(ci, paper[k] / 1.5, paper[k] * 1.5),
                        "95% interval within a factor 1.5 of the paper's" + (" (delay: mean one-way delay of "
                                                                               "delivered packets)" if m == "delay"
                                                                               else ""))
            for cls, m, what in (("FTP", "loss", "dynamic thresholds cut FTP loss"),
                                 ("FTP", "delay", "dynamic thresholds raise FTP delay"),
                                 ("WEB", "loss", "web loss rises slightly with dynamic thresholds"),
                                 ("CBR", "loss", "CBR loss rises slightly with dynamic thresholds")):
                f, dy = vals[("fixed", cls, m)], vals[("dynamic", cls, m)]
                rel = mean_ci(((dy - f) / f).replace([np.inf, -np.inf], np.nan).dropna())
                paper_rel = self.PAPER_TABLE_I[("dynamic", cls)][0 if m == "loss" else 1] \
                    / self.PAPER_TABLE_I[("fixed", cls)][0 if m == "loss" else 1] - 1
                lo, hi = sorted((paper_rel / 2, paper_rel * 2)) if paper_rel > 0 else (max(-1.0, paper_rel * 2),
                                                                                          paper_rel / 2)
                add(f"Table I: {what}", f"{100 * paper_rel:+.0f}%", show_ci(rel, 100, "%", signed=True),
                    effect_verdict(rel, lo, hi),
                    "per-replication relative change, dynamic vs fixed; its 95% interval within a factor 2 of the "
                    "paper's change")
        def point(x: float) -> dict[str, float]:
            # A model's number has no sampling error: its interval is itself.
            return {"mean": x, "ci95_low": x, "ci95_high": x}

        for S_rtt, what, lo, hi, rule in (
                (1.0, "stable", -math.inf, -CHAOS_LAMBDA, f"Lyapunov exponent at most -{CHAOS_LAMBDA} per step"),
                (2.0, "chaotic", CHAOS_LAMBDA, math.inf, f"Lyapunov exponent at least {CHAOS_LAMBDA} per step")):
            lam = lyapunov[lyapunov.S_rtt == S_rtt].set_index("N")["lyapunov_per_step"]
            add(f"Model: the queue map is {what} for S = {S_rtt:g} RTT (N = 20 and 40)", what,
                ", ".join(f"N = {N}: {v:.3g}" for N, v in lam.items()),
                combine_verdicts([range_verdict(point(v), lo, hi) for v in lam]),
                f"{rule} (noiseless map from q_e / 2, steps {LYAPUNOV_SKIP}-{LYAPUNOV_STEPS}; -inf: a slope of 0 "
                "on the path) for both N")
        if claims:
            report.claims(claims, "Each claim of the paper (C1's text, Table I, the model), aqmlab's number with its "
                                  "95% interval (the model's numbers are exact), and the verdict by the rule in the "
                                  "last column.")
