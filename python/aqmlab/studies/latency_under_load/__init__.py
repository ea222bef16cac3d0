"""Latency under load: today's congestion controls and AQMs, the idea of
Flent's RRUL test (Realtime Response Under Load) in simulation.

aqmlab's own study, not a paper's. Bulk TCP flows of four congestion
controls (CUBIC, BBR v1, Reno with Linux's recovery, TCP Prague) fill a
bottleneck while two sparse probes, ping-like and VoIP-like, measure the
latency a user would see beside them, through FIFO, CoDel, PIE, FQ-CoDel,
FQ-PIE, COBALT and DualPI2, at 10 and 100 Mb/s and base round trips of 20
to 100 ms. The report puts what the disciplines' specifications and the
measurement literature expect beside what aqmlab measures: the probes'
latency (CDFs, box plots, time series), the bottleneck's queueing delay,
goodput per congestion control and Jain's index across them.

The probes' latency is the time their packets waited in queues on the
path (the engine's per-group queueing time: the one-way delay less
propagation and transmission), what Flent reports as the induced latency
(ping's round trip less the idle one; the return path here carries only
ACKs).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from aqmlab.studies.framework import (Claims, Study, StudyReport, ci_columns, combine_verdicts, effect_verdict,
                                     mean_ci, range_verdict, register, show_ci, within_bounds)

CCS = [
    {"name": "cubic", "variant": "cubic", "comment": "CUBIC with HyStart, Linux's default."},
    {"name": "bbr", "variant": "bbr", "comment": "BBR v1, as Linux's tcp_bbr."},
    {"name": "reno", "variant": "linux-reno", "comment": "Reno with Linux's loss recovery (SACK, RACK, PRR)."},
    {"name": "prague", "variant": "prague",
     "comment": "TCP Prague, the L4S sender: ECT(1), a scalable response to CE marks."},
]
QDISCS: dict[str, dict[str, Any]] = {
    "FIFO": {"kind": "droptail", "limit": "1000pkt"},
    "CoDel": {"kind": "codel"},
    "PIE": {"kind": "pie"},
    "FQ-CoDel": {"kind": "fq_codel"},
    "FQ-PIE": {"kind": "fq_pie"},
    "COBALT": {"kind": "cobalt", "ecn": True},
    "DualPI2": {"kind": "dualpi2"},
}
# The delay each single-queue AQM aims to hold (its defaults): CoDel's and
# COBALT's target, PIE's qdelay_ref, DualPI2's PI target for the Classic queue.
TARGETS_S = {"CoDel": 0.005, "PIE": 0.015, "COBALT": 0.005, "DualPI2": 0.015}
FQ = ["FQ-CoDel", "FQ-PIE"]
SINGLE_AQM = ["CoDel", "PIE"]
SCALES: dict[str, dict[str, Any]] = {
    "smoke": {"rates": [10, 100], "rtts": [20], "duration": 10, "warmup": 4, "replications": 2},
    "quick": {"rates": [10, 100], "rtts": [20, 100], "duration": 60, "warmup": 20, "replications": 3},
    "full": {"rates": [10, 100], "rtts": [20, 50, 100], "duration": 300, "warmup": 60, "replications": 10},
}
FLOWS_PER_CC = 2
ACCESS_DELAY_S, RECEIVER_DELAY_S, ACCESS_BPS = 0.001, 0.0001, 1e9
FIFO_PKTS, PACKET_B, PAYLOAD_B = 1000, 1500, 1448
PROBES = {"ping": 84, "voip": 200}  # packet sizes, bytes
# The sensitivity experiment: the same networks at 20 ms without the BBR
# flows, to show what of the single-queue results is BBR v1's.
NO_BBR_RTT_MS = 20


def network_name(rate_mbps: int, rtt_ms: int, bbr: bool = True) -> str:
    return f"llu-{rate_mbps}mbps-{rtt_ms}ms" + ("" if bbr else "-nobbr")


def base_delay_s(rate_mbps: float, rtt_ms: float, size_b: int) -> float:
    """A packet's one-way delay through the empty network: propagation on
    the three links plus its transmission on each (the receiver's access
    link runs at 10 x the bottleneck, the dumbbell's default)."""
    rate = rate_mbps * 1e6
    bottleneck_delay = rtt_ms / 2e3 - ACCESS_DELAY_S - RECEIVER_DELAY_S
    bits = size_b * 8
    return ACCESS_DELAY_S + bottleneck_delay + RECEIVER_DELAY_S + bits / ACCESS_BPS + bits / rate + bits / (10 * rate)


def mtu_time_s(rate_mbps: float) -> float:
    return PACKET_B * 8 / (rate_mbps * 1e6)


def jain(xs: list[float]) -> float:
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else math.nan


class Histogram:
    """A queueing-time histogram pooled over runs (the bins of the engine's
    ``queueing_histogram``)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[float, float], int] = defaultdict(int)

    def add(self, h: dict[str, list[float]]) -> None:
        for lo, hi, c in zip(h["lower_s"], h["upper_s"], h["counts"]):
            self.counts[(lo, hi)] += int(c)

    def cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """(each bin's upper edge, the fraction of samples below it)."""
        bins = sorted(self.counts)
        cum = np.cumsum([self.counts[b] for b in bins], dtype=float)
        return np.array([hi for _, hi in bins]), cum / cum[-1]

    def quantile(self, p: float) -> float:
        """Nearest-rank quantile: the midpoint of its bin."""
        bins = sorted(self.counts)
        n = sum(self.counts.values())
        rank, seen = max(1, math.ceil(n * p)), 0
        for b in bins:
            seen += self.counts[b]
            if seen >= rank:
                return (b[0] + b[1]) / 2
        return math.nan


@register
class LatencyUnderLoad(Study):
    name = "latency-under-load"
    title = "Latency under load: today's congestion controls and AQMs (the RRUL idea in simulation)"
    source = ("aqmlab's own study after Flent's RRUL test (T. Høiland-Jørgensen et al., \"Flent: The FLExible "
              "Network Tester\", VALUETOOLS 2017); the expectations are those of RFC 8289 (CoDel), RFC 8033 (PIE), "
              "RFC 8290 (FQ-CoDel), RFC 9332 (DualPI2) and the BBR measurements cited with each claim.")
    claims_title = "Published expectations"
    runtime = {"smoke": "15 s", "quick": "90 s", "full": "30 min"}

    def _render(self, scale: str, rate: int, rtt: int, bbr: bool = True) -> str:
        sc = SCALES[scale]
        name = network_name(rate, rtt, bbr)
        return self.render(
            "llu.toml.j2", name=name, scale=scale, rate_mbps=rate, rtt_ms=rtt,
            bottleneck_delay_ms=round(rtt / 2 - (ACCESS_DELAY_S + RECEIVER_DELAY_S) * 1e3, 6),
            duration=f"{sc['duration']}s", warmup=f"{sc['warmup']}s", replications=sc["replications"],
            labels=list(QDISCS), qdiscs=list(QDISCS.values()), flows_per_cc=FLOWS_PER_CC, bbr=bbr,
            ccs=[c for c in CCS if bbr or c["name"] != "bbr"])

    def experiments(self, scale: str) -> dict[str, str]:
        sc = SCALES[scale]
        out = {network_name(r, t): self._render(scale, r, t) for r in sc["rates"] for t in sc["rtts"]}
        out |= {network_name(r, NO_BBR_RTT_MS, False): self._render(scale, r, NO_BBR_RTT_MS, False)
                for r in sc["rates"]}
        return out

    # Reading the runs ---------------------------------------------------------

    @staticmethod
    def _networks(scale: str, bbr: bool = True) -> list[tuple[int, int]]:
        sc = SCALES[scale]
        return [(r, t) for r in sc["rates"] for t in sc["rtts"]] if bbr else \
            [(r, NO_BBR_RTT_MS) for r in sc["rates"]]

    @staticmethod
    def _per_run(s: dict[str, Any], rate: int, rtt: int) -> dict[str, float]:
        """One run's measures: per-flow goodput of each congestion control,
        Jain's index across them, the probes' and Prague's queueing."""
        t, q = s["traffic"], s["queues"]["bottleneck"]
        ccs = [c["name"] for c in CCS if c["name"] in t]
        row: dict[str, float] = {f"{c}_bps": t[c]["goodput_bps"] / FLOWS_PER_CC for c in ccs}
        total = sum(t[c]["goodput_bps"] for c in ccs)
        row["goodput_bps"] = total
        row["jain_cc"] = jain([row[f"{c}_bps"] for c in ccs])
        if "bbr" in t:
            row["bbr_share"] = t["bbr"]["goodput_bps"] / total if total else math.nan
        row["prague_cubic_ratio"] = (row["prague_bps"] / row["cubic_bps"]) if row["cubic_bps"] else math.nan
        nan = lambda v: math.nan if v is None else v  # noqa: E731
        for probe in PROBES:
            for p in ("p50", "p99"):
                row[f"{probe}_{p}_s"] = nan(t[probe][f"queueing_{p}_s"])
            row[f"{probe}_loss"] = t[probe]["loss_rate"]
        row["prague_p50_s"] = nan(t["prague"]["queueing_p50_s"])
        row["qdelay_mean_s"] = q["qdelay_mean_s"]
        row["qdelay_p99_s"] = q["qdelay_p99_s"] if q["qdelay_p99_s"] is not None else math.nan
        row["loss_rate"] = q["loss_rate"]
        row["mark_rate"] = q["marks"] / q["arrivals"] if q["arrivals"] else math.nan
        row["utilization"] = q["utilization"]
        return row

    def _runs(self, report: StudyReport, bbr: bool = True) -> pd.DataFrame:
        rows = []
        for rate, rtt in self._networks(report.scale, bbr):
            runs = report.runs(network_name(rate, rtt, bbr))
            for _, r in runs.iterrows():
                rows.append({"rate_mbps": rate, "rtt_ms": rtt, "qdisc": r["topology.qdisc"], "point": r["point"],
                             "replication": r["replication"], "summary": r["summary"],
                             **self._per_run(r["summary"], rate, rtt)})
        return pd.DataFrame(rows)

    @staticmethod
    def _table(runs: pd.DataFrame, metrics: list[str]) -> pd.DataFrame:
        out = []
        for (rate, rtt, qdisc), g in runs.groupby(["rate_mbps", "rtt_ms", "qdisc"], sort=False):
            row: dict[str, Any] = {"rate_mbps": rate, "rtt_ms": rtt, "qdisc": qdisc}
            for m in metrics:
                row |= ci_columns(g[m].tolist(), m)
            row["n"] = len(g)
            out.append(row)
        return pd.DataFrame(out)

    # The report -----------------------------------------------------------------

    def analyse(self, report: StudyReport) -> None:
        runs = self._runs(report)
        sc = SCALES[report.scale]
        reps = int(runs.groupby(["rate_mbps", "rtt_ms", "qdisc"]).size().min())
        nets = self._networks(report.scale)
        report.text(
            f"A dumbbell with one sender and one receiver host; the bottleneck at {' and '.join(map(str, sc['rates']))} "
            f"Mb/s, base round trips of {', '.join(map(str, sc['rtts']))} ms. {FLOWS_PER_CC} bulk TCP flows of "
            "each congestion control (CUBIC, BBR v1, Reno with Linux's recovery, TCP Prague), 1500-byte packets, "
            "starting within the first second; a ping-like probe (84 bytes every 200 ms on average) and a "
            "VoIP-like probe (200 bytes every 20 ms). Each discipline has Linux's defaults; FIFO is 1000 packets. "
            f"{sc['duration']} s runs, the first {sc['warmup']} s discarded, {reps} replications per point; "
            "intervals are Student-t 95% over replications. A probe's latency is the time its packets waited "
            "in queues on the path (its one-way delay less propagation and transmission).")
        report.section("Latency of the probes")
        lat = self._table(runs, ["ping_p50_s", "ping_p99_s", "voip_p50_s", "voip_p99_s", "voip_loss"])
        report.table("latency", lat, "The probes' queueing delay, median and 99th percentile in seconds, and "
                                     "the VoIP probe's loss rate.")
        report.figure("ping_cdf", self._cdf_figure(report, nets, "ping"),
                      "CDF of the ping probe's queueing delay, pooled over replications (log scale; 0 drawn at "
                      "0.01 ms).")
        report.figure("voip_box", self._box_figure(report, nets, "voip"),
                      "The VoIP probe's queueing delay per discipline: boxes from the 25th to the 75th percentile "
                      "with the median, whiskers at the 1st and 99th, pooled over replications.")
        report.figure("voip_timeseries", self._timeseries_figure(report, nets),
                      "The VoIP probe's largest queueing delay in each 100-ms interval (five packets) over the run, "
                      "replication 1 (the warm-up shaded; the one-way delay less the path's base, both exact).")
        report.section("Goodput and fairness across congestion controls")
        good = self._table(runs, [f"{c['name']}_bps" for c in CCS] + ["jain_cc", "bbr_share"])
        report.table("goodput", good, "Goodput per flow of each congestion control (Mb/s), Jain's index across "
                                      "the four, and BBR's share of the bulk goodput (fair: 0.25).")
        report.figure("goodput_by_cc", self._goodput_figure(good, nets),
                      "Goodput per flow of each congestion control, with 95% intervals.")
        report.section("The bottleneck queue")
        queue = self._table(runs, ["qdelay_mean_s", "qdelay_p99_s", "prague_p50_s", "loss_rate", "mark_rate",
                                   "utilization", "goodput_bps"])
        report.table("queue", queue, "The bottleneck's sojourn time (mean and 99th percentile, all packets), "
                                     "Prague's median one-way queueing, drop and mark rates per arrival, "
                                     "utilisation and the total bulk goodput.")
        nobbr = self._runs(report, bbr=False)
        report.section("Sensitivity: the same without BBR")
        report.text(
            f"The networks at {NO_BBR_RTT_MS} ms again with the BBR flows left out (CUBIC, Reno and Prague, "
            f"{FLOWS_PER_CC} flows each): what of the single-queue results above is BBR v1's.")
        sens = self._table(nobbr, ["cubic_bps", "reno_bps", "prague_bps", "jain_cc", "prague_cubic_ratio",
                                   "ping_p50_s", "ping_p99_s", "prague_p50_s", "loss_rate", "mark_rate"])
        report.table("sensitivity_no_bbr", sens, "Without BBR: goodput per flow, Jain's index across the three, "
                                                 "Prague's rate over CUBIC's, the ping probe's queueing, Prague's "
                                                 "median queueing, drop and mark rates.")
        report.text(*self._sensitivity_text(runs, nobbr))
        report.table("runs", runs.drop(columns=["summary"]), "Every run's measures.", raw=True)
        report.claims(self._claims(runs, nobbr, nets), "What the specifications and measurements expect, beside "
                                                      "aqmlab's numbers; each claim over every network it "
                                                      "concerns, the weakest verdict.")

    @staticmethod
    def _sensitivity_text(runs: pd.DataFrame, nobbr: pd.DataFrame) -> list[str]:
        """What the runs without BBR say about CoDel's delay and DualPI2's
        shares, from the numbers."""
        def mean(df: pd.DataFrame, rate: int, qdisc: str, col: str) -> float:
            g = df[(df["rate_mbps"] == rate) & (df["rtt_ms"] == NO_BBR_RTT_MS) & (df["qdisc"] == qdisc)]
            return float(g[col].mean()) if len(g) else math.nan

        rates = sorted(set(nobbr["rate_mbps"]))
        codel = "; ".join(f"{r} Mb/s: {mean(runs, r, 'CoDel', 'ping_p50_s') * 1e3:.1f} ms with BBR, "
                          f"{mean(nobbr, r, 'CoDel', 'ping_p50_s') * 1e3:.1f} ms without (drop rate "
                          f"{mean(runs, r, 'CoDel', 'loss_rate') * 100:.1f}% and "
                          f"{mean(nobbr, r, 'CoDel', 'loss_rate') * 100:.1f}%)" for r in rates)
        # DualPI2 couples the L queue's marking to the Classic queue's drop
        # probability p_C as p_L = k sqrt(p_C), k = 2 (RFC 9332); the
        # bottleneck's drops are nearly all Classic packets, so its drop rate
        # stands in for p_C.
        dual = "; ".join(
            f"{r} Mb/s: Classic drop rate {mean(df, r, 'DualPI2', 'loss_rate') * 100:.1f}% so coupled L marking "
            f"about {min(1.0, 2 * math.sqrt(max(0.0, mean(df, r, 'DualPI2', 'loss_rate')))) * 100:.0f}%, Prague/CUBIC "
            f"{mean(df, r, 'DualPI2', 'prague_cubic_ratio'):.2f} ({label})"
            for r in rates for df, label in ((runs, "with BBR"), (nobbr, "without")))
        # Each explanation is stated only where the numbers show it: BBR as
        # CoDel's obstacle where CoDel holds less queue without it; the
        # coupling where Prague's share is larger without BBR; the step
        # where Prague starves without BBR at a rate whose packet takes
        # longer to send than the 1-ms step.
        codel_bbr = [r for r in rates if mean(nobbr, r, "CoDel", "ping_p50_s") < mean(runs, r, "CoDel", "ping_p50_s")]
        coupled = [r for r in rates if mean(nobbr, r, "DualPI2", "prague_cubic_ratio")
                   > mean(runs, r, "DualPI2", "prague_cubic_ratio")]
        stepped = [r for r in rates if mtu_time_s(r) > 0.001 and mean(nobbr, r, "DualPI2", "prague_cubic_ratio") < 0.5]
        text = f"CoDel's median ping queueing at {NO_BBR_RTT_MS} ms: {codel}."
        if codel_bbr:
            text += (f" Without BBR CoDel holds less queue (at {', '.join(map(str, codel_bbr))} Mb/s): BBR v1 does "
                     "not reduce its rate on loss, so CoDel's drops, its only signal, do not bring the queue down.")
        dual_text = f"DualPI2 at {NO_BBR_RTT_MS} ms: {dual}."
        if coupled:
            dual_text += (f" Prague's share is larger without BBR (at {', '.join(map(str, coupled))} Mb/s): the "
                          "coupling gives Prague a marking probability that grows as the square root of the "
                          "Classic drop rate, so when BBR v1 drives that drop rate up, Prague, which answers every "
                          "mark, gets less.")
        for r in stepped:
            dual_text += (f" At {r} Mb/s Prague gets less than half CUBIC's rate without BBR too: a "
                          f"{PACKET_B}-byte packet takes {mtu_time_s(r) * 1e3:.1f} ms to send, longer than the "
                          "1-ms step threshold, so an L4S packet that arrives while a Classic one is being sent "
                          "is marked.")
        return [text, dual_text]

    # Claims ------------------------------------------------------------------------

    def _claims(self, runs: pd.DataFrame, nobbr: pd.DataFrame, nets: list[tuple[int, int]]) -> list[dict[str, str]]:
        claims = Claims()

        def per_net(qdisc: str, value: Any, df: pd.DataFrame = runs,
                    where: list[tuple[int, int]] = nets) -> list[tuple[str, dict[str, float], int]]:
            out = []
            for rate, rtt in where:
                g = df[(df["rate_mbps"] == rate) & (df["rtt_ms"] == rtt) & (df["qdisc"] == qdisc)]
                out.append((f"{rate} Mb/s {rtt} ms", mean_ci(value(g, rate).tolist()), rate))
            return out

        # Bufferbloat.
        rows = per_net("FIFO", lambda g, rate: g["ping_p50_s"] / (FIFO_PKTS * mtu_time_s(rate)))
        claims.add("FIFO: loss-based senders keep the buffer nearly full, so a probe waits most of the buffer's "
                   "drain time",
                   "Gettys & Nichols, \"Bufferbloat\", CACM 2012: a full buffer's worth of delay under load",
                   "; ".join(f"{n}: median ping queueing {show_ci(m)} of the drain time" for n, m, _ in rows),
                   combine_verdicts([range_verdict(m, 0.5, 1.0) for _, m, _ in rows]),
                   "the median ping queueing over the 1000-packet drain time, 95% interval within [0.5, 1]")
        # Single-queue AQMs at their targets.
        for q, target in TARGETS_S.items():
            rows = per_net(q, lambda g, rate: g["ping_p50_s"])
            claims.add(f"{q} holds the queueing delay near its target, {target * 1e3:g} ms",
                       {"CoDel": "RFC 8289", "PIE": "RFC 8033", "COBALT": "CAKE (Høiland-Jørgensen et al. 2018)",
                        "DualPI2": "RFC 9332 (the Classic queue)"}[q] + f": target {target * 1e3:g} ms",
                       "; ".join(f"{n}: median ping queueing {show_ci(m, 1e3, ' ms')}" for n, m, _ in rows),
                       combine_verdicts([range_verdict(m, target / 2, target * 2) for _, m, _ in rows]),
                       "the median ping queueing, 95% interval within [target/2, 2 target]")
        # Flow queueing.
        for q in FQ:
            rows = [(f"{probe}, {n}", m, r) for probe in PROBES for n, m, r in
                    per_net(q, lambda g, rate, p=probe: g[f"{p}_p99_s"] / mtu_time_s(rate))]
            claims.add(f"{q} isolates sparse flows: a probe's packets wait at most a few packets' transmission",
                       "RFC 8290 §1.3, 4.1: sparse flows are served first; Høiland-Jørgensen et al., IEEE "
                       "Commun. Lett. 2018, bound their delay by the packets of other new flows",
                       "; ".join(f"{n}: p99 {show_ci(m)} packet times" for n, m, _ in rows),
                       combine_verdicts([range_verdict(within_bounds(m, lo=0.0), 0.0, 3.0) for _, m, _ in rows]),
                       "the 99th percentile of both probes' queueing over a 1500-byte packet's transmission "
                       "time, 95% interval within [0, 3]")
            rows = per_net(q, lambda g, rate: g["jain_cc"])
            claims.add(f"{q} shares the link equally among the congestion controls",
                       "RFC 8290 §1: flow queueing gives each flow an equal share, whatever its congestion control",
                       "; ".join(f"{n}: Jain {show_ci(m)}" for n, m, _ in rows),
                       combine_verdicts([range_verdict(within_bounds(m, hi=1.0), 0.95, 1.0) for _, m, _ in rows]),
                       "Jain's index across the four congestion controls' per-flow goodputs, 95% interval within "
                       "[0.95, 1]")
        # BBR v1 in one queue with an AQM.
        for q in SINGLE_AQM:
            rows = per_net(q, lambda g, rate: g["bbr_share"] - 0.25)
            claims.add(f"{q}: BBR v1 takes more than its share from loss-based senders in one short queue",
                       "Hock, Bless, Zitterbart, ICNP 2017; Scholz et al., IFIP Networking 2018: with a small "
                       "queue BBR v1 overestimates the bottleneck and starves CUBIC and Reno",
                       "; ".join(f"{n}: BBR's share less 0.25 {show_ci(m, signed=True)}" for n, m, _ in rows),
                       combine_verdicts([effect_verdict(m, 0.0, math.inf) for _, m, _ in rows]),
                       "BBR's share of the bulk goodput less its fair 0.25, 95% interval above 0")
        # DualPI2.
        rows = per_net("DualPI2", lambda g, rate: g["prague_p50_s"])
        claims.add("DualPI2 keeps the L4S queue's delay below about 1 ms",
                   "RFC 9332 §1: L4S queueing delay sub-millisecond on average",
                   "; ".join(f"{n}: Prague's median queueing {show_ci(m, 1e3, ' ms')}" for n, m, _ in rows),
                   combine_verdicts([range_verdict(m, 0.0, 0.001) for _, m, _ in rows]),
                   "Prague's median one-way queueing, 95% interval within [0, 1 ms]")
        for label, df, where in (("with BBR", runs, nets),
                                 ("without BBR", nobbr, self._networks_of(nobbr))):
            rows = per_net("DualPI2", lambda g, rate: g["prague_cubic_ratio"], df, where)
            claims.add(f"DualPI2 gives Prague and CUBIC flows rates of the same order ({label})",
                       "RFC 9332 §2.1: the coupling p_C = (p_CL / k)^2 balances Classic and L4S rates",
                       "; ".join(f"{n}: Prague/CUBIC per flow {show_ci(m)}" for n, m, _ in rows),
                       combine_verdicts([range_verdict(m, 0.5, 2.0) for _, m, _ in rows]),
                       "Prague's per-flow goodput over CUBIC's, 95% interval within [0.5, 2]")
        return claims

    @staticmethod
    def _networks_of(df: pd.DataFrame) -> list[tuple[int, int]]:
        return list(dict.fromkeys(zip(df["rate_mbps"], df["rtt_ms"])))

    # Figures ---------------------------------------------------------------------------

    def _histograms(self, report: StudyReport, rate: int, rtt: int, probe: str) -> dict[str, Histogram]:
        hists: dict[str, Histogram] = {}
        for _, r in report.runs(network_name(rate, rtt)).iterrows():
            h = hists.setdefault(r["topology.qdisc"], Histogram())
            h.add(r["summary"]["traffic"][probe]["queueing_histogram"])
        return hists

    @staticmethod
    def _grid(nets: list[tuple[int, int]]) -> tuple[Any, np.ndarray]:
        rates = sorted({r for r, _ in nets})
        rtts = sorted({t for _, t in nets})
        fig, axes = plt.subplots(len(rates), len(rtts), figsize=(4.2 * len(rtts) + 1, 3.4 * len(rates)),
                                 squeeze=False)
        return fig, axes

    def _axes_for(self, axes: np.ndarray, nets: list[tuple[int, int]], rate: int, rtt: int) -> Any:
        rates = sorted({r for r, _ in nets})
        rtts = sorted({t for _, t in nets})
        return axes[rates.index(rate)][rtts.index(rtt)]

    def _cdf_figure(self, report: StudyReport, nets: list[tuple[int, int]], probe: str) -> Any:
        fig, axes = self._grid(nets)
        for rate, rtt in nets:
            ax = self._axes_for(axes, nets, rate, rtt)
            for i, (q, h) in enumerate(self._histograms(report, rate, rtt, probe).items()):
                x, y = h.cdf()
                ax.step(np.maximum(x * 1e3, 0.01), y, where="post", label=q, color=f"C{i}")
            ax.set_xscale("log")
            ax.set_title(f"{rate} Mb/s, {rtt} ms")
            ax.set_xlabel(f"{probe} queueing delay (ms)")
            ax.set_ylabel("CDF")
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        return fig

    def _box_figure(self, report: StudyReport, nets: list[tuple[int, int]], probe: str) -> Any:
        fig, axes = self._grid(nets)
        for rate, rtt in nets:
            ax = self._axes_for(axes, nets, rate, rtt)
            hists = self._histograms(report, rate, rtt, probe)
            stats = [{"label": q, "whislo": h.quantile(0.01) * 1e3, "q1": h.quantile(0.25) * 1e3,
                      "med": h.quantile(0.5) * 1e3, "q3": h.quantile(0.75) * 1e3, "whishi": h.quantile(0.99) * 1e3}
                     for q, h in hists.items()]
            ax.bxp(stats, showfliers=False)
            ax.set_yscale("symlog", linthresh=0.1)
            ax.set_title(f"{rate} Mb/s, {rtt} ms")
            ax.set_ylabel(f"{probe} queueing delay (ms)")
            ax.tick_params(axis="x", labelrotation=45, labelsize=7)
            ax.grid(alpha=0.3, axis="y")
        fig.tight_layout()
        return fig

    def _timeseries_figure(self, report: StudyReport, nets: list[tuple[int, int]]) -> Any:
        fig, axes = self._grid(nets)
        warmup = SCALES[report.scale]["warmup"]
        for rate, rtt in nets:
            ax = self._axes_for(axes, nets, rate, rtt)
            name = network_name(rate, rtt)
            runs = report.runs(name)
            base = base_delay_s(rate, rtt, PROBES["voip"])
            for i, (q, g) in enumerate(runs.groupby("topology.qdisc", sort=False)):
                s = report.series(name, int(g["point"].iloc[0]), 0)
                if s is None:
                    continue
                y = (s["traffic.voip.delay_max_s"] - base) * 1e3
                ax.plot(s["time_s"], np.maximum(y, 0.01), label=q, color=f"C{i}", lw=0.8)
            ax.axvspan(0, warmup, color="0.9")
            ax.set_yscale("log")
            ax.set_title(f"{rate} Mb/s, {rtt} ms")
            ax.set_xlabel("time (s)")
            ax.set_ylabel("VoIP queueing delay (ms)")
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        return fig

    def _goodput_figure(self, good: pd.DataFrame, nets: list[tuple[int, int]]) -> Any:
        fig, axes = self._grid(nets)
        width = 0.8 / len(CCS)
        for rate, rtt in nets:
            ax = self._axes_for(axes, nets, rate, rtt)
            g = good[(good["rate_mbps"] == rate) & (good["rtt_ms"] == rtt)]
            x = np.arange(len(g))
            for k, cc in enumerate(CCS):
                col = f"{cc['name']}_bps"
                y = g[col].to_numpy() / 1e6
                err = [np.nan_to_num(y - g[f"{col}_ci95_low"].to_numpy() / 1e6),
                       np.nan_to_num(g[f"{col}_ci95_high"].to_numpy() / 1e6 - y)]
                ax.bar(x + (k - 1.5) * width, y, width, yerr=err, capsize=2, label=cc["name"], color=f"C{k}")
            ax.axhline(rate / (FLOWS_PER_CC * len(CCS)) * PAYLOAD_B / PACKET_B, color="k", lw=0.7, ls="--")
            ax.set_xticks(x, g["qdisc"], rotation=45, fontsize=7)
            ax.set_title(f"{rate} Mb/s, {rtt} ms")
            ax.set_ylabel("goodput per flow (Mb/s)")
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        return fig
