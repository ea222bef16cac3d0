"""Time-driven early discard: buffer sizing and fair goodput.

M. Baldi, A. Vesco (time-driven early discard, TED): a TED queue discards a
packet whose queueing has exceeded its deadline, so its backlog is bounded by
what can arrive within one deadline while the output drains.

- ``ted_max_queue``: ``Q_max = D_max * sum of the capacities of the input
  links other than the output one``; with ``J`` equal links of capacity
  ``C`` (one of them the output), ``(J - 1) D_max C``.
- ``ted_max_service_time``: ``S_max = S_min + D`` for an end-to-end deadline,
  ``S_min + K D`` for a per-hop deadline over ``K`` hops.
- ``fair_goodput``: the optimal goodput ``O_i`` of each connection on a
  bottleneck, by water-filling (max-min fairness): connections are taken by
  increasing window-limited rate ``W_i p_i / RTT_i`` (with equal windows and
  packets, by decreasing RTT, as the paper puts it); each gets the smaller of
  that limit and an equal share of the capacity the earlier ones left. Shares are of the wire capacity; a connection's goodput
  is its share times ``1 - h_i / p_i`` (``h_i`` header bytes in a packet of
  ``p_i`` bytes).
- ``jain_index``: ``(sum x)^2 / (n sum x^2)`` (Jain, Chiu, Hawe 1984).
"""

from __future__ import annotations

import numpy as np

from aqmlab.exceptions import ModelError
from aqmlab.models.registry import Param, register

__all__ = ["ted_max_queue", "ted_max_service_time", "fair_goodput", "jain_index"]


def ted_max_queue(deadline_s: float | np.ndarray, input_rates_bps: list[float] | np.ndarray | None = None, *,
                  ports: int | np.ndarray | None = None, rate_bps: float | None = None) -> np.ndarray | float:
    """Largest backlog of a TED queue, in bytes: ``D_max`` times the sum of
    the capacities of the input links other than the output one. Give either
    those capacities (``input_rates_bps``) or ``ports`` equal links of
    ``rate_bps`` (then ``(ports - 1) D_max C / 8``). Broadcasts."""
    d = np.asarray(deadline_s, dtype=float)
    if not np.all(np.isfinite(d) & (d > 0)):
        raise ModelError(f"deadline_s (D_max): need a finite number of seconds > 0, got {deadline_s}")
    if input_rates_bps is not None:
        if ports is not None or rate_bps is not None:
            raise ModelError("ted_max_queue: give input_rates_bps, or ports and rate_bps, not both")
        rates = np.asarray(input_rates_bps, dtype=float)
        if not np.all(np.isfinite(rates) & (rates >= 0)):
            raise ModelError(f"input_rates_bps: need finite rates >= 0, got {input_rates_bps}")
        total = rates.sum()
    else:
        if ports is None or rate_bps is None:
            raise ModelError("ted_max_queue: give input_rates_bps, or ports and rate_bps")
        j = np.asarray(ports)
        if not np.all((j >= 2) & (j == np.floor(j))):
            raise ModelError(f"ports: need a whole number >= 2 (one is the output), got {ports}")
        if not (np.isfinite(rate_bps) and rate_bps > 0):
            raise ModelError(f"rate_bps: need a finite rate > 0, got {rate_bps}")
        total = (j - 1) * rate_bps
    q = d * total / 8
    return float(q) if q.ndim == 0 else q


def ted_max_service_time(s_min: float, deadline_s: float, *, hops: int = 1, per_hop: bool = False) -> float:
    """``S_max = S_min + D`` (end-to-end deadline) or ``S_min + hops * D``
    (a deadline at each of ``hops`` TED queues)."""
    if not (s_min >= 0 and deadline_s >= 0):
        raise ModelError(f"s_min and deadline_s: need times >= 0, got {s_min} and {deadline_s}")
    if int(hops) != hops or hops < 1:
        raise ModelError(f"hops: need a whole number >= 1, got {hops}")
    return s_min + (hops if per_hop else 1) * deadline_s


def fair_goodput(capacity_bps: float, rtt_s: list[float] | np.ndarray, window_pkts: list[float] | np.ndarray | float,
                 packet_bytes: list[float] | np.ndarray | float = 1500.0,
                 header_bytes: list[float] | np.ndarray | float = 40.0) -> np.ndarray:
    """Fair goodput ``O_i`` (bits/s of payload) of each connection, in the
    order given, by the water-filling of the module docstring. ``window_pkts``
    may be ``inf`` (no window limit)."""
    rtt = np.asarray(rtt_s, dtype=float)
    n = rtt.size
    w, p, h = (np.broadcast_to(np.asarray(x, dtype=float), rtt.shape) for x in (window_pkts, packet_bytes,
                                                                                 header_bytes))
    if not (np.isfinite(capacity_bps) and capacity_bps > 0):
        raise ModelError(f"capacity_bps: need a finite rate > 0, got {capacity_bps}")
    if n == 0 or not np.all(np.isfinite(rtt) & (rtt > 0)):
        raise ModelError(f"rtt_s: need one finite round-trip time > 0 per connection, got {rtt_s}")
    if not np.all(w > 0):
        raise ModelError(f"window_pkts: need windows > 0, got {window_pkts}")
    if not np.all((p > 0) & (h >= 0) & (h < p)):
        raise ModelError(f"packet_bytes, header_bytes: need 0 <= header < packet, got {packet_bytes}, {header_bytes}")
    limit = w * p * 8 / rtt
    share = np.empty(n)
    left = capacity_bps
    for rank, i in enumerate(np.argsort(limit, kind="stable")):
        share[i] = min(limit[i], left / (n - rank))
        left -= share[i]
    return share * (1 - h / p)


def jain_index(x: list[float] | np.ndarray) -> float:
    """Jain's fairness index ``(sum x)^2 / (n sum x^2)``: 1 when all are
    equal, ``1/n`` when one takes everything."""
    x = np.asarray(x, dtype=float)
    if x.size == 0 or not np.all(np.isfinite(x) & (x >= 0)) or not x.any():
        raise ModelError(f"jain: need one or more finite values >= 0, not all zero, got {list(x)}")
    return float(x.sum() ** 2 / (x.size * (x * x).sum()))


@register("ted-qmax", "largest TED queue (MB) over deadlines and port counts, equal links",
          Param("rate", float, 10e9, "capacity of each link, bits/s", unit="bps"),
          Param("deadline", float, "125e-6,250e-6,500e-6,1e-3,2e-3,4e-3", "D_max, s (list or range)", many=True, unit="s"),
          Param("ports", int, "10:50:10", "links at the node, output included (list or range)", many=True))
def _cli_ted_qmax(rate, deadline, ports):
    q = ted_max_queue(deadline[:, None], ports=ports[None, :], rate_bps=rate) / 1e6
    out = {"deadline_us": [1e6 * d for d in deadline]}
    for j, col in zip(ports, q.T):
        out[f"q_max_MB_{j}_ports"] = col
    return out


@register("ted-service-time", "largest service time S_max under TED (end-to-end or per-hop deadline)",
          Param("s_min", float, 0.0, "service time with no queueing, s", unit="s"),
          Param("deadline", float, 1e-3, "the deadline D, s", unit="s"),
          Param("hops", int, 1, "TED queues on the path"),
          Param("per_hop", bool, False, "the deadline applies at each hop"))
def _cli_ted_service(s_min, deadline, hops, per_hop):
    return {"s_max": ted_max_service_time(s_min, deadline, hops=hops, per_hop=per_hop)}


@register("fair-goodput", "fair (max-min) goodput of connections on a bottleneck, with window limits",
          Param("capacity", float, 300e6, "bottleneck capacity, bits/s", unit="bps"),
          Param("rtt", float, "0.004,0.007,0.012,0.016", "round-trip time of each connection, s", many=True, unit="s"),
          Param("window", float, float("inf"), "window limit of every connection, packets"),
          Param("packet", float, 1500.0, "packet size on the wire, bytes", unit="B"),
          Param("header", float, 40.0, "header bytes in a packet", unit="B"))
def _cli_fair(capacity, rtt, window, packet, header):
    o = fair_goodput(capacity, rtt, window, packet, header)
    return {"rtt": rtt, "goodput_bps": o, "jain": jain_index(o)}


@register("jain", "Jain's fairness index of a list of values",
          Param("x", float, "1,2,3,4", "the values (list)", many=True))
def _cli_jain(x):
    return {"jain": jain_index(x), "n": int(len(x))}
