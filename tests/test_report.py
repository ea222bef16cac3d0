"""Reports: plots with labelled axes and units, and an HTML page that a
real browser renders with every plot."""

import base64
import re
import subprocess
from pathlib import Path

import pytest
from markupsafe import escape

from aqmlab.experiment import Experiment
from aqmlab.report import metric_label, write_report
from aqmlab.store import Store
from aqmlab.sweep import execute
from conftest import EXAMPLES, chromium, decoded_images, needs_chromium

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_metric_labels_carry_units():
    assert metric_label("queues.bottleneck.qdelay_mean_s") == "queues.bottleneck.qdelay_mean_s (s)"
    assert metric_label("traffic.ftp.goodput_bps") == "traffic.ftp.goodput_bps (b/s)"
    assert metric_label("queues.bottleneck.qlen_mean_pkts").endswith("(packets)")
    assert metric_label("queues.bottleneck.loss_rate").endswith("(fraction)")
    assert metric_label("fairness.jain").endswith("(index, 0-1)")
    assert metric_label("traffic.ftp.timeouts").endswith("(count)")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A 2 x 2 sweep (N = 4, 8 flows; droptail, RED) with traced queues and 2
    replications, and its report."""
    tmp = tmp_path_factory.mktemp("report")
    exp = Experiment.from_dict({
        "name": "small",
        "scenario": str(EXAMPLES / "tcp-dumbbell.toml"),
        "replications": 2,
        "metrics": ["queues.bottleneck.loss_rate", "queues.bottleneck.qdelay_mean_s"],
        "sweep": {
            "duration": ["15s"], "warmup": ["5s"], "trace": [{"interval": "100ms", "queues": ["bottleneck"]}],
            "traffic[0].count": [4, 8],
            "topology.qdisc": {"labels": ["droptail", "red"], "values": [
                {"kind": "droptail", "limit": "300pkt"},
                {"kind": "red", "limit": "300pkt", "min_th": "45pkt", "max_th": "195pkt", "max_p": 0.1,
                 "w_q": 0.002}]},
        },
    })
    store = tmp / "small.duckdb"
    with Store(store) as st:
        assert execute(exp, st)["ok"] == 8
        assert len(list(st.series_dir.glob("*.parquet"))) == 8
    return write_report(store, tmp / "out")


def test_report_files_and_axes(report: Path):
    out = report.parent
    names = sorted(p.stem for p in out.glob("*.png"))
    # 2 metrics, the loss-run distribution, and the time series of
    # replication 0 of each of the 4 points.
    assert len(names) == 2 + 1 + 4
    assert sorted(p.stem for p in out.glob("*.svg")) == names
    svg = (out / "small-queues-bottleneck-qdelay-mean-s.svg").read_text()
    assert "queues.bottleneck.qdelay_mean_s (s)" in svg and "traffic[0].count" in svg
    assert "droptail" in svg and "red" in svg  # the legend, one line per discipline
    series = next(out.glob("small-series-*.svg")).read_text()
    assert "time (s)" in series and "packets" in series
    loss = (out / "small-loss-runs.svg").read_text()
    assert "consecutive losses (packets)" in loss and "fraction of loss runs" in loss


def test_report_page_is_self_contained(report: Path):
    html = report.read_text()
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(images) == 7 and all(base64.b64decode(i).startswith(PNG_MAGIC) for i in images)
    assert not re.search(r'(src|href)="(?!data:)', html)  # nothing loaded from elsewhere
    assert "Experiment small" in html and "engine version" in html
    assert html.count("</tr>") == 1 + 4 * 2  # header + 4 points x 2 metrics
    assert escape('"traffic[0].count"') in html  # the experiment, as given (escaped for HTML)


@needs_chromium
def test_report_renders_in_headless_chromium(report: Path, tmp_path):
    assert decoded_images(report, tmp_path) == (7, 7)
    args = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    shot = tmp_path / "shot.png"
    subprocess.run(args + ["--window-size=1200,3000", f"--screenshot={shot}", report.as_uri()],
                   capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 50_000


def test_cli_report_with_chosen_series(cli, report: Path, tmp_path):
    store = report.parent.parent / "small.duckdb"
    r = cli("report", str(store), "--out", str(tmp_path / "r"), "--series", "1", "-m", "fairness.jain")
    assert r.returncode == 0, r.stderr
    names = sorted(p.stem for p in (tmp_path / "r").glob("*.png"))
    assert len(names) == 3 and "small-fairness-jain" in names and "small-loss-runs" in names
    r = cli("report", str(tmp_path / "none.duckdb"))
    assert r.returncode == 2 and "no such results store" in r.stderr and "Traceback" not in r.stderr
