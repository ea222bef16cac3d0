"""Study E of studies.md: time-driven early discard (TED), after M. Baldi and
A. Vesco, "Time-driven early discard (TED) to improve the fairness of TCP
congestion control" (Politecnico di Torino).

Twelve TCP Reno connections C1..C12 with round trips of 4, 7, 12 or 16 ms
run over a chain of four links A, B, C, D; only C (300 Mb/s) is congested,
and C7, C11, C12 do not cross it. The schemes compared sit on every router
link: DropTail with a Q_max buffer ("DropTail finite"), DropTail without a
limit ("DropTail infinite"), and TED with the deadline sets S1, S2, S3 by
round-trip class (experiment ``e1``); then TED S3 with TCP's fast retransmit
on the first duplicate ACK ("1ACK") and with that plus the deadline-derived
RTO ("TDTO", experiment ``e3``).

- E1: each connection's goodput divided by its fair goodput
  (:func:`aqmlab.models.fair_goodput`: max-min shares of C with the window
  limit and the header overhead), and Jain's index of those ratios over the
  nine connections that cross C, computed per replication.
- E2: goodput of C7, C11, C12 against their window limit.
- E3: goodput of the 4 ms connections, mean goodput of the connections
  crossing C, Jain's index; C1's RTO over time under DropTail (ns-2's
  Karn/Jacobson estimate) and under TDTO, from the flow trace.

The network, the connections' paths and every number the paper leaves open
are constants below and comments in the experiment templates beside this
file (``_network.j2``, ``e1.toml.j2``, ``e3.toml.j2``).
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from aqmlab import models
from aqmlab.studies.framework import Study, StudyReport, ci_columns, mean_ci, register, summary_table

# Scale-dependent numbers. Full: the paper's 120 s runs; its replication
# count is not known, 10 is chosen.
SCALE: dict[str, dict[str, Any]] = {
    "smoke": {"duration": "2s", "warmup": "0.5s", "replications": 2, "trace_interval": "10ms"},
    "quick": {"duration": "40s", "warmup": "5s", "replications": 4, "trace_interval": "10ms"},
    "full": {"duration": "120s", "warmup": "10s", "replications": 10, "trace_interval": "10ms"},
}

BOTTLENECK = "C"
BOTTLENECK_RATE_BPS = 300e6
FAST_RATE_BPS = 1e9          # links A, B, D and every access link (chosen)
LINK_DELAY_MS = 0.25         # one-way delay of each router link (chosen)
WINDOW_PKTS = 128            # receiver window of every connection (chosen)
PAYLOAD_BYTES = 1460
HEADER_BYTES = 40
RTT_CLASSES_MS = (4, 7, 12, 16)

# The chain: (link, source router, destination router, rate in bit/s).
LINKS = [("A", 0, 1, FAST_RATE_BPS), ("B", 1, 2, FAST_RATE_BPS), ("C", 2, 3, BOTTLENECK_RATE_BPS),
         ("D", 3, 4, FAST_RATE_BPS)]
ROUTERS = 5

# Connection, round-trip class (ms), sender's router, receiver's router
# (chosen: the paper fixes only that C7, C11 and C12 do not cross C). Nine
# cross C: three of 4 ms, three of 7 ms, two of 12 ms, one of 16 ms.
CONNECTIONS = [
    ("C1", 4, 2, 3), ("C2", 4, 1, 3), ("C3", 4, 2, 4),
    ("C4", 7, 0, 3), ("C5", 7, 1, 4), ("C6", 7, 2, 3),
    ("C7", 12, 0, 2), ("C8", 12, 0, 4), ("C9", 12, 1, 3),
    ("C10", 16, 0, 3), ("C11", 16, 3, 4), ("C12", 16, 0, 1),
]

# Deadlines per round-trip class (4 / 7 / 12 / 16 ms), microseconds.
DEADLINES_US = {"S1": (120, 500, 625, 1000), "S2": (120, 550, 600, 900), "S3": (120, 650, 750, 900)}
DROPTAIL_DMAX_US = max(max(d) for d in DEADLINES_US.values())

E1_SCHEMES = ["DropTail finite", "DropTail infinite", "TED S1", "TED S2", "TED S3"]
E3_SCHEMES = ["TED S3 1ACK", "TED S3 TDTO"]
SCHEMES = E1_SCHEMES + E3_SCHEMES
TRACED = "C1"  # the connection whose RTO is traced (a 4 ms one, crossing C)


def crosses_bottleneck(src: int, dst: int) -> bool:
    lo, hi = min(src, dst), max(src, dst)
    return lo <= 2 < hi


def group_name(rtt_ms: int) -> str:
    return f"rtt{rtt_ms}ms"


def flow_name(conn: str) -> str:
    """The trace name ``group[j]`` of a connection."""
    rtt = next(r for c, r, _, _ in CONNECTIONS if c == conn)
    j = [c for c, r, _, _ in CONNECTIONS if r == rtt].index(conn)
    return f"{group_name(rtt)}[{j}]"


def input_rates_bps(link: str) -> list[float]:
    """Capacities of the input ports of the router a link leaves, other than
    the link's own (its reverse direction): the upstream router link and
    every host attached to that router."""
    _, src, dst, _ = next(x for x in LINKS if x[0] == link)
    rates = [r for _, a, b, r in LINKS if b == src and a != dst]
    hosts = sum((s == src) + (d == src) for _, _, s, d in CONNECTIONS)
    return rates + [FAST_RATE_BPS] * hosts


def q_max_bytes(link: str, d_max_us: float) -> int:
    """TED's Q_max (models.md 3) for the queue of `link`, whole bytes."""
    return int(models.ted_max_queue(d_max_us * 1e-6, input_rates_bps(link)))


def fair_goodputs() -> dict[str, float]:
    """Fair goodput (bit/s of payload) of every connection: the connections
    crossing C share it max-min with their window limits; the others are
    limited only by their window (their links have room to spare), i.e.
    the one-connection case of the same model on a 1 Gb/s link."""
    packet = PAYLOAD_BYTES + HEADER_BYTES
    on_c = [(c, r) for c, r, s, d in CONNECTIONS if crosses_bottleneck(s, d)]
    o = models.fair_goodput(BOTTLENECK_RATE_BPS, [r / 1e3 for _, r in on_c], WINDOW_PKTS, packet, HEADER_BYTES)
    out = {c: float(x) for (c, _), x in zip(on_c, o)}
    for c, r, s, d in CONNECTIONS:
        if not crosses_bottleneck(s, d):
            out[c] = float(models.fair_goodput(FAST_RATE_BPS, [r / 1e3], WINDOW_PKTS, packet, HEADER_BYTES)[0])
    return out


def _rate(bps: float) -> str:
    return f"{bps / 1e9:g}Gbps" if bps % 1e9 == 0 else f"{bps / 1e6:g}Mbps"


def _us(x: float) -> str:
    return f"{x:g}us"


def _ms(x: float) -> str:
    return f"{round(x, 6):g}ms"


@register
class Ted(Study):
    name = "ted"
    title = "Study E: time-driven early discard, fairness of TCP connections with different round trips"
    source = ("M. Baldi, A. Vesco, \"Time-driven early discard (TED) to improve the fairness of TCP congestion "
              "control\", Politecnico di Torino, 2006.")
    runtime = {"smoke": "7 s", "quick": "50 s", "full": "~6 min"}

    # Rendering -------------------------------------------------------------

    def _qdiscs(self, scheme: str) -> list[dict[str, Any]]:
        """The queue of every router link under `scheme` (without 1ACK/TDTO)."""
        out = []
        for link, *_ in LINKS:
            if scheme == "DropTail infinite":
                out.append({"kind": "droptail", "limit": "inf"})
            elif scheme == "DropTail finite":
                out.append({"kind": "droptail", "limit": f"{q_max_bytes(link, DROPTAIL_DMAX_US)}B"})
            else:
                d = DEADLINES_US[scheme.split()[1]]
                out.append({"kind": "ted", "mode": "lbd", "limit": f"{q_max_bytes(link, max(d))}B"})
        return out

    @staticmethod
    def _tcp(variant: str = "") -> dict[str, Any]:
        tcp: dict[str, Any] = {"variant": "reno", "rwnd": f"{WINDOW_PKTS}pkt"}
        if variant in ("1ACK", "TDTO"):
            tcp["dupack_threshold"] = 1
        if variant == "TDTO":
            tcp["rto"] = "ted"
        return tcp

    def _context(self, scale: str, name: str, scheme: str) -> dict[str, Any]:
        sc = SCALE[scale]
        deadlines = DEADLINES_US[scheme.split()[1]] if scheme.startswith("TED") else DEADLINES_US["S1"]
        qd = self._qdiscs(scheme)
        links = []
        for (link, src, dst, rate), q in zip(LINKS, qd):
            ins = input_rates_bps(link)
            links.append({"name": link, "src": src, "dst": dst, "rate": _rate(rate), "qdisc": q,
                          "inputs_text": f"{len(ins)} ports, {sum(ins) / 1e9:g} Gb/s"})
        hosts = []
        for c, rtt, s, d in CONNECTIONS:
            access = (rtt / 2 - LINK_DELAY_MS * abs(d - s)) / 2
            for suffix, router, role in (("s", s, "sender"), ("d", d, "receiver")):
                hosts.append({"name": c + suffix, "router": router, "delay": _ms(access),
                              "comment": f"{c}'s {role}, RTT {rtt} ms"})
        groups = []
        for k, rtt in enumerate(RTT_CLASSES_MS):
            conns = [c for c, r, _, _ in CONNECTIONS if r == rtt]
            groups.append({"name": group_name(rtt), "rtt_ms": rtt, "connections": conns,
                           "src": [c + "s" for c in conns], "dst": [c + "d" for c in conns],
                           "deadline": _us(deadlines[k]), "tcp": self._tcp()})
        return {"name": name, "duration": sc["duration"], "warmup": sc["warmup"],
                "replications": sc["replications"], "trace_interval": sc["trace_interval"],
                "bottleneck": BOTTLENECK, "traced_flow": flow_name(TRACED), "routers": ROUTERS,
                "fast_rate": _rate(FAST_RATE_BPS), "link_delay": _ms(LINK_DELAY_MS), "links": links,
                "hosts": hosts, "groups": groups, "window": WINDOW_PKTS, "payload": f"{PAYLOAD_BYTES}B",
                "zip": zip}

    def experiments(self, scale: str) -> dict[str, str]:
        e1 = self._context(scale, "e1", "DropTail finite")
        axes = []
        for i, (link, *_) in enumerate(LINKS):
            axes.append({"path": f"topology.links[{i}].qdisc", "labels": E1_SCHEMES,
                         "values": [self._qdiscs(s)[i] for s in E1_SCHEMES]})
        for k, rtt in enumerate(RTT_CLASSES_MS):
            axes.append({"path": f"traffic[{k}].ted_deadline", "labels": E1_SCHEMES,
                         "values": [_us(DEADLINES_US[s.split()[1] if s.startswith("TED") else "S1"][k])
                                    for s in E1_SCHEMES]})
        e3 = self._context(scale, "e3", "TED S3")
        e3_axes = [{"path": f"traffic[{k}].tcp", "labels": E3_SCHEMES,
                    "values": [self._tcp(s.split()[-1]) for s in E3_SCHEMES]} for k in range(len(RTT_CLASSES_MS))]
        return {"e1": self.render("e1.toml.j2", axes=axes, **e1),
                "e3": self.render("e3.toml.j2", axes=e3_axes, **e3)}

    # Analysis --------------------------------------------------------------

    @staticmethod
    def _runs(report: StudyReport) -> pd.DataFrame:
        """Runs of both experiments with a `scheme` column."""
        e1 = report.runs("e1", flows=True)
        e1["scheme"] = e1[f"topology.links[{[x[0] for x in LINKS].index(BOTTLENECK)}].qdisc"]
        e3 = report.runs("e3", flows=True)
        e3["scheme"] = e3["traffic[0].tcp"]
        e1["experiment"], e3["experiment"] = "e1", "e3"
        return pd.concat([e1, e3], ignore_index=True)

    @staticmethod
    def _flows(runs: pd.DataFrame) -> pd.DataFrame:
        """One row per run and connection."""
        fair = fair_goodputs()
        by_flow = {}
        for rtt in RTT_CLASSES_MS:
            for j, c in enumerate([c for c, r, _, _ in CONNECTIONS if r == rtt]):
                by_flow[(group_name(rtt), j)] = c
        info = {c: (r, crosses_bottleneck(s, d)) for c, r, s, d in CONNECTIONS}
        rows = []
        for _, run in runs.iterrows():
            for f in run["summary"]["flows"]:
                c = by_flow[(f["group"], f["id"])]
                rows.append({"scheme": run["scheme"], "replication": run["replication"], "connection": c,
                             "rtt_ms": info[c][0], "crosses_C": info[c][1], "fair_goodput_bps": fair[c],
                             "goodput_bps": f["goodput_bps"], "normalised_goodput": f["goodput_bps"] / fair[c],
                             "timeouts": f["timeouts"], "rtt_prop_s": f["rtt_prop_s"]})
        df = pd.DataFrame(rows)
        order = {c: i for i, (c, *_) in enumerate(CONNECTIONS)}
        df["_s"], df["_c"] = df["scheme"].map(SCHEMES.index), df["connection"].map(order)
        return df.sort_values(["_s", "replication", "_c"]).drop(columns=["_s", "_c"]).reset_index(drop=True)

    @staticmethod
    def _jain_per_run(flows: pd.DataFrame) -> pd.DataFrame:
        on_c = flows[flows["crosses_C"]]
        rows = [{"scheme": s, "replication": r, "jain": models.jain_index(g["normalised_goodput"].to_numpy())}
                for (s, r), g in on_c.groupby(["scheme", "replication"], sort=False)]
        return pd.DataFrame(rows)

    def analyse(self, report: StudyReport) -> None:
        runs = self._runs(report)
        flows = self._flows(runs)
        reps = int(runs.groupby("scheme").size().min())
        sc = SCALE[report.scale]
        report.text(
            f"Twelve TCP Reno connections over the chain A-B-C-D, C = 300 Mb/s; {sc['duration']} runs, the first "
            f"{sc['warmup']} discarded, {reps} replications per scheme; intervals are Student-t 95% over "
            f"replications. Every connection has a {WINDOW_PKTS}-packet receiver window and 1460 B payloads "
            f"(1500 B on the wire). Fair goodputs are aqmlab.models.fair_goodput: "
            f"{fair_goodputs()['C1'] / 1e6:.2f} Mb/s for each of the nine connections crossing C (none is "
            f"window-limited at that share), and the window limit for C7, C11 and C12.")
        bottleneck_q = {s: q_max_bytes(BOTTLENECK, max(d)) for s, d in DEADLINES_US.items()}
        report.text(
            "Buffers at C (Q_max = D_max x the capacity of R2's other input ports, "
            f"{sum(input_rates_bps(BOTTLENECK)) / 1e9:g} Gb/s): "
            + ", ".join(f"TED {s} {q / 1e3:g} KB" for s, q in bottleneck_q.items())
            + f", DropTail finite {q_max_bytes(BOTTLENECK, DROPTAIL_DMAX_US) / 1e3:g} KB "
            f"({q_max_bytes(BOTTLENECK, DROPTAIL_DMAX_US) / 1500:.0f} packets of 1500 B).")
        report.table("flows", flows,
                     "Every run's goodput per connection (the values the tables below average), normalised to the "
                     "connection's fair goodput.")
        jain_runs = self._jain_per_run(flows)
        self._e1(report, runs, flows, jain_runs, reps)
        self._e2(report, flows, reps)
        self._e3(report, runs, flows, jain_runs, reps)

    # E1 ----------------------------------------------------------------------

    @staticmethod
    def _goodput_table(flows: pd.DataFrame) -> pd.DataFrame:
        rows = []
        for (s, c), g in flows.groupby(["scheme", "connection"], sort=False):
            first = g.iloc[0]
            rows.append({"scheme": s, "connection": c, "rtt_ms": first["rtt_ms"], "crosses_C": first["crosses_C"],
                         "fair_goodput_bps": first["fair_goodput_bps"], **ci_columns(g["goodput_bps"], "goodput_bps"),
                         **ci_columns(g["normalised_goodput"], "normalised_goodput"), "n": len(g)})
        return pd.DataFrame(rows)

    def _e1(self, report: StudyReport, runs: pd.DataFrame, flows: pd.DataFrame, jain_runs: pd.DataFrame,
            reps: int) -> None:
        report.section("E1: goodput normalised to the fair goodput, and Jain's index")
        table = self._goodput_table(flows)
        report.table("goodput", table,
                     f"Goodput of each connection and its ratio to the fair goodput, mean and 95% CI over {reps} "
                     "replications, every scheme (rows TED S3 1ACK and TDTO: E3).")
        fair_rows = []
        for s in SCHEMES:
            m = mean_ci(jain_runs.loc[jain_runs["scheme"] == s, "jain"])
            fair_rows.append({"scheme": s, "jain": m["mean"], "ci95_low": m["ci95_low"], "ci95_high": m["ci95_high"],
                              "n": m["n"]})
        fairness = pd.DataFrame(fair_rows)
        report.table("fairness", fairness,
                     "Jain's index of the normalised goodputs of the nine connections crossing C, computed per "
                     "replication (aqmlab.models.jain_index), mean and 95% CI.")
        bq = f"queues.{BOTTLENECK}"
        bt = summary_table(runs, ["scheme"], {
            "utilization": lambda s: s["queues"][BOTTLENECK]["utilization"],
            "qdelay_mean_s": lambda s: s["queues"][BOTTLENECK]["qdelay_mean_s"],
            "loss_rate": lambda s: s["queues"][BOTTLENECK]["loss_rate"],
            "drops_expired": lambda s: s["queues"][BOTTLENECK]["drops_expired"],
        })
        report.table("bottleneck", bt, f"Link C ({bq}): utilisation, mean queueing delay, loss rate and TED's "
                                       "expired packets, mean and 95% CI.")

        on_c = table[table["crosses_C"] & table["scheme"].isin(E1_SCHEMES)]
        conns = list(dict.fromkeys(on_c["connection"]))
        fig, ax = plt.subplots(figsize=(10, 4))
        width = 0.8 / len(E1_SCHEMES)
        x = np.arange(len(conns))
        for k, s in enumerate(E1_SCHEMES):
            g = on_c[on_c["scheme"] == s].set_index("connection").loc[conns]
            err = np.nan_to_num([g["normalised_goodput"] - g["normalised_goodput_ci95_low"],
                                 g["normalised_goodput_ci95_high"] - g["normalised_goodput"]])
            ax.bar(x + (k - (len(E1_SCHEMES) - 1) / 2) * width, g["normalised_goodput"], width, yerr=err,
                   capsize=2, label=s)
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        rtt = dict(zip(table["connection"], table["rtt_ms"]))
        ax.set_xticks(x, [f"{c}\n{rtt[c]} ms" for c in conns])
        ax.set_ylabel("goodput / fair goodput")
        ax.legend(fontsize=8, ncol=5)
        report.figure("e1_normalised_goodput", fig,
                      f"E1: goodput of the connections crossing C divided by their fair goodput (dashed: 1), mean "
                      f"and 95% CI over {reps} replications (goodput.csv).")
        fig, ax = plt.subplots(figsize=(6, 3.5))
        f = fairness.set_index("scheme").loc[SCHEMES]
        ax.bar(range(len(SCHEMES)), f["jain"], yerr=np.nan_to_num([f["jain"] - f["ci95_low"],
                                                                    f["ci95_high"] - f["jain"]]), capsize=3)
        ax.set_xticks(range(len(SCHEMES)), SCHEMES, rotation=30, ha="right")
        ax.set_ylabel("Jain's index")
        ax.set_ylim(0, 1.05)
        report.figure("e1_jain", fig, f"Jain's index of the normalised goodputs of the nine connections crossing C, "
                                      f"mean and 95% CI over {reps} replications (fairness.csv).")

        # What the numbers say, computed from them.
        by_class = (flows[flows["crosses_C"]].groupby(["scheme", "rtt_ms"])["normalised_goodput"].mean())
        lines = []
        for s in E1_SCHEMES:
            j = fairness.set_index("scheme").loc[s]
            cls = ", ".join(f"{r} ms {by_class[(s, r)]:.2f}" for r in RTT_CLASSES_MS if (s, r) in by_class)
            lines.append(f"{s}: Jain {j['jain']:.3f} [{j['ci95_low']:.3f}, {j['ci95_high']:.3f}], "
                         f"goodput/fair by round-trip class {cls}")
        report.text("Per scheme: " + "; ".join(lines) + ".")
        fj = fairness.set_index("scheme")["jain"]
        best = fj[E1_SCHEMES].idxmax()
        dt = fj["DropTail finite"]
        ted_better = [s for s in E1_SCHEMES if s.startswith("TED") and fairness.set_index("scheme").loc[s, "ci95_low"]
                      > fairness.set_index("scheme").loc["DropTail finite", "ci95_high"]]
        ted_worse = [s for s in E1_SCHEMES if s.startswith("TED") and fairness.set_index("scheme").loc[s, "ci95_high"]
                     < fairness.set_index("scheme").loc["DropTail finite", "ci95_low"]]
        report.text(
            f"The fairest E1 scheme here is {best} (Jain {fj[best]:.3f}); DropTail finite has {dt:.3f}. "
            + (f"TED schemes with intervals entirely above DropTail finite's: {', '.join(ted_better)}. "
               if ted_better else "No TED scheme's interval lies entirely above DropTail finite's. ")
            + (f"TED schemes with intervals entirely below it: {', '.join(ted_worse)}. " if ted_worse else "")
            + "Under TED the 4 ms connections' 120 us deadline is about "
            f"{120e-6 * BOTTLENECK_RATE_BPS / 8 / 1500:.0f} packet times at C, while the other classes' "
            "deadlines let C's queue grow to 500-1000 us; how much each class keeps of its fair share is in "
            "the per-class ratios above.")

    # E2 ----------------------------------------------------------------------

    def _e2(self, report: StudyReport, flows: pd.DataFrame, reps: int) -> None:
        report.section("E2: the connections that do not cross C")
        off = flows[~flows["crosses_C"]]
        table = self._goodput_table(off).rename(columns={"fair_goodput_bps": "window_limit_goodput_bps"})
        table = table.drop(columns=["crosses_C"])
        report.table("e2_uncongested", table,
                     f"Goodput of C7, C11, C12 under each scheme and its ratio to the window limit "
                     f"(W p 8 / RTT x (1 - h/p), W = {WINDOW_PKTS} packets), mean and 95% CI over {reps} replications.")
        conns = list(dict.fromkeys(table["connection"]))
        fig, ax = plt.subplots(figsize=(7, 3.5))
        width = 0.8 / len(SCHEMES)
        x = np.arange(len(conns))
        for k, s in enumerate(SCHEMES):
            g = table[table["scheme"] == s].set_index("connection").loc[conns]
            err = np.nan_to_num([g["goodput_bps"] - g["goodput_bps_ci95_low"],
                                 g["goodput_bps_ci95_high"] - g["goodput_bps"]]) / 1e6
            ax.bar(x + (k - (len(SCHEMES) - 1) / 2) * width, g["goodput_bps"] / 1e6, width, yerr=err, capsize=2,
                   label=s)
        lim = table.drop_duplicates("connection").set_index("connection").loc[conns, "window_limit_goodput_bps"]
        for i, v in enumerate(lim):
            ax.hlines(v / 1e6, i - 0.45, i + 0.45, color="k", ls="--", lw=0.8)
        rtt = dict(zip(table["connection"], table["rtt_ms"]))
        ax.set_xticks(x, [f"{c}\n{rtt[c]} ms" for c in conns])
        ax.set_ylabel("goodput (Mb/s)")
        ax.legend(fontsize=7, ncol=2)
        report.figure("e2_uncongested", fig, f"E2: goodput of the connections that cross only uncongested links, "
                                             f"dashed: their window limit; mean and 95% CI over {reps} replications.")
        lo, hi = table["normalised_goodput"].min(), table["normalised_goodput"].max()
        worst = table.loc[table["normalised_goodput"].idxmin()]
        report.text(
            f"Under every scheme C7, C11 and C12 get between {100 * lo:.1f}% and {100 * hi:.1f}% of their "
            f"window-limited goodput (lowest: {worst['connection']} under {worst['scheme']}). "
            + ("No scheme holds them back by more than 5%: a TED queue that is not congested discards nothing, so "
               "it limits only the connections crossing the congested link."
               if lo >= 0.95 else
               "Some scheme holds them back by more than 5%; the uncongested links' queues are in the flows table."))

    # E3 ----------------------------------------------------------------------

    def _e3(self, report: StudyReport, runs: pd.DataFrame, flows: pd.DataFrame, jain_runs: pd.DataFrame,
            reps: int) -> None:
        report.section("E3: fast retransmit on the first duplicate ACK (1ACK) and the deadline-derived RTO (TDTO)")
        shown = ["DropTail finite", "TED S3", "TED S3 1ACK", "TED S3 TDTO"]
        short = min(RTT_CLASSES_MS)
        rows = []
        for s in shown:
            f = flows[flows["scheme"] == s]
            sr = f[f["rtt_ms"] == short].groupby("replication")["goodput_bps"].mean()
            bn = f[f["crosses_C"]].groupby("replication")["goodput_bps"].mean()
            to = f[f["rtt_ms"] == short].groupby("replication")["timeouts"].mean()
            row: dict[str, Any] = {"scheme": s}
            for name, vals in (("short_rtt_goodput_bps", sr), ("bottleneck_goodput_bps", bn),
                               ("jain", jain_runs.loc[jain_runs["scheme"] == s, "jain"]),
                               ("short_rtt_timeouts", to)):
                row |= ci_columns(vals, name)
            row["n"] = len(sr)
            rows.append(row)
        table = pd.DataFrame(rows)
        report.table("e3", table,
                     f"Mean goodput of the three {short} ms connections, mean goodput of the nine connections "
                     f"crossing C, Jain's index (as in E1) and the {short} ms connections' timeouts in the window, "
                     f"mean and 95% CI over {reps} replications; DropTail finite and TED S3 (standard TCP) from E1 "
                     "for comparison.")
        fig, axes = plt.subplots(1, 3, figsize=(11, 3.3))
        for ax, (col, label, scale) in zip(axes, [("short_rtt_goodput_bps", f"{short} ms connections (Mb/s)", 1e6),
                                                  ("bottleneck_goodput_bps", "connections crossing C (Mb/s)", 1e6),
                                                  ("jain", "Jain's index", 1)]):
            err = np.nan_to_num([table[col] - table[f"{col}_ci95_low"], table[f"{col}_ci95_high"] - table[col]])
            bars = ax.bar(range(len(shown)), table[col] / scale, yerr=err / scale, capsize=3)
            # Values that differ by orders of magnitude stay readable.
            ax.bar_label(bars, labels=[f"{v / scale:.3g}" for v in table[col]], fontsize=7, padding=2)
            ax.set_xticks(range(len(shown)), shown, rotation=30, ha="right", fontsize=8)
            ax.set_title(label, fontsize=9)
        report.figure("e3_goodput", fig, f"E3: mean goodput per connection of the {short} ms class and of the "
                                         f"connections crossing C, and Jain's index; mean and 95% CI over {reps} "
                                         "replications (e3.csv).")
        t = table.set_index("scheme")
        fair = fair_goodputs()["C1"]

        def mbps(s: str, col: str) -> str:
            return (f"{t.loc[s, col] / 1e6:.3f} Mb/s [{t.loc[s, col + '_ci95_low'] / 1e6:.3f}, "
                    f"{t.loc[s, col + '_ci95_high'] / 1e6:.3f}]")

        def overlaps(a: str, b: str, col: str) -> bool:
            return not (t.loc[a, f"{col}_ci95_low"] > t.loc[b, f"{col}_ci95_high"]
                        or t.loc[b, f"{col}_ci95_low"] > t.loc[a, f"{col}_ci95_high"])
        same = [s for s in ("TED S3 1ACK", "TED S3 TDTO") if overlaps(s, "TED S3", "short_rtt_goodput_bps")]
        report.text(
            f"Each {short} ms connection gets {mbps('TED S3', 'short_rtt_goodput_bps')} under TED S3, "
            f"{mbps('TED S3 1ACK', 'short_rtt_goodput_bps')} with 1ACK and "
            f"{mbps('TED S3 TDTO', 'short_rtt_goodput_bps')} with TDTO (fair goodput {fair / 1e6:.2f} Mb/s; "
            f"DropTail finite {mbps('DropTail finite', 'short_rtt_goodput_bps')}). "
            + (f"The intervals of {' and '.join(same)} overlap TED S3's: at this scale neither change is a "
               "measurable gain for them. " if same else
               "Both changes move the interval away from TED S3's. ")
            + "Mean goodput of the connections crossing C: "
            + ", ".join(f"{s} {t.loc[s, 'bottleneck_goodput_bps'] / 1e6:.2f} Mb/s" for s in shown)
            + "; Jain's index: " + ", ".join(f"{s} {t.loc[s, 'jain']:.3f}" for s in shown)
            + f"; timeouts per {short} ms connection in the window: "
            + ", ".join(f"{s} {t.loc[s, 'short_rtt_timeouts']:.1f}" for s in shown) + ".")
        self._rto_figure(report, runs, reps)

    def _rto_figure(self, report: StudyReport, runs: pd.DataFrame, reps: int) -> None:
        col = f"{flow_name(TRACED)}.rto_s"
        srtt = f"{flow_name(TRACED)}.srtt_s"
        parts = []
        for s in ("DropTail finite", "TED S3 TDTO"):
            r = runs[(runs["scheme"] == s) & (runs["replication"] == 0)]
            if r.empty:
                continue
            ser = report.series(r.iloc[0]["experiment"], int(r.iloc[0]["point"]), 0)
            if ser is None or col not in ser:
                continue
            parts.append(pd.DataFrame({"scheme": s, "time_s": ser["time_s"], "rto_s": ser[col],
                                       "srtt_s": ser[srtt]}))
        if not parts:
            report.text("The flow trace of the RTO is missing from the store; no RTO figure.")
            return
        rto = pd.concat(parts, ignore_index=True)
        report.table("e3_rto", rto, f"{TRACED}'s retransmission timeout and smoothed RTT as the sender holds them, "
                                    "sampled every "
                                    f"{SCALE[report.scale]['trace_interval']}, replication 0.")
        warm = float(SCALE[report.scale]["warmup"].rstrip("s"))
        fig, ax = plt.subplots(figsize=(8, 3.5))
        for s, g in rto.groupby("scheme", sort=False):
            ax.step(g["time_s"], g["rto_s"] * 1e3, where="post", label=f"{s} (RTO)", lw=0.9)
        ax.axvline(warm, color="grey", lw=0.6, ls=":")
        ax.set_yscale("log")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("RTO (ms)")
        ax.legend(fontsize=8)
        report.figure("e3_rto", fig, f"E3: RTO of connection {TRACED} (4 ms round trip, crossing C) over time, "
                                     "replication 0: ns-2's Karn/Jacobson estimate under DropTail finite, the fixed "
                                     "deadline-derived RTO (with backoff after repeated timeouts) under TED S3 TDTO; "
                                     "dotted: end of the warm-up.")
        inwin = rto[rto["time_s"] >= warm]
        parts = []
        for s, g in inwin.groupby("scheme", sort=False):
            # The RTO without backoff: the smallest the sender held in the run.
            low = rto.loc[rto["scheme"] == s, "rto_s"].min()
            backed = (g["rto_s"] > low * 1.5).mean()
            parts.append(f"under {s} its median is {1e3 * g['rto_s'].median():.1f} ms; its smallest value in "
                         f"the run is {1e3 * low:.2f} ms, and it is backed off (above 1.5x that) in "
                         f"{100 * backed:.0f}% of the window's samples")
        report.text(f"{TRACED}'s RTO in the measurement window (propagation round trip {CONNECTIONS[0][1]} ms): "
                    + "; ".join(parts) + ".")
