"""The dumbbell of study A1 (Brandauer et al.) in ns-3, set up to match `dumbbell-a1.toml`.

    $NS3_PYTHON bench/ns3/dumbbell.py --flows 64 --qdisc red [--tcp sack|newreno] [--seed 1]
    $NS3_PYTHON bench/ns3/dumbbell.py --flows 16 --qdisc droptail --tcp cubic|bbr|linux-reno
    $NS3_PYTHON bench/ns3/dumbbell.py --flows 16 --qdisc red_step --tcp dctcp

Runs under an interpreter that has the `ns3` wheel from PyPI (see README.md
beside this file) and prints one JSON object on stdout. The topology, TCP
settings and measurements are chosen to match aqmlab's scenario
`dumbbell-a1.toml`; README.md lists every setting matched and the
differences that remain.

Topology: hosts s0..s3 -> R1 -> R2 -> d0..d3. Sender access links 100 Mb/s
with 10/20/30/40 ms, bottleneck 10 Mb/s 50 ms, receiver links 100 Mb/s
0.1 ms (aqmlab's dumbbell defaults: 10 x the bottleneck rate, 0.1 ms), so
the round-trip propagation delays are 120.2 .. 180.2 ms as in aqmlab.

TCP: `sack` and `newreno` match aqmlab's ns-2 agents (NewReno with classic
recovery, IW 2, delayed ACKs of 100 ms); `linux-reno`, `cubic`, `bbr` and
`dctcp` match aqmlab's Linux-style family with its defaults (TcpLinuxReno,
TcpCubic, TcpBbr, TcpDctcp; IW 10, SACK, PRR, delayed ACKs of 40 ms, an
RTO of srtt + max(200 ms, 4 rttvar) starting at 1 s, pacing for BBR only;
README.md, "CUBIC, BBR and DCTCP against ns-3", lists each attribute).
`red_step` is RED as a step marker for DCTCP: ECN on, the average the
instantaneous queue (QW 1), every ECN-capable packet marked once 20 packets
wait (qdisc + device queue), as aqmlab's RED with min_th 20, max_th 21,
max_p 1, w_q 1, ecn, ecn_above_max_th "mark".

Queues: every device queue holds one packet (DropTailQueue MaxSize 1p, no
BQL), and every device has a root queue disc: a FIFO of 10^6 packets except
R1 -> R2, which is drop-tail or RED. With a busy link ns-3 keeps one packet
in the device queue below the qdisc, a packet aqmlab counts in its queue, so
the bottleneck qdisc gets a limit of 299 and RED thresholds 44/194: the
packets waiting (qdisc + device queue) meet the same numbers as aqmlab's
300/45/195.

Measured over [warmup, duration], by trace sinks written in C++ (JIT-compiled
through cppyy before the run, so that ns-3 is not slowed by Python
callbacks; FlowMonitor is not used for the same reason):
  - TCP goodput: bytes the PacketSinks received (in order, payload only);
  - bottleneck arrivals (qdisc enqueues + drops before enqueue), drops by
    reason, UDP arrivals and drops (UDP loss = UDP drops / UDP arrivals:
    only the bottleneck drops, which `other_drops` checks);
  - queueing delay: from the qdisc's enqueue to the start of transmission
    on the bottleneck device (PhyTxBegin), which includes the wait in the
    one-packet device queue, as aqmlab's sojourn runs from arrival at the
    queue to the start of transmission; averaged over packets whose
    transmission starts in the window;
  - wall time of Simulator::Run() alone, and Simulator::GetEventCount().
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

SEGMENT_BYTES = 1460  # TCP payload per segment (aqmlab packet_size)
UDP_FRAME_BYTES = 573  # CBR packet on the wire (aqmlab size)
# UDP payload so that payload + 8 (UDP) + 20 (IPv4) + 2 (PPP) = 573 B on the wire
UDP_PAYLOAD_BYTES = UDP_FRAME_BYTES - 8 - 20 - 2
CBR_RATE_BPS = 250_000
ACCESS_DELAYS_MS = [10, 20, 30, 40]
BIG_QUEUE = "1000000p"
QDISCS = ["droptail", "red", "red_step", "codel", "pie", "fq_codel", "fq_pie", "cobalt", "fq_cobalt"]

# The AQMs' attributes, matched to aqmlab's defaults for the same discipline
# with a 300-packet limit (README.md, "CoDel, PIE and FQ-CoDel against ns-3",
# lists each and why). Every one is written out, defaults included. MaxSize
# is 299 packets for the reason given for drop-tail: the device queue below
# holds the 300th.
AQM_ATTRS = {
    "codel": ("ns3::CoDelQueueDisc", {
        "MaxSize": "299p",
        "Target": "5ms",
        "Interval": "100ms",
        "MinBytes": "1500",  # one full-size IP packet: aqmlab's maxpacket, the link MTU
        "UseEcn": "false",
        "UseL4s": "false",
    }),
    "pie": ("ns3::PieQueueDisc", {
        "MaxSize": "299p",
        "QueueDelayReference": "15ms",
        "Tupdate": "15ms",
        "A": "0.125",
        "B": "1.25",
        "MaxBurstAllowance": "150ms",
        "UseDequeueRateEstimator": "false",  # timestamps, as aqmlab's default
        "UseCapDropAdjustment": "true",
        "UseDerandomization": "false",
        # ActiveThreshold is left at its default, Time::Max: PIE on from the
        # start, as aqmlab (any other value leaves PIE off until the delay
        # reaches it).
        "UseEcn": "false",
        "MarkEcnThreshold": "0.1",
        "MeanPktSize": "1000",  # byte mode only in ns-3
    }),
    "fq_codel": ("ns3::FqCoDelQueueDisc", {
        "MaxSize": "299p",
        "Flows": "1024",
        "Target": "5ms",
        "Interval": "100ms",
        "DropBatchSize": "64",
        "Perturbation": "0",
        "EnableSetAssociativeHash": "false",
        "UseEcn": "true",  # as aqmlab's default; nothing is ECN-capable here, so nothing is marked
        "UseL4s": "false",
    }),
    # FQ-PIE, COBALT and FQ-COBALT, matched to aqmlab's defaults (README.md,
    # "FQ-PIE and COBALT against ns-3"). Where ns-3's default differs from
    # aqmlab's, the comment says so. The FQs' quantum is left unset: ns-3
    # takes the device MTU, 1500 B, one data packet as its qdisc counts it.
    "fq_pie": ("ns3::FqPieQueueDisc", {
        "MaxSize": "299p",  # default 10240p; also each flow's PIE's own limit
        "Flows": "1024",
        "QueueDelayReference": "15ms",
        "Tupdate": "15ms",
        "Supdate": "0ms",
        "A": "0.125",
        "B": "1.25",
        "MaxBurstAllowance": "150ms",
        "UseDequeueRateEstimator": "false",
        "UseCapDropAdjustment": "true",
        "UseDerandomization": "true",  # default false; aqmlab's fq_pie (as Linux) derandomizes
        "UseEcn": "false",  # default true; aqmlab's fq_pie has ecn off
        "MarkEcnThreshold": "0.1",
        "MeanPktSize": "1500",  # default 1000; byte mode only in ns-3 (aqmlab: the link MTU)
        "DropBatchSize": "1",  # default 64: one packet per overflow, as aqmlab (which drops the arrival)
        "Perturbation": "0",
        "EnableSetAssociativeHash": "false",
        "UseL4s": "false",
    }),
    "cobalt": ("ns3::CobaltQueueDisc", {
        "MaxSize": "299p",  # default 1500000B
        "Target": "5ms",
        "Interval": "100ms",
        "UseEcn": "false",
        "Pdrop": "0",
        "Increment": "0.00390625",  # 1/256
        "Decrement": "0.000244140625",  # 1/4096
        "BlueThreshold": "400ms",
        "UseL4s": "false",
    }),
    "fq_cobalt": ("ns3::FqCobaltQueueDisc", {
        "MaxSize": "299p",  # default 10240p; also each flow's COBALT's own limit
        "Flows": "1024",
        "Target": "5ms",
        "Interval": "100ms",
        "UseEcn": "true",  # as aqmlab's default; nothing is ECN-capable here
        "Pdrop": "0",
        "Increment": "0.00390625",
        "Decrement": "0.000244140625",
        # default 400ms; aqmlab's fq_cobalt has no such rule (CAKE's): a
        # sojourn of 1000 s never happens here
        "BlueThreshold": "1000s",
        "DropBatchSize": "1",  # default 64; aqmlab's fq_cobalt drops one packet per overflow step (CAKE)
        "Perturbation": "0",
        "EnableSetAssociativeHash": "false",
        "UseL4s": "false",
    }),
}

PROBE_CPP = r"""
#include <algorithm>
#include <cstring>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

namespace aqmbench
{
using namespace ns3;

// Counters of the bottleneck queue over the window [t0, t1] (ns).
struct Bottleneck
{
    int64_t t0 = 0, t1 = 0;
    uint64_t arrivals = 0, departures = 0, drops = 0, marks = 0;
    uint64_t dropsEarly = 0, dropsForced = 0, dropsOverflow = 0, dropsOther = 0;
    uint64_t dropsAfterDequeue = 0;
    uint64_t udpArrivals = 0, udpDrops = 0;
    uint64_t txBytes = 0, mismatches = 0;
    double qdelaySumS = 0.0;
    // Enqueue times (ns) of the packets in the qdisc or the device queue, by
    // packet uid. A map, not one FIFO: CoDel drops from the head and FQ-CoDel
    // serves its flows in turn, so packets leave in no fixed order. A FIFO
    // per uid, since two queued packets can share a uid (presumably a TCP
    // segment and its retransmission, cut from the same send-buffer
    // packet); the older leaves first, as both are in the same flow's queue.
    std::unordered_map<uint64_t, std::deque<int64_t>> queued;

    bool Pop(uint64_t uid, int64_t* t)
    {
        auto it = queued.find(uid);
        if (it == queued.end())
            return false;
        *t = it->second.front();
        it->second.pop_front();
        if (it->second.empty())
            queued.erase(it);
        return true;
    }

    bool In(int64_t t) const { return t >= t0 && t <= t1; }

    static bool IsUdp(Ptr<const QueueDiscItem> item)
    {
        Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
        return ip && ip->GetHeader().GetProtocol() == 17;
    }

    void OnEnqueue(Ptr<const QueueDiscItem> item)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        queued[item->GetPacket()->GetUid()].push_back(now);
        if (In(now))
        {
            arrivals++;
            if (IsUdp(item))
                udpArrivals++;
        }
    }

    void CountDrop(Ptr<const QueueDiscItem> item, const char* reason)
    {
        drops++;
        if (std::strcmp(reason, "Unforced drop") == 0 || std::strcmp(reason, "Target exceeded drop") == 0)
            dropsEarly++;
        else if (std::strcmp(reason, "Forced drop") == 0)
            dropsForced++;
        else if (std::strcmp(reason, "Queue disc limit exceeded") == 0 ||
                 std::strcmp(reason, "Dropped by internal queue") == 0 ||
                 std::strcmp(reason, "Overlimit drop") == 0)
            dropsOverflow++;
        else
            dropsOther++;
        if (IsUdp(item))
            udpDrops++;
    }

    // A drop on arrival: the packet never entered the queue.
    void OnDrop(Ptr<const QueueDiscItem> item, const char* reason)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (!In(now))
            return;
        arrivals++;
        if (IsUdp(item))
            udpArrivals++;
        CountDrop(item, reason);
    }

    // A drop of a queued packet (CoDel's head drops, FQ-CoDel's overflow
    // from the fattest flow): its arrival was counted at its enqueue.
    void OnDropAfterDequeue(Ptr<const QueueDiscItem> item, const char* reason)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        int64_t t;
        Pop(item->GetPacket()->GetUid(), &t);
        if (!In(now))
            return;
        dropsAfterDequeue++;
        CountDrop(item, reason);
    }

    void OnMark(Ptr<const QueueDiscItem> item, const char* reason)
    {
        if (In(Simulator::Now().GetNanoSeconds()))
            marks++;
    }

    void OnTxBegin(Ptr<const Packet> p)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        int64_t t;
        if (!Pop(p->GetUid(), &t))
        {
            mismatches++;
            return;
        }
        if (In(now))
        {
            departures++;
            txBytes += p->GetSize();
            qdelaySumS += (now - t) * 1e-9;
        }
    }

    // The qdisc's backlog in packets (without the one in the device queue),
    // integrated over the window from its PacketsInQueue trace: no events
    // of its own, so the event count and the run are as without it.
    int64_t backlogSince = 0;
    uint32_t backlogNow = 0;
    double backlogPktS = 0.0;

    void AddBacklog(int64_t now)
    {
        int64_t a = std::max(backlogSince, t0), b = std::min(now, t1);
        if (b > a)
            backlogPktS += backlogNow * (b - a) * 1e-9;
        backlogSince = now;
    }

    void OnBacklog(uint32_t from, uint32_t to)
    {
        AddBacklog(Simulator::Now().GetNanoSeconds());
        backlogNow = to;
    }

    // The mean backlog over the window; call after the run.
    double BacklogMean()
    {
        AddBacklog(Simulator::Now().GetNanoSeconds());
        return t1 > t0 ? backlogPktS / ((t1 - t0) * 1e-9) : 0.0;
    }

    void Connect(Ptr<QueueDisc> q, Ptr<NetDevice> dev)
    {
        q->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&Bottleneck::OnBacklog, this));
        q->TraceConnectWithoutContext("Enqueue", MakeCallback(&Bottleneck::OnEnqueue, this));
        q->TraceConnectWithoutContext("DropBeforeEnqueue", MakeCallback(&Bottleneck::OnDrop, this));
        q->TraceConnectWithoutContext("DropAfterDequeue", MakeCallback(&Bottleneck::OnDropAfterDequeue, this));
        q->TraceConnectWithoutContext("Mark", MakeCallback(&Bottleneck::OnMark, this));
        dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&Bottleneck::OnTxBegin, this));
    }
};

// TCP loss recovery over the window, from every socket's congestion state:
// entries into CA_LOSS (a retransmission timeout) and CA_RECOVERY (a fast
// retransmit), to set beside aqmlab's `timeouts` and `fast_retransmits`.
struct TcpEvents
{
    int64_t t0 = 0, t1 = 0;
    uint64_t timeouts = 0, recoveries = 0;

    void OnCongState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (now < t0 || now > t1 || from == to)
            return;
        if (to == TcpSocketState::CA_LOSS)
            timeouts++;
        else if (to == TcpSocketState::CA_RECOVERY)
            recoveries++;
    }

    // Connects to every TCP socket at time t (the sockets exist once their
    // applications have started).
    void ConnectAt(Time t)
    {
        Simulator::Schedule(t, [this]() {
            Config::ConnectWithoutContext("/NodeList/*/$ns3::TcpL4Protocol/SocketList/*/CongState",
                                          MakeCallback(&TcpEvents::OnCongState, this));
        });
    }
};

// CoDel's dropping state over the window: time spent in it, entries, and
// the largest count reached.
struct CodelState
{
    int64_t t0 = 0, t1 = 0, since = -1;
    uint64_t entries = 0, maxCount = 0;
    double droppingS = 0.0;

    void OnDropState(bool from, bool to)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (to && !from)
        {
            since = now;
            if (now >= t0 && now <= t1)
                entries++;
        }
        else if (from && !to && since >= 0)
        {
            Close(now);
            since = -1;
        }
    }

    void Close(int64_t now)
    {
        int64_t a = std::max(since, t0), b = std::min(now, t1);
        if (b > a)
            droppingS += (b - a) * 1e-9;
    }

    void OnCount(uint32_t from, uint32_t to)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (now >= t0 && now <= t1 && to > maxCount)
            maxCount = to;
    }

    // count at each entry into the dropping state (lastcount), and count
    // just before it: the re-entry rule's inputs.
    std::vector<uint32_t> entryCounts, countsBefore;
    uint32_t lastSeenCount = 0;

    void OnLastCount(uint32_t from, uint32_t to)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (now >= t0 && now <= t1)
        {
            entryCounts.push_back(to);
            countsBefore.push_back(lastSeenCount);
        }
    }

    void OnCountSeen(uint32_t from, uint32_t to) { lastSeenCount = from; }

    void Connect(Ptr<QueueDisc> q)
    {
        q->TraceConnectWithoutContext("Count", MakeCallback(&CodelState::OnCountSeen, this));
        q->TraceConnectWithoutContext("LastCount", MakeCallback(&CodelState::OnLastCount, this));
        q->TraceConnectWithoutContext("DropState", MakeCallback(&CodelState::OnDropState, this));
        q->TraceConnectWithoutContext("Count", MakeCallback(&CodelState::OnCount, this));
        Simulator::Schedule(NanoSeconds(t1), [this]() {
            if (since >= 0)
                Close(Simulator::Now().GetNanoSeconds());
        });
    }
};

// COBALT's state over the window: the share of time in CoDel's dropping
// state (DropState trace), the largest count (Count trace), and BLUE's
// p_drop, which ns-3 does not trace: sampled every millisecond.
struct CobaltState
{
    int64_t t0 = 0, t1 = 0, since = -1;
    uint64_t entries = 0, maxCount = 0, samples = 0;
    double droppingS = 0.0, pdropSum = 0.0, pdropMax = 0.0;
    Ptr<CobaltQueueDisc> q;

    void OnDropState(bool from, bool to)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (to && !from)
        {
            since = now;
            if (now >= t0 && now <= t1)
                entries++;
        }
        else if (from && !to && since >= 0)
        {
            Close(now);
            since = -1;
        }
    }

    void Close(int64_t now)
    {
        int64_t a = std::max(since, t0), b = std::min(now, t1);
        if (b > a)
            droppingS += (b - a) * 1e-9;
    }

    void OnCount(uint32_t from, uint32_t to)
    {
        int64_t now = Simulator::Now().GetNanoSeconds();
        if (now >= t0 && now <= t1 && to > maxCount)
            maxCount = to;
    }

    void Sample()
    {
        double p = q->GetPdrop();
        pdropSum += p;
        pdropMax = std::max(pdropMax, p);
        samples++;
        if (Simulator::Now().GetNanoSeconds() + 1000000 <= t1)
            Simulator::Schedule(MilliSeconds(1), &CobaltState::Sample, this);
    }

    void Connect(Ptr<QueueDisc> qd)
    {
        q = DynamicCast<CobaltQueueDisc>(qd);
        q->TraceConnectWithoutContext("DropState", MakeCallback(&CobaltState::OnDropState, this));
        q->TraceConnectWithoutContext("Count", MakeCallback(&CobaltState::OnCount, this));
        Simulator::Schedule(NanoSeconds(t0), &CobaltState::Sample, this);
        Simulator::Schedule(NanoSeconds(t1), [this]() {
            if (since >= 0)
                Close(Simulator::Now().GetNanoSeconds());
        });
    }
};

// Bytes received by the TCP sinks at the start and the end of the window.
struct Goodput
{
    std::vector<Ptr<PacketSink>> sinks;
    uint64_t rx0 = 0, rx1 = 0;

    void Add(Ptr<Application> app) { sinks.push_back(DynamicCast<PacketSink>(app)); }

    uint64_t Total() const
    {
        uint64_t sum = 0;
        for (const auto& s : sinks)
            sum += s->GetTotalRx();
        return sum;
    }

    void Schedule(Time t0, Time t1)
    {
        Simulator::Schedule(t0, [this]() { rx0 = Total(); });
        Simulator::Schedule(t1, [this]() { rx1 = Total(); });
    }
};
} // namespace aqmbench
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flows", type=int, default=64, help="number of TCP NewReno bulk flows")
    ap.add_argument("--tcp", choices=["sack", "newreno", *LINUX_TCPS], default="sack",
                    help="sack: NewReno congestion control with SACK loss recovery (RFC 6675), as"
                         " aqmlab's variant sack; newreno: SACK off (RFC 6582), as aqmlab's newreno;"
                         " linux-reno, cubic, bbr, dctcp: ns-3's TcpLinuxReno, TcpCubic, TcpBbr, TcpDctcp"
                         " set as aqmlab's Linux-style family (IW 10, SACK, PRR, 40 ms delayed ACKs)")
    ap.add_argument("--tcp-attr", action="append", default=[], metavar="NAME=VALUE",
                    help="set the default of any ns-3 attribute by its full name (e.g."
                         " ns3::TcpSocket::DelAckCount=1), after the matched TCP settings; repeatable")
    ap.add_argument("--qdisc", choices=QDISCS, default="red")
    ap.add_argument("--attr", action="append", default=[], metavar="NAME=VALUE",
                    help="set an attribute of the bottleneck's AQM (codel ... fq_cobalt) to VALUE (ns-3's"
                         " string form, e.g. Target=3.8ms), over the matched settings; a full name such as"
                         " ns3::CoDelQueueDisc::MinBytes sets that type's default; repeatable")
    ap.add_argument("--seed", type=int, default=1, help="ns-3 run number and start-time seed")
    ap.add_argument("--duration", type=float, default=100.0, help="simulated seconds")
    ap.add_argument("--warmup", type=float, default=20.0, help="seconds discarded before measuring")
    return ap.parse_args(argv)


# aqmlab's Linux-style variants and ns-3's congestion controls that match them.
LINUX_TCPS = {"linux-reno": "ns3::TcpLinuxReno", "cubic": "ns3::TcpCubic", "bbr": "ns3::TcpBbr",
              "dctcp": "ns3::TcpDctcp"}


def configure_linux_defaults(ns, tcp: str) -> None:
    """Attribute defaults that make ns-3's TCP match aqmlab's Linux-style
    family with its defaults (crates/sim/src/transport/tcp/config.rs,
    TcpConfig::linux). Every one is written out, defaults included; README.md
    ("CUBIC, BBR and DCTCP against ns-3") says why each."""
    sd = ns.Config.SetDefault
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue(LINUX_TCPS[tcp]))
    # PRR (RFC 6937) in recovery, as the family's `prr = true`.
    sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpPrrRecovery"))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))  # aqmlab's packets carry none
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::ReTxThreshold", ns.UintegerValue(3))
    # Linux's RTO is srtt + rttvar with rttvar >= rto_min (200 ms): the floor
    # is on the variance term. ns-3's is max(srtt + max(G, 4 rttvar), MinRto),
    # G being ClockGranularity: with G = MinRto = 200 ms it is
    # srtt + max(200 ms, 4 rttvar), Linux's form.
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(200)))
    # Initial RTO 1 s (Linux's TCP_TIMEOUT_INIT): the SYN's timer is
    # ConnTimeout in ns-3, the first RTT estimate InitialEstimation.
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(1)))
    sd("ns3::RttEstimator::InitialEstimation", ns.TimeValue(ns.Seconds(1)))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_BYTES))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(10))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(40)))
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(2 * 1024 * 1024))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(2 * 1024 * 1024))
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1_000_000))
    sd("ns3::TcpSocket::ConnCount", ns.UintegerValue(1_000_000))
    # Pacing only where the congestion control asks for it (BBR), as the
    # family's `pacing = false` default; the first 10 packets unpaced, as
    # aqmlab's sender. Linux's ratios (200% in slow start, 120% after) are
    # ns-3's defaults and only matter when pacing without BBR.
    sd("ns3::TcpSocketState::EnablePacing", ns.BooleanValue(tcp == "bbr"))
    sd("ns3::TcpSocketState::PaceInitialWindow", ns.BooleanValue(False))
    sd("ns3::TcpSocketState::PacingSsRatio", ns.UintegerValue(200))
    sd("ns3::TcpSocketState::PacingCaRatio", ns.UintegerValue(120))
    # ECN (RFC 3168 negotiation, ECT on data) for DCTCP only, as aqmlab's
    # dctcp asks for it itself; off otherwise (the family's `ecn = false`).
    sd("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if tcp == "dctcp" else "Off"))
    if tcp == "cubic":
        # Linux's tcp_cubic: beta 717/1024 (ns-3: 0.7), C 0.4, fast
        # convergence, TCP friendliness, HyStart with both detectors from 16
        # packets, 8 delay samples, ACK train spacing 2 ms, delay threshold
        # clamped to [4, 16] ms.
        sd("ns3::TcpCubic::Beta", ns.DoubleValue(0.7))
        sd("ns3::TcpCubic::C", ns.DoubleValue(0.4))
        sd("ns3::TcpCubic::FastConvergence", ns.BooleanValue(True))
        sd("ns3::TcpCubic::TcpFriendliness", ns.BooleanValue(True))
        sd("ns3::TcpCubic::HyStart", ns.BooleanValue(True))
        sd("ns3::TcpCubic::HyStartLowWindow", ns.UintegerValue(16))
        sd("ns3::TcpCubic::HyStartMinSamples", ns.UintegerValue(8))
        sd("ns3::TcpCubic::HyStartAckDelta", ns.TimeValue(ns.MilliSeconds(2)))
        sd("ns3::TcpCubic::HyStartDelayMin", ns.TimeValue(ns.MilliSeconds(4)))
        sd("ns3::TcpCubic::HyStartDelayMax", ns.TimeValue(ns.MilliSeconds(16)))
    elif tcp == "dctcp":
        # Linux's dctcp: g = 1/16, alpha starts at 1, ECT(0).
        sd("ns3::TcpDctcp::DctcpShiftG", ns.DoubleValue(1 / 16))
        sd("ns3::TcpDctcp::DctcpAlphaOnInit", ns.DoubleValue(1.0))
        sd("ns3::TcpDctcp::UseEct0", ns.BooleanValue(True))
    elif tcp == "bbr":
        # Linux's tcp_bbr v1: high gain 2/ln 2, a bandwidth filter of 10
        # rounds, min_rtt over 10 s, 200 ms in PROBE_RTT, extra-acked window
        # of 5 rounds.
        sd("ns3::TcpBbr::HighGain", ns.DoubleValue(2.89))
        sd("ns3::TcpBbr::BwWindowLength", ns.UintegerValue(10))
        sd("ns3::TcpBbr::RttWindowLength", ns.TimeValue(ns.Seconds(10)))
        sd("ns3::TcpBbr::ProbeRttDuration", ns.TimeValue(ns.MilliSeconds(200)))
        sd("ns3::TcpBbr::ExtraAckedRttWindowLength", ns.UintegerValue(5))
    sd("ns3::DropTailQueue<Packet>::MaxSize", ns.StringValue("1p"))


def configure_defaults(ns, sack: bool) -> None:
    """Attribute defaults that make ns-3's TCP and queues match aqmlab's."""
    sd = ns.Config.SetDefault
    # NewReno congestion control, classic recovery (cwnd = ssthresh, sending
    # while the pipe is below it with SACK), not PRR; no timestamps.
    sd("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpNewReno"))
    sd("ns3::TcpL4Protocol::RecoveryType", ns.StringValue("ns3::TcpClassicRecovery"))
    sd("ns3::TcpSocketBase::Sack", ns.BooleanValue(sack))
    sd("ns3::TcpSocketBase::Timestamp", ns.BooleanValue(False))
    sd("ns3::TcpSocketBase::WindowScaling", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::LimitedTransmit", ns.BooleanValue(True))
    sd("ns3::TcpSocketBase::ReTxThreshold", ns.UintegerValue(3))
    # RTO: floor 200 ms, 10 ms clock as ns-2's tick (ns-3 caps at 60 s itself).
    sd("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MilliSeconds(200)))
    sd("ns3::TcpSocketBase::ClockGranularity", ns.TimeValue(ns.MilliSeconds(10)))
    sd("ns3::TcpSocket::ConnTimeout", ns.TimeValue(ns.Seconds(3)))
    sd("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_BYTES))
    sd("ns3::TcpSocket::InitialCwnd", ns.UintegerValue(2))
    sd("ns3::TcpSocket::DelAckCount", ns.UintegerValue(2))
    sd("ns3::TcpSocket::DelAckTimeout", ns.TimeValue(ns.MilliSeconds(100)))
    sd("ns3::TcpSocket::TcpNoDelay", ns.BooleanValue(True))
    # Windows far above what the path holds (about 430 packets in flight and
    # queued, in all), as aqmlab's rwnd of 10000 packets: never the limit.
    sd("ns3::TcpSocket::SndBufSize", ns.UintegerValue(2 * 1024 * 1024))
    sd("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(2 * 1024 * 1024))
    # ns-3 gives up a connection after 6 retransmissions; aqmlab never does.
    sd("ns3::TcpSocket::DataRetries", ns.UintegerValue(1_000_000))
    sd("ns3::TcpSocket::ConnCount", ns.UintegerValue(1_000_000))
    # One packet in each device queue: the qdisc above does the queueing.
    sd("ns3::DropTailQueue<Packet>::MaxSize", ns.StringValue("1p"))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not 0 <= args.warmup < args.duration:
        sys.exit("dumbbell.py: need 0 <= warmup < duration")
    t_setup = time.perf_counter()
    from ns import ns
    import cppyy

    cppyy.cppdef(PROBE_CPP)
    probe = cppyy.gbl.aqmbench

    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(args.seed)
    if args.tcp in LINUX_TCPS:
        configure_linux_defaults(ns, args.tcp)
    else:
        configure_defaults(ns, args.tcp == "sack")
    for a in args.tcp_attr:
        name, _, value = a.partition("=")
        if "::" not in name or "=" not in a:
            sys.exit(f"dumbbell.py: --tcp-attr wants a full NAME=VALUE (got {a!r})")
        ns.Config.SetDefault(name, ns.StringValue(value))

    senders, routers, receivers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(4)
    routers.Create(2)
    receivers.Create(4)
    r1, r2 = routers.Get(0), routers.Get(1)

    def link(a, b, rate: str, delay: str):
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
        return p2p.Install(a, b)

    access = [link(senders.Get(i), r1, "100Mbps", f"{d}ms") for i, d in enumerate(ACCESS_DELAYS_MS)]
    bottleneck = link(r1, r2, "10Mbps", "50ms")
    egress = [link(r2, receivers.Get(i), "100Mbps", "0.1ms") for i in range(4)]

    stack = ns.InternetStackHelper()
    for c in (senders, routers, receivers):
        stack.Install(c)

    # Queue discs, installed before the addresses so that ns-3 installs no
    # default (FqCoDel) on any device.
    big = ns.TrafficControlHelper()
    big.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.StringValue(BIG_QUEUE))
    bn = ns.TrafficControlHelper()
    if args.qdisc == "droptail":
        bn.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", ns.StringValue("299p"))
    elif args.qdisc == "red":
        bn.SetRootQueueDisc(
            "ns3::RedQueueDisc",
            "MaxSize", ns.StringValue("299p"),
            "MinTh", ns.DoubleValue(44),
            "MaxTh", ns.DoubleValue(194),
            "LInterm", ns.DoubleValue(10),  # max_p = 1 / LInterm = 0.1
            "QW", ns.DoubleValue(0.002),
            "Gentle", ns.BooleanValue(False),
            "Wait", ns.BooleanValue(False),
            "Ns1Compat", ns.BooleanValue(True),  # count reset on forced drops, as ns-2 and aqmlab
            "MeanPktSize", ns.UintegerValue(500),  # for the idle decay, as aqmlab's mean_pktsize
            "LinkBandwidth", ns.StringValue("10Mbps"),
            "LinkDelay", ns.StringValue("50ms"),
            "UseEcn", ns.BooleanValue(False),
        )
    elif args.qdisc == "red_step":
        # A step marker for DCTCP (as ns-3's own DCTCP example, dctcp-example.cc,
        # sets RED: UseEcn, no hard drop, QW 1), one packet lower than
        # aqmlab's 20/21 for the packet in the device queue: the average is
        # the instantaneous backlog (QW 1); at 19 packets in the qdisc p_b
        # is 0, at 20 or more (MaxTh) every ECN-capable packet is marked (a
        # forced drop turned into a mark, UseHardDrop false), the others
        # dropped.
        bn.SetRootQueueDisc(
            "ns3::RedQueueDisc",
            "MaxSize", ns.StringValue("299p"),
            "MinTh", ns.DoubleValue(19),
            "MaxTh", ns.DoubleValue(20),
            "LInterm", ns.DoubleValue(1),  # max_p = 1
            "QW", ns.DoubleValue(1.0),
            "Gentle", ns.BooleanValue(False),
            "Wait", ns.BooleanValue(False),
            "Ns1Compat", ns.BooleanValue(True),
            "MeanPktSize", ns.UintegerValue(500),
            "LinkBandwidth", ns.StringValue("10Mbps"),
            "LinkDelay", ns.StringValue("50ms"),
            "UseEcn", ns.BooleanValue(True),
            "UseHardDrop", ns.BooleanValue(False),
        )
    else:
        kind, attrs = AQM_ATTRS[args.qdisc]
        attrs = dict(attrs)
        for a in args.attr:
            name, _, value = a.partition("=")
            if not name or "=" not in a:
                sys.exit(f"dumbbell.py: --attr wants NAME=VALUE (got {a!r})")
            attrs[name] = value
        for name, value in attrs.items():
            # A full name (ns3::CoDelQueueDisc::MinBytes) reaches another
            # type, e.g. FQ-CoDel's per-flow CoDel.
            ns.Config.SetDefault(name if "::" in name else f"{kind}::{name}", ns.StringValue(value))
        bn.SetRootQueueDisc(kind)
    qdiscs = bn.Install(bottleneck.Get(0))
    big.Install(bottleneck.Get(1))
    for devs in access + egress:
        big.Install(devs)

    addr = ns.Ipv4AddressHelper()
    ifaces_rx = []
    for i, devs in enumerate(access):
        addr.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addr.Assign(devs)
    addr.SetBase(ns.Ipv4Address("10.2.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addr.Assign(bottleneck)
    for i, devs in enumerate(egress):
        addr.SetBase(ns.Ipv4Address(f"10.3.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        ifaces_rx.append(addr.Assign(devs))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    rx_addr = [ifaces_rx[i].GetAddress(1) for i in range(4)]

    # Applications. Flow j runs from s(j mod 4) to d(j mod 4), as aqmlab's dumbbell.
    rng = random.Random(args.seed)
    goodput = probe.Goodput()
    tcp_port, udp_port = 5000, 6000
    for i in range(4):
        sink = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), tcp_port).ConvertTo())
        apps = sink.Install(receivers.Get(i))
        apps.Start(ns.Seconds(0))
        goodput.Add(apps.Get(0))
        server = ns.UdpServerHelper(udp_port)
        server.Install(receivers.Get(i)).Start(ns.Seconds(0))
    for j in range(args.flows):
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(rx_addr[j % 4], tcp_port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
        bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT_BYTES))
        bulk.Install(senders.Get(j % 4)).Start(ns.Seconds(rng.uniform(0.0, 10.0)))
    interval_s = UDP_FRAME_BYTES * 8 / CBR_RATE_BPS
    for j in range(4):
        cbr = ns.UdpClientHelper(rx_addr[j].ConvertTo(), udp_port)
        cbr.SetAttribute("MaxPackets", ns.UintegerValue(0))
        cbr.SetAttribute("Interval", ns.TimeValue(ns.NanoSeconds(round(interval_s * 1e9))))
        cbr.SetAttribute("PacketSize", ns.UintegerValue(UDP_PAYLOAD_BYTES))
        cbr.Install(senders.Get(j)).Start(ns.Seconds(rng.uniform(0.0, 1.0)))

    bneck = probe.Bottleneck()
    bneck.t0 = round(args.warmup * 1e9)
    bneck.t1 = round(args.duration * 1e9)
    bneck.Connect(qdiscs.Get(0), bottleneck.Get(0))
    goodput.Schedule(ns.Seconds(args.warmup), ns.Seconds(args.duration))
    tcp_events = probe.TcpEvents()
    tcp_events.t0, tcp_events.t1 = bneck.t0, bneck.t1
    # Every socket exists once the last flow has started (by 10 s); the
    # counts cover the window, so a warm-up under 10.5 s misses some.
    tcp_events.ConnectAt(ns.Seconds(10.5))
    codel = None
    if args.qdisc == "codel":
        codel = probe.CodelState()
        codel.t0, codel.t1 = bneck.t0, bneck.t1
        codel.Connect(qdiscs.Get(0))
    cobalt = None
    if args.qdisc == "cobalt":
        cobalt = probe.CobaltState()
        cobalt.t0, cobalt.t1 = bneck.t0, bneck.t1
        cobalt.Connect(qdiscs.Get(0))
    ns.Simulator.Stop(ns.Seconds(args.duration))
    setup_s = time.perf_counter() - t_setup

    t0 = time.perf_counter()
    ns.Simulator.Run()
    wall_s = time.perf_counter() - t0
    events = int(ns.Simulator.GetEventCount())
    backlog_mean = float(bneck.BacklogMean())

    # Drops anywhere but the bottleneck qdisc, over the whole run (expected 0).
    other_drops = 0
    for c in (senders, routers, receivers):
        for k in range(c.GetN()):
            node = c.Get(k)
            tc = node.GetObject[ns.TrafficControlLayer]()
            for d in range(node.GetNDevices()):
                q = tc.GetRootQueueDiscOnDevice(node.GetDevice(d))
                if q and not (node.GetId() == r1.GetId() and d == bottleneck.Get(0).GetIfIndex()):
                    other_drops += int(q.GetStats().nTotalDroppedPackets)

    window = args.duration - args.warmup
    out = {
        "simulator": "ns-3",
        "ns3_version": ns3_version(),
        "flows": args.flows,
        "qdisc": args.qdisc,
        "tcp": args.tcp,
        "seed": args.seed,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "wall_s": wall_s,
        "setup_s": setup_s,
        "events": events,
        "goodput_bps": (goodput.rx1 - goodput.rx0) * 8 / window,
        "arrivals": int(bneck.arrivals),
        "departures": int(bneck.departures),
        "drops": int(bneck.drops),
        "drops_early": int(bneck.dropsEarly),
        "drops_forced": int(bneck.dropsForced),
        "drops_overflow": int(bneck.dropsOverflow),
        "drops_other": int(bneck.dropsOther),
        "drops_after_dequeue": int(bneck.dropsAfterDequeue),
        "marks": int(bneck.marks),
        "qdisc_attrs": AQM_ATTRS[args.qdisc][1] | dict(a.partition("=")[::2] for a in args.attr)
        if args.qdisc in AQM_ATTRS else None,
        "loss_rate": bneck.drops / bneck.arrivals if bneck.arrivals else None,
        "mark_rate": bneck.marks / bneck.arrivals if bneck.arrivals else None,
        "tcp_attrs": args.tcp_attr,
        "udp_arrivals": int(bneck.udpArrivals),
        "udp_drops": int(bneck.udpDrops),
        "udp_loss": bneck.udpDrops / bneck.udpArrivals if bneck.udpArrivals else None,
        "qdelay_mean_s": bneck.qdelaySumS / bneck.departures if bneck.departures else None,
        "utilization": bneck.txBytes * 8 / 10e6 / window,
        "qdisc_backlog_mean_pkts": backlog_mean,
        "other_drops": other_drops,
        "tcp_timeouts": int(tcp_events.timeouts),
        "tcp_fast_recoveries": int(tcp_events.recoveries),
        "codel_dropping_fraction": codel.droppingS / window if codel else None,
        "codel_dropping_entries": int(codel.entries) if codel else None,
        "codel_max_count": int(codel.maxCount) if codel else None,
        # Traced changes only: an entry whose count equals the last one's is not seen.
        "codel_entry_counts": [int(x) for x in codel.entryCounts] if codel else None,
        "codel_counts_before_entry": [int(x) for x in codel.countsBefore] if codel else None,
        "cobalt_dropping_fraction": cobalt.droppingS / window if cobalt else None,
        "cobalt_dropping_entries": int(cobalt.entries) if cobalt else None,
        "cobalt_max_count": int(cobalt.maxCount) if cobalt else None,
        "cobalt_pdrop_mean": cobalt.pdropSum / cobalt.samples if cobalt and cobalt.samples else None,
        "cobalt_pdrop_max": cobalt.pdropMax if cobalt else None,
        "trace_mismatches": int(bneck.mismatches),
    }
    ns.Simulator.Destroy()
    print(json.dumps(out))


def ns3_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ns3")
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    main()
