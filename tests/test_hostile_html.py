"""Hostile input in the pages aqmlab writes: names, labels, captions and
file text that look like HTML are shown as text, never run, and every page
forbids scripts by its Content-Security-Policy."""

from __future__ import annotations

import html
import json
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from aqmlab.experiment import Experiment
from aqmlab.report import PAGE_CSP
from aqmlab.store import Store
from aqmlab.studies.framework import Study, StudyReport
from aqmlab.studies.scorecard import write_scorecard
from aqmlab.sweep import execute
from conftest import CSP_META, PROBE_NONCE, needs_chromium, probe, run_cli

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(2)>"
QUOTE_AMP = '& "q"'

# One second of a small dumbbell, two sweep points, one replication; every
# name a reader sees is hostile.
EXPERIMENT = f"""\
# A comment with {SCRIPT}, {IMG}, "quotes" & ampersands.
name = {json.dumps(f"{SCRIPT} {QUOTE_AMP}")}
replications = 1
metrics = ["queues.bottleneck.loss_rate", "traffic.{IMG}.goodput_bps"]

[scenario]
name = {json.dumps(SCRIPT)}
duration = "1s"
trace = {{ interval = "100ms", queues = ["bottleneck"] }}

[scenario.topology]
kind = "dumbbell"
senders = [ {{ delay = "10ms" }} ]
access_rate = "100Mbps"
bottleneck = {{ rate = "10Mbps", delay = "10ms" }}
qdisc = {{ kind = "droptail", limit = "100pkt" }}

[[scenario.traffic]]
name = {json.dumps(IMG)}
kind = "ftp"
count = 2

[sweep."topology.qdisc"]
labels = [{json.dumps(SCRIPT)}, {json.dumps(f"{IMG} {QUOTE_AMP}")}]
values = [{{ kind = "droptail", limit = "100pkt" }},
          {{ kind = "red", limit = "100pkt", min_th = "5pkt", max_th = "15pkt", max_p = 0.1, w_q = 0.002 }}]
"""

# Counts alert() calls; it runs at the end of the page's head, before anything in its body.
ALERT_HOOK = "<script>window.alerts = []; window.alert = x => window.alerts.push(String(x));</script>"


def hostile_probe(page: Path, scratch: Path, literals: list[str]) -> dict:
    """What the page does on its own, without its Content-Security-Policy:
    the alerts that ran, the scripts and event-handler attributes in the
    DOM, the elements that load something other than a data: URI, the
    links, and which of `literals` do not appear as text (in the page's
    text, title or an image's alt text)."""
    wanted = json.dumps(literals).replace("<", "\\u003c")
    expression = f"""JSON.stringify({{
      alerts: window.alerts,
      scripts: document.querySelectorAll("script").length,
      handlers: [...document.querySelectorAll("*")].filter(e => [...e.attributes].some(
          a => a.name.startsWith("on"))).length,
      outside: [...document.querySelectorAll("[src]")].filter(e => !e.getAttribute("src").startsWith("data:")).length,
      links: [...document.querySelectorAll("a[href]")].map(a => a.getAttribute("href")),
      missing: {wanted}.filter(t => ![document.title,
          ...[...document.body.childNodes].filter(n => n.nodeName !== "SCRIPT").map(n => n.textContent),
          ...[...document.images].map(i => i.alt)].some(s => s.includes(t)))
    }})"""
    found = probe(page, scratch, expression, keep_csp=False, head=ALERT_HOOK)
    assert found is not None, "the probe did not run"
    return json.loads(found)


def assert_harmless(page: Path, scratch: Path, literals: list[str]) -> None:
    """The page carries the policy, and on its own (policy removed) runs no
    injected script, has no injected element, and shows `literals` as text;
    its links point at files beside it."""
    metas = CSP_META.findall(page.read_text(encoding="utf-8"))
    assert [html.unescape(m) for m in metas] == [PAGE_CSP]
    seen = hostile_probe(page, scratch, literals)
    assert seen["alerts"] == []
    assert seen["scripts"] == 2  # the test's alert hook and probe, nothing else
    assert seen["handlers"] == 0 and seen["outside"] == 0
    assert seen["missing"] == []
    for href in seen["links"]:
        if not href.startswith("#"):
            assert (page.parent / unquote(href)).exists(), href


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    """``aqmlab report`` on a store (itself with a hostile file name) of
    the hostile experiment."""
    tmp = tmp_path_factory.mktemp("hostile-report")
    store = tmp / f'{IMG}&".duckdb'
    with Store(store) as st:
        assert execute(Experiment.from_toml(EXPERIMENT), st, jobs=1)["ok"] == 2
    r = run_cli("report", str(store), "--out", str(tmp / "out"))
    assert r.returncode == 0, r.stderr
    return tmp / "out" / "report.html"


def test_report_page_escapes_hostile_input_in_the_html(report_page: Path):
    text = report_page.read_text(encoding="utf-8")
    for raw in (SCRIPT, IMG, "<b>"):
        assert raw not in text
    # The experiment's name in the heading, a label in a figure's alt text.
    assert "<h2>Experiment &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;q&#34;</h2>" in text
    assert 'alt="topology.qdisc=&lt;img src=x onerror=alert(2)&gt; &amp; &#34;q&#34;: bottleneck over time"' in text


def test_report_svgs_keep_hostile_labels_as_text(report_page: Path):
    svgs = list(report_page.parent.glob("*.svg"))
    assert len(svgs) == 5  # 2 metrics, the loss runs, 2 time series
    texts = []
    for svg in svgs:
        root = ET.parse(svg).getroot()
        tags = {e.tag.rsplit("}", 1)[-1] for e in root.iter()}
        assert not tags & {"script", "foreignObject", "img", "image"}, svg.name
        assert not any(k.startswith("on") for e in root.iter() for k in e.attrib), svg.name
        texts += ["".join(e.itertext()) for e in root.iter()]
    assert any(f"{IMG} {QUOTE_AMP}" in t for t in texts)


@needs_chromium
def test_report_page_is_harmless_in_a_browser(report_page: Path, tmp_path):
    assert_harmless(report_page, tmp_path, [
        f"Experiment {SCRIPT} {QUOTE_AMP}",  # the heading
        f'# A comment with {SCRIPT}, {IMG}, "quotes" & ampersands.',  # the experiment file
        f"{IMG} {QUOTE_AMP}",  # a sweep label, in the table
        f"traffic.{IMG}.goodput_bps",  # a flow group's name, in a metric
        f"topology.qdisc={IMG} {QUOTE_AMP}: bottleneck over time",  # a figure's alt text and caption
        f'{IMG}&".duckdb',  # the store's name, in the title and text
    ])


@needs_chromium
def test_the_policy_stops_scripts_that_get_in(report_page: Path, tmp_path):
    # Markup that escaped the templates would be stopped by the page's policy:
    # an inline script and an event handler do not run under it, and do
    # without it (so the hook sees them when they run).
    injected = (f'<script nonce="{PROBE_NONCE}">window.alerts = []; window.alert = x => window.alerts.push(x);'
                '</script><script>alert(3)</script><img src="x.png" onerror="alert(4)">')
    assert probe(report_page, tmp_path, "JSON.stringify(window.alerts)", head=injected) == "[]"
    assert probe(report_page, tmp_path, "JSON.stringify(window.alerts)", head=injected, keep_csp=False) == "[3,4]"


class HostileStudy(Study):
    name = "hostile"  # not registered: its page is built by hand
    title = f"Title {SCRIPT}"
    source = f"Source {IMG} {QUOTE_AMP}"


@needs_chromium
def test_study_page_is_harmless_in_a_browser(tmp_path):
    out = tmp_path / "study"
    (out / "experiments").mkdir(parents=True)
    # A study names its experiments (and their files) itself; the name inside can be anything.
    name, exp = f"e{IMG}", Experiment.from_toml(EXPERIMENT)
    (out / "experiments" / f"{name}.toml").write_text(EXPERIMENT, encoding="utf-8")
    report = StudyReport(HostileStudy(), "smoke", out, None, {name: exp})
    report.text(f"Text {SCRIPT} {QUOTE_AMP}")
    report.claims([{"claim": f"Claim {SCRIPT}", "paper": IMG, "aqmlab": QUOTE_AMP, "verdict": "reproduced",
                    "how": f"Rule {IMG}"}], f"Claims {IMG}")
    report.section(f"Section {IMG}")
    report.table(f"table{IMG}", pd.DataFrame({SCRIPT: [IMG, QUOTE_AMP], "x_bps": [1e6, 2e6]}), f"Caption {SCRIPT}")
    fig, ax = plt.subplots()
    ax.set_title(SCRIPT)
    report.figure(f"figure{IMG}", fig, f"Figure {IMG} {QUOTE_AMP}")
    report.table(f"raw{IMG}", pd.DataFrame({"label": [SCRIPT]}), f"Raw {IMG}", raw=True)
    page = report.write_page()
    assert_harmless(page, tmp_path, [
        f"Title {SCRIPT}", f"Source {IMG} {QUOTE_AMP}", f"Text {SCRIPT} {QUOTE_AMP}", f"Claim {SCRIPT}",
        f"Rule {IMG}", f"Claims {IMG}", f"Section {IMG}", f"Caption {SCRIPT}", f"Figure {IMG} {QUOTE_AMP}",
        f"Raw {IMG}", f"table{IMG}.csv", f"experiments/{name}.toml", f"# A comment with {SCRIPT}",
        f"Experiment {name}: 2 runs",
    ])


@needs_chromium
def test_scorecard_is_harmless_in_a_browser(tmp_path):
    folder = tmp_path / f'ted-{IMG}&"q"'
    folder.mkdir()
    (folder / "report.html").write_text("", encoding="utf-8")
    pd.DataFrame([[f"Claim {SCRIPT}", IMG, QUOTE_AMP, "not reproduced", f"Rule {IMG}"],
                  ["c", "1", "2", f'x"><img src=x onerror=alert(5)>', "r"]],
                 columns=["claim", "paper", "aqmlab", "verdict", "how"]).to_csv(folder / "claims.csv", index=False)
    page = write_scorecard("smoke", tmp_path, [{"study": "ted", "folder": folder, "seconds": 6.0}])
    assert_harmless(page, tmp_path, [f"Claim {SCRIPT}", f"Rule {IMG}", IMG, QUOTE_AMP,
                                     'x"><img src=x onerror=alert(5)>'])


def test_experiment_templates_are_not_html_escaped(tmp_path):
    # The studies' *.toml.j2 render TOML: a string's quotes, < and & must reach the file as they are.
    class Templated(Study):
        name = "templated"
        folder = tmp_path

    (tmp_path / "e.toml.j2").write_text('name = {{ name | toml }}\nnote = "{{ note }}"\n', encoding="utf-8")
    text = Templated().render("e.toml.j2", name=f"{IMG} {QUOTE_AMP}", note="a<b&c")
    assert text == 'name = "<img src=x onerror=alert(2)> & \\"q\\""\nnote = "a<b&c"\n'
    assert tomllib.loads(text) == {"name": f"{IMG} {QUOTE_AMP}", "note": "a<b&c"}
