//! The user-space router: frames from the hosts' veths go through the
//! scenario's network (links, disciplines and monitors of `aqmlab-sim`,
//! unchanged) on CLOCK_MONOTONIC, and leave for the destination host's veth
//! when they reach it.
//!
//! The network asks for wake-ups through `Wakeups`; here they go into a
//! heap, and the loop handles each when the clock passes it, passing the
//! network the wake-up's own time (so a late wake-up does not stretch a
//! transmission: the schedule stays exact, and only the moment the frame
//! really leaves is late). How late each wake-up was handled is the
//! emulation's timing accuracy. Between wake-ups the loop sleeps in `ppoll`
//! on the ports until shortly before the next one, then spins.
//!
//! With `[trace]`, the traced queues are sampled by a wake-up of their own
//! every trace interval from time zero, in time order with the network's
//! (as the simulator's `Sample` event): the same columns as the
//! simulator's series (`LINK.backlog_pkts`, `.backlog_bytes`, `.arrivals`,
//! `.drops` and what the discipline traces). Samples are not counted in
//! the timing accuracy.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};

use aqmlab_qdisc::{Duration, Ecn, Packet, PacketKind, Time};
use aqmlab_sim::engine::Fired;
use aqmlab_sim::monitor::{FlowStats, Window};
use aqmlab_sim::net::link::{Network, Wakeups};

use crate::lab;
use crate::ring::Port;
use crate::sys::{mono_ns, realtime_ns, thread_cpu_ns};

/// What the router knows of a flow.
#[derive(Clone, Copy, Debug)]
pub struct FlowInfo {
    pub group: u16,
    pub class: u8,
    pub src: u32,
    pub dst: u32,
    pub ted_deadline: Duration,
}

/// The first port number of the flows' servers: flow `f` is the one whose
/// connection or datagrams have port `FLOW_PORT_BASE + f` at either end.
pub const FLOW_PORT_BASE: u16 = 20000;

/// How long before a wake-up the loop stops sleeping and spins: a little
/// more than a `ppoll` usually oversleeps on the machines measured (about
/// 60 us at the median, bench/README.md).
const SPIN_NS: u64 = 100_000;

const TX: u8 = 0;
const ARRIVAL: u8 = 1;
const QDISC: u8 = 2;
const SAMPLE: u8 = 3;

/// The queues `[trace]` asks for: every `interval` from time zero up to the
/// window's end, links by index with their names.
#[derive(Clone, Debug)]
pub struct QueueTrace {
    pub interval: Duration,
    pub links: Vec<(u32, String)>,
}

/// The wake-ups the network asked for, in time order.
struct Clock {
    seq: u64,
    tx: Vec<Option<(Time, u64)>>,
    arrival: Vec<Option<(Time, u64)>>,
    heap: BinaryHeap<Reverse<(Time, u64, u32, u8, u32)>>,
}

impl Wakeups for Clock {
    fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
    fn set_tx_done(&mut self, l: u32, at: Option<(Time, u64)>) {
        self.tx[l as usize] = at;
        if let Some((t, s)) = at {
            self.heap.push(Reverse((t, s, l, TX, 0)));
        }
    }
    fn set_arrival(&mut self, l: u32, at: Option<(Time, u64)>) {
        self.arrival[l as usize] = at;
        if let Some((t, s)) = at {
            self.heap.push(Reverse((t, s, l, ARRIVAL, 0)));
        }
    }
    fn qdisc_timer(&mut self, l: u32, at: Time, generation: u32) {
        let s = self.reserve();
        self.heap.push(Reverse((at, s, l, QDISC, generation)));
    }
}

/// Lateness of the wake-ups, in 1 us bins up to 100 ms.
pub struct Lateness {
    bins: Vec<u64>,
    pub max_ns: u64,
    pub count: u64,
}

impl Lateness {
    fn new() -> Lateness {
        Lateness {
            bins: vec![0; 100_001],
            max_ns: 0,
            count: 0,
        }
    }
    #[inline]
    fn push(&mut self, ns: u64) {
        self.bins[((ns / 1000) as usize).min(100_000)] += 1;
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
    }
    /// The `q` quantile in seconds (the upper edge of its 1 us bin).
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let want = (q * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= want {
                return ((i + 1) as f64 / 1e6).min(self.max_ns as f64 / 1e9);
            }
        }
        self.max_ns as f64 / 1e9
    }
}

/// What the router measured, handed back when it stops.
pub struct RouterReport {
    pub net: Network,
    /// Per flow, at the router: packets sent into the network (not pure
    /// ACKs), dropped, delivered, and their one-way delay through it.
    pub stats: Vec<FlowStats>,
    pub lateness: Lateness,
    /// Frames that were not IPv4 between two of the emulation's hosts.
    pub foreign: u64,
    /// IPv4 frames of no scenario flow (a reset to a closed port, say).
    pub strays: u64,
    /// Frames the kernel refused to send or dropped before the ring.
    pub send_failures: u64,
    pub ring_drops: u64,
    /// The router thread's CPU time over the run, seconds.
    pub cpu_s: f64,
    /// The run's length, seconds of CLOCK_MONOTONIC.
    pub wall_s: f64,
    /// The traced queues' columns, one value per sample (see [`QueueTrace`]).
    pub series: Vec<(String, Vec<f64>)>,
    pub samples: usize,
}

pub struct Router {
    net: Network,
    clock: Clock,
    /// The frames of the packets in the network, by `Packet::id`.
    frames: Vec<Vec<u8>>,
    free: Vec<u32>,
    flows: Vec<FlowInfo>,
    /// The node of host `k`, and the host at a node.
    host_node: Vec<u32>,
    node_host: Vec<Option<usize>>,
    window: Window,
    stats: Vec<FlowStats>,
    lateness: Lateness,
    foreign: u64,
    strays: u64,
    send_failures: u64,
    last: Time,
    /// CLOCK_MONOTONIC at emulation time zero.
    t0: u64,
    trace: Option<QueueTrace>,
    columns: Vec<(String, Vec<f64>)>,
    samples: usize,
}

impl Router {
    pub fn new(net: Network, flows: Vec<FlowInfo>, host_node: Vec<u32>, n_nodes: usize, window: Window) -> Router {
        let n_links = net.links.len();
        let mut node_host = vec![None; n_nodes];
        for (k, &n) in host_node.iter().enumerate() {
            node_host[n as usize] = Some(k);
        }
        Router {
            net,
            clock: Clock {
                seq: 0,
                tx: vec![None; n_links],
                arrival: vec![None; n_links],
                heap: BinaryHeap::new(),
            },
            frames: Vec::new(),
            free: Vec::new(),
            stats: vec![FlowStats::default(); flows.len()],
            flows,
            host_node,
            node_host,
            window,
            lateness: Lateness::new(),
            foreign: 0,
            strays: 0,
            send_failures: 0,
            last: Time::ZERO,
            t0: 0,
            trace: None,
            columns: Vec::new(),
            samples: 0,
        }
    }

    /// Samples `trace`'s queues while running.
    pub fn with_trace(mut self, trace: Option<QueueTrace>) -> Router {
        self.trace = trace;
        self
    }

    /// Forwards until `end` (emulation time, from `t0` on CLOCK_MONOTONIC)
    /// or until `stop` is set.
    pub fn run(mut self, ports: Vec<Port>, t0: u64, end: Time, stop: &AtomicBool) -> RouterReport {
        self.t0 = t0;
        if self.trace.is_some() {
            let s = self.clock.reserve();
            self.clock.heap.push(Reverse((Time::ZERO, s, 0, SAMPLE, 0)));
        }
        let cpu0 = thread_cpu_ns();
        let mut fds: Vec<libc::pollfd> = ports
            .iter()
            .map(|p| libc::pollfd {
                fd: p.fd(),
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let mut ports = ports;
        let mut idle_checks = 0u32;
        let mut batch: Vec<(u64, u32, u32)> = Vec::new();
        loop {
            let t = Time(mono_ns().saturating_sub(t0));
            if t >= end {
                break;
            }
            let mut busy = false;
            // Frames first, each at the time the kernel received it, with
            // the wake-ups due before it handled first: the network sees
            // events in time order, and a frame's time in the network does
            // not include the router's own delay in reading it.
            let offset = realtime_ns().wrapping_sub(mono_ns());
            for (k, port) in ports.iter_mut().enumerate() {
                while let Some(got) = port.recv(|frame, stamp| {
                    // A stamp that is not a plausible receive time (in the
                    // future, or more than 100 ms old) is not trusted.
                    let real = mono_ns().saturating_sub(t0);
                    let at = stamp.wrapping_sub(offset).wrapping_sub(t0);
                    let at = if at <= real && real - at < 100_000_000 { at } else { real };
                    self.take(frame, at)
                }) {
                    if let Some((id, at)) = got {
                        batch.push((at, k as u32, id));
                    }
                    busy = true;
                }
            }
            batch.sort_unstable();
            for &(at, k, id) in &batch {
                self.fire_due(Time(at), &ports);
                self.ingress(k as usize, id, Time(at));
            }
            batch.clear();
            let t = Time(mono_ns().saturating_sub(t0));
            busy |= self.fire_due(t, &ports);
            if busy {
                continue;
            }
            idle_checks += 1;
            if idle_checks % 1024 == 0 && stop.load(Ordering::Relaxed) {
                break;
            }
            let next = self.clock.heap.peek().map_or(end, |r| r.0 .0.min(end));
            let now = Time(mono_ns().saturating_sub(t0));
            if next.0 > now.0 + SPIN_NS {
                // Sleep until a frame comes or shortly before the next
                // wake-up, at most 50 ms (to see `stop`).
                let ns = (next.0 - now.0 - SPIN_NS).min(50_000_000);
                let ts = libc::timespec {
                    tv_sec: (ns / 1_000_000_000) as libc::time_t,
                    tv_nsec: (ns % 1_000_000_000) as libc::c_long,
                };
                // SAFETY: `fds` and `ts` are live for the call.
                unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
                if stop.load(Ordering::Relaxed) {
                    break;
                }
            } else {
                std::hint::spin_loop();
            }
        }
        let wall_s = (mono_ns().saturating_sub(t0)) as f64 * 1e-9;
        if !stop.load(Ordering::Relaxed) {
            // What is due at the end itself (the last trace sample, as the
            // simulator takes it), which the loop stopped short of.
            self.fire_due(end, &ports);
        }
        let ring_drops = ports.iter().map(Port::ring_drops).sum();
        RouterReport {
            net: self.net,
            stats: self.stats,
            lateness: self.lateness,
            foreign: self.foreign,
            strays: self.strays,
            send_failures: self.send_failures,
            ring_drops,
            cpu_s: (thread_cpu_ns() - cpu0) as f64 * 1e-9,
            wall_s,
            series: self.columns,
            samples: self.samples,
        }
    }

    /// Handles the wake-ups due at or before `t`; true if there were any.
    fn fire_due(&mut self, t: Time, ports: &[Port]) -> bool {
        let mut any = false;
        while let Some(&Reverse((at, seq, l, kind, generation))) = self.clock.heap.peek() {
            if at > t {
                break;
            }
            self.clock.heap.pop();
            any = true;
            self.wake(at, seq, l, kind, generation, ports);
        }
        any
    }

    /// Handles the wake-up due at `at`.
    fn wake(&mut self, at: Time, seq: u64, l: u32, kind: u8, generation: u32, ports: &[Port]) {
        let now = at.max(self.last);
        self.last = now;
        match kind {
            TX => {
                if self.clock.tx[l as usize] != Some((at, seq)) {
                    return;
                }
                self.clock.tx[l as usize] = None;
                self.late(at);
                self.net.tx_done(l, now, &mut self.clock);
            }
            ARRIVAL => {
                if self.clock.arrival[l as usize] != Some((at, seq)) {
                    return;
                }
                self.clock.arrival[l as usize] = None;
                self.late(at);
                if let Some(p) = self.net.arrive(l, now, &mut self.clock) {
                    self.deliver(p, now, ports);
                }
            }
            SAMPLE => {
                self.sample();
                let tr = self.trace.as_ref().expect("samples only when tracing");
                let next = at + tr.interval;
                if next <= self.window.end {
                    let s = self.clock.reserve();
                    self.clock.heap.push(Reverse((next, s, 0, SAMPLE, 0)));
                }
                return;
            }
            _ => match self.net.links[l as usize].timer.fire(generation, now) {
                Fired::Due => self.net.qdisc_timer(l, now, &mut self.clock),
                Fired::Later(t) => self.clock.qdisc_timer(l, t, generation),
                Fired::Stale => {}
            },
        }
        self.account_lost();
    }

    /// Appends one sample of the traced queues to the columns.
    fn sample(&mut self) {
        let Some(tr) = &self.trace else { return };
        let columns = &mut self.columns;
        let mut i = 0;
        for (l, name) in &tr.links {
            let link = &self.net.links[*l as usize];
            let mut push = |key: &str, v: f64| {
                if columns.len() <= i {
                    columns.push((format!("{name}.{key}"), Vec::new()));
                }
                columns[i].1.push(v);
                i += 1;
            };
            link.trace(&mut push);
        }
        self.samples += 1;
    }

    /// Records how late the wake-up due at `at` is being handled.
    #[inline]
    fn late(&mut self, at: Time) {
        let real = mono_ns().saturating_sub(self.t0);
        self.lateness.push(real.saturating_sub(at.0));
    }

    fn account_lost(&mut self) {
        for p in self.net.lost.drain(..) {
            self.free.push(p.id as u32);
            if p.kind != PacketKind::TcpAck && (p.flow as usize) < self.flows.len() && self.window.contains(p.sent_at) {
                self.stats[p.flow as usize].drops += 1;
            }
        }
    }

    /// Copies a received frame into a free slot if it is IPv4 between two
    /// of the hosts; returns the slot and the frame's time (`at`, ns of
    /// emulation time).
    fn take(&mut self, frame: &[u8], at: u64) -> Option<(u32, u64)> {
        if frame.len() < 34 || frame[12..14] != [0x08, 0x00] || frame[14] >> 4 != 4 {
            self.foreign += 1;
            return None;
        }
        let ip = &frame[14..];
        let ihl = (ip[0] & 0x0f) as usize * 4;
        let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
        let dst_ip = u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]);
        if lab::host_of_ip(dst_ip, self.host_node.len()).is_none() || ihl < 20 || total < ihl || 14 + total > frame.len() {
            self.foreign += 1;
            return None;
        }
        let id = match self.free.pop() {
            Some(i) => i,
            None => {
                self.frames.push(Vec::with_capacity(2048));
                (self.frames.len() - 1) as u32
            }
        };
        let buf = &mut self.frames[id as usize];
        buf.clear();
        buf.extend_from_slice(&frame[..14 + total]);
        Some((id, at))
    }

    /// The frame in slot `id`, from host `k`'s veth, enters the network at
    /// the host's node at `at`.
    fn ingress(&mut self, k: usize, id: u32, at: Time) {
        let now = at.max(self.last);
        self.last = now;
        let frame = &self.frames[id as usize];
        let ip = &frame[14..];
        let ihl = (ip[0] & 0x0f) as usize * 4;
        let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
        let dst_ip = u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]);
        let dst_host = lab::host_of_ip(dst_ip, self.host_node.len()).expect("checked in take");
        let proto = ip[9];
        let l4 = &ip[ihl..total];
        let (flow, kind) = match proto {
            6 | 17 if l4.len() >= 4 => {
                let sport = u16::from_be_bytes([l4[0], l4[1]]);
                let dport = u16::from_be_bytes([l4[2], l4[3]]);
                let n = self.flows.len() as u16;
                let f = if dport.wrapping_sub(FLOW_PORT_BASE) < n {
                    Some((dport - FLOW_PORT_BASE) as u32)
                } else if sport.wrapping_sub(FLOW_PORT_BASE) < n {
                    Some((sport - FLOW_PORT_BASE) as u32)
                } else {
                    None
                };
                let kind = if proto == 17 {
                    PacketKind::Udp
                } else if l4.len() >= 14 {
                    let data_off = (l4[12] >> 4) as usize * 4;
                    let flags = l4[13];
                    if l4.len() > data_off {
                        PacketKind::TcpData
                    } else if flags & 0x12 == 0x02 {
                        PacketKind::TcpSyn
                    } else {
                        PacketKind::TcpAck
                    }
                } else {
                    PacketKind::TcpAck
                };
                (f, kind)
            }
            _ => (None, PacketKind::Udp),
        };
        // ECT(0) and ECT(1) kept apart: a dual-queue AQM classifies on them.
        let ecn = Ecn::from_bits(ip[1]);
        let info = match flow {
            Some(f) => self.flows[f as usize],
            None => {
                self.strays += 1;
                FlowInfo {
                    group: 0,
                    class: 0,
                    src: self.host_node[k],
                    dst: self.host_node[dst_host],
                    ted_deadline: Duration::MAX,
                }
            }
        };
        let pkt = Packet {
            id: id as u64,
            flow: flow.unwrap_or(u32::MAX),
            group: info.group,
            class: info.class,
            ecn,
            size_bytes: total as u32,
            src: self.host_node[k],
            dst: self.host_node[dst_host],
            sent_at: now,
            enqueued_at: now,
            kind,
            ted_deadline: info.ted_deadline,
            ted_budget: Duration::MAX,
            ..Packet::default()
        };
        if let Some(f) = flow {
            if kind != PacketKind::TcpAck && self.window.contains(now) {
                let s = &mut self.stats[f as usize];
                s.sent_pkts += 1;
                s.sent_bytes += total as u64;
            }
        }
        self.net.forward(pkt.src, pkt, now, &mut self.clock);
        self.account_lost();
    }

    /// A packet reached its destination node: its frame leaves for the host.
    fn deliver(&mut self, p: Packet, now: Time, ports: &[Port]) {
        let k = self.node_host[p.dst as usize].expect("packets are addressed to hosts");
        let buf = &mut self.frames[p.id as usize];
        buf[0..6].copy_from_slice(&lab::host_mac(k));
        buf[6..12].copy_from_slice(&lab::port_mac(k));
        if p.ecn == Ecn::Ce && buf[15] & 3 != 3 {
            set_ce(&mut buf[14..]);
        }
        if !ports[k].send(buf) {
            self.send_failures += 1;
        }
        self.free.push(p.id as u32);
        if p.kind != PacketKind::TcpAck && (p.flow as usize) < self.flows.len() && self.window.contains(now) {
            let s = &mut self.stats[p.flow as usize];
            s.delivered_pkts += 1;
            s.delay.push(now - p.sent_at);
        }
    }
}

/// Marks an IPv4 header Congestion Experienced, updating its checksum
/// incrementally (RFC 1624: HC' = ~(~HC + ~m + m')).
fn set_ce(ip: &mut [u8]) {
    let old = u16::from_be_bytes([ip[0], ip[1]]);
    ip[1] |= 3;
    let new = u16::from_be_bytes([ip[0], ip[1]]);
    let hc = u16::from_be_bytes([ip[10], ip[11]]);
    let mut sum = (!hc) as u32 + (!old) as u32 + new as u32;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    let out = !(sum as u16);
    ip[10..12].copy_from_slice(&out.to_be_bytes());
}

#[cfg(test)]
mod test {
    use super::*;

    /// The one's-complement sum of a header's 16-bit words: 0xffff when its
    /// checksum is right.
    fn sum(h: &[u8]) -> u16 {
        let mut s: u32 = h.chunks(2).map(|w| u16::from_be_bytes([w[0], w[1]]) as u32).sum();
        while s > 0xffff {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    #[test]
    fn marking_ce_keeps_the_header_checksum_right() {
        // The IPv4 header of RFC 1071's style of example, ECT(0), with its
        // checksum computed from scratch: 45 02 0073 0000 4000 4011 ....
        let mut h = [
            0x45, 0x02, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc6, 0x12, 0x00, 0x01, 0xc6, 0x12,
            0x00, 0x02,
        ];
        let c = !sum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(sum(&h), 0xffff);
        set_ce(&mut h);
        assert_eq!(h[1] & 3, 3, "CE");
        assert_eq!(sum(&h), 0xffff, "the checksum still verifies");
        // By hand: the first word goes 0x4502 -> 0x4503, so the checksum
        // drops by one.
        assert_eq!(u16::from_be_bytes([h[10], h[11]]), c - 1);
    }

    #[test]
    fn lateness_quantiles_are_bin_edges_capped_by_the_max() {
        let mut l = Lateness::new();
        for ns in [500, 1_500, 2_500, 3_500] {
            l.push(ns);
        }
        // Half the values are under 2 us: the median is the 1-2 us bin's
        // upper edge.
        assert_eq!(l.quantile_s(0.5), 2e-6);
        // The top bin's edge (4 us) is capped by the largest value seen.
        assert_eq!(l.quantile_s(0.99), 3.5e-6);
        assert!(Lateness::new().quantile_s(0.5).is_nan());
    }
}
