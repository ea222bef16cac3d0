"""aqmlab against ns-2.35: the exported Tcl script, and both simulators on
the same scenarios. The tests that run ``ns`` are skipped where it is not
installed (``./dev test`` installs Debian's ns2 when it can)."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab import ns2
from aqmlab.cli import main
from aqmlab.exceptions import ConfigError

needs_ns = pytest.mark.skipif(ns2.find_ns() is None, reason="ns-2 ('ns') is not installed")


def dumbbell(qdisc: dict, traffic: list[dict], duration: str = "20s", warmup: str = "5s") -> aqmlab.Scenario:
    return aqmlab.Scenario.from_dict({
        "name": "ns2-check", "duration": duration, "warmup": warmup,
        "topology": {
            "kind": "dumbbell",
            "senders": [{"delay": "10ms"}, {"delay": "20ms"}, {"delay": "30ms"}],
            "access_rate": "100Mbps",
            "bottleneck": {"rate": "10Mbps", "delay": "20ms"},
            "qdisc": qdisc,
        },
        "traffic": traffic,
    })


def test_export_refuses_what_ns2_lacks_at_its_key():
    sc = dumbbell({"kind": "codel"}, [{"name": "f", "kind": "ftp", "count": 2,
                                        "packet_size": {"dist": "uniform", "min": "1400B", "max": "1628B"}}])
    with pytest.raises(ConfigError) as e:
        ns2.export(sc)
    assert [p for p, _ in e.value.problems] == ["topology.qdisc.kind", "traffic[0].packet_size"]


def test_export_refuses_gred_to_the_limit_which_ns2_lacks():
    red = {"kind": "red", "limit": "20pkt", "min_th": "3pkt", "max_th": "13pkt", "max_p": 0.1, "w_q": 0.002,
           "gentle": "to_limit"}
    sc = dumbbell(red, [{"name": "f", "kind": "ftp", "count": 2, "packet_size": "1000B"}])
    with pytest.raises(ConfigError) as e:
        ns2.export(sc)
    assert [p for p, _ in e.value.problems] == ["topology.qdisc.gentle"]
    assert "no ns-2.35 counterpart" in e.value.problems[0][1]


def test_cli_export_writes_the_script_or_exits_2(tmp_path, capsys):
    good = tmp_path / "good.toml"
    good.write_text('name = "x"\nduration = "5s"\n[topology]\nkind = "dumbbell"\nsenders = 1\n'
                    'access_rate = "10Mbps"\naccess_delay = "1ms"\nbottleneck = { rate = "1Mbps", delay = "10ms" }\n'
                    '[topology.qdisc]\nkind = "droptail"\nlimit = "20pkt"\n'
                    '[[traffic]]\nname = "c"\nkind = "cbr"\ncount = 1\nrate = "500kbps"\nsize = "500B"\n')
    out = tmp_path / "run.tcl"
    with pytest.raises(SystemExit) as e:
        main(["export", "ns2", str(good), "--seed", "3", "-o", str(out)])
    assert e.value.code == 0
    text = out.read_text()
    assert "set aq(seed) 3\n" in text and "$aqlq(0) set limit_ 21\n" in text
    bad = tmp_path / "bad.toml"
    bad.write_text(good.read_text().replace('"droptail"', '"pie"'))
    out2 = tmp_path / "bad.tcl"
    with pytest.raises(SystemExit) as e:
        main(["export", "ns2", str(bad), "-o", str(out2)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "error: topology.qdisc.kind: \"pie\" has no counterpart in ns-2.35" in err
    assert "Traceback" not in err
    assert not out2.exists()


@needs_ns
@pytest.mark.parametrize("variant, limit, delayed_ack", [
    ("reno", "30pkt", False), ("newreno", "30pkt", False), ("sack", "30pkt", False),
    ("sack", "30pkt", True), ("newreno", "25000B", True)])
def test_one_flow_through_drop_tail_is_packet_for_packet_the_same(variant, limit, delayed_ack):
    """Without randomness (one flow, a fixed start, drop-tail) both simulators
    make the same decisions: every counter agrees exactly, including the
    losses of slow start and how each variant recovers from them, and the
    buffer limits in packets and in bytes mean the same."""
    sc = dumbbell({"kind": "droptail", "limit": limit},
                  [{"name": "f", "kind": "ftp", "count": 1, "start": "0s", "packet_size": "1000B",
                    "tcp": {"variant": variant, "delayed_ack": delayed_ack}}], duration="10s", warmup="0s")
    a = aqmlab.run(sc, seed=1).summary
    b = ns2.run_ns(sc, seed=1)
    qa, qb = a["queues"]["bottleneck"], b["queues"]["bottleneck"]
    for k in ("arrivals", "departures", "drops"):
        assert qa[k] == qb[k], k
    assert qa["consecutive_loss"]["hist"] == qb["consecutive_loss"]["hist"]
    fa, fb = a["flows"][0], b["flows"][0]
    for k in ("sent", "delivered", "drops", "retransmits", "timeouts", "delivered_bytes"):
        assert fa[k] == fb[k], k
    # ns-2's trace prints times in whole microseconds, so time averages
    # computed from it carry errors of that order; aqmlab's are exact.
    for k in ("qdelay_mean_s", "qlen_mean_pkts", "utilization"):
        assert qa[k] == pytest.approx(qb[k], rel=1e-4), k


@needs_ns
def test_red_dumbbell_agrees_with_ns2_within_the_intervals():
    """Eight SACK flows with delayed ACKs and CBR through RED: no headline
    metric differs significantly by more than 2% over 6 replications."""
    sc = dumbbell({"kind": "red", "limit": "100pkt", "min_th": "10pkt", "max_th": "40pkt", "max_p": 0.1,
                   "w_q": 0.002},
                  [{"name": "ftp", "kind": "ftp", "count": 8, "packet_size": "1000B",
                    "start": {"dist": "uniform", "min": "0s", "max": "5s"},
                    "tcp": {"variant": "sack", "delayed_ack": True}},
                   {"name": "cbr", "kind": "cbr", "count": 2, "rate": "500kbps", "size": "500B",
                    "class": "realtime"}], duration="40s", warmup="10s")
    rows, aq, ns = ns2.crosscheck(sc, replications=6, jobs=2)
    heads = {r.metric: r for r in rows if r.headline}
    assert "queues.bottleneck.loss_rate" in heads and "traffic.ftp.goodput_bps" in heads
    failing = [ns2.format_table([r]) for r in heads.values() if r.fails]
    assert not failing, "\n".join(failing)
    assert all(s["simulator"] == "ns-2" for s in ns)


def paced_onoff(count: int, rate: str, on: dict, off: dict, variant: str = "reno", **extra) -> dict:
    """An ``onoff`` group over TCP with ``rate``: ns-2's on/off application on a TCP agent."""
    return {"name": "o", "kind": "onoff", "transport": "tcp", "rate": rate, "count": count,
            "packet_size": "1000B", "on": on, "off": off, "tcp": {"variant": variant}, **extra}


@needs_ns
@pytest.mark.parametrize("variant, rate, limit", [
    ("reno", "2Mbps", "30pkt"), ("sack", "20Mbps", "20pkt"), ("newreno", "500kbps", "30pkt")])
def test_one_paced_onoff_tcp_flow_is_packet_for_packet_the_same(variant, rate, limit):
    """Pareto ON and OFF times of shape 1e9 are constant for all purposes
    (700 ms and 300 ms), so both simulators' applications make the same
    packets at the same times and their TCP agents send them alike: every
    counter agrees, including at 20 Mb/s, where the window holds data back
    in the sender and slow start overflows the buffer."""
    const = lambda mean: {"dist": "pareto", "shape": 1e9, "mean": mean}  # noqa: E731
    sc = dumbbell({"kind": "droptail", "limit": limit},
                  [paced_onoff(1, rate, const("700ms"), const("300ms"), variant, start="0s")],
                  duration="10s", warmup="0s")
    a = aqmlab.run(sc, seed=1).summary
    b = ns2.run_ns(sc, seed=1)
    qa, qb = a["queues"]["bottleneck"], b["queues"]["bottleneck"]
    for k in ("arrivals", "departures", "drops"):
        assert qa[k] == qb[k], k
    fa, fb = a["flows"][0], b["flows"][0]
    for k in ("sent", "delivered", "drops", "retransmits", "timeouts", "delivered_bytes"):
        assert fa[k] == fb[k], k
    assert qa["utilization"] == pytest.approx(qb["utilization"], rel=1e-4)
    if rate == "20Mbps":
        assert qa["drops"] > 0


@needs_ns
def test_paced_onoff_tcp_through_red_agrees_with_ns2_within_the_intervals():
    """Twenty exponential on/off TCP sources of 1 Mb/s (ON and OFF 500 ms
    on average, 10 Mb/s offered on average) through RED: no headline
    metric differs significantly by more than 2% over 6 replications."""
    exp = lambda mean: {"dist": "exponential", "mean": mean}  # noqa: E731
    sc = dumbbell({"kind": "red", "limit": "100pkt", "min_th": "10pkt", "max_th": "40pkt", "max_p": 0.1,
                   "w_q": 0.002},
                  [paced_onoff(20, "1Mbps", exp("500ms"), exp("500ms"),
                               start={"dist": "uniform", "min": "0s", "max": "1s"})],
                  duration="20s", warmup="4s")
    rows, aq, ns = ns2.crosscheck(sc, replications=6, jobs=2)
    heads = {r.metric: r for r in rows if r.headline}
    assert "queues.bottleneck.loss_rate" in heads and "traffic.o.goodput_bps" in heads
    assert heads["queues.bottleneck.loss_rate"].aqmlab_mean > 0.001
    failing = [ns2.format_table([r]) for r in heads.values() if r.fails]
    assert not failing, "\n".join(failing)


def test_holm_adjustment_matches_a_hand_computation():
    # Sorted 0.01, 0.02, 0.04 with m = 3: 3 x 0.01 = 0.03, max(0.03, 2 x 0.02)
    # = 0.04, max(0.04, 1 x 0.04) = 0.04; back in the given order.
    assert ns2.holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert ns2.holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])


@needs_ns
def test_crosscheck_keeps_both_simulators_runs_in_the_store(tmp_path):
    from aqmlab.store import Store
    from aqmlab.sweep import table

    sc = dumbbell({"kind": "droptail", "limit": "50pkt"},
                  [{"name": "cbr", "kind": "cbr", "count": 3, "rate": "4Mbps", "size": "1000B"}],
                  duration="10s", warmup="2s")
    store = tmp_path / "x.duckdb"
    ns2.crosscheck(sc, replications=2, jobs=2, store=str(store))
    with Store(store, read_only=True) as st:
        sims = st.db.execute("SELECT simulator, count(*) FROM runs GROUP BY simulator ORDER BY 1").fetchall()
        t = table(st, metrics=["queues.bottleneck.loss_rate"])
    assert sims == [("aqmlab", 2), ("ns-2", 2)]
    assert list(t["simulator"]) == ["aqmlab", "ns-2"] and list(t["n"]) == [2, 2]
    # 12 Mb/s of CBR into 10 Mb/s: both lose about a sixth.
    assert list(t["mean"]) == pytest.approx([1 / 6, 1 / 6], rel=0.05)


def test_a_store_from_before_the_simulator_column_is_upgraded(tmp_path):
    import duckdb

    from aqmlab.store import Store

    path = tmp_path / "old.duckdb"
    Store(path).close()
    db = duckdb.connect(str(path))
    db.execute("ALTER TABLE runs DROP COLUMN simulator")
    db.execute("INSERT INTO runs VALUES ('k', 'e', 0, '{}', 0, 1, '0.3.1', 'h', 'ok', NULL, 0.1, '{}', '{}')")
    db.close()
    with Store(path, read_only=True) as st:  # read as it is
        assert st.db.execute("SELECT count(*) FROM runs").fetchone() == (1,)
    with Store(path) as st:  # opened for writing: the column is added, old runs are aqmlab's
        assert st.db.execute("SELECT simulator FROM runs").fetchall() == [("aqmlab",)]
def test_file_transfers_are_packet_for_packet_the_same():
    """Repeated 300-packet transfers through a small drop-tail buffer, with
    fixed sizes and gaps: each transfer on new agents, losing packets in slow
    start, ends when its last packet is delivered, and the next starts a gap
    later; both simulators agree on every packet and every transfer time."""
    sc = dumbbell({"kind": "droptail", "limit": "20pkt"},
                  [{"name": "f", "kind": "file", "count": 1, "start": "0s", "packet_size": "1000B",
                    "size": "300KB", "gap": "2s", "tcp": {"variant": "newreno"}}], duration="10s", warmup="0s")
    a = aqmlab.run(sc, seed=1).summary
    b = ns2.run_ns(sc, seed=1)
    assert a["queues"]["bottleneck"]["arrivals"] == b["queues"]["bottleneck"]["arrivals"]
    ga, gb = a["traffic"]["f"], b["traffic"]["f"]
    for k in ("sent", "delivered", "drops", "retransmits", "timeouts"):
        assert ga[k] == gb[k], k
    assert ga["drops"] > 0
    assert ga["transfers"]["count"] == gb["transfers"]["count"] >= 3
    assert ga["transfers"]["mean_s"] == pytest.approx(gb["transfers"]["mean_s"], rel=1e-9)


@needs_ns
@pytest.mark.parametrize("size", [1, 30])
def test_web_objects_on_an_idle_path_take_the_same_time(size):
    """One session, one client and one server: WebTraf's request and response
    connections (SYN, request, SYN, response, delayed ACKs) take exactly as
    long in both, object by object."""
    sc = dumbbell({"kind": "droptail", "limit": "100pkt"},
                  [{"name": "w", "kind": "web", "count": 1, "start": "0s", "packet_size": "1000B",
                    "src": ["s0"], "dst": ["d0"], "replace": False, "pages_per_session": 3,
                    "inter_page": "1s", "object_size": size,
                    "tcp": {"variant": "sack", "delayed_ack": True}}], duration="10s", warmup="0s")
    a = aqmlab.run(sc, seed=1).summary["traffic"]["w"]
    b = ns2.run_ns(sc, seed=1)["traffic"]["w"]
    for k in ("sent", "delivered", "goodput_bps", "request_goodput_bps"):
        assert a[k] == b[k], k
    assert a["objects"]["count"] == b["objects"]["count"] == 3
    for k in ("objects", "pages"):
        assert a[k]["mean_s"] == pytest.approx(b[k]["mean_s"], rel=1e-9), k
    assert a["active_connections_mean"] == pytest.approx(b["active_connections_mean"], rel=1e-9)


def _agrees(sc, replications=6):
    rows, aq, ns = ns2.crosscheck(sc, replications=replications, jobs=2)
    heads = {r.metric: r for r in rows if r.headline}
    failing = [ns2.format_table([r]) for r in heads.values() if r.fails]
    assert not failing, "\n".join(failing)
    return heads, {r.metric: r for r in rows}


@needs_ns
def test_web_sessions_agree_with_webtraf_within_the_intervals():
    """WebTraf sessions through RED (2 objects a page, exponential object
    sizes, SACK with delayed ACKs): no headline metric differs significantly
    by more than 2%, and neither do the object and page counts."""
    sc = dumbbell({"kind": "red", "limit": "100pkt", "min_th": "10pkt", "max_th": "40pkt", "max_p": 0.1,
                   "w_q": 0.002},
                  [{"name": "web", "kind": "web", "count": 50, "packet_size": "1000B", "replace": False,
                    "start": {"dist": "uniform", "min": "0s", "max": "3s"},
                    "pages_per_session": 1000, "inter_page": {"dist": "exponential", "mean": "1s"},
                    "objects_per_page": 2, "object_size": {"dist": "exponential", "mean": 10},
                    "tcp": {"variant": "sack", "delayed_ack": True}}], duration="16s", warmup="4s")
    heads, rows = _agrees(sc)
    assert "traffic.web.goodput_bps" in heads
    for k in ("traffic.web.objects.count", "traffic.web.pages.count", "traffic.web.objects.mean_s"):
        assert not (rows[k].significant and abs(rows[k].diff) > ns2.TOLERANCE), ns2.format_table([rows[k]])


@needs_ns
def test_file_transfers_agree_within_the_intervals():
    """Twelve flows of repeated 100 KB transfers with exponential gaps
    through RED: no headline metric differs significantly by more than 2%.
    (Sizes are whole packets: ns-2 pads a transfer's last packet, which
    changes how ACKs collide on the way back.)"""
    sc = dumbbell({"kind": "red", "limit": "100pkt", "min_th": "10pkt", "max_th": "40pkt", "max_p": 0.1,
                   "w_q": 0.002},
                  [{"name": "file", "kind": "file", "count": 12, "packet_size": "1000B", "size": "100KB",
                    "start": {"dist": "uniform", "min": "0s", "max": "3s"},
                    "gap": {"dist": "exponential", "mean": "500ms"}, "tcp": {"variant": "newreno"}}],
                  duration="20s", warmup="4s")
    heads, rows = _agrees(sc)
    assert "traffic.file.goodput_bps" in heads and rows["traffic.file.transfers.count"].ns2_mean > 50


@needs_ns
def test_batch_poisson_agrees_within_the_intervals():
    """Batches of 1 to 8 packets at Poisson times beside SACK flows through
    drop-tail: no headline metric differs significantly by more than 2%."""
    sc = dumbbell({"kind": "droptail", "limit": "30pkt"},
                  [{"name": "batch", "kind": "batch-poisson", "count": 3, "size": "1000B",
                    "batch": {"dist": "uniform", "min": 1, "max": 8}, "rate": "2.5Mbps"},
                   {"name": "ftp", "kind": "ftp", "count": 4, "packet_size": "1000B", "tcp": {"variant": "sack"}}],
                  duration="25s", warmup="5s")
    heads, _ = _agrees(sc)
    assert "traffic.batch.loss_rate" in heads
