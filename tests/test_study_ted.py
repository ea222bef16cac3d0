"""Study E (time-driven early discard): the smoke-scale reproduction runs end
to end, its CSVs have the columns and rows the study names, and the numbers
that are known independently (Q_max, fair goodputs, Jain's index, the TDTO
timeout) agree with the formulas."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pandas as pd
import pytest

from aqmlab import models
from aqmlab.studies import reproduce
from aqmlab.studies.framework import VERDICTS

from conftest import needs_chromium, scroll_width

SCHEMES = ["DropTail finite", "DropTail infinite", "TED S1", "TED S2", "TED S3", "DropTail finite 1ACK", "TED S3 1ACK",
           "TED S3 TDTO"]
# The paper's numbering: by decreasing round trip, three per class.
RTT_MS = {f"C{i}": r for i, r in enumerate([16] * 3 + [12] * 3 + [7] * 3 + [4] * 3, start=1)}
CONNECTIONS = [f"C{i}" for i in range(1, 13)]
UNCONGESTED = {"C7", "C11", "C12"}
RATE_UNITS = {"Gbps": 1e9, "Mbps": 1e6, "kbps": 1e3, "bps": 1.0}


def rate_bps(text: str) -> float:
    for unit, scale in RATE_UNITS.items():
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    raise ValueError(text)


def time_s(text: str) -> float:
    for unit, scale in (("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    raise ValueError(text)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ted-smoke")
    reproduce("ted", "smoke", folder)
    return folder


@pytest.fixture(scope="module")
def e1(out):
    return tomllib.loads((out / "experiments" / "e1.toml").read_text())


def csv(out, name):
    return pd.read_csv(out / f"{name}.csv")


def test_report_and_files_exist(out):
    assert (out / "report.html").stat().st_size > 0
    for name in ["flows", "goodput", "fairness", "bottleneck", "e2_uncongested", "e3", "e3_rto", "table1_qmax",
                 "e4_sensitivity", "claims"]:
        assert (out / f"{name}.csv").exists(), name
    for fig in ["e1_normalised_goodput", "e1_jain", "e2_uncongested", "e3_goodput", "e3_rto", "e4_sensitivity"]:
        assert (out / f"{fig}.png").exists() and (out / f"{fig}.svg").exists(), fig
    page = (out / "report.html").read_text()
    assert "SMOKE scale" in page and "95%" in page


def test_columns_and_row_labels(out):
    g = csv(out, "goodput")
    for col in ["scheme", "connection", "goodput_bps", "goodput_bps_ci95_low", "goodput_bps_ci95_high",
                "fair_goodput_bps", "normalised_goodput", "normalised_goodput_ci95_low",
                "normalised_goodput_ci95_high", "n"]:
        assert col in g.columns, col
    assert list(dict.fromkeys(g["scheme"])) == SCHEMES
    for s in SCHEMES:
        assert list(g.loc[g["scheme"] == s, "connection"]) == CONNECTIONS
    f = csv(out, "fairness")
    assert list(f.columns) == ["scheme", "paper_jain", "jain", "ci95_low", "ci95_high", "n"]
    assert list(f["scheme"]) == SCHEMES
    # The paper's Tables III and IV.
    assert list(f["paper_jain"]) == [0.759, 0.84, 0.963, 0.985, 0.991, 0.759, 0.997, 0.997]
    assert list(csv(out, "e3")["scheme"]) == ["DropTail finite", "DropTail finite 1ACK", "DropTail infinite", "TED S3",
                                              "TED S3 1ACK", "TED S3 TDTO"]
    e2 = csv(out, "e2_uncongested")
    assert set(e2["connection"]) == UNCONGESTED and list(dict.fromkeys(e2["scheme"])) == SCHEMES
    b = csv(out, "bottleneck")
    assert list(b["scheme"]) == SCHEMES
    assert {"utilization", "qdelay_mean_s", "loss_rate", "drops_expired"} <= set(b.columns)


def test_values_in_range(out):
    fl = csv(out, "flows")
    assert (fl["goodput_bps"] >= 0).all() and (fl["goodput_bps"] <= 1e9).all()
    assert dict(zip(fl["connection"], fl["rtt_ms"])) == RTT_MS
    # Each row is the connection it names: its own sender and receiver hosts.
    assert (fl["src"] == fl["connection"] + "s").all() and (fl["dst"] == fl["connection"] + "d").all()
    on_c = fl[fl["crosses_C"]]
    # Nine connections share C: together they cannot deliver more than 300 Mb/s of payload.
    assert (on_c.groupby(["scheme", "replication"])["goodput_bps"].sum() <= 300e6).all()
    assert set(fl.loc[~fl["crosses_C"], "connection"]) == UNCONGESTED
    j = csv(out, "fairness")["jain"]
    assert ((j >= 1 / 9 - 1e-9) & (j <= 1 + 1e-9)).all()
    b = csv(out, "bottleneck")
    assert ((b["utilization"] >= 0) & (b["utilization"] <= 1 + 1e-9)).all()
    # Drop-tail queues never expire a packet; TED queues do under congestion.
    assert (b.loc[b["scheme"].str.startswith("DropTail"), "drops_expired"] == 0).all()
    assert (b.loc[b["scheme"].str.startswith("DropTail infinite"), "loss_rate"] == 0).all()
    assert (b.loc[b["scheme"].str.startswith("TED"), "drops_expired"] > 0).all()


def test_buffers_are_qmax(e1):
    """The buffer of every scheme at C is D_max times the capacity of the
    other input ports of R2 (aqmlab.models.ted_max_queue), D_max the largest
    deadline of the point (DropTail finite: S1's)."""
    topo = e1["scenario"]["topology"]
    c_index = [l["name"] for l in topo["links"]].index("C")
    router = c_index  # link i joins R(i) -> R(i+1)
    inputs = [rate_bps(h["rate"]) for h in topo["hosts"] if h["router"] == router]
    inputs += [rate_bps(topo["links"][router - 1]["rate"])]  # from R(router-1)
    axis = e1["sweep"][f"topology.links[{c_index}].qdisc"]
    deadlines = [e1["sweep"][f"traffic[{k}].ted_deadline"]["values"] for k in range(4)]
    labels = axis["labels"]
    for i, (label, q) in enumerate(zip(labels, axis["values"])):
        if label == "DropTail infinite":
            assert q == {"kind": "droptail", "limit": "inf"}
            continue
        d_max = max(time_s(d[i]) for d in deadlines)
        if label.startswith("TED"):
            s = label.split()[1]
            expected = {"S1": 1000e-6, "S2": 900e-6, "S3": 900e-6}[s]
            assert d_max == pytest.approx(expected)
        else:
            d_max = 1000e-6
        assert q["limit"] == f"{int(models.ted_max_queue(d_max, inputs))}B", label
    # With R2's 5 ports of 1 Gb/s, 1 ms is 625 kB.
    assert axis["values"][labels.index("TED S1")]["limit"] == "625000B"


def test_fair_goodput_is_the_model(out, e1):
    fl = csv(out, "flows")
    # The topology gives every connection its round-trip class exactly.
    assert np.allclose(fl["rtt_prop_s"], fl["rtt_ms"] / 1e3, rtol=0, atol=1e-9)
    window = float(e1["scenario"]["traffic"][0]["tcp"]["rwnd"].removesuffix("pkt"))
    one = fl[(fl["scheme"] == "TED S3") & (fl["replication"] == 0)]
    on_c = one[one["crosses_C"]]
    expected = models.fair_goodput(300e6, on_c["rtt_prop_s"].to_numpy(), window, 1500, 40)
    assert np.allclose(on_c["fair_goodput_bps"], expected, rtol=1e-5)
    g = csv(out, "goodput")
    merged = g.merge(one[["connection", "fair_goodput_bps"]], on="connection", suffixes=("", "_flows"))
    assert np.allclose(merged["fair_goodput_bps"], merged["fair_goodput_bps_flows"], rtol=1e-5)
    assert np.allclose(fl["normalised_goodput"], fl["goodput_bps"] / fl["fair_goodput_bps"], rtol=1e-4)


def test_jain_recomputed_from_flows(out):
    fl = csv(out, "flows")
    f = csv(out, "fairness").set_index("scheme")
    for s in SCHEMES:
        per_rep = [models.jain_index(g.loc[g["crosses_C"], "normalised_goodput"].to_numpy())
                   for _, g in fl[fl["scheme"] == s].groupby("replication")]
        assert len(per_rep) == f.loc[s, "n"] == 2
        assert f.loc[s, "jain"] == pytest.approx(float(np.mean(per_rep)), rel=1e-4), s


def test_rto_trace(out):
    """Under TDTO, C10 (4 ms, crossing only C) has a fixed RTO of its round
    trip plus the transmission of a 1500 B packet and a 40 B ACK on each link
    both ways plus its 120 us budget once (ebd), doubled on repeated timeouts;
    ns-2's estimate never goes below its 200 ms minimum."""
    rto = csv(out, "e3_rto")
    tdto = rto.loc[rto["scheme"] == "TED S3 TDTO", "rto_s"]
    tx = sum(8 * size / r for size in (1500, 40) for r in (1e9, 300e6, 1e9))
    base = 4e-3 + tx + 120e-6
    seen = tdto[tdto < 2.9]  # before the first ACK the initial 3 s RTO holds
    assert seen.min() == pytest.approx(base, abs=1e-8)
    ratios = seen / base
    assert np.allclose(ratios, np.round(ratios), rtol=1e-4)  # base x 2^k
    dt = rto.loc[(rto["scheme"] == "DropTail finite") & (rto["time_s"] > 0.5), "rto_s"]
    assert len(dt) > 0 and (dt >= 0.2 - 1e-12).all()
    assert math.isfinite(tdto.max())


def test_e1_uses_ebd_and_the_papers_deadlines(e1):
    """TED runs in ebd mode (the paper's simulations) with Table II's
    deadlines, by class in decreasing round trip (16, 12, 7, 4 ms)."""
    sweep = e1["sweep"]
    labels = sweep["topology.links[2].qdisc"]["labels"]
    for i, label in enumerate(labels):
        if label.startswith("TED"):
            assert sweep["topology.links[2].qdisc"]["values"][i]["mode"] == "ebd"
    got = {label: [time_s(sweep[f"traffic[{k}].ted_deadline"]["values"][i]) * 1e6 for k in range(4)]
           for i, label in enumerate(labels) if label.startswith("TED")}
    assert got == {"TED S1": pytest.approx([1000, 625, 500, 120]), "TED S2": pytest.approx([900, 600, 550, 120]),
                   "TED S3": pytest.approx([900, 750, 650, 120])}
    groups = e1["scenario"]["traffic"]
    assert [g["name"] for g in groups] == ["rtt16ms", "rtt12ms", "rtt7ms", "rtt4ms"]


def test_e4_changes_one_thing_at_a_time(out):
    """Every e4 point is the default with one change: spot-check the
    window, the link rate (and so Q_max at C) and the deadline mode."""
    e4 = tomllib.loads((out / "experiments" / "e4-sensitivity.toml").read_text())
    topo, traffic = e4["sweep"]["topology"], e4["sweep"]["traffic"]
    assert topo["labels"] == traffic["labels"]
    point = {label: (t, tr) for label, t, tr in zip(topo["labels"], topo["values"], traffic["values"])}
    default_t, default_tr = point["default: TED S3"]
    assert point["window 20: TED S3"][0] == default_t
    assert {g["tcp"]["rwnd"] for g in point["window 20: TED S3"][1]} == {"20pkt"}
    fast_t = point["links 10 Gb/s: DropTail finite"][0]
    # R2's inputs: link B and four hosts, all at 10 Gb/s: 1 ms x 50 Gb/s / 8.
    assert fast_t["links"][2]["qdisc"] == {"kind": "droptail", "limit": "6250000B"}
    assert point["lbd: TED S3"][0]["links"][2]["qdisc"]["mode"] == "lbd"
    assert point["lbd: TED S3"][1] == default_tr
    assert not any(label.startswith("lbd: DropTail") for label in topo["labels"])
    table = csv(out, "e4_sensitivity")
    assert len(table) == len(topo["labels"])
    assert ((table["jain"] >= 1 / 9 - 1e-9) & (table["jain"] <= 1 + 1e-9)).all()


def test_claims_and_table_i(out):
    claims = csv(out, "claims")
    assert set(claims["verdict"]) <= set(VERDICTS)
    assert len(claims) >= 12
    t1 = csv(out, "table1_qmax").set_index("deadline_ms")
    # (J - 1) D C: 1 ms at 8 ports of 10 Gb/s is 7 x 1.25 MB.
    assert t1.loc[1.0, "ports_8_MB"] == pytest.approx(8.75)


def test_jain_verdict_rule():
    """The paper's value within aqmlab's interval +- 0.02 is reproduced, far
    outside it is not, and an interval wider than +-0.05 decides nothing."""
    from aqmlab.studies.ted import Ted

    def verdict(low, high):
        fj = pd.DataFrame([{"scheme": "TED S3", "paper_jain": 0.991, "jain": (low + high) / 2, "ci95_low": low,
                            "ci95_high": high}]).set_index("scheme")
        return Ted._jain_claim(fj, "TED S3")["verdict"]

    assert verdict(0.95, 0.975) == "reproduced"        # 0.991 <= 0.975 + 0.02
    assert verdict(0.92, 0.96) == "not reproduced"     # 0.991 > 0.98
    assert verdict(0.36, 0.38) == "not reproduced"
    assert verdict(0.40, 0.99) == "inconclusive"


def test_report_opens_with_the_claims_and_folds_the_raw_rows(out):
    """The claims come before the first result section, the per-connection
    rows of every run are folded at the end, and there is a contents line."""
    page = (out / "report.html").read_text()
    claims, e1, raw = (page.index('id="s-the-paper-s-claims"'), page.index('id="s-e1-'),
                       page.index('id="s-raw-data"'))
    assert claims < e1 < raw
    assert '<nav class="toc">' in page
    assert "<details><summary>" in page[raw:] and 'id="flows"' in page[raw:]


@needs_chromium
def test_report_needs_no_sideways_scrolling_at_1280_px(out, tmp_path):
    assert scroll_width(out / "report.html", tmp_path) <= 1280
