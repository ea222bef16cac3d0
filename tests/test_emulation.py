"""Emulation through real Linux stacks (`aqmlab emulate`): how faithfully
the router reproduces a link, real TCP through it, and that nothing is left
behind on return, on error and on Ctrl-C.

These tests create network namespaces and need root; where that is
impossible they are skipped with the reason. Each emulation takes real time
(about 10 s).
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import aqmlab
from aqmlab import emulation
from aqmlab.exceptions import ConfigError
from conftest import EXAMPLES, ROOT, run_cli

WHY = emulation.unavailable()
pytestmark = [pytest.mark.emulation,
              pytest.mark.skipif(WHY is not None, reason=f"emulation impossible here: {WHY}")]


def ours(pid: int) -> list[str]:
    """The namespaces of process `pid` still on the machine."""
    netns = Path("/run/netns")
    return sorted(p.name for p in netns.iterdir() if p.name.startswith(f"aqm{pid}-")) if netns.exists() else []


@pytest.fixture(scope="module")
def accuracy():
    """One 10 s emulation of examples/emulation-accuracy.toml."""
    res = aqmlab.emulate(EXAMPLES / "emulation-accuracy.toml")
    assert ours(os.getpid()) == [], "the namespaces are removed on return"
    return res.summary


def test_a_packet_takes_exactly_propagation_plus_transmission_time(accuracy):
    light = next(f for f in accuracy["flows"] if f["group"] == "light")
    # 50 ms on the link, 1000 B at 10 Mb/s = 0.8 ms on the wire. The router
    # schedules each packet exactly, so none can arrive sooner (1 us for
    # the kernel's stamps); late wake-ups can only add.
    expected = 0.050 + 1000 * 8 / 10e6
    assert light["delay_min_s"] >= expected - 1e-6
    # Half the packets arrive within 100 us of it. The tail depends on how
    # promptly this machine wakes a thread (the `timing` block says); on
    # the 2-vCPU VM aqmlab is built on the p99 ranged from 0.1 to 4 ms
    # between identical runs (bench/README.md), so it is reported, not
    # asserted.
    assert light["delay_p50_s"] - expected < 100e-6
    # Nothing is lost, in the queue or anywhere else: over the whole run no
    # sequence number below the highest received is missing. (Counting the
    # window's packets in and out instead depends on wake-ups: one 10 ms
    # stall at an edge moves 6 packets across it.)
    assert light["drops"] == 0
    assert light["missing_run"] == 0
    assert light["delivered"] > 0
    assert accuracy["queues"]["light"]["utilization"] == pytest.approx(0.5, rel=0.005)


def test_an_overloaded_link_delivers_its_rate(accuracy):
    over = next(f for f in accuracy["flows"] if f["group"] == "overload")
    q = accuracy["queues"]["overload"]
    # 12 Mb/s offered to 10 Mb/s: the link is busy all the time and
    # delivers 10 Mb/s (1000-byte UDP packets, headers included) within 0.5%.
    assert over["goodput_bps"] == pytest.approx(10e6, rel=0.005)
    assert q["utilization"] == pytest.approx(1.0, abs=0.005)
    # What was not delivered was dropped at the queue: 1/6 of the offer.
    assert over["loss_rate"] == pytest.approx(1 / 6, abs=0.01)
    # Over the whole run the receiver misses the packets the queue dropped,
    # except those dropped after the last packet it received left the queue
    # (a few ms of arrivals at the end), and nothing else.
    t = q["run_totals"]
    assert t["drops"] - 60 <= over["missing_run"] <= t["drops"]
    assert t["arrivals"] == t["departures"] + t["drops"] + t["backlog_pkts"]


def test_the_result_has_the_simulators_keys_and_says_it_is_emulated(accuracy):
    sim = aqmlab.run(aqmlab.Scenario.load(EXAMPLES / "emulation-accuracy.toml")).summary
    assert accuracy["engine"] == "emulation"
    for name, q in sim["queues"].items():
        assert set(q) <= set(accuracy["queues"][name]), name
    for name, g in sim["traffic"].items():
        assert set(g) <= set(accuracy["traffic"][name]), name
    # Nothing was lost outside the scenario's queues.
    assert accuracy["kernel"]["ring_drops"] == 0
    assert accuracy["kernel"]["send_failures"] == 0
    assert accuracy["timing"]["wakeups"] > 0


TCP_DUMBBELL = """
name = "linux-tcp"
duration = "10s"
warmup = "3s"
[topology]
kind = "dumbbell"
senders = [ { delay = "5ms" }, { delay = "5ms" } ]
access_rate = "100Mbps"
bottleneck = { rate = "10Mbps", delay = "20ms" }
qdisc = { kind = "droptail", limit = "100pkt" }
[[traffic]]
name = "ftp"
kind = "ftp"
count = 2
start = "0s"
tcp = { variant = "sack" }
"""


def test_linux_tcp_fills_the_bottleneck(tmp_path):
    (tmp_path / "tcp.toml").write_text(TCP_DUMBBELL)
    sc = aqmlab.Scenario.load(tmp_path / "tcp.toml")
    s = aqmlab.emulate(sc).summary
    assert ours(os.getpid()) == []
    q = s["queues"]["bottleneck"]
    # Two bulk flows with a buffer (100 packets) above the bandwidth-delay
    # product (10 Mb/s x 50.4 ms = 42 packets) keep the link busy.
    assert q["utilization"] > 0.95
    assert q["drops"] > 0, "TCP probes until the queue overflows"
    # The kernels' own counters (kernel.tcp, from each host's
    # /proc/net/netstat) say they recovered from those losses: by fast
    # recovery, or by a timeout.
    tcp = s["kernel"]["tcp"]
    assert tcp["TCPSackRecovery"] + tcp["TCPRenoRecovery"] + tcp["TCPTimeouts"] > 0, tcp
    # Goodput is what the link carries less the headers: 1448 payload bytes
    # per 1500-byte packet (Linux sends TCP timestamps: 40 + 12 bytes).
    rate = q["link"]["rate_bps"]
    goodput = sum(f["goodput_bps"] for f in s["flows"])
    assert goodput == pytest.approx(q["utilization"] * rate * 1448 / 1500, rel=0.02)


def test_traffic_it_cannot_emulate_is_named_by_key():
    # Web requests carry a 20-byte head in emulation (the object, its size,
    # the client): a 16-byte payload cannot hold it.
    small = "traffic[0].packet_size=16B"
    sc = aqmlab.Scenario.load(EXAMPLES / "web-dumbbell.toml").with_(**dict([small.split("=")]))
    assert sc.problems() == [], "the simulator runs it"
    with pytest.raises(ConfigError) as e:
        aqmlab.emulate(sc)
    assert "traffic[0].packet_size: gives requests of 16 payload bytes" in "\n".join(e.value.lines())
    assert ours(os.getpid()) == []
    r = run_cli("emulate", str(EXAMPLES / "web-dumbbell.toml"), "--set", small)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: traffic[0].packet_size:")


def test_ctrl_c_removes_everything():
    p = subprocess.Popen([sys.executable, "-m", "aqmlab", "emulate", str(EXAMPLES / "emulation-accuracy.toml")],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while f"aqm{p.pid}-r" not in ours(p.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ours(p.pid), "the emulation started"
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert ours(p.pid) == []


def test_cleanup_removes_what_a_killed_emulation_left():
    p = subprocess.Popen([sys.executable, "-m", "aqmlab", "emulate", str(EXAMPLES / "emulation-accuracy.toml")],
                         cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while f"aqm{p.pid}-r" not in ours(p.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.kill()
    p.wait()
    left = ours(p.pid)
    assert left, "SIGKILL leaves the namespaces behind"
    r = run_cli("emulate", "--cleanup")
    assert r.returncode == 0
    assert all(n in r.stdout for n in left)
    assert ours(p.pid) == []
