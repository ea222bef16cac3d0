"""Study D: BLUE against RED with ECN (``aqmlab reproduce blue``).

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
- D4: the testbed of the paper's section 3.5 (Fig. 10), simulated: a 10
  Mb/s bottleneck with a 50 KB queue, bulk TCP connections growing in
  number; goodput and loss rate.
- D5: sensitivity of D1 at the smallest buffer to what the paper leaves
  open (the application's rate, the Pareto shape, the receiver window, the
  round trips), one change per experiment ``d5-*``.
- The paper's claims beside aqmlab's numbers, each with a verdict.

RED marks ECN-capable packets above max_th as well (the paper's RED marks
deterministically there), and the marking probability plotted for RED is the
one it applies, p_a = p_b / (1 - count p_b).

The RED thresholds depend on the buffer, so D1 is one experiment per buffer
size (``d1-<B>KB``, ``d1-ecn-timeout-<B>KB``), each sweeping the eight
configurations and the numbers of connections; D2 is ``d2`` and
``d2-ecn-timeout``; D4 is ``d4-testbed``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import matplotlib.pyplot as plt
import pandas as pd

from aqmlab.result import Summary
from aqmlab.studies.framework import Claims, Study, StudyReport, ci_columns, errorbar_plot, register

# The configurations of the paper.
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
                       "trace_interval": "100ms", "replications": 2},
              "testbed": {"connections": [10, 40], "warmup_s": 2, "duration_s": 6, "replications": 2}},
    "quick": {"buffers_kb": [100, 500, 1000], "connections": [1000, 4000], "configs": ALL_CONFIGS,
              "replications": 2, "warmup_s": 50, "duration_s": 100,
              "ramp": {"per_group": 200, "groups": 5, "step_s": 20, "duration_s": 100, "buffer_kb": 200,
                       "trace_interval": "100ms", "replications": 2},
              "testbed": {"connections": [10, 20, 40, 80, 160], "warmup_s": 10, "duration_s": 60,
                          "replications": 3}},
    "full": {"buffers_kb": list(range(100, 1001, 100)), "connections": [1000, 4000], "configs": ALL_CONFIGS,
             "replications": 3, "warmup_s": 100, "duration_s": 200,
             "ramp": {"per_group": 200, "groups": 5, "step_s": 20, "duration_s": 100, "buffer_kb": 200,
                      "trace_interval": "100ms", "replications": 3},
             "testbed": {"connections": [10, 20, 40, 80, 160], "warmup_s": 10, "duration_s": 60,
                         "replications": 10}},
}

# D4 under `--mode emulate`: emulation takes real time, (connections x 2
# schemes x replications x duration_s) seconds: 20 s at smoke scale, 8 min
# at quick, 50 min at full.
EMULATED_TESTBED: dict[str, dict[str, Any]] = {
    "smoke": {"connections": [10], "warmup_s": 2, "duration_s": 5, "replications": 2},
    "quick": {"connections": [10, 40, 160], "warmup_s": 10, "duration_s": 40, "replications": 2},
    "full": {"connections": [10, 20, 40, 80, 160], "warmup_s": 10, "duration_s": 60, "replications": 5},
}

TCP_MODES = {"ignore": "", "timeout": "-ecn-timeout"}   # ecn_at_cwnd1 -> experiment name suffix

# Access delays of the five senders, in ms (chosen, see network.toml.j2):
# round trips of 62 to 142 ms, mean 102 ms, whose bandwidth-delay product
# (550 packets) lies in the middle of the paper's 100-1000 KB buffers.
SENDER_DELAYS_MS = [20, 30, 40, 50, 60]
ON_SHARE = 2 / (2 + 3)   # mean ON 2 s, mean OFF 3 s: the share of sources ON at a time


def fill_rate_bps(connections: int = 1000) -> float:
    """The application rate while ON at which `connections` sources, ON_SHARE
    of them ON at a time, offer exactly the link's rate on the wire: each
    1000 B the application makes travels as a 1040 B packet."""
    return BOTTLENECK_BPS / (ON_SHARE * connections) * PAYLOAD_BYTES / (PAYLOAD_BYTES + HEADER_BYTES)


def rate_text(bps: float) -> str:
    return f"{bps / 1e3:.2f}".rstrip("0").rstrip(".") + "kbps"


# The Pareto ON/OFF application (chosen, see onoff.toml.j2): its rate while
# ON (None: unlimited data while ON), shape, and the receiver window in
# packets (None: the engine's 10000), and whether packet 0 is ECN-capable.
# The rate is the one at which the 1000 sources offer the link's rate
# (108.17 kb/s), for the reasons the experiment file gives.
SOURCE: dict[str, Any] = {"rate": rate_text(fill_rate_bps()), "shape": 1.5, "rwnd": None, "packet0_ect": False}
# The rate sweep d5-rate (D1 at the smallest buffer with 1000 connections):
# rates at which the sources offer 0.85 to 1.1 times the link, and the 128
# kb/s this study used before (1.18 times).
RATE_SWEEP_NAME = "d5-rate"
RATE_SWEEP = [rate_text(load * fill_rate_bps()) for load in (0.85, 0.9, 0.95, 1.0, 1.05, 1.1)] + ["128kbps"]


def offered_load(rate: str, connections: int = 1000) -> float:
    """The mean rate the sources offer on the wire over the link's rate, for
    an application rate like "108.17kbps" (kb/s only)."""
    bps = float(rate.removesuffix("kbps")) * 1e3
    return bps / fill_rate_bps(connections)

# The sensitivity experiments (d5-*): D1 at the smallest buffer, one change
# from the default each: (name, what changes, source, sender delays).
SENSITIVITY: list[tuple[str, str, dict[str, Any], list[float]]] = [
    ("d5-default", "nothing (the study's default)", SOURCE, SENDER_DELAYS_MS),
    ("d5-unlimited", "unlimited data while ON instead of a rate (a bulk transfer in every ON period, not ns's "
     "Application/Traffic/Pareto)", SOURCE | {"rate": None}, SENDER_DELAYS_MS),
    ("d5-rate-64kbps", "the application sends at 64 kb/s while ON (ns-2's default rate_ for "
     "Application/Traffic/Pareto; 1000 sources then offer 26 Mb/s, which cannot fill the link)",
     SOURCE | {"rate": "64kbps"}, SENDER_DELAYS_MS),
    ("d5-rate-256kbps", "the application sends at 256 kb/s while ON", SOURCE | {"rate": "256kbps"},
     SENDER_DELAYS_MS),
    ("d5-shape-1.2", "Pareto shape 1.2 (heavier tails)", SOURCE | {"shape": 1.2}, SENDER_DELAYS_MS),
    ("d5-shape-1.9", "Pareto shape 1.9 (lighter tails)", SOURCE | {"shape": 1.9}, SENDER_DELAYS_MS),
    ("d5-window-20", "a 20-packet receiver window (ns-2's default window_)", SOURCE | {"rwnd": 20},
     SENDER_DELAYS_MS),
    ("d5-packet0-ect", "packet 0 ECN-capable (ECN taken as agreed; ns-2.35 sends it without ECT to negotiate ECN, "
     "so a queue marking with probability near 1 drops it on every try and the connection never starts)",
     SOURCE | {"packet0_ect": True}, SENDER_DELAYS_MS),
    ("d5-rtt-24ms", "every sender 1 ms away (round trips of 24 ms, just above the 17.8 ms of a 100 KB buffer)",
     SOURCE, [1, 1, 1, 1, 1]),
    ("d5-rtt-24-62ms", "senders 1 to 20 ms away (round trips of 24 to 62 ms, mean 42 ms: the pipe holds 230 "
     "packets, fewer than the 400 sources ON at a time)", SOURCE, [1, 5, 10, 15, 20]),
    ("d5-rtt-102-182ms", "senders 40 to 80 ms away (round trips of 102 to 182 ms, mean 142 ms)", SOURCE,
     [40, 50, 60, 70, 80]),
]


def round_trip_ms(sender_delay_ms: float) -> float:
    """Round-trip propagation delay of a flow from a sender `sender_delay_ms`
    away: its access link, A -> B (10 ms) and B -> receiver (1 ms), twice."""
    return 2 * (sender_delay_ms + 10 + 1)


def _rtts(senders: list[float] = SENDER_DELAYS_MS) -> str:
    return f"{round_trip_ms(min(senders)):g} to {round_trip_ms(max(senders)):g}"


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
                "ecn_above_max_th": "mark", "mean_pktsize": f"{PAYLOAD_BYTES + HEADER_BYTES}B"}
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
    return Summary(s).bottleneck.loss_rate


def _util(s: dict[str, Any]) -> float:
    return Summary(s).bottleneck.utilization


def _qlen(s: dict[str, Any]) -> float:
    return Summary(s).bottleneck.qlen_mean_pkts


def _fmt_ci(mean: float, low: float, high: float, scale: float = 1.0, digits: int = 3) -> str:
    if math.isnan(low):
        return f"{mean * scale:.{digits}g}"
    return f"{mean * scale:.{digits}g} [{low * scale:.{digits}g}, {high * scale:.{digits}g}]"


# The rules of the Fig. 5 claims: "no loss" is a mean loss rate below 0.1%,
# "double digits" a mean over R1-R4 of at least 10%, "full" a utilisation of
# at least 0.95.
NO_LOSS, DOUBLE_DIGITS, FULL_UTILISATION = 1e-3, 0.10, 0.95


def d1_claims(d1: pd.DataFrame, p_m_at_one: Callable[[int], float | None]) -> list[tuple[str, str, str, bool | None, str]]:
    """The paper's Fig. 5 claims decided from the D1 table `d1` (one row per
    scheme, connections and buffer, with mean loss_rate and utilization):
    (claim, paper, aqmlab, verdict as True / False / None for not
    measurable, rule). `p_m_at_one(n)` is the share of BLUE's p_m samples at
    1 with `n` connections (None without traces)."""
    rows: list[tuple[str, str, str, bool | None, str]] = []
    if d1.empty:
        return rows
    buffers = sorted(d1["buffer_kb"].unique())
    small, large = buffers[0], buffers[-1]
    for n, g in d1.groupby("connections"):
        red, blue = g[g["scheme"].str.startswith("R")], g[g["scheme"].str.startswith("B")]
        if n == min(d1["connections"]):
            worst = blue["loss_rate"].max()
            per_config = blue.groupby("scheme", sort=False)["loss_rate"].max()
            rows.append((
                f"{n} connections: BLUE loses nothing at any buffer (Fig. 5)", "0",
                "highest loss over the buffers: " + ", ".join(f"{k} {100 * v:.3g}%" for k, v in per_config.items()),
                bool(worst < NO_LOSS), "every BLUE configuration's mean below 0.1% at every buffer"))
            at_small = red[red["buffer_kb"] == small]["loss_rate"]
            rows.append((
                f"{n} connections: RED's loss is in double digits at {small} KB", ">= 10%",
                f"R1-R4 {', '.join(f'{100 * x:.3g}%' for x in at_small)}", bool(at_small.mean() >= DOUBLE_DIGITS),
                "the mean over R1-R4 at least 10%"))
            target = blue[blue["buffer_kb"] == small]["loss_rate"].max()
            match = [b for b in buffers if red[red["buffer_kb"] == b]["loss_rate"].min() <= target]
            rows.append((
                f"{n} connections: RED needs at least 6 times the buffer to match BLUE's loss at {small} KB",
                f">= {6 * small} KB", f"first matched at {match[0]} KB" if match else f"not matched up to {large} KB",
                bool(not match or match[0] >= 6 * small),
                "the smallest buffer at which the best RED is at or below the worst BLUE at the smallest"))
        else:
            below = all(blue[blue["buffer_kb"] == b]["loss_rate"].max()
                        < red[red["buffer_kb"] == b]["loss_rate"].min() for b in buffers)
            rows.append((
                f"{n} connections: BLUE's loss is far below RED's at every buffer", "yes",
                "every BLUE below every RED at every buffer" if below else "not at every buffer", below,
                "every BLUE configuration's mean below every RED configuration's, buffer by buffer"))
            best_red = red[red["buffer_kb"] == large]["loss_rate"].min()
            worst_blue = blue[blue["buffer_kb"] == small]["loss_rate"].max()
            rows.append((
                f"{n} connections: RED at {large} KB still loses more than BLUE at {small} KB", "yes",
                f"best RED {100 * best_red:.3g}%, worst BLUE {100 * worst_blue:.3g}%", bool(best_red > worst_blue),
                "best RED at the largest buffer above worst BLUE at the smallest"))
            p_m = p_m_at_one(n)
            rows.append((
                f"{n} connections: BLUE's marking probability stays at 1", "1 throughout",
                "no trace" if p_m is None else f"p_m >= 0.99 in {100 * p_m:.0f}% of the samples",
                None if p_m is None else bool(p_m >= 0.9),
                "p_m sampled every second in the window, every BLUE run: at least 0.99 in 90% of samples"))
    util = d1["utilization"].min()
    rows.append(("Link utilisation is full for RED and BLUE in every case (Fig. 5)", "full", f"lowest {util:.4f}",
                 bool(util >= FULL_UTILISATION), "every mean utilisation at least 0.95"))
    return rows


# BLUE's marking probability counts as saturated from this median on:
# nearly every arrival is marked and the windows sit at their minimum.
SATURATED_P_M = 0.9


def _pct_range(x: pd.Series) -> str:
    low, high = 100 * x.min(), 100 * x.max()
    return f"{low:.3g}%" if f"{low:.3g}" == f"{high:.3g}" else f"{low:.3g}-{high:.3g}%"


def rate_sweep_text(df: pd.DataFrame) -> list[str]:
    """What the rate sweep shows, from its table (one row per rate and
    scheme with offered_load, loss_rate, utilization, p_m_median,
    cwnd_end_mean): one sentence per rate with the Fig. 5 claims that hold
    there, the lowest load from which on BLUE's p_m is saturated at every
    load swept, and the loads at which all three claims hold."""
    out = []
    saturated: dict[float, bool] = {}
    holding: dict[float, list[str]] = {}
    for load, g in df.groupby("offered_load"):
        red, blue = g[g["scheme"].str.startswith("R")], g[g["scheme"].str.startswith("B")]
        if blue.empty or red.empty:
            continue
        holds = [name for name, ok in (
            ("BLUE loses nothing", (blue["loss_rate"] < NO_LOSS).all()),
            ("RED's loss is in double digits", red["loss_rate"].mean() >= DOUBLE_DIGITS),
            ("utilisation is full", (g["utilization"] >= FULL_UTILISATION).all())) if ok]
        holding[load] = holds
        out.append(f"Offered load {load:.2f} ({g['rate'].iloc[0]}): BLUE loses {_pct_range(blue['loss_rate'])}, RED "
                   f"{_pct_range(red['loss_rate'])}; utilisation {g['utilization'].min():.4f}-"
                   f"{g['utilization'].max():.4f}; BLUE's median p_m {blue['p_m_median'].min():.2f}-"
                   f"{blue['p_m_median'].max():.2f}; mean window at the end {blue['cwnd_end_mean'].mean():.2g} "
                   f"packets under BLUE. Of the paper's three claims at this buffer (by the rules of the claims "
                   f"table), {'; '.join(holds) if holds else 'none'} {'holds' if len(holds) == 1 else 'hold'}.")
        saturated[load] = bool((blue["p_m_median"] >= SATURATED_P_M).all())
    tail = []
    for load in sorted(saturated, reverse=True):
        if not saturated[load]:
            break
        tail.append(load)
    if tail:
        there = df[df["offered_load"].isin(tail) & df["scheme"].str.startswith("B")]
        worst = there.loc[there["loss_rate"].idxmax()]
        out.append(
            f"From offered load {min(tail):.2f} on, every BLUE configuration's median p_m is at least "
            f"{SATURATED_P_M:g}: nearly every arrival is marked and the windows sit at 1. The applications then make "
            "more than TCP carries at one packet per round trip, their data piles up in the senders, and far more "
            "sources than the 40% that are ON have data to send, so packets are lost whatever is marked. BLUE "
            f"loses {_pct_range(there['loss_rate'])} at these loads, most in {worst['scheme']} "
            f"({100 * worst['loss_rate']:.3g}% at {worst['offered_load']:.2f}).")
    else:
        out.append(f"At no rate swept is every BLUE configuration's median p_m at least {SATURATED_P_M:g}.")
    every = [load for load, holds in holding.items() if len(holds) == 3]
    out.append(f"All three claims hold together at offered load {', '.join(f'{x:.2f}' for x in every)}." if every else
               "At no rate swept do the three claims hold together.")
    return out


def testbed_text(df: pd.DataFrame) -> str:
    """How BLUE's goodput compares with RED's in D4, from its table: at how
    many numbers of connections the two intervals overlap, and what
    utilisation BLUE gives up where it is lower."""
    red = df[df["scheme"] == "RED"].set_index("connections").sort_index()
    blue = df[df["scheme"] == "BLUE"].set_index("connections").sort_index()
    overlap = [n for n in red.index if blue.at[n, "goodput_bps_ci95_low"] <= red.at[n, "goodput_bps_ci95_high"]
               and red.at[n, "goodput_bps_ci95_low"] <= blue.at[n, "goodput_bps_ci95_high"]]
    diff = (blue["goodput_bps"] - red["goodput_bps"]) / red["goodput_bps"]
    util = blue["utilization"] - red["utilization"]
    same = int(((diff > 0) == (util > 0)).sum())
    return (f"D4: BLUE's mean goodput differs from RED's by {100 * diff.min():+.2f}% to {100 * diff.max():+.2f}%, and "
            f"the two 95% intervals overlap at {len(overlap)} of {len(red)} numbers of connections. BLUE's "
            f"utilisation of the bottleneck differs from RED's by {100 * util.min():+.2f} to {100 * util.max():+.2f} "
            f"points, with the same sign as the goodput's difference at {same} of {len(red)}"
            + (": BLUE's goodput is lower where the link idles more under it." if same == len(red)
               else "."))


def engine_differences(sim: pd.DataFrame, emu: pd.DataFrame) -> str:
    """How the emulated D4 differs from the simulated, from the two tables:
    for each metric, the range of (emulated - simulated) over the points
    and at how many points the two 95% intervals are disjoint."""
    key = ["scheme", "connections"]
    m = sim.merge(emu, on=key, suffixes=("_sim", "_emu"))
    parts = []
    for metric, scale, unit in (("goodput_bps", 1e-6, " Mb/s"), ("loss_rate", 100, " points"),
                                ("utilization", 100, " points")):
        d = (m[f"{metric}_emu"] - m[f"{metric}_sim"]) * scale
        apart = ((m[f"{metric}_ci95_low_emu"] > m[f"{metric}_ci95_high_sim"])
                 | (m[f"{metric}_ci95_high_emu"] < m[f"{metric}_ci95_low_sim"])).sum()
        parts.append(f"{metric}: emulated minus simulated from {d.min():+.3g} to {d.max():+.3g}{unit}, the intervals "
                     f"disjoint at {int(apart)} of {len(m)} points")
    return "Emulation against simulation, point by point. " + "; ".join(parts) + "."


def testbed_claims(tb: pd.DataFrame, engine: str = "") -> list[tuple[str, str, str, bool, str]]:
    """Fig. 10's two claims decided on a D4 table (as ``_testbed_table``
    gives it), as (claim, paper, aqmlab, holds, rule) rows; `engine` is put
    after "Testbed" in each claim's name."""
    if tb.empty:
        return []
    red = tb[tb["scheme"] == "RED"].sort_values("connections")
    blue = tb[tb["scheme"] == "BLUE"].sort_values("connections")
    above = bool((blue["goodput_bps"].to_numpy() >= red["goodput_bps"].to_numpy()).all())
    grows = bool((red["loss_rate"].diff().dropna() >= 0).all())
    lower = bool(blue["loss_rate"].iloc[-1] < 0.5 * red["loss_rate"].iloc[-1])
    name = f"Testbed{' ' + engine if engine else ''}"
    return [
        (f"{name}: BLUE's throughput stays slightly above RED's (Fig. 10)", "above",
         ", ".join(f"{n}: {b / 1e6:.2f} vs {r / 1e6:.2f} Mb/s" for n, b, r in
                   zip(red["connections"], blue["goodput_bps"], red["goodput_bps"])), above,
         "BLUE's mean goodput at least RED's at every number of connections"),
        (f"{name}: RED's loss grows with the number of connections, BLUE's stays far lower", "yes",
         ", ".join(f"{n}: RED {100 * r:.3g}%, BLUE {100 * b:.3g}%" for n, r, b in
                   zip(red["connections"], red["loss_rate"], blue["loss_rate"])), grows and lower,
         "RED's mean loss never falls as connections are added, and BLUE's is below half of RED's at "
         "the most connections"),
    ]


# The first seconds of each D2 step, while its connections start (in its
# first second) and leave slow start; the claims give the drops after them
# apart.
JOIN_S = 3.0


def floor_load(connections: int, buffer_kb: int, senders: list[float] = SENDER_DELAYS_MS,
               on_share: float = ON_SHARE) -> float:
    """The packet rate that the sources ON at a time (`on_share` of them)
    offer at the least a TCP sends, one packet per round trip (round trips
    with the buffer full), over the link's packet rate. Above 1, packets are
    lost or connections wait in timer backoff whatever the queue marks (while
    the application's rate is above one packet per round trip, as 108 kb/s
    is here)."""
    per_source = sum(1 / (round_trip_ms(d) + buffer_delay_ms(buffer_kb)) for d in senders) / len(senders) * 1e3
    link = BOTTLENECK_BPS / ((PAYLOAD_BYTES + HEADER_BYTES) * 8)
    return on_share * connections * per_source / link


def floor_text(connections: list[int], buffers: list[int]) -> list[str]:
    """One sentence on `floor_load` for each number of connections."""
    out = []
    for n in connections:
        loads = [floor_load(n, b) for b in (buffers[0], buffers[-1])]
        out.append(
            f"With {n} connections about {ON_SHARE * n:.0f} are ON at a time. Sending one packet per round trip "
            f"each, the least TCP sends, they offer {loads[0]:.2f} times the link's packet rate with {buffers[0]} KB "
            f"of buffer and {loads[1]:.2f} times with {buffers[-1]} KB (round trips with the buffer full). "
            + ("Above 1, no marking scheme can avoid loss: TCP sheds the excess only through lost packets and "
               "connections waiting in timer backoff, and the loss rate then reflects those dynamics more than "
               "the marking." if max(loads) > 1 else "Below 1, marking can in principle keep them under the link's "
               "rate without loss.")
            + _application_load_text(n))
    return out


def _application_load_text(connections: int) -> str:
    """What the applications of `connections` sources offer, if rate-limited."""
    if not SOURCE["rate"]:
        return ""
    load = offered_load(SOURCE["rate"], connections)
    text = f" Their applications offer {load:.2f} times the link's rate"
    if load <= 1.01:
        return text + "."
    return text + (": more than it carries, so their data piles up in the senders and more sources than those ON "
                   "have data to send, which raises this floor further.")


@register
class Blue(Study):
    name = "blue"
    title = "Study D: BLUE vs RED with ECN, loss, utilisation and queue dynamics"
    source = ("W. Feng, D. D. Kandlur, D. Saha, K. G. Shin, \"BLUE: A New Class of Active Queue Management "
              "Algorithms\", U. Michigan CSE-TR-387-99, 1999; \"The BLUE Active Queue Management Algorithms\", "
              "IEEE/ACM Transactions on Networking 10(4), 2002.")
    runtime = {"smoke": "15 s", "quick": "~10 min", "full": "~30 min"}

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
                    ecn_at_cwnd1=mode, configs=[{"label": c, "qdisc": qdisc(c, b)} for c in sc["configs"]],
                    source=SOURCE, senders=SENDER_DELAYS_MS, default_senders=SENDER_DELAYS_MS, variant="",
                    rates=[])
        r = sc["ramp"]
        for mode in TCP_MODES:
            name = d2_name(mode)
            out[name] = self.render(
                "ramp.toml.j2", name=name, scale=scale, part="D3 (D2 with ECN timeout)" if mode == "timeout"
                else "D2", per_group=r["per_group"], groups=r["groups"], step_s=r["step_s"],
                duration_s=r["duration_s"], trace_interval=r["trace_interval"], replications=r["replications"],
                buffer_kb=r["buffer_kb"], buffer_pkts=buffer_pkts(r["buffer_kb"]), ecn_at_cwnd1=mode,
                configs=[{"label": c, "qdisc": qdisc(c, r["buffer_kb"])} for c in RAMP_CONFIGS],
                senders=SENDER_DELAYS_MS, default_senders=SENDER_DELAYS_MS)
        b = sc["buffers_kb"][0]
        for name, what, source, senders in SENSITIVITY:
            out[name] = self.render(
                "onoff.toml.j2", name=name, scale=scale, part="D1", connections=sc["connections"], buffer_kb=b,
                buffer_pkts=buffer_pkts(b), replications=sc["replications"], warmup_s=sc["warmup_s"],
                duration_s=sc["duration_s"], ecn_at_cwnd1="ignore",
                configs=[{"label": c, "qdisc": qdisc(c, b)} for c in sc["configs"]], source=source,
                senders=senders, default_senders=SENDER_DELAYS_MS, variant=what, rates=[])
        out[RATE_SWEEP_NAME] = self.render(
            "onoff.toml.j2", name=RATE_SWEEP_NAME, scale=scale, part="D1", connections=sc["connections"][:1],
            buffer_kb=b, buffer_pkts=buffer_pkts(b), replications=sc["replications"], warmup_s=sc["warmup_s"],
            duration_s=sc["duration_s"], ecn_at_cwnd1="ignore",
            configs=[{"label": c, "qdisc": qdisc(c, b)} for c in sc["configs"]], source=SOURCE,
            senders=SENDER_DELAYS_MS, default_senders=SENDER_DELAYS_MS, rates=RATE_SWEEP,
            variant=f"the application's rate while ON, swept over {', '.join(RATE_SWEEP)} with "
                    f"{sc['connections'][0]} connections")
        tb = sc["testbed"]
        out["d4-testbed"] = self.render("testbed.toml.j2", name="d4-testbed", scale=scale, senders=5,
                                        connections=tb["connections"], warmup_s=tb["warmup_s"],
                                        duration_s=tb["duration_s"], replications=tb["replications"])
        return out

    def emulated_experiments(self, scale: str, results: StudyReport | None = None) -> dict[str, str]:
        """D4, the paper's testbed, to run both simulated and emulated: the
        same experiment file, the emulated runs with Linux's TCP on real
        sockets through aqmlab's RED and BLUE (``--mode emulate``)."""
        tb = EMULATED_TESTBED[scale]
        why = (f"# Emulated as well as simulated (--mode emulate). CHOSEN: {tb['duration_s']} s runs with "
               f"{tb['warmup_s']} s of warm-up and {tb['replications']} replications at {tb['connections']} "
               "connections, fewer and shorter than the simulated study's, because emulated runs take real time "
               "one after another; everything else as in the study.\n")
        return {"d4-testbed": why + self.render("testbed.toml.j2", name="d4-testbed", scale=scale, senders=5,
                                          connections=tb["connections"], warmup_s=tb["warmup_s"],
                                          duration_s=tb["duration_s"], replications=tb["replications"])}

    # Analysis --------------------------------------------------------------

    def analyse_emulation(self, report: StudyReport) -> None:
        tb = EMULATED_TESTBED[report.scale]
        report.section("D4 on real TCP: the testbed of section 3.5 emulated, beside the simulation")
        report.text(
            "The paper measured RED and BLUE on a testbed: Linux hosts, a 10 Mb/s bottleneck with a 50 KB queue in "
            "a FreeBSD router. Here the same experiment file runs twice: simulated (aqmlab's SACK agents with "
            "delayed ACKs and ECN) and emulated (aqmlab emulate: each host a network namespace with its own Linux "
            "TCP, reno with SACK and ECN, through aqmlab's RED and BLUE in a user-space router, in real time). The "
            f"queues are the same code in both. {tb['duration_s'] - tb['warmup_s']} s measured after "
            f"{tb['warmup_s']} s, {tb['replications']} replications per point; intervals are Student-t 95% "
            "confidence intervals over replications. Linux sends 1448-byte payloads in 1500-byte packets (its TCP "
            "timestamps take 12 bytes), the simulation 1460 in 1500, so the emulated goodput is 0.8% lower for "
            "the headers alone. Linux sends retransmissions and SYNs without ECN capability (as RFC 3168, section "
            "6.1.5, requires), so RED and BLUE must drop them where they would mark: the emulated loss counts "
            "those early drops, which the simulated agents, whose every data packet is ECN-capable, never cause.")
        sim, emu = self._testbed_table(report, "aqmlab"), self._testbed_table(report, "emulation")
        if sim.empty or emu.empty:
            report.text("No emulated runs finished." if emu.empty else "No simulated runs finished.")
            return
        both = pd.concat([sim.assign(engine="simulated"), emu.assign(engine="emulated")], ignore_index=True)
        both = both.sort_values(["scheme", "connections", "engine"], ascending=[False, True, False])
        report.table("d4_testbed_engines", both,
                     f"D4: goodput of all connections, loss rate and utilisation of the bottleneck, simulated and "
                     f"emulated, mean and 95% CI over {tb['replications']} replications.")
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for ax, (metric, label, scale) in zip(axes, (("goodput_bps", "goodput (Mb/s)", 1e-6),
                                                     ("loss_rate", "loss rate (%)", 100))):
            sub = both.assign(**{metric: both[metric] * scale, "ci95_low": both[f"{metric}_ci95_low"] * scale,
                                 "ci95_high": both[f"{metric}_ci95_high"] * scale},
                              series=both["scheme"] + " " + both["engine"])
            errorbar_plot(ax, sub, "connections", metric, "series")
            ax.set_xlabel("connections")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        report.figure("d4_testbed_engines", fig, "D4: goodput and loss rate against the number of connections, RED "
                                                 "and BLUE, simulated and emulated, 95% CI error bars.")
        claims = Claims()
        for engine, df in (("simulated", sim), ("emulated", emu)):
            for claim, paper, ours, ok, how in testbed_claims(df, engine):
                claims.add(claim, paper, ours, "reproduced" if ok else "not reproduced", how)
        report.claims(claims, "Fig. 10's claims decided on each engine's runs by the rule in the last column "
                              "(means over replications; the table has the intervals).")
        report.text(engine_differences(sim, emu))

    def analyse(self, report: StudyReport) -> None:
        sc = SCALES[report.scale]
        report.section("Setup")
        report.text(
            f"Five senders -> A -> B -> five receivers; A -> B is 45 Mb/s, access links 100 Mb/s, round-trip "
            f"propagation delays {_rtts()} ms (chosen). Each Pareto ON/OFF source makes 1 KB packets at "
            f"{SOURCE['rate']} while ON (chosen). TCP Reno with ECN, 1000 B payloads plus 40 B headers. "
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
        self._testbed(report, sc)
        self._sensitivity(report, sc)
        self._rate_sweep(report, sc)
        self._claims(report, sc)

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
                                   ("qlen_mean_pkts", _qlen),
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
                if metric == "loss_rate" and n == 1000:
                    ax.axhline(0, color="k", ls="--", lw=0.9, label="paper: BLUE B1-B4")
                elif metric == "utilization":
                    ax.axhline(1, color="k", ls="--", lw=0.9, label="paper: RED and BLUE")
                per_kb = buffer_delay_ms(1)
                secondary = ax.secondary_xaxis("top", functions=(lambda kb: kb * per_kb, lambda ms: ms / per_kb))
                secondary.set_xlabel("buffer (ms at 45 Mb/s)")
            axes[0][0].legend(fontsize=8, ncol=2)
            fig.tight_layout()
            paper = ("the black dashed line is the paper's BLUE with 1000 connections (Fig. 5: no loss at any "
                     "buffer)" if metric == "loss_rate" else "the black dashed line is the paper's (Fig. 5: full "
                     "utilisation for both)")
            caption = (f"{part}: {ylabel} against the buffer size, RED (dashed) and BLUE (solid), 95% CI error "
                       f"bars over {int(df['n'].max())} replications; {paper}.")
            report.figure(f"{tag}_{metric}", fig, caption)
        report.text(*self._onoff_text(df, part), *floor_text(sorted(df["connections"].unique()),
                                                             sorted(df["buffer_kb"].unique())))

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
                               ("qlen_mean_pkts", _qlen),
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
            # BLUE's p_m; RED's p_a, the probability it applies to an
            # arrival after count-based spacing (the paper plots that one).
            prob = "bottleneck.p_m" if "bottleneck.p_m" in s else "bottleneck.p_a"
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
                                            f"and marking probability (BLUE's p_m; RED's p_a = p_b / (1 - count "
                                            f"p_b), the probability applied to an arrival) of replication 0, "
                                            f"sampled every {r['trace_interval']}; grey lines mark each new group "
                                            f"of {r['per_group']} connections.")
        report.text(*[f"{part}, {label}, from the last group's start to the end (replication 0): mean queue "
                      f"{q:.1f} packets of {limit}, queue empty in {100 * empty:.1f}% and full in {100 * full:.1f}% of "
                      f"the samples, mean marking probability {p:.3f}." for label, q, empty, full, p in stats])
        steps = [r["per_group"] * (k + 1) for k in range(r["groups"])]
        report.text(f"{part}: at one packet per round trip each (the least TCP sends, round trips with the "
                    f"{r['buffer_kb']} KB buffer full) the infinite sources offer "
                    + ", ".join(f"{floor_load(n, r['buffer_kb'], on_share=1.0):.2f}" for n in steps)
                    + f" times the link's packet rate with {', '.join(map(str, steps))} connections. Above 1 no "
                    "marking can prevent loss; below it, marking can in principle, though a window that ECN halves "
                    "from 2 goes back to 1 and grows again, so the sources send between one and two packets per "
                    "round trip.")

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

    # The testbed, simulated (section 3.5) -----------------------------------

    @staticmethod
    def _testbed_table(report: StudyReport, engine: str = "aqmlab") -> pd.DataFrame:
        """D4 per scheme and number of connections, from the runs of
        `engine` (``aqmlab``: simulated; ``emulation``)."""
        runs = report.runs("d4-testbed")
        if not runs.empty:
            runs = runs[runs["engine"] == engine]
        rows = []
        for (conns, label), g in runs.groupby(["traffic[0].count", "topology.qdisc"], sort=False):
            row: dict[str, Any] = {"scheme": label, "connections": int(conns)}
            for metric, fn in (("goodput_bps", lambda s: Summary(s).group("bulk").goodput_bps),
                               ("loss_rate", _loss), ("utilization", _util)):
                row |= ci_columns([fn(s) for s in g["summary"]], metric)
            row["n"] = len(g)
            rows.append(row)
        return pd.DataFrame(rows)

    def _testbed(self, report: StudyReport, sc: dict[str, Any]) -> None:
        tb = sc["testbed"]
        report.section("D4: the testbed of section 3.5 (Fig. 10), simulated")
        df = self._testbed_table(report)
        if df.empty:
            report.text("No runs finished.")
            return
        report.text(
            "A 10 Mb/s bottleneck with a 50 KB queue; RED min_th 10 KB, max_th 40 KB, max_p 1, w_q 0.002; BLUE d1 "
            "0.01, d2 0.001, freeze_time 50 ms; bulk TCP connections (SACK, delayed ACKs, ECN) on a LAN, "
            f"{tb['duration_s'] - tb['warmup_s']} s measured after {tb['warmup_s']} s. This stands in for the "
            "paper's Linux/FreeBSD testbed: its hosts' TCP and delays are chosen (see the experiment file).")
        report.table("d4_testbed", df, f"D4: goodput of all connections, loss rate and utilisation of the "
                                       f"bottleneck against the number of connections, mean and 95% CI over "
                                       f"{int(df['n'].max())} replications.")
        fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
        for ax, (metric, label, scale) in zip(axes, (("goodput_bps", "goodput (Mb/s)", 1e-6),
                                                     ("loss_rate", "loss rate (%)", 100))):
            sub = df.assign(**{metric: df[metric] * scale, "ci95_low": df[f"{metric}_ci95_low"] * scale,
                               "ci95_high": df[f"{metric}_ci95_high"] * scale})
            errorbar_plot(ax, sub, "connections", metric, "scheme")
            ax.set_xlabel("connections")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        report.figure("d4_testbed", fig, f"D4: goodput and loss rate against the number of connections, RED and BLUE, "
                                         f"95% CI error bars over {int(df['n'].max())} replications.")
        report.text(testbed_text(df))

    # Sensitivity -----------------------------------------------------------

    def _sensitivity(self, report: StudyReport, sc: dict[str, Any]) -> None:
        b = sc["buffers_kb"][0]
        rows = []
        for name, what, _, _ in SENSITIVITY:
            runs = report.runs(name, flows=True)
            for (conns, label), g in runs.groupby(["traffic[0].count", "topology.qdisc"], sort=False):
                row: dict[str, Any] = {"experiment": name, "change": what.split(" (")[0], "connections": int(conns),
                                       "scheme": label}
                for metric, fn in (("loss_rate", _loss), ("utilization", _util), ("stalled_flows", _stalled)):
                    row |= ci_columns([fn(x) for x in g["summary"]], metric)
                row["n"] = len(g)
                rows.append(row)
        if not rows:
            return
        df = pd.DataFrame(rows)
        report.section(f"D5: sensitivity of D1 at {b} KB to what the paper leaves open")
        report.text(
            "Each d5 experiment is D1 at the smallest buffer with one change from the study's default (the "
            "experiment files say why each is plausible): the application (unlimited data while ON instead of "
            f"{SOURCE['rate']}, or another rate; the paper gives none, ns-2's default is 64 kb/s), the Pareto shape, "
            "the receiver window, packet 0 ECN-capable, and the round trips (the default's are "
            f"{_rtts()} ms).",
            "Two mechanisms bound what any marking scheme can do here. A TCP source sends at least one packet per "
            "round trip, so when the sources that are ON outnumber the packets the pipe and the buffer hold, "
            "packets are lost whatever is marked: 1000 sources ON 40% of the time need about 400 packets, and "
            "round trips of 24-62 ms hold about 230 in the pipe. And packet 0 of every connection is not "
            "ECN-capable (it negotiates ECN, as in ns-2.35), so a queue that marks nearly every packet (BLUE at "
            "p_m = 1, RED with its average above max_th) drops it instead, again after every backoff of the "
            "retransmission timer: the connection never starts. d5-packet0-ect measures how much of the 4000-"
            "connection result that explains.")
        report.table("d5_sensitivity", df, f"D5: loss rate, utilisation and stalled connections of every "
                                           f"configuration for each change, {b} KB buffer, mean and 95% CI over "
                                           f"{int(df['n'].max())} replications.")
        conns = sorted(df["connections"].unique())
        changes = list(dict.fromkeys(df["change"]))
        fig, axes = plt.subplots(len(conns), 1, figsize=(11, 3.2 * len(conns)), squeeze=False, sharex=True)
        for ax, n in zip(axes[:, 0], conns):
            sub = df[df["connections"] == n]
            for k, (kind, marker) in enumerate((("R", "o"), ("B", "s"))):
                part = sub[sub["scheme"].str.startswith(kind)]
                x = [changes.index(c) + (k - 0.5) * 0.25 for c in part["change"]]
                ax.scatter(x, 100 * part["loss_rate"], marker=marker, s=18,
                           label="RED R1-R4" if kind == "R" else "BLUE B1-B4")
            ax.set_ylabel("loss rate (%)")
            ax.set_title(f"{n} connections", fontsize=9)
            ax.grid(alpha=0.3)
        axes[-1, 0].set_xticks(range(len(changes)), changes, rotation=25, ha="right", fontsize=8)
        axes[0, 0].legend(fontsize=8)
        fig.tight_layout()
        report.figure("d5_sensitivity", fig, f"D5: loss rate of each RED and BLUE configuration for each change "
                                             f"from the default, {b} KB buffer (d5_sensitivity.csv).")
        lines = []
        for (name, n), g in df.groupby(["change", "connections"], sort=False):
            red, blue = g[g["scheme"].str.startswith("R")], g[g["scheme"].str.startswith("B")]
            lines.append(f"{name}, {n} connections: RED {100 * red['loss_rate'].min():.3g}-"
                         f"{100 * red['loss_rate'].max():.3g}%, BLUE {100 * blue['loss_rate'].min():.3g}-"
                         f"{100 * blue['loss_rate'].max():.3g}%, utilisation {g['utilization'].min():.3f}-"
                         f"{g['utilization'].max():.3f}")
        report.text("Loss rates by change: " + "; ".join(lines) + ".")
        report.text(*self._packet0_text(df, b))

    def _rate_table(self, report: StudyReport, sc: dict[str, Any]) -> pd.DataFrame:
        """d5-rate: one row per application rate and configuration."""
        runs = report.runs(RATE_SWEEP_NAME, flows=True)
        rows = []
        for (rate, label), g in runs.groupby(["traffic[0].rate", "topology.qdisc"], sort=False):
            row: dict[str, Any] = {"rate": rate, "offered_load": offered_load(rate, int(g["traffic[0].count"].iloc[0])),
                                   "scheme": label}
            for metric, fn in (("loss_rate", _loss), ("utilization", _util),
                               ("qlen_mean_pkts", _qlen),
                               ("cwnd_end_mean", lambda x: sum(f["cwnd"] for f in x["flows"]) / len(x["flows"]))):
                row |= ci_columns([fn(x) for x in g["summary"]], metric)
            medians = []
            for _, r in g.iterrows():
                series = report.series(RATE_SWEEP_NAME, int(r["point"]), int(r["replication"]))
                if series is not None and "bottleneck.p_m" in series:
                    medians.append(float(series.loc[series["time_s"] >= sc["warmup_s"], "bottleneck.p_m"].median()))
            row["p_m_median"] = sum(medians) / len(medians) if medians else float("nan")
            row["n"] = len(g)
            rows.append(row)
        return pd.DataFrame(rows)

    def _rate_sweep(self, report: StudyReport, sc: dict[str, Any]) -> None:
        df = self._rate_table(report, sc)
        if df.empty:
            return
        b, n = sc["buffers_kb"][0], sc["connections"][0]
        report.section(f"D5: the application's rate, {n} connections at {b} KB")
        report.text(
            "The paper gives no rate for its Pareto applications. The default, "
            f"{SOURCE['rate'].removesuffix('kbps')} kb/s, is the rate at which the sources offer the link's rate "
            "(offered load 1: 40% of them ON, 1040 B on the wire for each 1000 B they make). d5-rate runs D1 at "
            "the smallest buffer with rates from 0.85 to 1.18 times that; 1.18 is the 128 kb/s this study used "
            "before. offered_load is the applications' mean rate on the wire over the link's; p_m_median is "
            "BLUE's marking probability, the median of its per-second samples in the window (mean over "
            "replications); cwnd_end_mean is the mean congestion window of the connections at the end.")
        report.table("d5_rate", df, f"d5-rate: loss rate, utilisation, mean queue, mean window at the end and "
                                    f"BLUE's median p_m against the application's rate, {n} connections, {b} KB, "
                                    f"mean and 95% CI over {int(df['n'].max())} replications.")
        fig, axes = plt.subplots(1, 2, figsize=(10.4, 3.8))
        for kind, fmt in (("R", "o--"), ("B", "s-")):
            sub = df[df["scheme"].str.startswith(kind)].assign(
                # A loss rate is not negative, whatever a t interval over few replications says.
                loss_pct=lambda d: 100 * d["loss_rate"], ci95_low=lambda d: 100 * d["loss_rate_ci95_low"].clip(lower=0),
                ci95_high=lambda d: 100 * d["loss_rate_ci95_high"])
            errorbar_plot(axes[0], sub, "offered_load", "loss_pct", "scheme", fmt=fmt)
        axes[0].set_yscale("symlog", linthresh=0.1)
        axes[0].set_ylabel("loss rate (%)")
        axes[0].legend(fontsize=7, ncol=2)
        blue = df[df["scheme"].str.startswith("B")]
        for label, g in blue.groupby("scheme", sort=False):
            axes[1].plot(g["offered_load"], g["p_m_median"], "s-", label=f"{label} p_m (median)")
        cw = blue.groupby("offered_load")["cwnd_end_mean"].mean()
        ax2 = axes[1].twinx()
        ax2.plot(cw.index, cw.to_numpy(), "k:", label="mean window at the end, B1-B4")
        ax2.set_yscale("log")
        ax2.set_ylabel("congestion window (packets)")
        axes[1].set_ylabel("BLUE's marking probability")
        axes[1].legend(fontsize=7, loc="upper left")
        ax2.legend(fontsize=7, loc="lower right")
        for ax in axes:
            ax.set_xlabel("offered load (applications' rate / link rate)")
            ax.axvline(1.0, color="0.6", lw=0.8)
            ax.grid(alpha=0.3)
        fig.tight_layout()
        report.figure("d5_rate", fig, f"d5-rate: loss rate of RED (dashed) and BLUE (solid), and BLUE's median p_m "
                                      f"with the connections' mean window at the end (dotted), against the offered "
                                      f"load, {n} connections, {b} KB; the grey line is the default, offered load 1.")
        report.text(*rate_sweep_text(df))

    @staticmethod
    def _packet0_text(df: pd.DataFrame, b: int) -> list[str]:
        """What making packet 0 ECN-capable changes, from the d5 table."""
        out = []
        for n, g in df.groupby("connections"):
            rows = {}
            for name in ("d5-default", "d5-packet0-ect"):
                e = g[g["experiment"] == name]
                if e.empty:
                    break
                red, blue = e[e["scheme"].str.startswith("R")], e[e["scheme"].str.startswith("B")]
                rows[name] = (100 * blue["loss_rate"].mean(), 100 * red["loss_rate"].mean(),
                              100 * red["stalled_flows"].mean(), 100 * blue["stalled_flows"].mean())
            if len(rows) == 2:
                (b0, r0, sr0, sb0), (b1, r1, sr1, sb1) = rows["d5-default"], rows["d5-packet0-ect"]
                out.append(f"{n} connections at {b} KB, the default against packet 0 ECN-capable: connections that "
                           f"delivered nothing in the window {sr0:.0f}% -> {sr1:.0f}% under RED and {sb0:.0f}% -> "
                           f"{sb1:.0f}% under BLUE; mean loss rate over B1-B4 {b0:.3g}% -> {b1:.3g}%, over R1-R4 "
                           f"{r0:.3g}% -> {r1:.3g}%.")
        return out

    # The paper's claims ------------------------------------------------------

    def _claims(self, report: StudyReport, sc: dict[str, Any]) -> None:
        """Each claim of the paper (Fig. 5, 6, 8 and 10) beside aqmlab's
        numbers, with the rule that decides it."""
        claims = Claims()

        def add(claim: str, paper: str, ours: str, ok: bool | None, how: str) -> None:
            """A claim decided by a yes/no rule (None: not measurable at this scale)."""
            claims.add(claim, paper, ours, "not run at this scale" if ok is None else
                       "reproduced" if ok else "not reproduced", how)

        d1 = self._onoff_table(report, sc, "ignore")
        for row in d1_claims(d1, lambda n: self._p_m_at_one(report, sc, n)):
            add(*row)
        drops = self._ramp_drops(report, sc)
        if drops:
            r = sc["ramp"]
            red, blue = drops.get("R2"), drops.get("B4")
            if red is not None:
                add("D2: RED loses packets throughout the ramp (Fig. 6)", "yes",
                    "drops per step: " + ", ".join(f"{n}: {d}" for n, d, _ in red), all(d > 0 for _, d, _ in red[1:]),
                    "replication 0: drops in every step after the first")
            if blue is not None:
                add("D2: BLUE loses packets only from 800 connections on (Fig. 6)", "from 800",
                    "drops per step: " + ", ".join(f"{n}: {d}" for n, d, _ in blue) + f"; after the first {JOIN_S:g} "
                    "s of each step, while the new connections start: " + ", ".join(f"{n}: {d}" for n, _, d in blue),
                    all((d == 0) == (n < 800) for n, d, _ in blue) if r["per_group"] * r["groups"] >= 800 else None,
                    "replication 0: no drop in the steps with fewer than 800 connections, drops in the others")
        d3 = self._onoff_table(report, sc, "timeout")
        if not d3.empty:
            blue = d3[d3["scheme"].str.startswith("B")]
            add("With ECN timeouts BLUE keeps low loss and high utilisation (Fig. 8)", "low, high",
                f"highest loss {100 * blue['loss_rate'].max():.3g}%, lowest utilisation "
                f"{blue['utilization'].min():.3f}",
                bool(blue["loss_rate"].max() < 0.01 and blue["utilization"].min() >= 0.95),
                "every BLUE mean loss below 1% and utilisation at least 0.95")
        for row in testbed_claims(self._testbed_table(report)):
            add(*row)
        if claims:
            report.claims(claims, "Each claim of the paper (Fig. 5, 6, 8 and 10), aqmlab's numbers and the verdict "
                                  "by the rule in the last column (means over replications; the tables have the "
                                  "intervals).")

    @staticmethod
    def _ramp_drops(report: StudyReport, sc: dict[str, Any]) -> dict[str, list[tuple[int, int, int]]]:
        """D2, replication 0: per configuration, (connections, drops, drops
        after the first JOIN_S seconds) for each step of the ramp."""
        r = sc["ramp"]
        runs = report.runs(d2_name("ignore"))
        out = {}
        for _, run in runs[runs["replication"] == 0].iterrows():
            s = report.series(d2_name("ignore"), int(run["point"]), 0)
            if s is None or "bottleneck.drops" not in s:
                continue

            def dropped_by(t: float, s: pd.DataFrame = s) -> float:
                """Drops counted from the start up to the last sample at or before t."""
                before = s.loc[s["time_s"] <= t + 1e-9, "bottleneck.drops"]
                return float(before.iloc[-1]) if len(before) else 0.0

            steps = []
            for k in range(r["groups"]):
                t0, t1 = k * r["step_s"], (k + 1) * r["step_s"] if k + 1 < r["groups"] else r["duration_s"]
                steps.append(((k + 1) * r["per_group"], int(round(dropped_by(t1) - dropped_by(t0))),
                              int(round(dropped_by(t1) - dropped_by(t0 + JOIN_S)))))
            out[run["topology.qdisc"]] = steps
        return out

    @staticmethod
    def _p_m_at_one(report: StudyReport, sc: dict[str, Any], conns: int) -> float | None:
        """Share of the per-second samples in the window with BLUE's p_m at
        least 0.99, over every BLUE run of D1 with `conns` connections."""
        hits, total = 0, 0
        for b in sc["buffers_kb"]:
            runs = report.runs(d1_name(b, "ignore"))
            if runs.empty:
                continue
            sel = runs[(runs["traffic[0].count"] == str(conns)) & runs["topology.qdisc"].str.startswith("B")]
            for _, r in sel.iterrows():
                s = report.series(d1_name(b, "ignore"), int(r["point"]), int(r["replication"]))
                if s is None or "bottleneck.p_m" not in s:
                    continue
                w = s.loc[s["time_s"] >= sc["warmup_s"], "bottleneck.p_m"]
                hits, total = hits + int((w >= 0.99).sum()), total + len(w)
        return None if total == 0 else hits / total
