"""The TCP traffic of emulation (issue 21): Linux's CUBIC and BBR by
`tcp.variant`, ON/OFF over TCP (with and without a rate), repeated `file`
transfers, HTTP/1.1 and web sessions, driven by the simulator's own
application machines (`aqmlab_sim::app`).

Each emulation is short (4 s of real time) on a dumbbell whose bottleneck
is 10 Mb/s with a round trip of 2 x (1 + 4 + 0.1) ms = 10.2 ms (access,
bottleneck and the receivers' default access delay), so TCP reaches the
link's rate within a few round trips and the expected values below are
plain arithmetic on the link. Needs root and network namespaces; skipped
with the reason otherwise.
"""

import os
from pathlib import Path

import pytest

import aqmlab
from aqmlab import emulation
from conftest import run_cli

WHY = emulation.unavailable()
pytestmark = pytest.mark.emulation
needs_emulation = pytest.mark.skipif(WHY is not None, reason=f"emulation impossible here: {WHY}")

RATE = 10e6
# Linux sends TCP timestamps: 1448 payload bytes in each 1500-byte packet.
PAYLOAD_SHARE = 1448 / 1500

DUMBBELL = """
name = "emu-traffic"
duration = "{duration}"
warmup = "{warmup}"
[topology]
kind = "dumbbell"
senders = [ {{ delay = "1ms" }}, {{ delay = "1ms" }} ]
access_rate = "100Mbps"
bottleneck = {{ rate = "10Mbps", delay = "4ms" }}
qdisc = {{ kind = "droptail", limit = "100pkt" }}
"""


def scenario(tmp_path: Path, traffic: str, duration: str = "4s", warmup: str = "0s") -> aqmlab.Scenario:
    path = tmp_path / "s.toml"
    path.write_text(DUMBBELL.format(duration=duration, warmup=warmup) + traffic)
    return aqmlab.Scenario.load(path)


def ours() -> list[str]:
    netns = Path("/run/netns")
    return sorted(p.name for p in netns.iterdir() if p.name.startswith(f"aqm{os.getpid()}-")) if netns.exists() else []


CUBIC_BBR = """
[[traffic]]
name = "cubic"
kind = "ftp"
src = "s0"
start = "0s"
tcp = { variant = "cubic" }
[[traffic]]
name = "bbr"
kind = "ftp"
src = "s1"
start = "0s"
tcp = { variant = "bbr" }
"""


def test_the_simulator_runs_cubic_and_bbr_with_its_linux_style_family(tmp_path):
    # The scenario the emulator runs on the kernel's modules runs in the
    # simulator too: both flows move data and together fill the link.
    s = aqmlab.run(scenario(tmp_path, CUBIC_BBR)).summary
    flows = {f["group"]: f for f in s["flows"]}
    assert flows["cubic"]["delivered_bytes"] > 0 and flows["bbr"]["delivered_bytes"] > 0
    assert s["queues"]["bottleneck"]["utilization"] > 0.9


@needs_emulation
def test_cubic_and_bbr_are_the_kernels_congestion_controls(tmp_path):
    offered = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    if not {"cubic", "bbr"} <= set(offered):
        pytest.skip(f"this kernel offers {offered}")
    s = aqmlab.emulate(scenario(tmp_path, CUBIC_BBR)).summary
    assert ours() == []
    flows = {f["group"]: f for f in s["flows"]}
    # getsockopt(TCP_CONGESTION) on each sender reads back its variant.
    assert flows["cubic"]["congestion_control"] == "cubic"
    assert flows["bbr"]["congestion_control"] == "bbr"
    # Both moved data, and together they kept the link busy.
    assert flows["cubic"]["delivered_bytes"] > 0 and flows["bbr"]["delivered_bytes"] > 0
    assert s["queues"]["bottleneck"]["utilization"] > 0.9


ONOFF = """
[[traffic]]
name = "onoff"
kind = "onoff"
transport = "tcp"
on = "1s"
off = "1s"
start = "0s"
tcp = { variant = "sack" }
"""


@needs_emulation
def test_tcp_on_off_sends_only_during_on_periods(tmp_path):
    # ON [0, 1), OFF [1, 2), ON [2, 3), OFF [3, 4), ON [4, 5) s; the window
    # [1, 5) s holds 2 s of ON out of 4.
    trace = 'trace = { interval = "100ms", queues = ["bottleneck"] }\n'
    path = tmp_path / "onoff.toml"
    path.write_text(trace + DUMBBELL.format(duration="5s", warmup="1s") + ONOFF)
    res = aqmlab.emulate(aqmlab.Scenario.load(path))
    s = res.summary
    assert ours() == []
    (f,) = s["flows"]
    assert f["congestion_control"] == "reno"
    # No data enters the bottleneck in the late part of an OFF period (the
    # first 0.3 s let the queue and the last window drain); a stray
    # retransmission at most.
    # Sample k is at k x 100 ms.
    arrivals = list(res.series["bottleneck.arrivals"])
    for off in (10, 30):
        a, b = arrivals[off + 3], arrivals[off + 9]
        assert b - a <= 2, (off, a, b)
        assert arrivals[off] - arrivals[off - 5] > 300, "data arrived in the ON period before"
    # A lone flow has the whole link while ON: 10 Mb/s x 2 s of payload,
    # less a few round trips of slow start after each idle period (Linux
    # restarts from its initial window after an idle RTO), plus what an ON
    # period leaves in flight when it ends, at most the queue (100
    # packets), the path (10) and the socket's unsent bytes (2 x 16 KB),
    # twice (at 1 s and 3 s).
    on = RATE / 8 * 2.0 * PAYLOAD_SHARE
    carried = 110 * 1448 + 2 * 16384
    assert 0.92 * on <= f["delivered_bytes"] <= on + 2 * carried
    # The link was busy about half of the window, not all of it.
    drain = carried * 8 / RATE
    assert 0.92 * 0.5 <= s["queues"]["bottleneck"]["utilization"] <= (2 + 2 * drain) / 4


FILE = """
[[traffic]]
name = "file"
kind = "file"
size = "100KB"
gap = "0.5s"
start = "0s"
tcp = { variant = "cubic" }
"""


@needs_emulation
def test_file_transfers_complete_with_their_size(tmp_path):
    s = aqmlab.emulate(scenario(tmp_path, FILE)).summary
    assert ours() == []
    (f,) = s["flows"]
    size = 100_000
    n = f["transfers"]
    # Each transfer takes at least its bytes' time on the link (80 ms of
    # payload at 10 Mb/s) plus the handshake's round trip (10.2 ms), and at
    # most (asserted below) 0.5 s; a 0.5 s gap follows each. The n-th ends
    # at n x cycle - 0.5 s <= 4 s, a cycle between 0.590 and 1 s: n from
    # 4.5 / 1 to 4.5 / 0.590, rounded down.
    assert 4 <= n <= 7, n
    # Every byte of the finished transfers arrived; the one under way when
    # the run ended adds less than a transfer.
    assert n * size <= f["transfer_bytes"] < (n + 1) * size
    t = s["traffic"]["file"]["transfers"]
    assert t["count"] == n
    assert t["p50_s"] >= size * 8 / RATE + 0.0102
    assert t["p50_s"] < 0.5
    # `completion_s` is for a single transfer, as in the simulator.
    assert f["completion_s"] is None


@needs_emulation
def test_paced_tcp_on_off_delivers_its_schedules_packets_as_the_simulator(tmp_path):
    # 1000-byte packets at 1 Mb/s (8 ms apart) while ON: bursts of
    # round(1 s / 8 ms) = 125 packets, the first packet of each an OFF
    # period plus an interval after the previous burst (module docs of
    # aqmlab_sim::scenario::TcpOnOff): at 1.008 .. 2.0 s and 3.008 .. 4.0 s
    # in a 5 s run. The 10 Mb/s path never holds them back, so 250 packets'
    # payload arrive, but for the last one if it is still on its way at
    # the end (6 ms of one-way delay after 4.0 s < 5 s: it is not).
    text = ONOFF.replace('off = "1s"', 'off = "1s"\nrate = "1Mbps"\npacket_size = "1000B"')
    sc = scenario(tmp_path, text, duration="5s")
    emulated = aqmlab.emulate(sc).summary
    assert ours() == []
    (f,) = emulated["flows"]
    assert f["delivered_bytes"] == 250 * 1000
    # The simulator's sender carries the same packets.
    (g,) = aqmlab.run(sc).summary["flows"]
    assert g["delivered_bytes"] == f["delivered_bytes"]


TRACED = """
trace = { interval = "100ms", queues = ["bottleneck"], flows = ["bulk[0]"] }
"""

TRACED_TRAFFIC = """
[[traffic]]
name = "bulk"
kind = "ftp"
start = "0s"
tcp = { variant = "cubic" }
"""


@needs_emulation
def test_trace_samples_tcp_info_and_the_queue_in_the_simulators_columns(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(TRACED.strip() + "\n" + DUMBBELL.format(duration="3s", warmup="0s") + TRACED_TRAFFIC)
    res = aqmlab.emulate(aqmlab.Scenario.load(path))
    assert ours() == []
    series = res.series
    # The simulator's columns (crates/sim/src/sim/trace.rs), plus Linux's
    # retransmission count.
    for col in ["time_s", "bottleneck.backlog_pkts", "bottleneck.backlog_bytes", "bottleneck.arrivals",
                "bottleneck.drops", "bulk[0].cwnd", "bulk[0].ssthresh", "bulk[0].srtt_s", "bulk[0].rto_s",
                "bulk[0].retransmits"]:
        assert col in series.columns, col
    # Samples every 100 ms from zero up to and including the end, as the
    # simulator takes them.
    assert list(series["time_s"]) == pytest.approx([k / 10 for k in range(31)])
    late = series[series["time_s"] >= 1.0]
    # A bulk flow: its window has grown past the initial 10 packets, its
    # smoothed RTT is at least the path's 10.2 ms, and the queue has packets.
    assert (late["bulk[0].cwnd"] > 10).all()
    assert (late["bulk[0].srtt_s"] >= 0.0102).all()
    assert late["bottleneck.backlog_pkts"].max() > 0
    assert late["bottleneck.arrivals"].is_monotonic_increasing


@needs_emulation
def test_a_traced_bbr_flow_reports_linuxs_model_in_the_simulators_columns(tmp_path):
    # The kernel's BBR through TCP_INFO and TCP_CC_INFO, in the columns the
    # simulator's BBR has for the same scenario (plus Linux's retransmission
    # count), as `ss -i` shows them: bbr:(bw,mrtt,pacing_gain,cwnd_gain).
    path = tmp_path / "t.toml"
    path.write_text(TRACED.strip() + "\n" + DUMBBELL.format(duration="3s", warmup="0s")
                    + TRACED_TRAFFIC.replace('"cubic"', '"bbr"'))
    sc = aqmlab.Scenario.load(path)
    res = aqmlab.emulate(sc)
    series = res.series
    assert ours() == []
    mine = [c for c in series.columns if c.startswith("bulk[0].")]
    sims = [c for c in aqmlab.run(sc).series.columns if c.startswith("bulk[0].")]
    assert mine == sims[:4] + ["bulk[0].retransmits"] + sims[4:]
    assert sims[4:] == ["bulk[0].pacing_rate_bps", "bulk[0].rwnd_pkts", "bulk[0].bbr_bw_bps",
                        "bulk[0].bbr_min_rtt_s", "bulk[0].bbr_pacing_gain", "bulk[0].bbr_cwnd_gain"]
    late = series[series["time_s"] >= 1.0]
    # The receiver's advertised window: Linux's first is 65535 bytes in
    # whole segments, 45 x 1448, and it grows from there as data arrives.
    assert (late["bulk[0].rwnd_pkts"] >= 45).all()
    # Linux's constants: PROBE_BW's gains after STARTUP, cwnd gain 2.
    assert set(late["bulk[0].bbr_pacing_gain"]) <= {1.25, 0.75, 1.0}
    assert set(late["bulk[0].bbr_cwnd_gain"]) == {2.0}
    # The link's payload rate, 10 Mb/s x 1448/1500: the windowed maximum may
    # hold a sample a little above it (+1% to +6% in runs on an idle
    # machine), never far below. A sample's interval, at least the 10.2-ms
    # round trip, can be shortened by the router's lateness (ACKs forwarded
    # late arrive bunched), which raises the rate by as much.
    link = 10e6 * PAYLOAD_SHARE
    bunched = 1 / max(0.5, 1 - res.summary["timing"]["late_p99_s"] / 0.0102)
    assert (late["bulk[0].bbr_bw_bps"] / link).between(0.98, 1.10 * bunched).all()
    # min_rtt: at least the 10.2 ms of propagation, and below what any data
    # packet could see (its 1500 B alone take 1.2 ms at the bottleneck):
    # the handshake's round trip, as the simulator's.
    assert (late["bulk[0].bbr_min_rtt_s"] > 0.0102).all() and (late["bulk[0].bbr_min_rtt_s"] < 0.0114).all()
    # The pacing rate is gain x bw less Linux's 1% margin (the two are read
    # by separate calls, so an ACK may fall between them: the median).
    paced = late["bulk[0].bbr_pacing_gain"] * late["bulk[0].bbr_bw_bps"] * 0.99
    assert (late["bulk[0].pacing_rate_bps"] / paced).median() == pytest.approx(1, rel=1e-3)


HTTP11 = """
[[traffic]]
name = "http"
kind = "http11"
response_size = "14600B"
think = "0.2s"
start = "0s"
tcp = { variant = "cubic" }
"""


@needs_emulation
def test_http11_responses_complete_on_one_persistent_connection(tmp_path):
    s = aqmlab.emulate(scenario(tmp_path, HTTP11)).summary
    assert ours() == []
    (f,) = s["flows"]
    g = s["traffic"]["http"]
    size = 14600  # 10 packets of the default 1460-byte payload
    n = g["responses"]["count"]
    # A response takes at least the round trip (10.2 ms) plus its bytes' time
    # at 10 Mb/s (11.68 ms), and a 0.2 s think time follows each; on an
    # idle 10 Mb/s link far less than 0.2 s. The n-th ends at most at
    # n x cycle - 0.2 s <= 4 s with a cycle between 0.2219 and 0.4 s.
    assert 4.2 / 0.4 <= n <= 4.2 / 0.2219, n
    assert g["responses"]["p50_s"] >= 0.0102 + size * 8 / RATE
    assert g["responses"]["p99_s"] < 0.2
    assert g["responses_by_size"] == [pytest.approx({"pkts": 10, "count": n, "mean_s": g["responses"]["mean_s"],
                                                     "std_s": g["responses"]["std_s"]})]
    # The client read every byte of the finished responses, and a part of
    # at most one more; the server read one 1460-byte request per response
    # (and perhaps the one under way).
    assert n * size <= f["transfer_bytes"] < (n + 1) * size
    assert g["request_goodput_bps"] * 4 / 8 in (n * 1460, (n + 1) * 1460)
    assert f["congestion_control"] == "cubic"


WEB = """
[[traffic]]
name = "web"
kind = "web"
count = 1
src = ["s0", "s1"]
dst = ["d0"]
pages_per_session = 3
inter_page = "0.5s"
objects_per_page = 2
inter_object = "0.1s"
object_size = 10
replace = false
response = "{response}"
packet_size = "1000B"
start = "0s"
tcp = {{ variant = "sack" }}
"""


@needs_emulation
@pytest.mark.parametrize("response", ["same-connection", "new-connection"])
def test_web_sessions_fetch_their_pages_on_new_connections(tmp_path, response):
    # One session of 3 pages, 2 objects each launched 0.1 s apart, 10 packets
    # of 1000 B per response, a page 0.5 s after the previous one is done:
    # all of it within the 2.5 s run on an idle path (round trip 10.2 ms).
    sc = scenario(tmp_path, WEB.format(response=response), duration="2.5s")
    s = aqmlab.emulate(sc).summary
    assert ours() == []
    g = s["traffic"]["web"]
    assert g["pages"]["count"] == 3
    assert g["objects"]["count"] == 6
    # The simulator draws the same session: the same pages and objects.
    sim = aqmlab.run(sc).summary["traffic"]["web"]
    assert (sim["pages"]["count"], sim["objects"]["count"]) == (3, 6)
    (f,) = s["flows"]
    assert f["delivered_bytes"] == 6 * 10 * 1000
    assert g["request_goodput_bps"] == pytest.approx(6 * 1000 * 8 / 2.5)
    # An object takes its handshakes and requests' round trips plus the
    # response's time on the link (10 x 1052 B on the wire at 10 Mb/s;
    # Linux's initial window of 10 sends it at once): same-connection 2
    # round trips (SYN, request and response), new-connection 3.5 (SYN,
    # request, the server's SYN, response, the client's close back); far
    # less than the 0.1 s between launches on an idle path. At the median
    # within 0.6 of a round trip of that for same-connection (so a request
    # held back a round trip, by Nagle's algorithm on a request written in
    # two parts, is seen on an idle machine) and within one for
    # new-connection, plus the router's own lateness for each packet on the
    # object's path (same-connection: SYN, SYN-ACK, request, response;
    # new-connection adds the response's SYN, SYN-ACK and the close): on a
    # loaded machine each of them is forwarded late (p99 5-8 ms with three
    # busy loops beside the run, the median new-connection object then
    # 50-55 ms; idle, late p99 under 1 ms and the median 46.5 ms).
    rtt, wire = f["rtt_prop_s"], 10 * 1052 * 8 / RATE
    trips, margin, hops = (2, 0.6, 4) if response == "same-connection" else (3.5, 1, 7)
    late = hops * s["timing"]["late_p99_s"]
    objects = g["objects"]
    assert trips * rtt + wire <= objects["p50_s"] < (trips + margin) * rtt + wire + late
    # A page is done with its second object, launched 0.1 s after the first.
    assert 0.1 + trips * rtt + wire <= g["pages"]["p50_s"] < 0.2
    if response == "same-connection":
        # One connection per object, open from its launch to its end.
        assert g["active_connections_mean"] == pytest.approx(6 * objects["mean_s"] / 2.5, rel=0.05)


L4S_UDP = """
[[traffic]]
name = "cbr"
kind = "cbr"
src = "s0"
rate = "12Mbps"
size = "1000B"
start = "0s"
ecn = "{ecn}"
"""


@needs_emulation
@pytest.mark.parametrize("ecn", ["ect1", "not-ect"])
def test_a_udp_groups_ecn_codepoint_is_on_its_packets(tmp_path, ecn):
    # 12 Mb/s of CBR into a 10 Mb/s DualPI2 bottleneck: the queue builds past
    # DualPI2's 1 ms step at once. ECT(1) packets go to the L queue and are
    # marked there; Not-ECT ones go to the classic queue, which can only
    # drop. The router reads the codepoint the sending socket set (IP_TOS).
    path = tmp_path / "l4s.toml"
    text = DUMBBELL.format(duration="2s", warmup="0s").replace('{ kind = "droptail", limit = "100pkt" }',
                                                               '{ kind = "dualpi2" }')
    path.write_text(text + L4S_UDP.format(ecn=ecn))
    sc = aqmlab.Scenario.load(path)
    q = aqmlab.emulate(sc).summary["queues"]["bottleneck"]
    assert ours() == []
    if ecn == "ect1":
        assert q["marks"] > 0
    else:
        assert q["marks"] == 0 and q["drops"] > 0
    # Open-loop packets on the same schedule meet the same discipline (the
    # same seed, the same draws) under both engines: the counts agree but
    # for the microseconds by which emulated arrivals differ, and the last
    # few packets a busy machine sends after the end.
    s = aqmlab.run(sc).summary["queues"]["bottleneck"]
    for key in ("arrivals", "marks", "drops"):
        assert abs(q[key] - s[key]) <= 0.01 * s["arrivals"], (key, q[key], s[key])
