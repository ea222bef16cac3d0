"""The analytic models of the classic AQM papers, beside the simulator so a
simulated figure and a model's prediction can be put side by side. Each is a
small numpy/scipy function, exact where the model is exact; each is also
``aqmlab model NAME`` on the command line (``aqmlab model --list``). The
equations and the choices each model makes are summarised in
``docs/models.md``.

>>> from aqmlab import models
>>> round(models.mm1k(0.9, 10).loss, 6)            # M/M/1/K, K counts the packet in service
0.050814
>>> run = models.consecutive_drops_td(2.0)          # Tail Drop loss runs: mean rho + 1
>>> run.mean, run.var
(3.0, 6.0)
>>> round(float(models.mathis(0.01, 0.1, b=2)), 2)   # packets/s, C = sqrt(3/4)
86.6
>>> round(models.jain_index([1, 2, 3, 4]), 5)
0.83333
>>> p = models.redopt(10e6, N=64, rtt_s=0.15, packet_bytes=1514, udp_rate_bps=1e6)
>>> round(p.min_th, 2), round(p.max_th, 2), round(p.max_p, 4)
(22.95, 68.85, 0.2729)
"""

from __future__ import annotations

# Imported in the order `aqmlab model --list` shows them.
from aqmlab.models import bonald, jou, ted, tcp  # isort: skip
from aqmlab.models.redopt import RedOpt, redopt  # isort: skip  (the function shadows its module's name)
from aqmlab.models import queueing  # isort: skip
from aqmlab.models.bonald import (
    Red, consecutive_drops_red, consecutive_drops_td, drop_probability, drop_vector, mix_drop_probability,
    queue_distribution,
)
from aqmlab.models.queueing import md1, mm1k
from aqmlab.models.registry import MODELS
from aqmlab.models.tcp import mathis, padhye
from aqmlab.models.ted import fair_goodput, jain_index, ted_max_queue, ted_max_service_time

__all__ = [
    "MODELS", "Red", "RedOpt", "bonald", "consecutive_drops_red", "consecutive_drops_td", "drop_probability", "drop_vector",
    "fair_goodput", "jain_index", "jou", "mathis", "md1", "mix_drop_probability", "mm1k", "padhye", "queue_distribution",
    "queueing", "redopt", "tcp", "ted", "ted_max_queue", "ted_max_service_time",
]
