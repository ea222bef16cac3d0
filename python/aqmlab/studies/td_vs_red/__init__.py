"""Study A: Tail Drop against RED flavours for bulk and web traffic.

C. Brandauer, G. Iannaccone, C. Diot, T. Ziegler, S. Fdida, M. May,
"Comparison of tail drop and active queue management performance for
bulk-data and Web-like Internet traffic", IEEE ISCC 2001.

Four schemes share each load point's buffer, REDopt's: TD, REDstd, GREDstd
(the paper's gentle RED, whose line ends at the buffer size) and REDopt
(aqmlab.models.redopt). A1 sweeps the number of bulk TCP flows; A2 the
number of web sessions, where REDopt's N is the mean number of active
connections measured in Tail Drop calibration runs. REDopt's UDP adaptation
needs the UDP loss, which is measured in a run of REDopt alone with the loss
taken as 0 (``a1-udp-*``, ``a2-udp-*``); the runs compared use REDopt's
parameters for that loss (``more_experiments``).
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from aqmlab import models
from aqmlab.result import Summary
from aqmlab.studies.framework import (Claims, Study, StudyReport, combine_verdicts, effect_verdict, errorbar_plot,
                                     mean_ci, range_verdict, register, show_ci, summary_table)

SCHEMES = ["TD", "REDstd", "GREDstd", "REDopt"]
LINK_BPS, UDP_BPS, R0_S, PACKET_B = 10e6, 1e6, 0.150, 1514.0
CALIBRATION_BUFFER = math.ceil(R0_S * LINK_BPS / (8 * PACKET_B))  # one bandwidth-delay product, packets
W_MIN = 2.0  # REDopt's smallest window per flow, packets (the model's default)
# What the paper published for the figures reproduced here (Brandauer et al.,
# Section 4): A1's goodput (testbed) about 8.4 Mb/s for every scheme and load;
# A2's web goodput converging to about 8.7 Mb/s at the most sessions; REDopt's
# max_p growing by these factors between the session counts named.
PAPER_A1_GOODPUT_BPS = 8.4e6
PAPER_A2_GOODPUT_BPS = 8.7e6
PAPER_MAX_P_GROWTH = {(800, 1000): 2.6, (1200, 1400): 16.7}

# A1 under `--mode emulate` (the testbed half, emulated in real time: flows
# x 4 schemes x replications x duration_s seconds): 2.7 min at smoke scale,
# 27 min at quick, 8.3 h at full.
EMULATED_A1: dict[str, dict[str, Any]] = {
    "smoke": {"flows": [16], "duration_s": 20, "warmup_s": 10, "replications": 2},
    "quick": {"flows": [16, 64], "duration_s": 100, "warmup_s": 40, "replications": 2},
    "full": {"flows": [16, 32, 64, 128, 256], "duration_s": 300, "warmup_s": 100, "replications": 5},
}

SCALES: dict[str, dict[str, Any]] = {
    "smoke": {"flows": [16, 64], "a1_duration": 30, "a1_warmup": 10, "a1_reps": 2,
              "sessions": [800, 1400], "a2_duration": 60, "a2_warmup": 30, "a2_reps": 2, "calibration_reps": 2,
              "start_within": 20},
    "quick": {"flows": [16, 32, 64, 128, 256], "a1_duration": 300, "a1_warmup": 100, "a1_reps": 5,
              "sessions": [800, 1000, 1200, 1400], "a2_duration": 1000, "a2_warmup": 100, "a2_reps": 5, "calibration_reps": 5,
              "start_within": 90},
    "full": {"flows": [16, 32, 64, 128, 256], "a1_duration": 500, "a1_warmup": 100, "a1_reps": 10,
             "sessions": [800, 1000, 1200, 1400], "a2_duration": 5000, "a2_warmup": 100, "a2_reps": 50, "calibration_reps": 10,
             "start_within": 90},
}


def redopt_for(n: float, udp_loss: float) -> models.RedOpt:
    """REDopt for n TCP flows with the study's link, round trip and packets,
    and its 1 Mb/s of CBR losing `udp_loss`."""
    return models.redopt(LINK_BPS, max(1.0, n), R0_S, PACKET_B, b=2, udp_rate_bps=UDP_BPS, udp_loss=udp_loss,
                         w_min=W_MIN)


def window_floor(n: float, opt: models.RedOpt) -> float:
    """REDopt's step 4 lower bound on q*, N w_min - R0 C (packets): the queue
    that lets every flow keep a window of w_min."""
    return max(1.0, n) * W_MIN - R0_S * opt.C


def flat_below(opt: models.RedOpt) -> float:
    """The number of flows below which REDopt's window floor does not bind:
    there q* = D = k R C with k = D / (R C) the same for every N, so R = R0
    / (1 - k) and the floor N w_min - R0 C reaches D at R0 C / ((1 - k) w_min)."""
    k = opt.D / (opt.R * opt.C)
    return R0_S * opt.C / ((1 - k) * W_MIN)


def standard(buffer: int) -> dict[str, float]:
    """REDstd's and GREDstd's thresholds: 3/20 and 13/20 of the buffer."""
    return {"min_th": 3 * buffer / 20, "max_th": 13 * buffer / 20}


def _hist_probabilities(summary: dict[str, Any], n_max: int) -> list[float]:
    """P(N = n), n = 1..n_max, of one run's loss runs at the bottleneck."""
    hist = summary["queues"]["bottleneck"]["consecutive_loss"]["hist"]
    total = sum(hist.values())
    return [hist.get(str(n), 0) / total if total else math.nan for n in range(1, n_max + 1)]


@register
class TdVsRed(Study):
    name = "td-vs-red"
    title = "Study A: Tail Drop vs RED flavours for bulk and web traffic"
    source = ("Brandauer, Iannaccone, Diot, Ziegler, Fdida, May, \"Comparison of tail drop and active queue "
              "management performance for bulk-data and Web-like Internet traffic\", IEEE ISCC 2001.")
    runtime = {"smoke": "12 s", "quick": "85 s", "full": "18 min"}

    def experiments(self, scale: str) -> dict[str, str]:
        sc = SCALES[scale]
        out = {}
        for n in sc["flows"]:
            out[f"a1-udp-n{n}"] = self._a1(scale, n, "udp", 0.0)
        for s in sc["sessions"]:
            name = f"a2-calibrate-{s}"
            out[name] = self._a2(scale, name, s, stage="active", buffer=CALIBRATION_BUFFER,
                                 replications=sc["calibration_reps"])
        return out

    def _a1(self, scale: str, n: int, stage: str, udp_loss: float, timing: dict[str, Any] | None = None) -> str:
        """A1 at `n` flows: REDopt alone with the UDP loss taken as 0
        (stage "udp") or the four schemes with REDopt for `udp_loss`;
        `timing` replaces the scale's a1_duration, a1_warmup and a1_reps."""
        sc = SCALES[scale] | (timing or {})
        opt = redopt_for(n, udp_loss)
        buffer = math.ceil(opt.buffer)
        name = f"a1-udp-n{n}" if stage == "udp" else f"a1-n{n}"
        return self.render("a1.toml.j2", name=name, scale=scale, stage=stage, flows=n, n=n, buffer=buffer,
                           opt=opt, floor=window_floor(n, opt), n_cross=flat_below(opt), udp_loss=udp_loss,
                           udp_name=f"a1-udp-n{n}", std=standard(buffer), duration=f"{sc['a1_duration']}s",
                           warmup=f"{sc['a1_warmup']}s",
                           replications=sc["calibration_reps" if stage == "udp" else "a1_reps"])

    def _a2(self, scale: str, name: str, sessions: int, stage: str, buffer: int,
            replications: int | None = None, **extra: Any) -> str:
        sc = SCALES[scale]
        return self.render("a2.toml.j2", name=name, scale=scale, sessions=sessions, stage=stage,
                           buffer=buffer, duration=f"{sc['a2_duration']}s", warmup=f"{sc['a2_warmup']}s",
                           replications=replications or sc["a2_reps"], start_within=f"{sc['start_within']}s",
                           **extra)

    def _a2_redopt(self, scale: str, sessions: int, stage: str, n_active: float, udp_loss: float) -> str:
        opt = redopt_for(n_active, udp_loss)
        buffer = math.ceil(opt.buffer)
        name = f"a2-udp-{sessions}" if stage == "udp" else f"a2-s{sessions}"
        return self._a2(scale, name, sessions, stage=stage, buffer=buffer, opt=opt, n=n_active,
                        floor=window_floor(n_active, opt), n_cross=flat_below(opt), udp_loss=udp_loss,
                        udp_name=f"a2-udp-{sessions}", std=standard(buffer),
                        replications=SCALES[scale]["calibration_reps"] if stage == "udp" else None)

    def emulated_experiments(self, scale: str, results: StudyReport | None = None) -> dict[str, str]:
        """A1, the paper's testbed half: for each number of flows of
        ``EMULATED_A1``, REDopt's UDP loss measured in simulation as in the
        study (``a1-udp-n*``, simulated only), then the four schemes with
        REDopt for that loss, simulated and emulated, shorter than the
        simulated study (emulation takes real time)."""
        em = EMULATED_A1[scale]
        out = {f"a1-udp-n{n}": self._a1(scale, n, "udp", 0.0) for n in em["flows"]}
        if results is not None:
            timing = {"a1_duration": em["duration_s"], "a1_warmup": em["warmup_s"], "a1_reps": em["replications"]}
            for n in em["flows"]:
                loss = self.udp_loss(results, f"a1-udp-n{n}")
                if loss is not None:
                    out[f"a1-n{n}"] = (
                        f"# Emulated as well as simulated (--mode emulate). CHOSEN: {em['duration_s']} s runs with "
                        f"{em['warmup_s']} s of warm-up and {em['replications']} replications, shorter than the "
                        "simulated study's at this scale, because emulated runs take real time one after another; "
                        "everything else as in the study.\n" + self._a1(scale, n, "compare", loss, timing))
        return out

    def simulated_only(self, experiment: str) -> bool:
        return experiment.startswith("a1-udp-")

    def analyse_emulation(self, report: StudyReport) -> None:
        em = EMULATED_A1[report.scale]
        report.section("A1 on real TCP: the testbed half emulated, beside the simulation")
        report.text(
            "The paper's bulk-transfer figures (A1) come from a testbed: Linux hosts with SACK, the AQM in a "
            "FreeBSD dummynet bridge at 10 Mb/s. Here each A1 experiment runs twice: simulated (aqmlab's SACK agents "
            "with delayed ACKs) and emulated (aqmlab emulate: each host a network namespace with its own Linux TCP, "
            "reno with SACK, through aqmlab's Tail Drop and RED in a user-space router, in real time), with the "
            f"same schemes and buffers. {em['duration_s'] - em['warmup_s']} s measured after {em['warmup_s']} s, "
            f"{em['replications']} replications per point, Student-t 95% intervals. Linux sends 1448-byte "
            "payloads in 1500-byte packets, the simulation 1360-1588-byte payloads plus 40 bytes (mean 1474 in "
            "1514): for the headers alone the emulated goodput is 0.9% lower. Linux grows its window by a packet "
            "per round trip with delayed ACKs (it counts the packets each ACK covers), the simulated agent by half "
            "a packet, so Linux needs about twice the loss rate for the same windows (README, emulation section).")
        rows = []
        for n in em["flows"]:
            runs = report.runs(f"a1-n{n}")
            if runs.empty:
                continue
            for (scheme, engine), g in runs.groupby(["topology.qdisc", "engine"], sort=False):
                row: dict[str, Any] = {"flows": n, "scheme": scheme,
                                       "engine": "emulated" if engine == "emulation" else "simulated"}
                for metric, fn in (("goodput_bps", lambda s: Summary(s).group("ftp").goodput_bps),
                                   ("loss_rate", lambda s: Summary(s).bottleneck.loss_rate),
                                   ("qdelay_mean_s", lambda s: Summary(s).bottleneck.qdelay_mean_s),
                                   ("cbr_loss_rate", lambda s: Summary(s).group("cbr").loss_rate)):
                    m = mean_ci([fn(s) for s in g["summary"]])
                    row |= {metric: m["mean"], f"{metric}_ci95_low": m["ci95_low"],
                            f"{metric}_ci95_high": m["ci95_high"]}
                row["n"] = len(g)
                rows.append(row)
        df = pd.DataFrame(rows)
        if df.empty or "emulated" not in set(df["engine"]):
            report.text("No emulated runs finished.")
            return
        report.table("a1_engines", df, "A1: goodput of the TCP flows, drop rate and mean queueing delay at the "
                                       "bottleneck, and the CBR loss, per number of flows, scheme and engine; mean "
                                       "and 95% CI.")
        claims = Claims()
        for engine in ("emulated", "simulated"):
            sub = df[df["engine"] == engine]
            cis = [{"mean": r["goodput_bps"], "ci95_low": r["goodput_bps_ci95_low"],
                    "ci95_high": r["goodput_bps_ci95_high"]} for _, r in sub.iterrows()]
            claims.add(f"A1 ({engine}): TCP goodput is about 8.4 Mb/s for every discipline and load (testbed)",
                       "8.4 Mb/s", f"{sub['goodput_bps'].min() / 1e6:.2f} to {sub['goodput_bps'].max() / 1e6:.2f} Mb/s",
                       combine_verdicts([range_verdict(c, 8.0e6, 8.8e6) for c in cis]),
                       "every scheme's and load's 95% interval within 8.0-8.8 Mb/s")
            td = sub[sub["scheme"] == "TD"].set_index("flows")["qdelay_mean_s"]
            others = sub[sub["scheme"] != "TD"].groupby("flows")["qdelay_mean_s"].max()
            highest = bool((td > others.reindex(td.index)).all())
            claims.add(f"A1 ({engine}): TD has the highest mean queueing delay", "yes",
                       ", ".join(f"{n}: TD {1e3 * td[n]:.0f} ms, others at most {1e3 * others[n]:.0f} ms"
                                 for n in td.index), "reproduced" if highest else "not reproduced",
                       "TD's mean queueing delay above every other scheme's at every number of flows")
        report.claims(claims, "The paper's A1 claims that a testbed can check, decided on each engine's runs.")

    def more_experiments(self, scale: str, results: StudyReport) -> dict[str, str]:
        out = {}
        for n in SCALES[scale]["flows"]:
            loss = self.udp_loss(results, f"a1-udp-n{n}")
            if loss is not None:
                out[f"a1-n{n}"] = self._a1(scale, n, "compare", loss)
        for s in SCALES[scale]["sessions"]:
            n_active = self.active_connections(results, s)
            if n_active is None:
                continue
            out[f"a2-udp-{s}"] = self._a2_redopt(scale, s, "udp", n_active, 0.0)
            loss = self.udp_loss(results, f"a2-udp-{s}")
            if loss is not None:
                out[f"a2-s{s}"] = self._a2_redopt(scale, s, "compare", n_active, loss)
        return out

    @staticmethod
    def active_connections(results: StudyReport, sessions: int) -> float | None:
        runs = results.runs(f"a2-calibrate-{sessions}")
        if runs.empty:
            return None
        return float(np.mean([s["traffic"]["web"]["active_connections_mean"] for s in runs["summary"]]))

    @staticmethod
    def udp_loss(results: StudyReport, experiment: str, scheme: str | None = None) -> float | None:
        """The CBR loss rate of `experiment`, mean over its replications
        (of `scheme`'s runs only, when given)."""
        runs = results.runs(experiment)
        if scheme is not None and not runs.empty:
            runs = runs[runs["topology.qdisc"] == scheme]
        if runs.empty:
            return None
        return float(np.mean([Summary(s).group("cbr").loss_rate for s in runs["summary"]]))

    # Analysis -----------------------------------------------------------------

    def analyse(self, report: StudyReport) -> None:
        sc = SCALES[report.scale]
        a1 = pd.concat([report.runs(f"a1-n{n}").assign(flows=n) for n in sc["flows"]], ignore_index=True)
        a1 = a1.rename(columns={"topology.qdisc": "scheme"})
        self._part(report, "A1: bulk transfers", "a1", a1, "flows", "TCP flows N", "ftp",
                   f"{sc['a1_reps']} replications of {sc['a1_duration'] - sc['a1_warmup']} s after "
                   f"{sc['a1_warmup']} s of warm-up per point",
                   {n: PAPER_A1_GOODPUT_BPS for n in sc["flows"]}, "paper (testbed), about 8.4 Mb/s")
        a1_rows = [self._redopt_row(report, n, n, f"a1-udp-n{n}", f"a1-n{n}") for n in sc["flows"]]
        self._redopt_table(report, "a1", [r for r in a1_rows if r is not None], "flows")
        a2_parts = [report.runs(f"a2-s{s}").assign(sessions=s) for s in sc["sessions"]]
        a2_parts = [p for p in a2_parts if not p.empty]
        a2, rows = None, []
        if a2_parts:
            a2 = pd.concat(a2_parts, ignore_index=True).rename(columns={"topology.qdisc": "scheme"})
            self._part(report, "A2: web traffic", "a2", a2, "sessions", "web sessions", "web",
                       f"{sc['a2_reps']} replications of {sc['a2_duration'] - sc['a2_warmup']} s after "
                       f"{sc['a2_warmup']} s of warm-up per point",
                       {max(sc["sessions"]): PAPER_A2_GOODPUT_BPS}, "paper, converging to about 8.7 Mb/s")
            for s in sc["sessions"]:
                n_active = self.active_connections(report, s)
                if n_active is not None:
                    rows.append(self._redopt_row(report, s, n_active, f"a2-udp-{s}", f"a2-s{s}"))
            rows = [r for r in rows if r is not None]
            self._redopt_table(report, "a2", rows, "sessions")
        self._claims(report, a1, a2, rows)

    def _part(self, report: StudyReport, title: str, tag: str, runs: pd.DataFrame, x: str, x_label: str,
              tcp_group: str, how: str, paper_goodput: dict[Any, float], paper_label: str) -> None:
        report.section(title)
        report.text(f"Every scheme at a load point has REDopt's buffer for that load; {how}. The four schemes "
                    "see the same traffic draws (common random numbers).")
        figures = [
            ("goodput_bps", "TCP goodput (Mb/s)", lambda s: Summary(s).group(tcp_group).goodput_bps, 1e-6, "goodput"),
            ("loss_rate", "UDP loss rate", lambda s: Summary(s).group("cbr").loss_rate, 1.0, "udp-loss"),
            ("qdelay_mean_s", "mean queueing delay (ms)", lambda s: Summary(s).bottleneck.qdelay_mean_s,
             1e3, "qdelay"),
            ("qdelay_std_s", "std of the queueing delay (ms)", lambda s: Summary(s).bottleneck.qdelay_std_s,
             1e3, "qdelay-std"),
        ]
        tables = {}
        for metric, label, fn, scale, slug in figures:
            df = summary_table(runs, ["scheme", x], {metric: fn})
            df = df.sort_values(["scheme", x], key=lambda c: c.map(SCHEMES.index) if c.name == "scheme" else c)
            if metric == "goodput_bps":
                df.insert(2, "paper_bps", df[x].map(paper_goodput).astype(float))
            tables[metric] = df
            report.table(f"{tag}-{slug}", df, f"{title}: {label} by scheme and {x_label} (mean, 95% CI)")
        fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
        for ax, (metric, label, _, scale, _) in zip(axes.flat, figures):
            df = tables[metric].copy()
            for c in (metric, "ci95_low", "ci95_high"):
                df[c] = df[c] * scale
            errorbar_plot(ax, df, x, metric, "scheme")
            if metric == "goodput_bps":
                ax.axhline(max(paper_goodput.values()) * scale, ls="--", color="0.35", lw=1, label=paper_label)
            ax.set_xlabel(x_label)
            ax.set_ylabel(label)
            if x == "flows":
                ax.set_xscale("log", base=2)
            ax.set_xticks(sorted(df[x].unique()), [str(v) for v in sorted(df[x].unique())])
            ax.grid(alpha=0.3)
        axes.flat[0].legend(fontsize="small")
        fig.suptitle(f"{title} ({report.scale} scale, 95% CIs)")
        report.figure(f"{tag}-metrics", fig, f"{title}: goodput, UDP loss and queueing delay against {x_label}")
        self._compare_text(report, tables, x)
        self._gentle_text(report, runs, x)
        self._loss_runs(report, tag, title, runs, x)

    @staticmethod
    def _gentle_text(report: StudyReport, runs: pd.DataFrame, x: str) -> None:
        """Where GREDstd's gentle line mattered: it differs from REDstd only
        once avg passes max_th, where REDstd drops every arrival."""
        def drops(scheme: str, load: Any) -> dict[int, tuple[int, int, int]]:
            g = runs[(runs["scheme"] == scheme) & (runs[x] == load)]
            return {r: (q["drops_early"], q["drops_forced"], q["drops_overflow"])
                    for r, q in zip(g["replication"], (s["queues"]["bottleneck"] for s in g["summary"]))}
        parts = []
        for load in sorted(runs[x].unique()):
            red, gred = drops("REDstd", load), drops("GREDstd", load)
            same = sum(red[r] == gred.get(r) for r in red)
            parts.append(f"{x} {load}: {same} of {len(red)} identical, REDstd {sum(v[1] for v in red.values())} "
                         f"forced drops, GREDstd {sum(v[2] for v in gred.values())} buffer-full drops")
        report.text("GREDstd against REDstd (same thresholds; they differ only once avg passes max_th, where REDstd "
                    "drops every arrival and GREDstd's line rises to 1 at the buffer size): replications with the "
                    "same early, forced and buffer-full drop counts after the warm-up (two runs can part during the "
                    "warm-up too), and the drops that differ: " + "; ".join(parts) + ".")

    @staticmethod
    def _compare_text(report: StudyReport, tables: dict[str, pd.DataFrame], x: str) -> None:
        """What the figures show, computed from the numbers of this run."""
        g = tables["goodput_bps"].pivot(index=x, columns="scheme", values="goodput_bps")
        d = tables["qdelay_mean_s"].pivot(index=x, columns="scheme", values="qdelay_mean_s")
        u = tables["loss_rate"].pivot(index=x, columns="scheme", values="loss_rate")
        spread = ((g.max(axis=1) - g.min(axis=1)) / g.max(axis=1)).max()
        report.text(
            f"Goodput: at every load the four schemes are within {100 * spread:.1f}% of each other (largest "
            f"relative gap between the best and worst scheme's mean).",
            "Mean queueing delay (ms) by load, " + "; ".join(
                f"{x} {k}: " + ", ".join(f"{s} {1e3 * d.loc[k, s]:.0f}" for s in SCHEMES if s in d.columns)
                for k in d.index) + ".",
            "UDP loss rate by load, " + "; ".join(
                f"{x} {k}: " + ", ".join(f"{s} {100 * u.loc[k, s]:.2f}%" for s in SCHEMES if s in u.columns)
                for k in u.index) + ".")

    @staticmethod
    def _loss_runs(report: StudyReport, tag: str, title: str, runs: pd.DataFrame, x: str, n_max: int = 15) -> None:
        top = runs[x].max()
        rows = []
        for scheme in SCHEMES:
            group = runs[(runs[x] == top) & (runs["scheme"] == scheme)]
            if group.empty:
                continue
            per_run = np.array([_hist_probabilities(s, n_max) for s in group["summary"]])
            for n in range(1, n_max + 1):
                m = mean_ci(per_run[:, n - 1])
                rows.append({"scheme": scheme, x: top, "n": n, "p": m["mean"], "ci95_low": m["ci95_low"],
                             "ci95_high": m["ci95_high"], "replications": m["n"]})
        df = pd.DataFrame(rows)
        report.table(f"{tag}-loss-runs", df, f"{title}: consecutive losses at the bottleneck at the highest load "
                     f"({x} = {top}), P(N = n) per replication, mean and 95% CI")
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        errorbar_plot(ax, df, "n", "p", "scheme")
        ax.set_yscale("log")
        ax.set_xlabel("consecutive losses n (packets)")
        ax.set_ylabel("P(N = n)")
        ax.set_title(f"{title}: loss runs at {x} = {top}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
        report.figure(f"{tag}-loss-runs", fig, f"{title}: distribution of consecutive losses at {x} = {top}")
        means = {s: float((df[df.scheme == s]["n"] * df[df.scheme == s]["p"]).sum()) for s in df["scheme"].unique()}
        report.text("Mean loss-run length over n = 1..15 at the highest load: " +
                    ", ".join(f"{s} {m:.2f}" for s, m in means.items()) + " packets.")

    def _redopt_row(self, report: StudyReport, load: Any, n: float, udp_experiment: str,
                    compared: str) -> dict[str, Any] | None:
        """REDopt at one load: the UDP loss measured with the loss taken as
        0, the parameters for it, and the UDP loss REDopt then gave in the
        runs compared (None before they ran)."""
        loss = self.udp_loss(report, udp_experiment)
        if loss is None:
            return None
        opt = redopt_for(n, loss)
        return {"load": load, "N": n, "udp_loss": loss, "opt": opt, "floor": window_floor(n, opt),
                "udp_loss_after": self.udp_loss(report, compared, "REDopt")}

    @staticmethod
    def _redopt_table(report: StudyReport, tag: str, rows: list[dict[str, Any]], x: str) -> None:
        df = pd.DataFrame([{x: r["load"], "N": r["N"], "udp_loss": r["udp_loss"],
                            "buffer_pkts": math.ceil(r["opt"].buffer), "min_th_pkts": r["opt"].min_th,
                            "max_th_pkts": r["opt"].max_th, "max_p": r["opt"].max_p, "w_q": r["opt"].w_q,
                            "p_star": r["opt"].p_star, "R_s": r["opt"].R, "D_pkts": r["opt"].D,
                            "floor_pkts": r["floor"], "q_star_pkts": r["opt"].q_star,
                            "udp_loss_after": r["udp_loss_after"]} for r in rows])
        if x == "sessions" and not df.empty:
            df["max_p_growth"] = df["max_p"] / df["max_p"].shift()
            df["paper"] = [PAPER_MAX_P_GROWTH.get((a, b), math.nan)
                           for a, b in zip(df[x].shift(), df[x])]
        report.table(f"{tag}-redopt", df, "REDopt's parameters and the buffer every scheme uses at each load. N: "
                     "flows, or for web the mean active connections measured under TD; udp_loss: the CBR loss "
                     "measured under REDopt with the loss taken as 0, which the parameters use; D = max_th - "
                     "min_th; floor = N w_min - R0 C (w_min = 2 packets); q* = max(D, floor) aimed at; "
                     "udp_loss_after: the CBR loss under these parameters in the runs compared"
                     + ("; max_p_growth: max_p over the previous load's, beside the paper's factor"
                        if x == "sessions" else ""))
        flat = df[df["floor_pkts"] < df["D_pkts"]]
        if len(flat) >= 2:
            o = rows[int(flat.index[0])]["opt"]
            k = o.D / (o.R * o.C)
            ns = ", ".join(f"{v:.4g}" for v in flat["N"])
            report.text(
                f"Why REDopt's thresholds and buffer stay nearly flat across N = {ns}: its D = max_th - min_th is "
                f"{k:.4f} R C whatever N, because Mathis's max_p = 2.2 p* grows as N^2 while Hollot et al.'s bound "
                "max_p / D <= sqrt(2) (2N)^2 / (R C)^3 falls as 1/N^2 (3 x 1.1 / (4 sqrt(2) b) = "
                f"{3 * 1.1 / (4 * math.sqrt(2) * 2):.4f} with b = 2). q* = max(D, N w_min - R0 C), and the window "
                f"floor N w_min - R0 C stays below D (here {o.D:.1f} packets) up to N = R0 C / ((1 - {k:.4f}) w_min) "
                f"= {flat_below(o):.1f} flows. Below that q* = D and R = R0 / (1 - {k:.4f}) = {o.R * 1e3:.1f} ms, so "
                "the thresholds and buffer depend on N only through C (the measured UDP loss); max_p and w_q follow "
                "N. Above it the floor sets q*, and the thresholds and buffer grow with N.")
        floor = df[df["floor_pkts"] >= df["D_pkts"]]
        if not floor.empty:
            o = rows[int(floor.index[0])]["opt"]
            report.text(
                "Where the window floor sets q* (N = " + ", ".join(f"{v:.4g}" for v in floor["N"]) + "), R C = "
                f"N w_min, so p* = 3 / (2 b w_min^2) = {o.p_star:.4f} and max_p = {o.max_p:.4f} whatever N: in "
                "aqmlab's REDopt model max_p stops growing once the floor binds, and the thresholds and buffer "
                "grow with N instead.")

    # The paper's claims --------------------------------------------------------

    @staticmethod
    def _claims(report: StudyReport, a1: pd.DataFrame, a2: pd.DataFrame | None,
                redopt_rows: list[dict[str, Any]]) -> None:
        """The paper's claims on A1 and A2 beside aqmlab's numbers. Every
        scheme at a load sees the same seeds, so comparisons between schemes
        use per-replication differences."""
        claims = Claims()
        add = claims.add

        def values(runs: pd.DataFrame, x: str, load: Any, scheme: str, fn: Any) -> pd.Series:
            g = runs[(runs[x] == load) & (runs["scheme"] == scheme)]
            return pd.Series([fn(s) for s in g["summary"]], index=list(g["replication"]), dtype=float)

        def diff(runs: pd.DataFrame, x: str, load: Any, a: str, b: str, fn: Any, relative: bool = False):
            va, vb = values(runs, x, load, a, fn), values(runs, x, load, b, fn)
            d = (va - vb) / vb if relative else va - vb
            return mean_ci(d.replace([np.inf, -np.inf], np.nan).dropna())

        goodput = lambda tcp: lambda s: Summary(s).group(tcp).goodput_bps  # noqa: E731
        udp_loss = lambda s: Summary(s).group("cbr").loss_rate  # noqa: E731
        qdelay = lambda s: Summary(s).bottleneck.qdelay_mean_s  # noqa: E731
        loss_run = lambda s: Summary(s).bottleneck.consecutive_loss["mean"]  # noqa: E731 (None: no drop)

        loads = sorted(a1["flows"].unique())
        cis = {(sch, n): mean_ci(values(a1, "flows", n, sch, goodput("ftp"))) for sch in SCHEMES for n in loads}
        add("A1: TCP goodput is about 8.4 Mb/s for every discipline and load (testbed)", "8.4 Mb/s",
            f"{min(c['mean'] for c in cis.values()) / 1e6:.2f} to {max(c['mean'] for c in cis.values()) / 1e6:.2f} "
            "Mb/s", combine_verdicts([range_verdict(c, 8.0e6, 8.8e6) for c in cis.values()]),
            "every scheme's and load's 95% interval within 8.0-8.8 Mb/s")
        light, medium, heavy = loads[0], loads[len(loads) // 2], loads[-1]
        half = {b: diff(a1, "flows", light, "REDopt", b, udp_loss, relative=True) for b in ("REDstd", "GREDstd")}
        add(f"A1: REDopt has about half the UDP loss of REDstd and GREDstd at light load ({light} flows)", "-50%",
            "; ".join(f"against {b} {show_ci(m, 100, '%', signed=True)}" for b, m in half.items()),
            combine_verdicts([effect_verdict(m, -0.75, -0.25) for m in half.values()]),
            "per-replication relative difference of the UDP loss, REDopt against each; its 95% interval within "
            "-75% to -25%")
        td_delay = [effect_verdict(diff(a1, "flows", n, "TD", b, qdelay), 0.0, math.inf)
                    for n in loads for b in SCHEMES[1:]]
        add("A1: Tail Drop has the highest mean queueing delay", "TD highest",
            f"TD above every RED variant at {sum(v == 'reproduced' for v in td_delay)} of {len(td_delay)} "
            "(load, scheme) pairs", combine_verdicts(td_delay),
            "per-replication difference TD - each RED variant above 0 at every load")
        for load, worst, when in ((light, "TD", "light"), (medium, "TD", "medium"), (heavy, "REDstd", "high")):
            v = [effect_verdict(diff(a1, "flows", load, worst, b, loss_run), 0.0, math.inf)
                 for b in SCHEMES if b != worst]
            add(f"A1: {worst} has the longest loss runs at {when} load ({load} flows)", f"{worst} worst",
                ", ".join(f"{b} {m['mean']:.2f}" for b in SCHEMES
                          if not math.isnan((m := mean_ci(values(a1, "flows", load, b, loss_run).dropna()))["mean"])),
                combine_verdicts(v), "mean loss-run length; per-replication difference against every other scheme "
                                     "above 0 (runs without a drop have no loss run)")
        if a2 is not None:
            sessions = sorted(a2["sessions"].unique())
            web = {sch: [mean_ci(values(a2, "sessions", s, sch, goodput("web")))["mean"] for s in sessions]
                   for sch in SCHEMES}
            rises = all(all(b >= a for a, b in zip(v, v[1:])) for v in web.values())
            top = [mean_ci(values(a2, "sessions", sessions[-1], sch, goodput("web"))) for sch in SCHEMES]
            add("A2: web goodput rises with the number of sessions and converges to about 8.7 Mb/s", "8.7 Mb/s",
                f"at {sessions[-1]} sessions " + ", ".join(f"{sch} {c['mean'] / 1e6:.2f}" for sch, c in
                                                            zip(SCHEMES, top)) + " Mb/s",
                combine_verdicts([range_verdict(c, 8.4e6, 9.0e6) for c in top]) if rises else "not reproduced",
                "every scheme's mean rises with the sessions, and its 95% interval at the most sessions within "
                "8.4-9.0 Mb/s")
            at = {r["load"]: r for r in redopt_rows}
            for (a, b), paper in PAPER_MAX_P_GROWTH.items():
                if a in at and b in at:
                    ra, rb = at[a], at[b]
                    r = rb["opt"].max_p / ra["opt"].max_p
                    why = (f"; the model's window floor sets q* at both, where max_p = {rb['opt'].max_p:.4g} "
                           "whatever N" if all(x["floor"] >= x["opt"].D for x in (ra, rb)) else "")
                    add(f"A2: REDopt's max_p grows by a factor {paper} from {a} to {b} sessions", f"x{paper}",
                        f"x{r:.3g} (N {ra['N']:.1f} to {rb['N']:.1f}){why}",
                        "reproduced" if paper / 1.5 <= r <= paper * 1.5 else "not reproduced",
                        "the ratio within a factor 1.5 of the paper's")
                else:
                    add(f"A2: REDopt's max_p grows by a factor {paper} from {a} to {b} sessions", f"x{paper}", "-",
                        "not run at this scale", "both loads needed")
            longer = [effect_verdict(diff(a2, "sessions", s, b, "TD", loss_run), 0.0, math.inf)
                      for s in sessions for b in SCHEMES[1:]]
            add("A2: the RED variants have longer loss runs than Tail Drop", "longer",
                f"at {sum(v == 'reproduced' for v in longer)} of {len(longer)} (load, scheme) pairs",
                combine_verdicts(longer), "per-replication difference of the mean loss run, each RED variant - TD, "
                                          "above 0 at every load")
            s1200 = 1200 if 1200 in sessions else sessions[len(sessions) // 2]
            lower = {b: diff(a2, "sessions", s1200, b, "TD", udp_loss) for b in SCHEMES[1:]}
            add(f"A2: Tail Drop has lower UDP loss, most visibly at {s1200} sessions", "TD lower",
                "; ".join(f"{b} - TD {show_ci(m, 100, ' points', signed=True)}" for b, m in lower.items()),
                combine_verdicts([effect_verdict(m, 0.0, math.inf) for m in lower.values()]),
                "per-replication difference of the UDP loss, each RED variant - TD, above 0")
        report.claims(claims, "Each claim of the paper (A1 was a testbed measurement, A2 a simulation) beside "
                              "aqmlab's numbers, and the verdict by the rule shown.")
