"""Study D of studies.md: BLUE against RED with ECN (``aqmlab reproduce blue``).

W. Feng, D. D. Kandlur, D. Saha, K. G. Shin, "BLUE: A New Class of Active
Queue Management Algorithms", U. Michigan CSE-TR-387-99, 1999, and "The BLUE
Active Queue Management Algorithms", IEEE/ACM Transactions on Networking
10(4), 2002.

Five senders reach five receivers over a 45 Mb/s link A -> B whose queue is
RED (R1..R4: min_th 20% and max_th 80% of the buffer, max_p 1, w_q from
0.0002 to 0.2) or BLUE (B1..B4: the paper's freeze_time, d1, d2), both
marking ECN-capable TCP Reno packets.

- D1: 1000 and 4000 Pareto ON/OFF TCP connections; loss rate and link
  utilisation against the buffer size, one line per configuration.
- D2: infinite sources, 200 more every 20 s; queue length and marking
  probability over time, B4 against R2.
- D3: D1 and D2 again with TCP that waits for its retransmission timer
  when an ECN echo arrives at cwnd = 1 ("ECN timeout"). D1 and D2 use TCP
  that ignores such an echo (the behaviour the paper contrasts D3 with).

The RED thresholds depend on the buffer, so D1 is one experiment per buffer
size (``d1-<B>KB``, ``d1-ecn-timeout-<B>KB``), each sweeping the eight
configurations and the numbers of connections; D2 is ``d2`` and
``d2-ecn-timeout``.
"""

from __future__ import annotations

import math
from typing import Any

import matplotlib.pyplot as plt
import pandas as pd

from aqmlab.studies.framework import Study, StudyReport, ci_columns, errorbar_plot, register

# The configurations of the paper (studies.md D).
RED_W_Q = {"R1": 0.0002, "R2": 0.002, "R3": 0.02, "R4": 0.2}
BLUE_PARAMS = {  # label: (freeze_time, d1, d2)
    "B1": ("10ms", 0.0025, 0.00025),
    "B2": ("100ms", 0.0025, 0.00025),
    "B3": ("10ms", 0.02, 0.002),
    "B4": ("100ms", 0.02, 0.002),
}
ALL_CONFIGS = [*RED_W_Q, *BLUE_PARAMS]
RAMP_CONFIGS = ["B4", "R2"]

PAYLOAD_BYTES, HEADER_BYTES = 1000, 40   # a "1 KB" packet and its TCP/IP header
BOTTLENECK_BPS = 45e6

# Every number that changes with the scale. Full scale is the paper's; the
# paper shows single runs, so its replication count is chosen (3).
SCALES: dict[str, dict[str, Any]] = {
    "smoke": {"buffers_kb": [100, 500], "connections": [100], "configs": ALL_CONFIGS, "replications": 2,
              "warmup_s": 3, "duration_s": 6,
              "ramp": {"per_group": 20, "groups": 5, "step_s": 2, "duration_s": 10, "buffer_kb": 200,
                       "trace_interval": "100ms", "replications": 2}},
    "quick": {"buffers_kb": [100, 500, 1000], "connections": [1000, 4000], "configs": ALL_CONFIGS,
              "replications": 2, "warmup_s": 50, "duration_s": 100,
              "ramp": {"per_group": 200, "groups": 5, "step_s": 20, "duration_s": 100, "buffer_kb": 200,
                       "trace_interval": "100ms", "replications": 2}},
    "full": {"buffers_kb": list(range(100, 1001, 100)), "connections": [1000, 4000], "configs": ALL_CONFIGS,
             "replications": 3, "warmup_s": 100, "duration_s": 200,
             "ramp": {"per_group": 200, "groups": 5, "step_s": 20, "duration_s": 100, "buffer_kb": 200,
                      "trace_interval": "100ms", "replications": 3}},
}

TCP_MODES = {"ignore": "", "timeout": "-ecn-timeout"}   # ecn_at_cwnd1 -> experiment name suffix


def buffer_pkts(buffer_kb: int) -> int:
    """The buffer in packets: one 1 KB packet per KB (a choice, see the template)."""
    return buffer_kb * 1000 // PAYLOAD_BYTES


def buffer_delay_ms(buffer_kb: int) -> float:
    """How long the A -> B link takes to send a full buffer of 1040 B packets."""
    return buffer_pkts(buffer_kb) * (PAYLOAD_BYTES + HEADER_BYTES) * 8 / BOTTLENECK_BPS * 1e3


def qdisc(label: str, buffer_kb: int) -> dict[str, Any]:
    """The A -> B queue of configuration `label` with a `buffer_kb` buffer."""
    limit = buffer_pkts(buffer_kb)
    if label in RED_W_Q:
        return {"kind": "red", "limit": f"{limit}pkt", "min_th": f"{round(0.2 * limit)}pkt",
                "max_th": f"{round(0.8 * limit)}pkt", "max_p": 1.0, "w_q": RED_W_Q[label], "ecn": True,
                "mean_pktsize": f"{PAYLOAD_BYTES + HEADER_BYTES}B"}
    freeze, d1, d2 = BLUE_PARAMS[label]
    return {"kind": "blue", "limit": f"{limit}pkt", "freeze_time": freeze, "d1": d1, "d2": d2, "ecn": True}


def d1_name(buffer_kb: int, mode: str) -> str:
    return f"d1{TCP_MODES[mode]}-{buffer_kb}KB"


def d2_name(mode: str) -> str:
    return f"d2{TCP_MODES[mode]}"


def _stalled(summary: dict[str, Any]) -> float | None:
    """Fraction of the TCP flows that delivered nothing in the window."""
    flows = summary["flows"]
    return None if not flows else sum(1 for f in flows if f["delivered"] == 0) / len(flows)


def _loss(s: dict[str, Any]) -> float:
    return s["queues"]["bottleneck"]["loss_rate"]


def _util(s: dict[str, Any]) -> float:
    return s["queues"]["bottleneck"]["utilization"]


def _fmt_ci(mean: float, low: float, high: float, scale: float = 1.0, digits: int = 3) -> str:
    if math.isnan(low):
        return f"{mean * scale:.{digits}g}"
    return f"{mean * scale:.{digits}g} [{low * scale:.{digits}g}, {high * scale:.{digits}g}]"


@register
class Blue(Study):
    name = "blue"
    title = "Study D: BLUE vs RED with ECN, loss, utilisation and queue dynamics"
    source = ("W. Feng, D. D. Kandlur, D. Saha, K. G. Shin, \"BLUE: A New Class of Active Queue Management "
              "Algorithms\", U. Michigan CSE-TR-387-99, 1999; \"The BLUE Active Queue Management Algorithms\", "
              "IEEE/ACM Transactions on Networking 10(4), 2002.")
    runtime = {"smoke": "10 s", "quick": "1.7 min", "full": "~15 min"}

    # Experiments -----------------------------------------------------------

    def experiments(self, scale: str) -> dict[str, str]:
        sc = SCALES[scale]
        out: dict[str, str] = {}
        for mode in TCP_MODES:
            for b in sc["buffers_kb"]:
                name = d1_name(b, mode)
                out[name] = self.render(
                    "onoff.toml.j2", name=name, scale=scale, part="D3 (D1 with ECN timeout)" if mode == "timeout"
                    else "D1", connections=sc["connections"], buffer_kb=b, buffer_pkts=buffer_pkts(b),
                    replications=sc["replications"], warmup_s=sc["warmup_s"], duration_s=sc["duration_s"],
                    ecn_at_cwnd1=mode, configs=[{"label": c, "qdisc": qdisc(c, b)} for c in sc["configs"]])
        r = sc["ramp"]
        for mode in TCP_MODES:
            name = d2_name(mode)
            out[name] = self.render(
                "ramp.toml.j2", name=name, scale=scale, part="D3 (D2 with ECN timeout)" if mode == "timeout"
                else "D2", per_group=r["per_group"], groups=r["groups"], step_s=r["step_s"],
                duration_s=r["duration_s"], trace_interval=r["trace_interval"], replications=r["replications"],
                buffer_kb=r["buffer_kb"], buffer_pkts=buffer_pkts(r["buffer_kb"]), ecn_at_cwnd1=mode,
                configs=[{"label": c, "qdisc": qdisc(c, r["buffer_kb"])} for c in RAMP_CONFIGS])
        return out

    # Analysis --------------------------------------------------------------

    def analyse(self, report: StudyReport) -> None:
        sc = SCALES[report.scale]
        report.section("Setup")
        report.text(
            f"Five senders -> A -> B -> five receivers; A -> B is 45 Mb/s, access links 100 Mb/s, round-trip "
            f"propagation delays 24 to 62 ms (chosen). TCP Reno with ECN, 1000 B payloads plus 40 B headers. "
            f"RED R1..R4: min_th 20% and max_th 80% of the buffer, max_p 1, w_q "
            f"{', '.join(map(str, RED_W_Q.values()))}. "
            f"BLUE B1..B4: (freeze_time, d1, d2) = "
            f"{'; '.join(f'{k} ({v[0]}, {v[1]}, {v[2]})' for k, v in BLUE_PARAMS.items())}. Buffers of "
            f"{', '.join(map(str, sc['buffers_kb']))} KB (one 1 KB packet per KB). D1 and D2 use TCP that ignores an "
            f"ECN echo at cwnd = 1; D3 repeats both with TCP that waits for its retransmission timer instead. "
            f"Measurement window {sc['warmup_s']} s to {sc['duration_s']} s; {sc['replications']} replications per "
            f"point; intervals are Student-t 95% confidence intervals over replications.",
            "A connection whose packets are dropped while its window is 1 waits for its retransmission timer "
            "(3 s before its first round-trip sample, doubling), and carries no load meanwhile; the tables give "
            "the share of connections that delivered nothing in the window as stalled_flows, which must be read "
            "next to the loss rates: a scheme that stalls more connections faces less offered load.")
        for mode, part in (("ignore", "D1"), ("timeout", "D3")):
            self._onoff(report, sc, mode, part)
        for mode, part in (("ignore", "D2"), ("timeout", "D3")):
            self._ramp(report, sc, mode, part)
        self._compare_modes(report)

    def _onoff_table(self, report: StudyReport, sc: dict[str, Any], mode: str) -> pd.DataFrame:
        rows = []
        for b in sc["buffers_kb"]:
            runs = report.runs(d1_name(b, mode), flows=True)
            if runs.empty:
                continue
            for (conns, label), g in runs.groupby(["traffic[0].count", "topology.qdisc"], sort=False):
                summaries = list(g["summary"])
                row: dict[str, Any] = {"scheme": label, "connections": int(conns), "buffer_kb": b,
                                       "buffer_pkts": buffer_pkts(b), "buffer_delay_ms": buffer_delay_ms(b)}
                for metric, fn in (("loss_rate", _loss), ("utilization", _util),
                                   ("qlen_mean_pkts", lambda s: s["queues"]["bottleneck"]["qlen_mean_pkts"]),
                                   ("stalled_flows", _stalled)):
                    row |= ci_columns([fn(s) for s in summaries], metric)
                row["n"] = len(summaries)
                rows.append(row)
        df = pd.DataFrame(rows)
        if df.empty:
            return df
        order = {c: i for i, c in enumerate(ALL_CONFIGS)}
        return df.sort_values(["connections", "scheme", "buffer_kb"], key=lambda s: s.map(order) if s.name == "scheme"
                              else s).reset_index(drop=True)

    def _onoff(self, report: StudyReport, sc: dict[str, Any], mode: str, part: str) -> None:
        title = ("D1: Pareto ON/OFF sources, loss rate and utilisation against the buffer" if mode == "ignore" else
                 "D3: D1 again with ECN timeout")
        report.section(title)
        df = self._onoff_table(report, sc, mode)
        if df.empty:
            report.text("No runs finished.")
            return
        tag = "d1" if mode == "ignore" else "d3_onoff"
        report.table(tag, df, f"{part}: loss rate (drops / arrivals at A -> B) and utilisation of A -> B per "
                              f"configuration, number of connections and buffer, mean and 95% CI over "
                              f"{int(df['n'].max())} replications; stalled_flows is the fraction of connections that "
                              f"delivered nothing in the window.")
        conns = sorted(df["connections"].unique())
        for metric, ylabel in (("loss_rate", "loss rate (drops / arrivals)"), ("utilization", "utilisation of A -> B")):
            fig, axes = plt.subplots(1, len(conns), figsize=(5.2 * len(conns), 3.8), squeeze=False)
            for ax, n in zip(axes[0], conns):
                sub = df[df["connections"] == n].rename(columns={f"{metric}_ci95_low": "ci95_low",
                                                                  f"{metric}_ci95_high": "ci95_high"})
                for kind, fmt in (("R", "o--"), ("B", "s-")):
                    errorbar_plot(ax, sub[sub["scheme"].str.startswith(kind)], "buffer_kb", metric, "scheme", fmt=fmt)
                ax.set_xlabel("buffer size (KB)")
                ax.set_ylabel(ylabel)
                ax.set_title(f"{n} connections")
                ax.grid(alpha=0.3)
                per_kb = buffer_delay_ms(1)
                secondary = ax.secondary_xaxis("top", functions=(lambda kb: kb * per_kb, lambda ms: ms / per_kb))
                secondary.set_xlabel("buffer (ms at 45 Mb/s)")
            axes[0][0].legend(fontsize=8, ncol=2)
            fig.tight_layout()
            caption = (f"{part}: {ylabel} against the buffer size, RED (dashed) and BLUE (solid), 95% CI error "
                       f"bars over {int(df['n'].max())} replications.")
            report.figure(f"{tag}_{metric}", fig, caption)
        report.text(*self._onoff_text(df, part))

    @staticmethod
    def _onoff_text(df: pd.DataFrame, part: str) -> list[str]:
        out = []
        for n, g in df.groupby("connections"):
            red, blue = g[g["scheme"].str.startswith("R")], g[g["scheme"].str.startswith("B")]
            wins = 0
            buffers = sorted(g["buffer_kb"].unique())
            for b in buffers:
                best_red = red[red["buffer_kb"] == b]["loss_rate"].min()
                worst_blue = blue[blue["buffer_kb"] == b]["loss_rate"].max()
                wins += bool(worst_blue < best_red)
            rmax = red.loc[red["loss_rate"].idxmax()]
            bmax = blue.loc[blue["loss_rate"].idxmax()]
            out.append(
                f"{part}, {n} connections: every BLUE configuration lost less than the best RED configuration at "
                f"{wins} of {len(buffers)} buffer sizes. The highest RED loss rate was "
                f"{_fmt_ci(rmax.loss_rate, rmax.loss_rate_ci95_low, rmax.loss_rate_ci95_high, 100)}% ({rmax.scheme}, "
                f"{rmax.buffer_kb} KB) and the highest BLUE loss rate "
                f"{_fmt_ci(bmax.loss_rate, bmax.loss_rate_ci95_low, bmax.loss_rate_ci95_high, 100)}% ({bmax.scheme}, "
                f"{bmax.buffer_kb} KB). Utilisation ranged from {red['utilization'].min():.4f} to "
                f"{red['utilization'].max():.4f} under RED and from {blue['utilization'].min():.4f} to "
                f"{blue['utilization'].max():.4f} under BLUE. Connections that delivered nothing in the window: up to "
                f"{100 * red['stalled_flows'].max():.1f}% under RED and {100 * blue['stalled_flows'].max():.1f}% "
                f"under BLUE.")
        return out

    def _ramp(self, report: StudyReport, sc: dict[str, Any], mode: str, part: str) -> None:
        name = d2_name(mode)
        r = sc["ramp"]
        report.section(f"{part}: infinite sources, {r['per_group']} more every {r['step_s']} s, "
                       f"{' vs '.join(RAMP_CONFIGS)}" + (" (ECN timeout)" if mode == "timeout" else ""))
        runs = report.runs(name, flows=True)
        if runs.empty:
            report.text("No runs finished.")
            return
        rows = []
        for label, g in runs.groupby("topology.qdisc", sort=False):
            row: dict[str, Any] = {"scheme": label, "connections": r["per_group"] * r["groups"],
                                   "buffer_kb": r["buffer_kb"]}
            for metric, fn in (("loss_rate", _loss), ("utilization", _util),
                               ("qlen_mean_pkts", lambda s: s["queues"]["bottleneck"]["qlen_mean_pkts"]),
                               ("stalled_flows", _stalled)):
                row |= ci_columns([fn(s) for s in g["summary"]], metric)
            row["n"] = len(g)
            rows.append(row)
        table = pd.DataFrame(rows)
        tag = "d2" if mode == "ignore" else "d3_ramp"
        report.table(tag, table, f"{part}: over the whole run ({r['duration_s']} s, 0 to "
                                 f"{r['per_group'] * r['groups']} connections), loss rate, utilisation and mean queue "
                                 f"of A -> B, mean and 95% CI over {int(table['n'].max())} replications; "
                                 f"stalled_flows is the fraction of connections that delivered nothing in the run.")
        points = runs.drop_duplicates("point")[["point", "topology.qdisc"]].itertuples(index=False)
        fig, axes = plt.subplots(2, len(RAMP_CONFIGS), figsize=(5.2 * len(RAMP_CONFIGS), 5.8), sharex=True,
                                 sharey="row", squeeze=False)
        limit = buffer_pkts(r["buffer_kb"])
        stats = []
        for col, (point, label) in enumerate(points):
            s = report.series(name, int(point), 0)
            if s is None:
                continue
            axq, axp = axes[0][col], axes[1][col]
            axq.plot(s["time_s"], s["bottleneck.backlog_pkts"], lw=0.6, color="C0")
            axq.axhline(limit, color="k", ls=":", lw=0.8)
            axq.set_title(label)
            prob = "bottleneck.p_m" if "bottleneck.p_m" in s else "bottleneck.p_b"
            axp.plot(s["time_s"], s[prob], lw=0.6, color="C1")
            axp.set_xlabel("time (s)")
            axp.text(0.02, 0.92, prob.split(".")[1], transform=axp.transAxes)
            for t in range(1, r["groups"]):
                for ax in (axq, axp):
                    ax.axvline(t * r["step_s"], color="0.8", lw=0.6)
            last = s[s["time_s"] >= r["step_s"] * (r["groups"] - 1)]
            stats.append((label, float(last["bottleneck.backlog_pkts"].mean()),
                          float((last["bottleneck.backlog_pkts"] == 0).mean()),
                          float((last["bottleneck.backlog_pkts"] >= limit - 1).mean()), float(last[prob].mean())))
        axes[0][0].set_ylabel("queue length (packets)")
        axes[1][0].set_ylabel("marking probability")
        fig.tight_layout()
        report.figure(f"{tag}_series", fig, f"{part}: queue length of A -> B (dotted line: the {limit}-packet buffer) "
                                            f"and marking probability (BLUE's p_m; RED's p_b, before count-based "
                                            f"spacing) of replication 0, sampled every {r['trace_interval']}; grey "
                                            f"lines mark each new group of {r['per_group']} connections.")
        report.text(*[f"{part}, {label}, from the last group's start to the end (replication 0): mean queue "
                      f"{q:.1f} packets of {limit}, queue empty in {100 * empty:.1f}% and full in {100 * full:.1f}% of "
                      f"the samples, mean marking probability {p:.3f}." for label, q, empty, full, p in stats])

    def _compare_modes(self, report: StudyReport) -> None:
        sc = SCALES[report.scale]
        a, b = self._onoff_table(report, sc, "ignore"), self._onoff_table(report, sc, "timeout")
        if a.empty or b.empty:
            return
        report.section("D1 against D3: what the ECN timeout changes")
        keys = ["scheme", "connections", "buffer_kb"]
        m = a[keys + ["loss_rate", "utilization"]].merge(b[keys + ["loss_rate", "utilization"]], on=keys,
                                                          suffixes=("", "_ecn_timeout"))
        out = []
        for n, g in m.groupby("connections"):
            for kind, name in (("R", "RED"), ("B", "BLUE")):
                k = g[g["scheme"].str.startswith(kind)]
                out.append(f"{n} connections, {name}: mean loss rate over configurations and buffers "
                           f"{100 * k['loss_rate'].mean():.3g}% without and "
                           f"{100 * k['loss_rate_ecn_timeout'].mean():.3g}% with ECN timeout; lowest utilisation "
                           f"{k['utilization'].min():.4f} without and "
                           f"{k['utilization_ecn_timeout'].min():.4f} with.")
        report.text(*out)
