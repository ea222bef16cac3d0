"""Study E: time-driven early discard (TED), after M. Baldi and
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
- E3: goodput of the 4 ms connection crossing C (C10), total goodput across
  C, Jain's index, with 1ACK under DropTail finite and TED S3 and with TDTO
  under TED S3; C10's RTO over time under DropTail (ns-2's Karn/Jacobson
  estimate) and under TDTO, from the flow trace.
- E4 (aqmlab's): sensitivity to what the paper leaves open, one change at a
  time, and the paper's claims with a verdict each.

The network, the connections' paths and every number the paper leaves open
are constants below and comments in the experiment templates beside this
file (``_network.j2``, ``e1.toml.j2``, ``e3.toml.j2``, ``e4.toml.j2``).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, replace
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from aqmlab import models
from aqmlab.result import Summary
from aqmlab.studies.framework import (Study, StudyReport, ci_columns, combine_verdicts, effect_verdict, mean_ci,
                                     register, show_ci, summary_table)

# Scale-dependent numbers. Full: the paper's 120 s runs; its replication
# count is not known, 10 is chosen (4 for the sensitivity experiment, which
# has many points).
SCALE: dict[str, dict[str, Any]] = {
    "smoke": {"duration": "2s", "warmup": "0.5s", "replications": 2, "trace_interval": "10ms",
              "e4": {"duration": "2s", "warmup": "0.5s", "replications": 2}},
    "quick": {"duration": "40s", "warmup": "5s", "replications": 4, "trace_interval": "10ms",
              "e4": {"duration": "20s", "warmup": "5s", "replications": 2}},
    "full": {"duration": "120s", "warmup": "10s", "replications": 10, "trace_interval": "10ms",
             "e4": {"duration": "120s", "warmup": "10s", "replications": 4}},
}

BOTTLENECK = "C"
BOTTLENECK_RATE_BPS = 300e6
HEADER_BYTES = 40
RTT_CLASSES_MS = (16, 12, 7, 4)  # the paper's order: decreasing round trip
ROUTERS = 5

# Connection, round-trip class (ms), sender's router, receiver's router; the
# chain is R0 -A- R1 -B- R2 -C- R3 -D- R4.
# "paper": the paper numbers its connections by decreasing round trip and
# says that C7, C11 and C12 do not cross C. CHOSEN: three connections per
# class (C1-C3 16 ms, C4-C6 12 ms, C7-C9 7 ms, C10-C12 4 ms), which makes
# C1..C4 the long ones and C8..C10 short ones crossing C, as its figures
# have them; the routers each connection joins are ours. Nine cross C:
# three of 16 ms, three of 12 ms, two of 7 ms and one of 4 ms.
# "three 4 ms on C" (sensitivity only): the assignment of aqmlab before
# engine 0.4 with the paper's names moved to fit, all three 4 ms connections
# crossing C and one connection of 7, 12 and 16 ms off it.
PATHS: dict[str, list[tuple[str, int, int, int]]] = {
    "paper": [
        ("C1", 16, 0, 3), ("C2", 16, 1, 3), ("C3", 16, 0, 4),
        ("C4", 12, 0, 3), ("C5", 12, 1, 4), ("C6", 12, 2, 4),
        ("C7", 7, 0, 2), ("C8", 7, 1, 3), ("C9", 7, 2, 4),
        ("C10", 4, 2, 3), ("C11", 4, 3, 4), ("C12", 4, 0, 1),
    ],
    "three 4 ms on C": [
        ("C1", 16, 0, 3), ("C2", 16, 1, 4), ("C3", 16, 3, 4),
        ("C4", 12, 0, 3), ("C5", 12, 0, 4), ("C6", 12, 0, 2),
        ("C7", 7, 0, 1), ("C8", 7, 1, 3), ("C9", 7, 2, 4),
        ("C10", 4, 2, 3), ("C11", 4, 1, 3), ("C12", 4, 2, 4),
    ],
}

# Deadlines per round-trip class (16 / 12 / 7 / 4 ms), microseconds: the
# paper's Table II.
DEADLINES_US = {"S1": (1000, 625, 500, 120), "S2": (900, 600, 550, 120), "S3": (900, 750, 650, 120)}
DROPTAIL_DMAX_US = max(max(d) for d in DEADLINES_US.values())

E1_SCHEMES = ["DropTail finite", "DropTail infinite", "TED S1", "TED S2", "TED S3"]
E3_SCHEMES = ["DropTail finite 1ACK", "TED S3 1ACK", "TED S3 TDTO"]
SCHEMES = E1_SCHEMES + E3_SCHEMES
E4_SCHEMES = ["DropTail finite", "DropTail infinite", "TED S3"]
TRACED = "C10"  # the connection whose RTO is traced: the 4 ms one crossing C

# The paper's numbers (Baldi and Vesco, Tables III and IV).
PAPER_JAIN = {"DropTail finite": 0.759, "DropTail infinite": 0.84, "TED S1": 0.963, "TED S2": 0.985,
              "TED S3": 0.991, "DropTail finite 1ACK": 0.759, "TED S3 1ACK": 0.997, "TED S3 TDTO": 0.997}


@dataclass(frozen=True)
class Setting:
    """What the paper leaves open, one value each; the defaults are the
    study's choices (see the experiment files for why)."""

    fast_rate_bps: float = 1e9     # links A, B, D and every access link
    link_delay_ms: float = 0.25    # one-way delay of each router link
    window_pkts: int = 128         # receiver window of every connection
    payload_bytes: int = 1460
    paths: str = "paper"
    mode: str = "ebd"              # TED's deadlines: end to end (ebd) or per queue (lbd)
    check: str = "head"            # where a TED queue checks the deadline
    delayed_ack: bool = False
    ted_everywhere: bool = True    # TED on every router link, or on C only (DropTail elsewhere)

    @property
    def connections(self) -> list[tuple[str, int, int, int]]:
        return PATHS[self.paths]

    @property
    def links(self) -> list[tuple[str, int, int, float]]:
        """(link, source router, destination router, rate in bit/s)."""
        f = self.fast_rate_bps
        return [("A", 0, 1, f), ("B", 1, 2, f), ("C", 2, 3, BOTTLENECK_RATE_BPS), ("D", 3, 4, f)]

    def input_rates_bps(self, link: str) -> list[float]:
        """Capacities of the input ports of the router a link leaves, other
        than the link's own (its reverse direction): the upstream router
        link and every host attached to that router."""
        _, src, dst, _ = next(x for x in self.links if x[0] == link)
        rates = [r for _, a, b, r in self.links if b == src and a != dst]
        hosts = sum((s == src) + (d == src) for _, _, s, d in self.connections)
        return rates + [self.fast_rate_bps] * hosts

    def q_max_bytes(self, link: str, d_max_us: float) -> int:
        """TED's Q_max (aqmlab.models.ted_max_queue) for the queue of `link`, whole bytes."""
        return int(models.ted_max_queue(d_max_us * 1e-6, self.input_rates_bps(link)))

    def fair_goodputs(self) -> dict[str, float]:
        """Fair goodput (bit/s of payload) of every connection: the
        connections crossing C share it max-min with their window limits;
        the others are limited only by their window (their links have room
        to spare), i.e. the one-connection case of the same model."""
        packet = self.payload_bytes + HEADER_BYTES
        on_c = [(c, r) for c, r, s, d in self.connections if crosses_bottleneck(s, d)]
        o = models.fair_goodput(BOTTLENECK_RATE_BPS, [r / 1e3 for _, r in on_c], self.window_pkts, packet,
                                HEADER_BYTES)
        out = {c: float(x) for (c, _), x in zip(on_c, o)}
        for c, r, s, d in self.connections:
            if not crosses_bottleneck(s, d):
                out[c] = float(models.fair_goodput(self.fast_rate_bps, [r / 1e3], self.window_pkts, packet,
                                                   HEADER_BYTES)[0])
        return out

    def flow_names(self) -> dict[tuple[str, int], str]:
        """(group, flow index) -> connection."""
        out = {}
        for rtt in RTT_CLASSES_MS:
            for j, c in enumerate([c for c, r, _, _ in self.connections if r == rtt]):
                out[(group_name(rtt), j)] = c
        return out


DEFAULT = Setting()

# The sensitivity experiment (e4): one thing changed at a time from DEFAULT.
# (axis, label, setting, schemes). The axes and why each value is plausible
# are in e4.toml.j2.
E4_VARIANTS: list[tuple[str, str, Setting, list[str]]] = [
    ("default", "default", DEFAULT, E4_SCHEMES),
    ("link rate", "links 300 Mb/s", replace(DEFAULT, fast_rate_bps=300e6), E4_SCHEMES),
    ("link rate", "links 10 Gb/s", replace(DEFAULT, fast_rate_bps=10e9), E4_SCHEMES),
    ("delay split", "router links 0.05 ms", replace(DEFAULT, link_delay_ms=0.05), E4_SCHEMES),
    ("delay split", "router links 1 ms", replace(DEFAULT, link_delay_ms=1.0), E4_SCHEMES),
    ("window", "window 20", replace(DEFAULT, window_pkts=20), E4_SCHEMES),
    ("window", "window 45", replace(DEFAULT, window_pkts=45), E4_SCHEMES),
    ("window", "window 64", replace(DEFAULT, window_pkts=64), E4_SCHEMES),
    ("packet size", "payload 1000 B", replace(DEFAULT, payload_bytes=1000), E4_SCHEMES),
    ("paths", "three 4 ms on C", replace(DEFAULT, paths="three 4 ms on C"), E4_SCHEMES),
    ("TCP", "delayed ACKs", replace(DEFAULT, delayed_ack=True), E4_SCHEMES),
    ("deadline", "lbd", replace(DEFAULT, mode="lbd"), ["TED S3"]),
    ("TED where", "TED on C only", replace(DEFAULT, ted_everywhere=False), ["TED S3"]),
    ("check", "check at departure", replace(DEFAULT, check="departure"), ["TED S3"]),
    ("check", "check at arrival", replace(DEFAULT, check="arrival"), ["TED S3"]),
]


def crosses_bottleneck(src: int, dst: int) -> bool:
    lo, hi = min(src, dst), max(src, dst)
    return lo <= 2 < hi


def group_name(rtt_ms: int) -> str:
    return f"rtt{rtt_ms}ms"


def flow_name(conn: str, setting: Setting = DEFAULT) -> str:
    """The trace name ``group[j]`` of a connection."""
    return next(f"{g}[{j}]" for (g, j), c in setting.flow_names().items() if c == conn)


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
    runtime = {"smoke": "15 s", "quick": "2 min", "full": "~20 min"}

    # Rendering -------------------------------------------------------------

    @staticmethod
    def _qdiscs(scheme: str, setting: Setting = DEFAULT) -> list[dict[str, Any]]:
        """The queue of every router link under `scheme` (1ACK/TDTO aside)."""
        out: list[dict[str, Any]] = []
        for link, *_ in setting.links:
            if scheme.startswith("DropTail infinite"):
                out.append({"kind": "droptail", "limit": "inf"})
            elif scheme.startswith("DropTail finite"):
                out.append({"kind": "droptail", "limit": f"{setting.q_max_bytes(link, DROPTAIL_DMAX_US)}B"})
            else:
                d = DEADLINES_US[scheme.split()[1]]
                limit = f"{setting.q_max_bytes(link, max(d))}B"
                if not setting.ted_everywhere and link != BOTTLENECK:
                    out.append({"kind": "droptail", "limit": limit})
                    continue
                q = {"kind": "ted", "mode": setting.mode, "limit": limit}
                if setting.check != "head":
                    q["check"] = setting.check
                out.append(q)
        return out

    @staticmethod
    def _deadlines(scheme: str) -> tuple[int, ...]:
        """The deadline of each round-trip class; a drop-tail queue ignores
        them, so DropTail schemes carry S1's only to name one."""
        return DEADLINES_US[scheme.split()[1] if scheme.startswith("TED") else "S1"]

    @staticmethod
    def _tcp(scheme: str, setting: Setting = DEFAULT) -> dict[str, Any]:
        tcp: dict[str, Any] = {"variant": "reno", "rwnd": f"{setting.window_pkts}pkt"}
        if setting.delayed_ack:
            tcp["delayed_ack"] = True
        if scheme.endswith(("1ACK", "TDTO")):
            tcp["dupack_threshold"] = 1
        if scheme.endswith("TDTO"):
            tcp["rto"] = "ted"
        return tcp

    def _context(self, scale: str, name: str, scheme: str, setting: Setting = DEFAULT,
                 sizes: dict[str, Any] | None = None) -> dict[str, Any]:
        sc = SCALE[scale] | (sizes or {})
        deadlines = self._deadlines(scheme)
        links = []
        for (link, src, dst, rate), q in zip(setting.links, self._qdiscs(scheme, setting)):
            ins = setting.input_rates_bps(link)
            links.append({"name": link, "src": src, "dst": dst, "rate": _rate(rate), "qdisc": q,
                          "delay": _ms(setting.link_delay_ms),
                          "inputs_text": f"{len(ins)} ports, {sum(ins) / 1e9:g} Gb/s"})
        hosts = []
        for c, rtt, s, d in setting.connections:
            access = (rtt / 2 - setting.link_delay_ms * abs(d - s)) / 2
            for suffix, router, role in (("s", s, "sender"), ("d", d, "receiver")):
                hosts.append({"name": c + suffix, "router": router, "delay": _ms(access),
                              "rate": _rate(setting.fast_rate_bps), "comment": f"{c}'s {role}, RTT {rtt} ms"})
        groups = []
        for k, rtt in enumerate(RTT_CLASSES_MS):
            conns = [c for c, r, _, _ in setting.connections if r == rtt]
            groups.append({"name": group_name(rtt), "rtt_ms": rtt, "connections": conns,
                           "src": [c + "s" for c in conns], "dst": [c + "d" for c in conns],
                           "deadline": _us(deadlines[k]), "tcp": self._tcp(scheme, setting),
                           "packet_size": f"{setting.payload_bytes}B"})
        return {"name": name, "duration": sc["duration"], "warmup": sc["warmup"],
                "replications": sc["replications"], "trace_interval": SCALE[scale]["trace_interval"],
                "bottleneck": BOTTLENECK, "traced_flow": flow_name(TRACED, setting), "traced": TRACED,
                "routers": ROUTERS,
                "fast_rate": _rate(setting.fast_rate_bps), "link_delay": _ms(setting.link_delay_ms),
                "links": links, "hosts": hosts, "groups": groups, "window": setting.window_pkts,
                "mode": setting.mode, "zip": zip}

    def _scheme_axes(self, schemes: list[str], setting: Setting = DEFAULT) -> list[dict[str, Any]]:
        """Swept values of every router link's queue, every class's deadline
        and TCP, one value per scheme."""
        axes = []
        for i, (link, *_) in enumerate(setting.links):
            axes.append({"path": f"topology.links[{i}].qdisc", "labels": schemes,
                         "values": [self._qdiscs(s, setting)[i] for s in schemes]})
        for k in range(len(RTT_CLASSES_MS)):
            axes.append({"path": f"traffic[{k}].ted_deadline", "labels": schemes,
                         "values": [_us(self._deadlines(s)[k]) for s in schemes]})
        for k in range(len(RTT_CLASSES_MS)):
            axes.append({"path": f"traffic[{k}].tcp", "labels": schemes,
                         "values": [self._tcp(s, setting) for s in schemes]})
        return axes

    def _scenario_table(self, scale: str, scheme: str, setting: Setting) -> tuple[dict[str, Any], list[Any]]:
        """The topology and traffic tables of one e4 point, as data."""
        ctx = self._context(scale, "e4-sensitivity", scheme, setting, SCALE[scale]["e4"])
        data = tomllib.loads(self.render("e1.toml.j2", axes=[], **ctx))["scenario"]
        return data["topology"], data["traffic"]

    def experiments(self, scale: str) -> dict[str, str]:
        e1 = self._context(scale, "e1", "DropTail finite")
        e3 = self._context(scale, "e3", "TED S3")
        points = [(axis, label, setting, scheme) for axis, label, setting, schemes in E4_VARIANTS
                  for scheme in schemes]
        tables = [self._scenario_table(scale, scheme, setting) for _, _, setting, scheme in points]
        e4 = self._context(scale, "e4-sensitivity", "TED S3", DEFAULT, SCALE[scale]["e4"]) | {"traced_flow": ""}
        return {"e1": self.render("e1.toml.j2", axes=self._scheme_axes(E1_SCHEMES), **e1),
                "e3": self.render("e3.toml.j2", axes=self._scheme_axes(E3_SCHEMES), **e3),
                "e4-sensitivity": self.render(
                    "e4.toml.j2", labels=[f"{label}: {scheme}" for _, label, _, scheme in points],
                    topologies=[t for t, _ in tables], traffics=[t for _, t in tables], **e4)}

    # Analysis --------------------------------------------------------------

    @staticmethod
    def _runs(report: StudyReport) -> pd.DataFrame:
        """Runs of e1 and e3 with a `scheme` column."""
        c = [x[0] for x in DEFAULT.links].index(BOTTLENECK)
        e1 = report.runs("e1", flows=True)
        e3 = report.runs("e3", flows=True)
        for df, name in ((e1, "e1"), (e3, "e3")):
            df["scheme"], df["experiment"] = df[f"topology.links[{c}].qdisc"], name
        return pd.concat([e1, e3], ignore_index=True)

    @staticmethod
    def _flows(runs: pd.DataFrame, setting_of: Any = lambda run: DEFAULT) -> pd.DataFrame:
        """One row per run and connection; `setting_of(run)` is the run's
        :class:`Setting`."""
        rows = []
        for _, run in runs.iterrows():
            setting = setting_of(run)
            fair, names = setting.fair_goodputs(), setting.flow_names()
            info = {c: (r, crosses_bottleneck(s, d)) for c, r, s, d in setting.connections}
            for f in run["summary"]["flows"]:
                c = names[(f["group"], f["id"])]
                rows.append({"scheme": run["scheme"], "replication": run["replication"], "connection": c,
                             "src": f["src"], "dst": f["dst"], "rtt_ms": info[c][0], "crosses_C": info[c][1], "fair_goodput_bps": fair[c],
                             "goodput_bps": f["goodput_bps"], "normalised_goodput": f["goodput_bps"] / fair[c],
                             "timeouts": f["timeouts"], "rtt_prop_s": f["rtt_prop_s"]})
        df = pd.DataFrame(rows)
        order = {c: i for i, (c, *_) in enumerate(DEFAULT.connections)}
        df["_s"] = df["scheme"].map(lambda s: SCHEMES.index(s) if s in SCHEMES else len(SCHEMES))
        df["_c"] = df["connection"].map(order)
        return df.sort_values(["_s", "replication", "_c"], kind="stable").drop(columns=["_s", "_c"]) \
            .reset_index(drop=True)

    @staticmethod
    def _jain_per_run(flows: pd.DataFrame, by: tuple[str, ...] = ("scheme",)) -> pd.DataFrame:
        on_c = flows[flows["crosses_C"]]
        rows = [dict(zip([*by, "replication"], k)) | {"jain": models.jain_index(g["normalised_goodput"].to_numpy())}
                for k, g in on_c.groupby([*by, "replication"], sort=False)]
        return pd.DataFrame(rows)

    def analyse(self, report: StudyReport) -> None:
        runs = self._runs(report)
        flows = self._flows(runs)
        reps = int(runs.groupby("scheme").size().min())
        sc = SCALE[report.scale]
        fair = DEFAULT.fair_goodputs()
        report.text(
            f"Twelve TCP Reno connections over the chain A-B-C-D, C = 300 Mb/s; {sc['duration']} runs, the first "
            f"{sc['warmup']} discarded, {reps} replications per scheme; intervals are Student-t 95% over "
            f"replications. Connections are numbered as in the paper, by decreasing round trip: C1-C3 16 ms, C4-C6 "
            f"12 ms, C7-C9 7 ms, C10-C12 4 ms; C7, C11 and C12 do not cross C. Every connection has a "
            f"{DEFAULT.window_pkts}-packet receiver window and {DEFAULT.payload_bytes} B payloads "
            f"({DEFAULT.payload_bytes + HEADER_BYTES} B on the wire); TED runs in {DEFAULT.mode} mode, checking "
            f"the deadline at the head of the queue. Fair goodputs are aqmlab.models.fair_goodput: "
            f"{fair['C1'] / 1e6:.2f} Mb/s for each of the nine connections crossing C (none is window-limited at "
            "that share), and the window limit for C7, C11 and C12.")
        bottleneck_q = {s: DEFAULT.q_max_bytes(BOTTLENECK, max(d)) for s, d in DEADLINES_US.items()}
        dt_q = DEFAULT.q_max_bytes(BOTTLENECK, DROPTAIL_DMAX_US)
        report.text(
            "Buffers at C (Q_max = D_max x the capacity of R2's other input ports, "
            f"{sum(DEFAULT.input_rates_bps(BOTTLENECK)) / 1e9:g} Gb/s): "
            + ", ".join(f"TED {s} {q / 1e3:g} KB" for s, q in bottleneck_q.items())
            + f", DropTail finite {dt_q / 1e3:g} KB ({dt_q / (DEFAULT.payload_bytes + HEADER_BYTES):.0f} packets).")
        self._table_i(report)
        report.table("flows", flows,
                     "Every run's goodput per connection (the values the tables above average), normalised to the "
                     "connection's fair goodput.", raw=True)
        jain_runs = self._jain_per_run(flows)
        claims: list[dict[str, Any]] = []
        self._e1(report, runs, flows, jain_runs, reps, claims)
        self._e2(report, runs, flows, reps, claims)
        self._e3(report, runs, flows, jain_runs, reps, claims)
        self._e4(report)
        self._claims(report, claims)

    # Table I -----------------------------------------------------------------

    @staticmethod
    def _table_i(report: StudyReport) -> None:
        deadlines_ms = [0.1, 0.5, 1.0, 5.0, 10.0]
        ports = [2, 4, 8, 16, 32]
        rows = [{"deadline_ms": d, **{f"ports_{j}_MB": models.ted_max_queue(d * 1e-3, ports=j, rate_bps=10e9) / 1e6
                                      for j in ports}} for d in deadlines_ms]
        report.table("table1_qmax", pd.DataFrame(rows),
                     "Table I: Q_max, the largest backlog of a TED queue, in MB, for routers of J ports of 10 Gb/s "
                     "((J - 1) D_max C, aqmlab.models.ted_max_queue); the grid of deadlines and port counts is "
                     "aqmlab's.")

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

    @staticmethod
    def _fairness(jain_runs: pd.DataFrame, schemes: list[str]) -> pd.DataFrame:
        rows = []
        for s in schemes:
            m = mean_ci(jain_runs.loc[jain_runs["scheme"] == s, "jain"])
            rows.append({"scheme": s, "paper_jain": PAPER_JAIN[s], "jain": m["mean"], "ci95_low": m["ci95_low"],
                         "ci95_high": m["ci95_high"], "n": m["n"]})
        return pd.DataFrame(rows)

    def _e1(self, report: StudyReport, runs: pd.DataFrame, flows: pd.DataFrame, jain_runs: pd.DataFrame,
            reps: int, claims: list[dict[str, Any]]) -> None:
        report.section("E1: goodput normalised to the fair goodput, and Jain's index")
        table = self._goodput_table(flows)
        report.table("goodput", table,
                     f"Goodput of each connection and its ratio to the fair goodput, mean and 95% CI over {reps} "
                     "replications, every scheme (rows with 1ACK and TDTO: E3).")
        fairness = self._fairness(jain_runs, SCHEMES)
        report.table("fairness", fairness,
                     "Jain's index of the normalised goodputs of the nine connections crossing C, computed per "
                     "replication (aqmlab.models.jain_index), mean and 95% CI, beside the paper's (Tables III and "
                     "IV).")
        bt = summary_table(runs, ["scheme"], {
            "utilization": lambda s: Summary(s).queue(BOTTLENECK).utilization,
            "qdelay_mean_s": lambda s: Summary(s).queue(BOTTLENECK).qdelay_mean_s,
            "loss_rate": lambda s: Summary(s).queue(BOTTLENECK).loss_rate,
            "drops_expired": lambda s: Summary(s).queue(BOTTLENECK).drops_expired,
        })
        report.table("bottleneck", bt, f"Link C (queues.{BOTTLENECK}): utilisation, mean queueing delay, loss rate "
                                       "and TED's expired packets, mean and 95% CI.")

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
        fig, ax = plt.subplots(figsize=(7, 3.5))
        f = fairness.set_index("scheme").loc[SCHEMES]
        xs = np.arange(len(SCHEMES))
        ax.bar(xs - 0.2, f["jain"], 0.4, yerr=np.nan_to_num([f["jain"] - f["ci95_low"], f["ci95_high"] - f["jain"]]),
               capsize=3, label="aqmlab")
        ax.bar(xs + 0.2, f["paper_jain"], 0.4, color="0.7", label="paper")
        ax.set_xticks(xs, SCHEMES, rotation=30, ha="right")
        ax.set_ylabel("Jain's index")
        ax.set_ylim(0, 1.05)
        ax.legend(fontsize=8)
        report.figure("e1_jain", fig, f"Jain's index of the normalised goodputs of the nine connections crossing C, "
                                      f"mean and 95% CI over {reps} replications (fairness.csv), beside the "
                                      "paper's.")

        by_class = flows[flows["crosses_C"]].groupby(["scheme", "rtt_ms"])["normalised_goodput"].mean()
        lines = []
        for s in E1_SCHEMES:
            j = fairness.set_index("scheme").loc[s]
            cls = ", ".join(f"{r} ms {by_class[(s, r)]:.2f}" for r in RTT_CLASSES_MS if (s, r) in by_class)
            lines.append(f"{s}: Jain {j['jain']:.3f} [{j['ci95_low']:.3f}, {j['ci95_high']:.3f}] (paper "
                         f"{j['paper_jain']}), goodput/fair by round-trip class {cls}")
        report.text("Per scheme: " + "; ".join(lines) + ".")
        self._queue_evidence(report, runs)

        fj = fairness.set_index("scheme")
        for s in E1_SCHEMES + E3_SCHEMES:
            claims.append(self._jain_claim(fj, s))
        ted = [s for s in E1_SCHEMES if s.startswith("TED")]
        dts = ["DropTail finite", "DropTail infinite"]
        fairer = all(fj.loc[t, "ci95_low"] > fj.loc[d, "ci95_high"] for t in ted for d in dts)
        leaning = all(fj.loc[t, "jain"] > fj.loc[d, "jain"] for t in ted for d in dts)
        claims.append({
            "claim": "TED S1, S2 and S3 are fairer than DropTail with finite and with infinite buffers (Table III)",
            "paper": "TED 0.963-0.991 against DropTail 0.759 and 0.84",
            "aqmlab": f"TED {min(fj.loc[ted, 'jain']):.3f}-{max(fj.loc[ted, 'jain']):.3f} against DropTail "
                      f"{fj.loc[dts[0], 'jain']:.3f} and {fj.loc[dts[1], 'jain']:.3f}",
            "verdict": "reproduced" if fairer else "inconclusive" if leaning else "not reproduced",
            "how": "every TED interval above both DropTail intervals (inconclusive: every mean above, intervals "
                   "overlapping)"})

    @staticmethod
    def _jain_claim(fj: pd.DataFrame, s: str) -> dict[str, Any]:
        """The paper's Jain index for scheme `s` against aqmlab's: reproduced
        when the paper's value is within aqmlab's interval widened by 0.02,
        inconclusive when that interval is wider than +-0.05."""
        r = fj.loc[s]
        ok = r["ci95_low"] - 0.02 <= r["paper_jain"] <= r["ci95_high"] + 0.02
        wide = not (r["ci95_high"] - r["ci95_low"] <= 0.1)
        return {"claim": f"Jain's index under {s}", "paper": f"{r['paper_jain']:.3f}",
                "aqmlab": f"{r['jain']:.3f} [{r['ci95_low']:.3f}, {r['ci95_high']:.3f}]",
                "verdict": "inconclusive" if wide else "reproduced" if ok else "not reproduced",
                "how": "the paper's value within aqmlab's 95% interval +- 0.02 (inconclusive if the interval is "
                       "wider than +-0.05)"}

    @staticmethod
    def _queue_evidence(report: StudyReport, runs: pd.DataFrame) -> None:
        """How often C's backlog exceeded the 4 ms class's deadline under
        TED S3 (replication 0's trace)."""
        r = runs[(runs["scheme"] == "TED S3") & (runs["replication"] == 0)]
        if r.empty:
            return
        ser = report.series("e1", int(r.iloc[0]["point"]), 0)
        col = f"{BOTTLENECK}.backlog_pkts"
        if ser is None or col not in ser:
            return
        warm = float(SCALE[report.scale]["warmup"].rstrip("s"))
        backlog = ser.loc[ser["time_s"] >= warm, col]
        packet = DEFAULT.payload_bytes + HEADER_BYTES
        short_us = DEADLINES_US["S3"][-1]
        n = short_us * 1e-6 * BOTTLENECK_RATE_BPS / 8 / packet
        report.text(
            f"Why the 4 ms class loses under TED: its {short_us} us deadline is {n:.1f} packet times at C, while "
            f"the 16 ms class may wait {DEADLINES_US['S3'][0]} us ({DEADLINES_US['S3'][0] / short_us:.1f} times "
            "as long) in the same FIFO. A 4 ms connection's packet that arrives behind about "
            f"{int(n)} packets or more is discarded. Sampled every {SCALE[report.scale]['trace_interval']} under TED S3 "
            f"(replication 0), C held more than {int(n)} packets in {100 * (backlog > int(n)).mean():.0f}% of "
            f"the samples (mean backlog {backlog.mean():.1f} packets).")

    # E2 ----------------------------------------------------------------------

    def _e2(self, report: StudyReport, runs: pd.DataFrame, flows: pd.DataFrame, reps: int,
            claims: list[dict[str, Any]]) -> None:
        report.section("E2: the connections that do not cross C")
        off = flows[~flows["crosses_C"]]
        table = self._goodput_table(off).rename(columns={"fair_goodput_bps": "window_limit_goodput_bps"})
        table = table.drop(columns=["crosses_C"])
        report.table("e2_uncongested", table,
                     f"Goodput of C7, C11, C12 under each scheme and its ratio to the window limit "
                     f"(W p 8 / RTT x (1 - h/p), W = {DEFAULT.window_pkts} packets), mean and 95% CI over {reps} "
                     "replications.")
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
        report.figure("e2_uncongested", fig, f"E2: goodput of the connections that do not cross C, "
                                             f"dashed: their window limit; mean and 95% CI over {reps} replications.")
        lo, hi = table["normalised_goodput"].min(), table["normalised_goodput"].max()
        worst = table.loc[table["normalised_goodput"].idxmin()]
        expired = {s: {q: float(np.mean([Summary(x).queue(q).drops_expired for x in g["summary"]])) for q in "ABD"}
                   for s, g in runs.groupby("scheme", sort=False) if s.startswith("TED")}
        report.text(
            f"Under every scheme C7, C11 and C12 get between {100 * lo:.1f}% and {100 * hi:.1f}% of their "
            f"window-limited goodput (lowest: {worst['connection']} under {worst['scheme']}). They share A and D "
            "with connections that cross C, and under TED those links' queues discard too: packets expired per "
            "run at A, B and D: " + "; ".join(f"{s} " + ", ".join(f"{q} {v:.0f}" for q, v in e.items())
                                              for s, e in expired.items())
            + ". A 4 ms connection's 120 us budget is 10 packet times at 1 Gb/s, which a burst on a link that is "
            "not congested on average can exceed.")
        claims.append({
            "claim": "The connections that do not cross C reach their window-limited goodput under every scheme",
            "paper": "yes", "aqmlab": f"{100 * lo:.1f}% to {100 * hi:.1f}% of the window limit "
                                      f"(lowest {worst['connection']}, {worst['scheme']})",
            "verdict": "reproduced" if lo >= 0.95 else "not reproduced", "how": "every mean at least 95% of it"})

    # E3 ----------------------------------------------------------------------

    def _e3(self, report: StudyReport, runs: pd.DataFrame, flows: pd.DataFrame, jain_runs: pd.DataFrame,
            reps: int, claims: list[dict[str, Any]]) -> None:
        report.section("E3: fast retransmit on the first duplicate ACK (1ACK) and the deadline-derived RTO (TDTO)")
        shown = ["DropTail finite", "DropTail finite 1ACK", "DropTail infinite", "TED S3", "TED S3 1ACK",
                 "TED S3 TDTO"]
        short = min(RTT_CLASSES_MS)
        rows = []
        for s in shown:
            f = flows[(flows["scheme"] == s) & flows["crosses_C"]]
            sr = f[f["rtt_ms"] == short].groupby("replication")["goodput_bps"].mean()
            bn = f.groupby("replication")["goodput_bps"].sum()
            to = f[f["rtt_ms"] == short].groupby("replication")["timeouts"].mean()
            row: dict[str, Any] = {"scheme": s}
            for name, vals in (("short_rtt_goodput_bps", sr), ("bottleneck_goodput_bps", bn),
                               ("jain", jain_runs.loc[jain_runs["scheme"] == s, "jain"]),
                               ("short_rtt_timeouts", to)):
                row |= ci_columns(vals, name)
            row["paper_jain"] = PAPER_JAIN[s]
            row["n"] = len(sr)
            rows.append(row)
        table = pd.DataFrame(rows)
        report.table("e3", table,
                     f"Goodput of the {short} ms connection crossing C (C10), total goodput of the nine connections "
                     f"crossing C, Jain's index (as in E1, beside the paper's Table IV) and C10's timeouts in the "
                     f"window, mean and 95% CI over {reps} replications; DropTail finite, DropTail infinite and TED "
                     "S3 with standard TCP from E1 for comparison, DropTail infinite as the upper bound of the "
                     "goodput.")
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
        bound = table.set_index("scheme").loc["DropTail infinite", "bottleneck_goodput_bps"]
        for ax, (col, label, scale) in zip(axes, [("short_rtt_goodput_bps", f"{short} ms connection C10 (Mb/s)", 1e6),
                                                  ("bottleneck_goodput_bps", "connections crossing C (Mb/s)", 1e6),
                                                  ("jain", "Jain's index", 1)]):
            err = np.nan_to_num([table[col] - table[f"{col}_ci95_low"], table[f"{col}_ci95_high"] - table[col]])
            bars = ax.bar(range(len(shown)), table[col] / scale, yerr=err / scale, capsize=3)
            # Values that differ by orders of magnitude stay readable.
            ax.bar_label(bars, labels=[f"{v / scale:.3g}" for v in table[col]], fontsize=7, padding=2)
            ax.set_xticks(range(len(shown)), shown, rotation=30, ha="right", fontsize=8)
            ax.set_title(label, fontsize=9)
        axes[1].axhline(bound / 1e6, color="k", ls="--", lw=0.8)
        axes[2].plot(range(len(shown)), table["paper_jain"], "kx", label="paper")
        axes[2].legend(fontsize=7)
        report.figure("e3_goodput", fig, f"E3: goodput of the {short} ms connection crossing C and of all connections "
                                         "crossing C (dashed: DropTail infinite, the upper bound), and Jain's index "
                                         f"(x: the paper's); mean and 95% CI over {reps} replications (e3.csv).")
        t = table.set_index("scheme")

        def mbps(s: str, col: str) -> str:
            return (f"{t.loc[s, col] / 1e6:.3f} Mb/s [{t.loc[s, col + '_ci95_low'] / 1e6:.3f}, "
                    f"{t.loc[s, col + '_ci95_high'] / 1e6:.3f}]")

        report.text(
            f"C10 gets {mbps('TED S3', 'short_rtt_goodput_bps')} under TED S3, "
            f"{mbps('TED S3 1ACK', 'short_rtt_goodput_bps')} with 1ACK and "
            f"{mbps('TED S3 TDTO', 'short_rtt_goodput_bps')} with TDTO (fair goodput "
            f"{DEFAULT.fair_goodputs()['C10'] / 1e6:.2f} Mb/s; DropTail finite "
            f"{mbps('DropTail finite', 'short_rtt_goodput_bps')}). Total goodput across C: "
            + ", ".join(f"{s} {t.loc[s, 'bottleneck_goodput_bps'] / 1e6:.1f} Mb/s" for s in shown)
            + f"; C10's timeouts in the window: " + ", ".join(f"{s} {t.loc[s, 'short_rtt_timeouts']:.1f}"
                                                             for s in shown) + ".")
        ted = ["TED S1", "TED S2", "TED S3"]
        # Every scheme runs on the same seeds, so claims about differences
        # use the per-replication (paired) differences and their interval.
        total = flows[flows["crosses_C"]].groupby(["scheme", "replication"])["goodput_bps"].sum()

        def paired(a: str, b: str, relative: bool = False) -> dict[str, float]:
            d = total[a] - total[b]
            return mean_ci(d / total[b] if relative else d)

        below = {s: paired(s, "DropTail infinite", relative=True) for s in ted}
        v = [effect_verdict(m, -0.09, -0.03) for m in below.values()]
        claims.append({
            "claim": "TED's goodput is 5-7% below DropTail infinite's",
            "paper": "-5 to -7%", "aqmlab": "; ".join(f"{s} {show_ci(m, 100, '%', signed=True)}" for s, m in below.items()),
            "verdict": combine_verdicts(v),
            "how": "total goodput across C, per-replication difference, its 95% interval within -9% to -3% (the "
                   "paper's range +- 2 points) for every TED scheme"})
        above = {s: paired(s, "DropTail finite") for s in ted}
        v = [effect_verdict(m, 0.0, math.inf) for m in above.values()]
        claims.append({
            "claim": "TED's goodput is above DropTail finite's",
            "paper": "above", "aqmlab": "; ".join(f"{s} {show_ci(m, 1e-6, ' Mb/s', signed=True)}" for s, m in above.items()),
            "verdict": combine_verdicts(v),
            "how": "total goodput across C, per-replication difference, its 95% interval above 0 for every TED "
                   "scheme"})
        for scheme, paper_gain, what in (("TED S3 1ACK", 2.62e6, "1ACK adds 2.62 Mb/s of goodput to TED S3"),
                                         ("TED S3 TDTO", 4e6, "1ACK and TDTO together add about 4 Mb/s to TED S3")):
            m = paired(scheme, "TED S3")
            claims.append({"claim": what, "paper": f"+{paper_gain / 1e6:.2f} Mb/s", "aqmlab": show_ci(m, 1e-6, " Mb/s", signed=True),
                           "verdict": effect_verdict(m, paper_gain / 2, paper_gain * 2),
                           "how": "total goodput across C, per-replication difference; its 95% interval within a "
                                  "factor of 2 of the paper's gain"})
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
                                     "dotted: end of the warm-up. (Our notes of the paper do not say which "
                                     f"connection its figure shows; {TRACED} is the one TDTO is meant for.)")
        inwin = rto[rto["time_s"] >= warm]
        parts = []
        for s, g in inwin.groupby("scheme", sort=False):
            # The RTO without backoff: the smallest the sender held in the run.
            low = rto.loc[rto["scheme"] == s, "rto_s"].min()
            backed = (g["rto_s"] > low * 1.5).mean()
            parts.append(f"under {s} its median is {1e3 * g['rto_s'].median():.1f} ms; its smallest value in "
                         f"the run is {1e3 * low:.2f} ms, and it is backed off (above 1.5x that) in "
                         f"{100 * backed:.0f}% of the window's samples")
        report.text(f"{TRACED}'s RTO in the measurement window (propagation round trip {short_rtt()} ms): "
                    + "; ".join(parts) + ".")

    # E4 ----------------------------------------------------------------------

    def _e4(self, report: StudyReport) -> None:
        report.section("E4: sensitivity to what the paper leaves open")
        runs = report.runs("e4-sensitivity", flows=True)
        if runs.empty:
            report.text("No run of e4-sensitivity is in the store.")
            return
        variants = {label: (axis, setting) for axis, label, setting, _ in E4_VARIANTS}
        split = runs["topology"].str.rsplit(": ", n=1)
        runs["change"], runs["scheme"] = split.str[0], split.str[1]
        flows = self._flows(runs.assign(scheme=runs["change"] + ": " + runs["scheme"]),
                            lambda run: variants[run["scheme"].rsplit(": ", 1)[0]][1])
        flows[["change", "scheme"]] = flows["scheme"].str.rsplit(": ", n=1, expand=True)
        jain = self._jain_per_run(flows, ("change", "scheme"))
        short = min(RTT_CLASSES_MS)
        rows = []
        order = [label for _, label, _, _ in E4_VARIANTS]
        for (change, scheme), g in flows.groupby(["change", "scheme"], sort=False):
            on_c = g[g["crosses_C"]]
            row: dict[str, Any] = {"axis": variants[change][0], "change": change, "scheme": scheme}
            row |= ci_columns(jain.loc[(jain["change"] == change) & (jain["scheme"] == scheme), "jain"], "jain")
            for r in RTT_CLASSES_MS:
                cls = on_c[on_c["rtt_ms"] == r].groupby("replication")["normalised_goodput"].mean()
                row |= ci_columns(cls, f"goodput_fair_{r}ms")
            row |= ci_columns(on_c[on_c["rtt_ms"] == short].groupby("replication")["timeouts"].mean(),
                              "short_rtt_timeouts")
            # The connections off C against their window limit (E2's claim).
            row["off_C_share_min"] = g[~g["crosses_C"]].groupby("connection")["normalised_goodput"].mean().min()
            util = runs[(runs["change"] == change) & (runs["scheme"] == scheme)]["summary"]
            row["utilization"] = float(np.mean([Summary(s).queue(BOTTLENECK).utilization for s in util]))
            row["other_links_util_max"] = float(np.mean([max(Summary(s).queue(q).utilization for q in "ABD")
                                                         for s in util]))
            row["n"] = g["replication"].nunique()
            rows.append(row)
        table = pd.DataFrame(rows)
        table["_o"] = table["change"].map(order.index)
        table["_s"] = table["scheme"].map(E4_SCHEMES.index)
        table = table.sort_values(["_o", "_s"]).drop(columns=["_o", "_s"]).reset_index(drop=True)
        # The paper's network has C saturated and A, B, D not: a change is
        # consistent with it when DropTail infinite keeps C at least 95% busy
        # and no other router link above 90%. A change of TED's alone keeps
        # the default's network.
        dti = table[table["scheme"] == "DropTail infinite"].set_index("change")
        ok = {c: bool(dti.loc[c, "utilization"] >= 0.95 and dti.loc[c, "other_links_util_max"] <= 0.9)
              for c in dti.index}
        table["consistent"] = table["change"].map(lambda c: ok.get(c, ok.get("default", True)))
        reps = int(table["n"].min())
        e4 = SCALE[report.scale]["e4"]
        report.table("e4_sensitivity", table,
                     f"Each change from the default, one at a time ({e4['duration']} runs, {e4['warmup']} warm-up, "
                     f"{reps} replications): Jain's index over the connections crossing C, goodput / fair goodput "
                     f"per round-trip class and the {short} ms connections' timeouts in the window (each with its "
                     "95% CI), the lowest share of its window limit among the connections off C, "
                     "C's utilisation and the busiest other router link's; consistent: the change keeps the "
                     "paper's network (under DropTail infinite C at least 95% busy, A, B and D at most 90%).")
        changes = list(dict.fromkeys(table["change"]))
        fig, axes = plt.subplots(1, 2, figsize=(12, 0.38 * len(changes) + 1.5), sharey=True)
        y = np.arange(len(changes))
        h = 0.8 / len(E4_SCHEMES)
        for k, s in enumerate(E4_SCHEMES):
            g = table[table["scheme"] == s].set_index("change").reindex(changes)
            for ax, col in zip(axes, ["jain", f"goodput_fair_{short}ms"]):
                err = np.nan_to_num([g[col] - g[f"{col}_ci95_low"], g[f"{col}_ci95_high"] - g[col]])
                ax.barh(y + (k - (len(E4_SCHEMES) - 1) / 2) * h, g[col], h, xerr=err, capsize=2, label=s)
        flagged = set(table.loc[~table["consistent"], "change"])
        axes[0].set_yticks(y, [f"{c} *" if c in flagged else c for c in changes], fontsize=8)
        axes[0].invert_yaxis()
        axes[0].set_xlabel("Jain's index")
        axes[0].set_xlim(0, 1.05)
        axes[1].set_xlabel(f"{short} ms connections' goodput / fair goodput")
        axes[1].axvline(1.0, color="k", lw=0.8, ls="--")
        axes[1].set_xlim(left=0)
        handles, names = axes[0].get_legend_handles_labels()
        fig.legend(handles, names, fontsize=8, ncol=len(E4_SCHEMES), loc="upper center", bbox_to_anchor=(0.5, 1.0))
        fig.subplots_adjust(top=1 - 0.5 / fig.get_figheight())
        report.figure("e4_sensitivity", fig, f"E4: Jain's index and the {short} ms connections' share of their fair "
                                             "goodput for each change from the default (*: the change leaves the "
                                             f"paper's network); mean and 95% CI over {reps} replications "
                                             "(e4_sensitivity.csv).")
        ted = table[table["scheme"] == "TED S3"]
        fit = ted[ted["consistent"]]
        off = [c for c in dict.fromkeys(table["change"]) if not table.loc[table["change"] == c, "consistent"].iloc[0]]
        best = fit.loc[fit["jain"].idxmax()]
        dt = table[table["scheme"].str.startswith("DropTail")].groupby("change")["jain"].max()
        beats = [c for c in fit["change"] if c in dt.index and
                 fit.set_index("change").loc[c, "jain_ci95_low"] > dt[c]]
        lo, hi = fit[f"goodput_fair_{short}ms"].min(), fit[f"goodput_fair_{short}ms"].max()
        packet = DEFAULT.payload_bytes + HEADER_BYTES
        per_pkt_us = packet * 8 / BOTTLENECK_RATE_BPS * 1e6
        others = DEADLINES_US["S3"][:-1]
        default = ted.iloc[0]
        long_rtt = max(RTT_CLASSES_MS)
        long_limit = DEFAULT.window_pkts * DEFAULT.payload_bytes * 8 / (long_rtt * 1e-3)
        long_share = default[f"goodput_fair_{long_rtt}ms"] * DEFAULT.fair_goodputs()["C1"] / long_limit
        report.text(
            (f"Settings that leave the paper's network (C saturated, A, B and D not), so that the E1 comparison "
             f"does not apply to them: {', '.join(off)}. " if off else "")
            + f"Over the {len(fit)} other settings, the {short} ms connections crossing C get between "
            f"{100 * lo:.1f}% and {100 * hi:.1f}% of their fair goodput under TED S3, and TED S3's highest Jain "
            f"index is {best['jain']:.3f} ({best['change']}); "
            + (f"its interval lies above both DropTails' with {', '.join(beats)}. " if beats else
               "in none of them does its interval lie above the better DropTail's mean. ")
            + f"The {short} ms class's deadline, {DEADLINES_US['S3'][-1]} us, is "
            f"{DEADLINES_US['S3'][-1] / per_pkt_us:.1f} packet times of {packet} B at C, while the other classes' "
            f"({min(others)}-{max(others)} us) let {min(others) / per_pkt_us:.1f}-{max(others) / per_pkt_us:.1f} "
            "packets wait: whenever they do, a 4 ms connection's packet is discarded, and that connection falls "
            "back on its retransmission timer. The same holds a step up: at the default the classes get "
            + ", ".join(f"{r} ms {default[f'goodput_fair_{r}ms']:.2f}" for r in RTT_CLASSES_MS)
            + f" of their fair goodput, and the {long_rtt} ms connections reach {100 * long_share:.0f}% of their "
            "window limit. A FIFO cannot give packets queued behind one another different waits: the queue sits "
            "wherever the longest-deadline traffic lets it, and every shorter deadline below that level is a drop. "
            "For TED to equalise the classes, as the paper reports, the queue would have to stay below the "
            "shortest deadline for everyone (for instance with deadlines close together, or packets served in "
            "deadline order rather than FIFO). This is aqmlab's reading of its own runs, not the paper's.",
            "DropTail infinite's fairness is set by the receiver window: every connection is window-limited "
            "behind a standing queue, so its Jain index follows the window ("
            + ", ".join(f"{c} {j:.3f}" for c, j in table[(table["scheme"] == "DropTail infinite") &
                                                              table["axis"].isin(["default", "window"])]
                        [["change", "jain"]].itertuples(index=False))
            + ") and barely varies between runs.")

    # Verdicts ------------------------------------------------------------------

    @staticmethod
    def _claims(report: StudyReport, claims: list[dict[str, Any]]) -> None:
        report.claims(claims, "Each claim of the paper (Tables III and IV, the text), its number, aqmlab's, and the "
                              "verdict by the rule in the last column.")


def short_rtt() -> int:
    return min(RTT_CLASSES_MS)
