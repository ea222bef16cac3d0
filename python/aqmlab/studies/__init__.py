"""The five classic AQM studies (td-vs-red, bonald, parallel-queue, blue,
ted) and one of aqmlab's own (latency-under-load), each as ``aqmlab
reproduce STUDY [--scale smoke|quick|full]``:
experiment files under ``python/aqmlab/studies/<study>/``, run through the
experiment layer, and a report with every table and figure the study lists.
What each study runs and what it chose where its paper is silent:
``docs/studies.md``."""

from __future__ import annotations

from aqmlab.studies.framework import SCALES, STUDIES, Study, StudyReport, reproduce

__all__ = ["SCALES", "STUDIES", "Study", "StudyReport", "reproduce"]

import importlib as _importlib
from pathlib import Path as _Path

# Each study registers itself when its package is imported, in this order.
for _name in ("td_vs_red", "bonald", "parallel_queue", "blue", "ted", "latency_under_load"):
    if (_Path(__file__).parent / _name / "__init__.py").exists():
        _importlib.import_module(f"aqmlab.studies.{_name}")
