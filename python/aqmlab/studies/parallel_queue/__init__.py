"""Study C: parallel queues and Adaptive RED with dynamic thresholds
(Jou, Tan, Baras).

- C1: one Feng-style Adaptive RED queue, 20 FTP flows and 20 more in the
  middle third of the run, fixed against dynamic thresholds: time series and
  a summary table.
- C2: RED+Tail (web and CBR in a drop-tail queue, FTP in an Adaptive RED
  queue) against one drop-tail and one Adaptive RED queue: per-class loss,
  delay and rate, and the delivery time of the web responses.
- C3: the delivery time of a small file over TCP Reno against a fixed random
  drop probability.
- C4: the queue-dynamics model of :mod:`aqmlab.models.jou` (map, fixed
  point, trajectories, stationary distribution by Markov chain and by the
  Gaussian approximation) next to the queue histogram measured in C1.

The experiments are the templates beside this file; C4 runs nothing of its
own, it reads C1's traces.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from aqmlab.exceptions import ModelError
from aqmlab.models import jou
from aqmlab.models.plots import lindley_map, model_curve
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
        self._claims(report, scale["c1"])

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
            row |= ci_columns([s["traffic"]["ftp"]["goodput_bps"] / s["traffic"]["ftp"]["flows"] for s in sums], "goodput_bps")
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
            for ax in axes:
                ax.axvline(c1["join_s"], color="k", linewidth=0.5)
                ax.axvline(c1["leave_s"], color="k", linewidth=0.5)
                ax.legend(fontsize=7, loc="upper right")
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
                "loss_rate": lambda s, g=group: s["traffic"][g]["loss_rate"],
                "delay_mean_s": lambda s, g=group: s["traffic"][g]["delay_mean_s"],
                "qdelay_mean_s": qdelay(group),
                "goodput_bps": lambda s, g=group: s["traffic"][g]["goodput_bps"],
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
            "responses_mean_s": lambda s: s["traffic"]["web"]["responses"]["mean_s"],
            "responses_std_s": lambda s: s["traffic"]["web"]["responses"]["std_s"],
            "responses_count": lambda s: s["traffic"]["web"]["responses"]["count"],
            "ftp_goodput_bps": lambda s: s["traffic"]["ftp"]["goodput_bps"],
            "cbr_loss_rate": lambda s: s["traffic"]["cbr"]["loss_rate"],
        })
        report.table("c2_delivery", delivery,
                     "C2: delivery time of the web responses (request sent to last byte delivered; mean and "
                     "standard deviation within a run, averaged over replications), FTP goodput and CBR loss, "
                     "for one drop-tail queue, one Adaptive RED queue and RED+Tail")

        fig, axes = plt.subplots(1, 2, figsize=(11, 4))
        x = np.arange(len(delivery))
        names = [f"{a}\n{b}" if b != "-" else a for a, b in zip(delivery["scheme"], delivery["thresholds"])]
        m = delivery["responses_mean_s"]
        axes[0].bar(x, m, yerr=[m - delivery["responses_mean_s_ci95_low"], delivery["responses_mean_s_ci95_high"] - m],
                    capsize=3, color="#7aa6d6")
        axes[0].plot(x, delivery["responses_std_s"], "k_", markersize=18, label="std within a run")
        axes[0].set_xticks(x, names, fontsize=7)
        axes[0].set_ylabel("web response delivery time, s")
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
        report.figure("c2_delivery", fig, "C2: web response delivery time per scheme (bars: mean with 95% CI; "
                      "black marks: standard deviation within a run), and RED+Tail's loss per class")

        d = delivery.set_index(["scheme", "thresholds"])["responses_mean_s"]
        best = min(d.items(), key=lambda kv: kv[1])
        c = classes.set_index(["thresholds", "class"])
        report.text(
            "Mean web delivery time: " + ", ".join(f"{a}{'' if b == '-' else ' (' + b + ')'} {v:.3f} s"
                                                    for (a, b), v in d.items())
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
            "loss_rate": lambda s: s["queues"]["bottleneck"]["loss_rate"],
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
                axes[0, 1].plot(np.arange(steps + 1) * S, traj, ".-", markersize=3, linewidth=0.8,
                                label=f"N = {N}, S = {S_rtt:g} RTT")
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
                if S_rtt == 1.0:
                    qq = np.linspace(0, B_BITS, 400)
                    map_rows += [{"N": N, "S_rtt": S_rtt, "q_bits": q, "f_bits": f} for q, f in
                                 zip(qq, np.clip(jou.drift_map(qq, S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d), 0, B_BITS))]
                    lindley_map(axes[0, 0], S=S, W_bar=W_BAR_BITS, C=C_BPS, d=d, B=B_BITS)
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
        axes[0, 0].set_title("map f(q) at S = RTT, fixed points q_e", fontsize=9)
        axes[0, 0].legend(fontsize=6)
        axes[0, 1].set_xlabel("time, s")
        axes[0, 1].set_ylabel("q, bits (no noise, from q_e / 2)")
        axes[0, 1].set_title("trajectories", fontsize=9)
        axes[0, 1].legend(fontsize=6)
        table = pd.DataFrame(rows)
        report.table("c4_model", table,
                     f"C4: Jou-Tan-Baras model with W_bar = {W_BAR_BITS:g} bits, C = {C_BPS:g} b/s, d = {D_S} s, "
                     f"B = {B_BITS:g} bits (C1's {C1_LIMIT_PKTS}-packet buffer), chain states of one {WIRE_BITS}-bit "
                     "packet; S in units of the equilibrium round trip N W_bar / C; the queue measured in C1 with "
                     "dynamic thresholds (mean with 95% CI over replications, std of the pooled samples)")
        report.table("c4_map", pd.DataFrame(map_rows), "C4: the map f(q) clipped to [0, B], S = RTT")
        report.table("c4_trajectories", pd.DataFrame(traj_rows), "C4: noiseless trajectories from q_e / 2")
        report.table("c4_distribution", pd.DataFrame(dist_rows),
                     "C4: stationary distribution by the Markov chain and the Gaussian approximation (per bin)")
        if hist_rows:
            report.table("c4_histogram", pd.DataFrame(hist_rows),
                         "C4: queue histogram measured in C1 with dynamic thresholds (per packet-sized bin)")
        report.figure("c4_model", fig,
                      "C4: the map and its fixed points (top left), noiseless trajectories from q_e / 2 for S = 0.5, 1 "
                      "and 2 RTT (top right), and for N = 20 and 40 the stationary distribution by the chain (dashed) "
                      "and the Gaussian approximation (dotted) against the queue measured in C1 (grey)")

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

    # The paper's claims ------------------------------------------------------

    # Table I of the paper (RED+Tail, 3 Mb/s): per thresholds and class, loss
    # (%), mean delay (s) and rate (KB/s).
    PAPER_TABLE_I = {
        ("fixed", "FTP"): (2.747, 0.184, 209.465), ("fixed", "WEB"): (1.278, 0.114, 144.455),
        ("fixed", "CBR"): (0.300, 0.109, 19.867),
        ("dynamic", "FTP"): (0.899, 0.318, 209.455), ("dynamic", "WEB"): (2.306, 0.093, 144.505),
        ("dynamic", "CBR"): (0.519, 0.091, 19.827),
    }

    def _claims(self, report: StudyReport, c1: dict[str, Any]) -> None:
        """The paper's claims on C1 and Table I beside aqmlab's numbers."""
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
            delay = {lb: by_rep(runs, C1_AXIS, lb, lambda x: x["queues"]["bottleneck"]["qdelay_mean_s"])
                     for lb in ("fixed", "dynamic")}
            d = mean_ci((delay["dynamic"] - delay["fixed"]).dropna())
            add("C1: dynamic thresholds pay with a higher queueing delay", "higher",
                show_ci(d, 1e3, " ms", signed=True), effect_verdict(d, 0.0, math.inf),
                "per-replication difference of the mean queueing delay, dynamic - fixed, above 0")
            util = [by_rep(runs, C1_AXIS, lb, lambda x: x["queues"]["bottleneck"]["utilization"]).mean()
                    for lb in ("fixed", "dynamic")]
            add("C1: utilisation 100% with both", "100%", f"{100 * util[0]:.2f}% and {100 * util[1]:.2f}%",
                "reproduced" if min(util) >= 0.99 else "not reproduced", "both means at least 99%")

        runs = report.runs("c2-red-tail", flows=True)
        if not runs.empty:
            names = {"fixed": "RED+Tail fixed", "dynamic": "RED+Tail dynamic"}
            metrics = {"loss": lambda g: lambda x: 100 * x["traffic"][g]["loss_rate"],
                       "delay": lambda g: lambda x: x["traffic"][g]["delay_mean_s"],
                       "rate": lambda g: lambda x: x["traffic"][g]["goodput_bps"] / 8e3}
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
        if claims:
            report.claims(claims, "Each claim of the paper (C1's text, Table I), aqmlab's number with its 95% "
                                  "interval, and the verdict by the rule in the last column.")
