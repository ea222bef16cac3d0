"""REDopt: RED parameters from the bottleneck capacity, the round-trip time
and the number of TCP flows.

Ziegler, Brandauer and Fdida ("A quantitative model for the parameter
setting of RED with TCP traffic", IWQoS 2001) derive RED's parameters from
these inputs so that the average queue settles at ``(min_th + max_th) / 2``
with small oscillation. Their formulas could not be obtained, so this is
*not* their model: it is aqmlab's model with the same inputs and aims, built
from published parts:

1. target equilibrium queue ``q*`` (packets) and ``R = R0 + q*/C``;
2. the equilibrium drop probability from Mathis et al.: ``p* = (3 / (2b))
   (N / (R C))^2``; ``max_p = min(1, 2 p*)`` (the linear drop function
   reaches ``p*`` at the midpoint), times 1.1 with unresponsive traffic;
3. averaging and slope from the linear stability condition of Hollot,
   Misra, Towsley and Gong (INFOCOM 2001): ``w_g = 0.1 min(2N / (R^2 C),
   1/R)``, EWMA pole ``K = w_g`` so ``w_q = 1 - exp(-K / C)``, and the
   smallest ``D = max_th - min_th`` with ``max_p / D <= sqrt(w_g^2 / K^2 + 1)
   (2N)^2 / (R C)^3``;
4. ``q* = max(D, N w_min - R0 C)`` (every flow keeps a window of at least
   ``w_min``); ``min_th = max(5, q* - D/2)``, ``max_th = min_th + D``;
5. ``buffer = max(2 max_th, R0 C)``.

Steps 1-4 are iterated to a fixed point, since ``R`` depends on ``q*``.

A consequence worth knowing: ``max_p`` grows as ``N^2`` and step 3's bound
on ``max_p / D`` falls as ``1/N^2``, so ``D = 3u / (4 sqrt(2) b) R C``
whatever ``N`` (``u`` the factor 1.1 or 1; ``K = w_g`` makes the square root
``sqrt(2)``). While ``N w_min - R0 C <= D``, ``q* = D`` and ``R = R0 / (1 -
D / (R C))``: thresholds and buffer do not depend on ``N`` until ``N``
exceeds ``R0 C / ((1 - D / (R C)) w_min)``; only ``max_p`` and ``w_q`` do. The
spec leaves open which queue feeds ``R`` when the floor of 5 packets lifts
``min_th``: here ``q*`` is the midpoint ``min_th + D/2`` actually aimed at,
which equals step 4's value whenever the floor does not bind.

``C`` is the capacity left to TCP, in packets/s: ``(link rate - R_udp (1 -
p_udp)) / (8 * mean packet size)``. Thresholds and buffer are in packets
(not rounded); ``w_q`` is per packet arrival.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

from aqmlab.exceptions import ModelError
from aqmlab.models.registry import Param, register

__all__ = ["RedOpt", "redopt"]


@dataclass(frozen=True)
class RedOpt:
    min_th: float  # packets
    max_th: float  # packets
    max_p: float
    w_q: float
    buffer: float  # packets
    # The intermediate values, so a user can see why.
    C: float  # capacity left to TCP, packets/s
    R: float  # round-trip time at the equilibrium, s
    p_star: float  # equilibrium drop probability (Mathis)
    w_g: float  # the TCP/queue loop's crossover frequency bound, rad/s
    K: float  # the EWMA filter's pole, rad/s
    D: float  # max_th - min_th, packets
    q_star: float  # equilibrium average queue aimed at, packets
    iterations: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def redopt(link_rate_bps: float, N: float, rtt_s: float, packet_bytes: float = 1500.0, *, b: int = 2,
           udp_rate_bps: float = 0.0, udp_loss: float = 0.0, w_min: float = 2.0, min_th_floor: float = 5.0,
           tol: float = 1e-12, max_iterations: int = 1000) -> RedOpt:
    """RED parameters for ``N`` TCP flows of propagation round-trip time
    ``rtt_s`` (``R0``) through ``link_rate_bps``, with unresponsive traffic at
    ``udp_rate_bps`` losing ``udp_loss``. ``b`` is packets acknowledged per
    ACK (2 with delayed ACKs)."""
    for name, v, ok in (("link_rate_bps", link_rate_bps, link_rate_bps > 0), ("rtt_s", rtt_s, rtt_s > 0),
                        ("packet_bytes", packet_bytes, packet_bytes > 0), ("udp_rate_bps", udp_rate_bps,
                                                                           udp_rate_bps >= 0),
                        ("w_min", w_min, w_min >= 0), ("min_th_floor", min_th_floor, min_th_floor >= 0)):
        if not (math.isfinite(v) and ok):
            raise ModelError(f"{name}: got {v}, need a finite number " + (">= 0" if name in (
                "udp_rate_bps", "w_min", "min_th_floor") else "> 0"))
    if not (math.isfinite(N) and N >= 1):
        # A mean number of active flows (web traffic) need not be whole.
        raise ModelError(f"N (number of TCP flows): need a number >= 1, got {N}")
    if int(b) != b or b < 1:
        raise ModelError(f"b (packets acknowledged per ACK): need a whole number >= 1, got {b}")
    if not (0 <= udp_loss < 1):
        raise ModelError(f"udp_loss: need a probability in [0, 1), got {udp_loss}")
    c = (link_rate_bps - udp_rate_bps * (1 - udp_loss)) / (8 * packet_bytes)
    if not c > 0:
        raise ModelError(f"udp_rate_bps {udp_rate_bps} (after loss {udp_loss}) leaves no capacity of "
                         f"link_rate_bps {link_rate_bps} to TCP")
    udp_factor = 1.1 if udp_rate_bps > 0 else 1.0

    def steps(q_star: float) -> RedOpt:
        """Steps 1-5 for a target queue ``q_star``; the result's ``q_star``
        is the midpoint they aim at, the next iterate."""
        r = rtt_s + q_star / c
        p_star = 3 / (2 * b) * (N / (r * c)) ** 2
        max_p = min(1.0, 2 * p_star * udp_factor)
        w_g = 0.1 * min(2 * N / (r * r * c), 1 / r)
        k = w_g
        d = max_p * (r * c) ** 3 / (math.sqrt(w_g * w_g / (k * k) + 1) * (2 * N) ** 2)
        min_th = max(min_th_floor, max(d, N * w_min - rtt_s * c) - d / 2)
        max_th = min_th + d
        return RedOpt(min_th=min_th, max_th=max_th, max_p=max_p, w_q=1 - math.exp(-k / c),
                      buffer=max(2 * max_th, rtt_s * c), C=c, R=r, p_star=p_star, w_g=w_g, K=k, D=d,
                      q_star=min_th + d / 2, iterations=0)

    q = 0.0
    for it in range(1, max_iterations + 1):
        out = steps(q)
        if abs(out.q_star - q) <= tol * max(1.0, out.q_star):
            # Report the parameters of the settled q* itself.
            return replace(steps(out.q_star), iterations=it)
        q = out.q_star
    raise ModelError(f"REDopt did not settle in {max_iterations} iterations (N {N}, rtt_s {rtt_s}, "
                     f"C {c:.6g} packets/s): the queue target keeps growing")


@register("redopt", "RED parameters from capacity, flows and RTT (aqmlab's REDopt model, every step shown)",
          Param("rate", float, 10e6, "bottleneck link rate, bits/s", unit="bps"),
          Param("N", int, 64, "number of TCP flows"),
          Param("rtt", float, 0.15, "mean round-trip propagation delay R0, s", unit="s"),
          Param("packet", float, 1514.0, "mean packet size, bytes", unit="B"),
          Param("b", int, 2, "packets acknowledged per ACK (2 with delayed ACKs)"),
          Param("udp_rate", float, 0.0, "unresponsive traffic, bits/s", unit="bps"),
          Param("udp_loss", float, 0.0, "its loss probability"),
          Param("w_min", float, 2.0, "smallest window each flow keeps, packets"))
def _cli_redopt(rate, N, rtt, packet, b, udp_rate, udp_loss, w_min):
    return redopt(rate, N, rtt, packet, b=b, udp_rate_bps=udp_rate, udp_loss=udp_loss, w_min=w_min).as_dict()
