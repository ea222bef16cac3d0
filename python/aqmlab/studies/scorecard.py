"""``aqmlab reproduce --all``: every study at one scale, and a scorecard of
every claim of every paper with its verdict (``scorecard.csv``,
``scorecard.html`` and ``scorecard.md`` beside the studies' folders).

The verdicts are the studies' own (each study's ``claims.csv``); the
scorecard only gathers and counts them, and says which studies have no
claims table yet."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from aqmlab import _engine
from aqmlab.files import write_atomic
from aqmlab.report import page_environment
from aqmlab.studies.framework import SCALE_TEXT, STUDIES, VERDICTS, reproduce


def reproduce_all(scale: str, out: str | Path, *, studies: list[str] | None = None,
                  log: Callable[[str], None] = lambda s: None, **kwargs: Any) -> Path:
    """Runs each study (default: all five) at `scale` into
    ``<out>/<study>-<scale>`` and writes the scorecard into `out`; returns
    the scorecard page's path. `kwargs` go to :func:`reproduce`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    done: list[dict[str, Any]] = []
    for name in studies or list(STUDIES):
        t0 = time.monotonic()
        log(f"{name}: reproducing at {scale} scale")
        page = reproduce(name, scale, out / f"{name}-{scale}", log=log, **kwargs)
        done.append({"study": name, "folder": page.parent, "seconds": time.monotonic() - t0})
    return write_scorecard(scale, out, done)


def write_scorecard(scale: str, out: Path, done: list[dict[str, Any]]) -> Path:
    """Gathers each study's ``claims.csv`` into ``scorecard.csv`` and
    ``scorecard.html`` in `out`. `done`: per study its name, report folder
    and wall time in seconds."""
    frames, studies = [], []
    for d in done:
        path = Path(d["folder"]) / "claims.csv"
        claims = pd.read_csv(path) if path.exists() else pd.DataFrame()
        if not claims.empty:
            frames.append(claims.assign(study=d["study"]))
        counts = {v: int((claims["verdict"] == v).sum()) if not claims.empty else 0 for v in VERDICTS}
        studies.append({"name": d["study"], "title": STUDIES[d["study"]].title,
                        "report": f"{Path(d['folder']).name}/report.html", "minutes": d["seconds"] / 60,
                        "claims": claims.to_dict("records"), "counts": counts, "n": len(claims)})
    table = (pd.concat(frames, ignore_index=True) if frames else
             pd.DataFrame(columns=["claim", "paper", "aqmlab", "verdict", "how", "study"]))
    table = table[["study", "claim", "paper", "aqmlab", "verdict", "how"]]
    write_atomic(out / "scorecard.csv", lambda tmp: table.to_csv(tmp, index=False))
    totals = {v: int((table["verdict"] == v).sum()) for v in VERDICTS}
    page = page_environment().get_template("scorecard.html.j2").render(
        scale=scale, scale_text=SCALE_TEXT[scale], engine=_engine.ENGINE_VERSION, studies=studies, totals=totals,
        n=len(table), minutes=sum(s["minutes"] for s in studies))
    path = out / "scorecard.html"
    write_atomic(path, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    md = markdown(scale, studies, totals, len(table))
    write_atomic(out / "scorecard.md", lambda tmp: Path(tmp).write_text(md, encoding="utf-8"))
    return path


def _cell(text: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown(scale: str, studies: list[dict[str, Any]], totals: dict[str, int], n: int) -> str:
    """The scorecard as Markdown (``scorecard.md``, for a README): the
    verdicts counted per study with each study's wall time, then every claim
    in a folded list."""
    short = {"reproduced": "reproduced", "same direction, different size": "same direction",
             "not reproduced": "not reproduced", "inconclusive": "inconclusive",
             "not run at this scale": "not run"}
    minutes = sum(s["minutes"] for s in studies)
    lines = [f"aqmlab {_engine.ENGINE_VERSION}, scale `{scale}`, {n} claims in {minutes:.0f} min of wall time:",
             "", "| study | claims | " + " | ".join(short[v] for v in VERDICTS) + " | minutes |",
             "|---|" + "---:|" * (len(VERDICTS) + 2)]
    for s in studies:
        lines.append(f"| `{s['name']}` | {s['n']} | " + " | ".join(str(s["counts"][v]) for v in VERDICTS)
                     + f" | {s['minutes']:.1f} |")
    lines.append(f"| all | {n} | " + " | ".join(str(totals[v]) for v in VERDICTS) + f" | {minutes:.1f} |")
    lines += ["", "<details><summary>Every claim and its verdict</summary>", "",
              "| study | claim | paper | aqmlab | verdict |", "|---|---|---|---|---|"]
    for s in studies:
        for c in s["claims"]:
            lines.append(f"| `{s['name']}` | {_cell(c['claim'])} | {_cell(c['paper'])} | {_cell(c['aqmlab'])} | "
                         f"{_cell(c['verdict'])} |")
    lines += ["", "</details>", ""]
    return "\n".join(lines)
