//! The hosts' traffic, through real kernel sockets in the hosts'
//! namespaces. One thread drives every flow from an epoll loop; a socket
//! belongs to the namespace the thread was in when it opened it. The
//! applications are the simulator's own machines, with the same streams and
//! the same draws for the same seed; what each kind does on its sockets is
//! in its own file:
//!
//! - [`tcp`]: `ftp`, `file` and `onoff` over TCP (`aqmlab_sim::app::bulk`),
//!   with the kernel's congestion control;
//! - [`http11`]: persistent HTTP/1.1 clients (`aqmlab_sim::app::http11`);
//! - [`web`]: HTTP/1.0 web sessions (`aqmlab_sim::app::web`), each object
//!   on new connections;
//! - [`udp`]: the open-loop UDP sources on the simulator's schedules
//!   (`aqmlab_sim::transport::udp::UdpSource`).
//!
//! This file holds what they share: the flows, the sockets' set-up, the
//! timers (each flow's machine wants to be called at its `next_timer`; one
//! timerfd is armed for the earliest) and the trace.
//!
//! With `[trace]` flows, each traced flow's sender is sampled by
//! TCP_INFO every trace interval from time zero (a timer of this thread,
//! so a sample is as late as the thread's wake-up): `FLOW.cwnd` and
//! `.ssthresh` (packets), `.srtt_s`, `.rto_s`, as the simulator's series,
//! and `.retransmits` (the connection's total, Linux's count); null while
//! the flow has no connection.
//!
//! Flow `f`'s server end listens on (or, for UDP, receives at) port
//! `FLOW_PORT_BASE + f` of its host, which is how the router tells flows
//! apart.

mod http11;
mod tcp;
mod udp;
mod web;

use tcp::{bbr_info, tcp_info};
pub use web::{WebFlow, REQUEST_HEAD};

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::CString;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use aqmlab_qdisc::Time;
use aqmlab_sim::app::bulk::Bulk;
use aqmlab_sim::app::http11::Http11Client;
use aqmlab_sim::monitor::{DelayStats, Window};
use aqmlab_sim::transport::udp::UdpSource;

use crate::lab;
use crate::router::FLOW_PORT_BASE;
use crate::sys::{check, mono_ns};

/// The bytes of an IPv4 and a UDP header: a datagram of a `size`-byte UDP
/// packet carries `size - 28` bytes.
pub const UDP_HEADERS: u32 = 28;

/// The most UDP delays a flow keeps for its percentiles.
pub const MAX_DELAY_SAMPLES: usize = 1 << 20;

/// The unsent bytes an ON/OFF TCP socket may hold (see the module notes).
pub const ONOFF_UNSENT_BYTES: usize = 16 << 10;

/// What a flow does.
pub enum FlowApp {
    /// A TCP application (`ftp`, `file`, `onoff`) as the simulator's
    /// machine `app` says, with the kernel's congestion control `cc`;
    /// `bounded_unsent` for ON/OFF (see [`ONOFF_UNSENT_BYTES`]);
    /// `paced_bytes`, the application packet's payload, for ON/OFF with a
    /// rate.
    Tcp {
        cc: String,
        app: Box<Bulk>,
        bounded_unsent: bool,
        paced_bytes: Option<u32>,
    },
    /// An open-loop UDP source.
    Udp(Box<UdpSource>),
    /// A persistent HTTP/1.1 client (the simulator's `Http11Client`): the
    /// plan's `src_host` is the client, `dst_host` the server. Requests are
    /// `request_bytes`, responses the drawn packets of `payload_bytes`.
    Http11 {
        cc: String,
        client: Box<Http11Client>,
        request_bytes: u64,
        payload_bytes: u32,
    },
    /// A web session slot (see [`web`]).
    Web(Box<WebFlow>),
}

pub struct FlowPlan {
    pub src_host: usize,
    pub dst_host: usize,
    pub start: Time,
    pub app: FlowApp,
    /// UDP: the codepoint the sender's packets carry (IP_TOS).
    pub ecn: aqmlab_qdisc::Ecn,
}

/// What the hosts saw of a flow.
#[derive(Clone, Debug, Default)]
pub struct HostStats {
    /// Delivered to the receiving application inside the window: TCP
    /// payload bytes, or UDP packets' bytes (headers included).
    pub delivered_bytes: u64,
    pub delivered_pkts: u64,
    /// UDP, over the whole run: the datagrams the application received and
    /// the highest sequence number among them. One link keeps a flow's
    /// packets in order, so the numbers below the highest that never came
    /// are the flow's losses, wherever they happened, whatever the timing
    /// of this machine's wake-ups.
    pub udp_received_run: u64,
    pub udp_highest_seq: u64,
    /// UDP: one-way delay from the sending application to the receiving
    /// one, read from the timestamp each datagram carries.
    pub delay: DelayStats,
    /// TCP: payload delivered over the whole run, and when the last byte of
    /// a single finite transfer (`ftp` with a size) arrived (emulation time).
    pub transfer_bytes: u64,
    pub done_at: Option<Time>,
    /// TCP: the times of the transfers delivered inside the window (s),
    /// each from its connect(2) to the receiver reading its FIN.
    pub transfer_times: Vec<f64>,
    /// HTTP/1.1: (response packets, seconds from the request to the
    /// response's last byte) of the responses completed inside the window,
    /// and the request bytes the server read inside it.
    pub response_times: Vec<(u32, f64)>,
    pub request_bytes: u64,
    /// Web: the times of the pages completed inside the window (s), and
    /// the session's open connections integrated over the window
    /// (connection-nanoseconds). Its objects' times are `transfer_times`.
    pub page_times: Vec<f64>,
    pub open_area_ns: u128,
    /// TCP: the congestion control the sender's socket reports
    /// (getsockopt TCP_CONGESTION) on its last connection.
    pub congestion_control: Option<String>,
    /// TCP_INFO of the sender at the end.
    pub info: Option<TcpInfo>,
    /// Sends the kernel refused (UDP: the socket's buffer was full).
    pub send_errors: u64,
    /// UDP: each delay in the window (ns), for percentiles; at most
    /// `MAX_DELAY_SAMPLES`.
    pub delays_ns: Vec<u64>,
    /// UDP: how late each datagram was sent against its schedule (ns).
    pub send_late_ns: Vec<u64>,
}

#[derive(Clone, Copy, Debug)]
pub struct TcpInfo {
    /// Past the handshake (not TCP_SYN_SENT).
    pub connected: bool,
    pub total_retrans: u32,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt_s: f64,
    pub rto_s: f64,
    /// `tcpi_pacing_rate` in bits per second; NaN while unlimited (before
    /// the stack first sets it).
    pub pacing_rate_bps: f64,
    /// The peer's advertised window in packets (`tcpi_snd_wnd` over
    /// `tcpi_snd_mss`).
    pub rwnd_pkts: f64,
}

const LISTEN: u64 = 1;
const TCP_SINK: u64 = 2;
const TCP_SEND: u64 = 3;
const UDP_SINK: u64 = 4;
const TIMER: u64 = 5;
/// A web socket, by its slot in `Traffic::web_conns`.
const WEB: u64 = 6;

fn token(kind: u64, f: usize) -> u64 {
    (kind << 32) | f as u64
}

struct Flow {
    plan: FlowPlan,
    stats: HostStats,
    sender: Option<OwnedFd>,
    sink: Option<OwnedFd>,
    listener: Option<OwnedFd>,
    /// TCP: bytes written on the current connection, and the current
    /// transfer's size (None: unlimited).
    sent: u64,
    target: Option<u64>,
    /// TCP: when the current connection was opened, and whether the
    /// application is in an OFF period (nothing to write).
    opened_at: Time,
    paused: bool,
    udp_seq: u64,
    /// HTTP/1.1: bytes the client still has to write and the server to
    /// read of the request, the server to write and the client to read of
    /// the response; the response's packets and when it was asked for.
    http: HttpState,
    web: web::WebState,
}

#[derive(Default)]
struct HttpState {
    req_write: u64,
    req_read: u64,
    resp_write: u64,
    resp_read: u64,
    resp_pkts: u32,
    asked_at: Time,
}

/// The Linux TCP counters (`TcpExt` of /proc/net/netstat) summed over the
/// hosts at the end of a run: how the kernels recovered from losses, which
/// the simulator's agents do differently. Each host's namespace is new, so
/// its counters start at zero.
pub const TCP_COUNTERS: &[&str] = &[
    "TCPTimeouts",
    "TCPSpuriousRTOs",
    "TCPLossProbes",
    "TCPLossProbeRecovery",
    "TCPSackRecovery",
    "TCPRenoRecovery",
    "TCPFastRetrans",
    "TCPSlowStartRetrans",
    "TCPLostRetransmit",
    "TCPFullUndo",
    "TCPPartialUndo",
    "TCPDSACKUndo",
    "TCPLossUndo",
    "TCPDSACKRecv",
    "TCPSackRecoveryFail",
    "TCPLossFailures",
    "TCPSackFailures",
    "TCPSpuriousRtxHostQueues",
    "TCPOFODrop",
    "TCPRcvQDrop",
    "PruneCalled",
    "TCPRcvCollapsed",
    "TCPWantZeroWindowAdv",
    "TCPToZeroWindowAdv",
];

/// What the hosts saw: each flow's stats, the traced flows' series and the
/// kernels' TCP counters ([`TCP_COUNTERS`], in that order).
pub struct Outcome {
    pub hosts: Vec<HostStats>,
    pub series: crate::Series,
    pub tcp_counters: Vec<u64>,
}

/// The values of `names` in the text of a /proc/net/netstat: each section
/// is a line of names and a line of values with the same prefix.
pub fn netstat_values(text: &str, names: &[&str]) -> Vec<u64> {
    let mut out = vec![0; names.len()];
    let lines: Vec<&str> = text.lines().collect();
    for pair in lines.chunks(2) {
        let [keys, values] = pair else { continue };
        for (k, v) in keys.split_whitespace().zip(values.split_whitespace()).skip(1) {
            if let Some(i) = names.iter().position(|n| *n == k) {
                out[i] += v.parse::<u64>().unwrap_or(0);
            }
        }
    }
    out
}

/// The flows `[trace]` asks for: every `interval` from time zero up to the
/// window's end, flows by index with their names.
#[derive(Clone, Debug)]
pub struct FlowTrace {
    pub interval: aqmlab_qdisc::Duration,
    pub flows: Vec<(u32, String, TracedColumns)>,
}

/// The columns a traced flow has beyond cwnd, ssthresh, srtt, RTO and
/// retransmissions: the simulator's for the same variant, so that the two
/// engines' traces line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracedColumns {
    /// An ns-2 agent's variant (emulated as Linux's `reno`): none.
    Ns2,
    /// The Linux-style family: the pacing rate and the peer's window.
    Linux,
    /// `bbr`: the pacing rate and BBR's state (`TCP_CC_INFO`).
    Bbr,
}

/// The heap's entry for the next trace sample (not a flow).
const SAMPLE_FLOW: usize = usize::MAX;

/// Drives the flows' sockets.
pub struct Traffic {
    trace: Option<FlowTrace>,
    /// The traced flows' columns, one value per sample.
    pub columns: Vec<(String, Vec<f64>)>,
    flows: Vec<Flow>,
    /// /run/netns/<host> for each host, to switch into before opening its
    /// sockets.
    ns: Vec<OwnedFd>,
    epoll: OwnedFd,
    timerfd: OwnedFd,
    timers: BinaryHeap<Reverse<(Time, usize)>>,
    window: Window,
    t0: u64,
    buf: Vec<u8>,
    /// The web sockets, and their free slots.
    web_conns: Vec<Option<web::WebConn>>,
    web_free: Vec<usize>,
}

fn sockaddr(ip: Ipv4Addr, port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as u16,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(ip).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn setopt<T>(fd: RawFd, level: i32, opt: i32, v: &T, what: &str) -> io::Result<()> {
    // SAFETY: `v` is live for the call and its size is passed.
    check(
        unsafe { libc::setsockopt(fd, level, opt, v as *const T as *const libc::c_void, std::mem::size_of::<T>() as u32) } as _,
        what,
    )
    .map(|_| ())
}

fn socket(kind: i32) -> io::Result<OwnedFd> {
    // SAFETY: socket(2); owned at once.
    let fd = check(unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, 0) } as _, "socket")?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn bind(fd: RawFd, ip: Ipv4Addr, port: u16) -> io::Result<()> {
    let sa = sockaddr(ip, port);
    // SAFETY: `sa` is a live sockaddr_in for the call.
    check(
        unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) } as _,
        &format!("binding {ip}:{port}"),
    )
    .map(|_| ())
}

impl Traffic {
    /// Opens every flow's receiving end (listeners and UDP sockets) in its
    /// host's namespace. Must run on the thread that will call [`run`].
    pub fn new(plans: Vec<FlowPlan>, hosts: &[String], window: Window) -> io::Result<Traffic> {
        let mut ns = Vec::new();
        for h in hosts {
            let path = CString::new(format!("/run/netns/{h}")).expect("no NUL");
            // SAFETY: a valid C string; owned at once.
            let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) } as _, &format!("open /run/netns/{h}"))?;
            ns.push(unsafe { OwnedFd::from_raw_fd(fd as i32) });
        }
        // SAFETY: epoll_create1 and timerfd_create; owned at once.
        let epoll = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) } as _, "epoll_create1")?;
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll as i32) };
        let timerfd = check(
            unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) } as _,
            "timerfd_create",
        )?;
        let timerfd = unsafe { OwnedFd::from_raw_fd(timerfd as i32) };
        let mut t = Traffic {
            trace: None,
            columns: Vec::new(),
            flows: plans
                .into_iter()
                .map(|plan| Flow {
                    plan,
                    stats: HostStats::default(),
                    sender: None,
                    sink: None,
                    listener: None,
                    sent: 0,
                    target: None,
                    opened_at: Time::ZERO,
                    paused: false,
                    udp_seq: 0,
                    http: HttpState::default(),
                    web: web::WebState::default(),
                })
                .collect(),
            ns,
            epoll,
            timerfd,
            timers: BinaryHeap::new(),
            window,
            t0: 0,
            buf: vec![0u8; 1 << 16],
            web_conns: Vec::new(),
            web_free: Vec::new(),
        };
        t.watch(t.timerfd.as_raw_fd(), libc::EPOLLIN as u32, token(TIMER, 0))?;
        for f in 0..t.flows.len() {
            let (dst, port) = (t.flows[f].plan.dst_host, FLOW_PORT_BASE + f as u16);
            t.enter(dst)?;
            match t.flows[f].plan.app {
                FlowApp::Tcp { .. } | FlowApp::Http11 { .. } => {
                    let l = socket(libc::SOCK_STREAM)?;
                    setopt(l.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32, "SO_REUSEADDR")?;
                    bind(l.as_raw_fd(), lab::host_ip(dst), port)?;
                    // SAFETY: listen(2) on our socket.
                    check(unsafe { libc::listen(l.as_raw_fd(), 16) } as _, "listen")?;
                    t.watch(l.as_raw_fd(), libc::EPOLLIN as u32, token(LISTEN, f))?;
                    t.flows[f].listener = Some(l);
                }
                FlowApp::Web(_) => t.web_listen(f)?,
                FlowApp::Udp(_) => {
                    let s = socket(libc::SOCK_DGRAM)?;
                    setopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_RCVBUF, &(4i32 << 20), "SO_RCVBUF")?;
                    // The kernel stamps each datagram as it arrives, so the
                    // delay does not include this thread's own wake-up.
                    setopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, &1i32, "SO_TIMESTAMPNS")?;
                    bind(s.as_raw_fd(), lab::host_ip(dst), port)?;
                    t.watch(s.as_raw_fd(), libc::EPOLLIN as u32, token(UDP_SINK, f))?;
                    t.flows[f].sink = Some(s);
                }
            }
        }
        Ok(t)
    }

    /// Samples `trace`'s flows while running.
    pub fn with_trace(mut self, trace: Option<FlowTrace>) -> Traffic {
        self.trace = trace;
        self
    }

    /// Appends one TCP_INFO sample of each traced flow to the columns.
    fn sample(&mut self) {
        let Some(tr) = &self.trace else { return };
        let mut i = 0;
        for (f, name, more) in &tr.flows {
            let fd = self.flows[*f as usize].sender.as_ref().map(|s| s.as_raw_fd());
            let info = fd.and_then(tcp_info);
            let mut values = vec![
                ("cwnd", info.map_or(f64::NAN, |x| x.cwnd as f64)),
                ("ssthresh", info.map_or(f64::NAN, |x| x.ssthresh as f64)),
                ("srtt_s", info.map_or(f64::NAN, |x| x.srtt_s)),
                ("rto_s", info.map_or(f64::NAN, |x| x.rto_s)),
                ("retransmits", info.map_or(f64::NAN, |x| x.total_retrans as f64)),
            ];
            if *more != TracedColumns::Ns2 {
                values.push(("pacing_rate_bps", info.map_or(f64::NAN, |x| x.pacing_rate_bps)));
                values.push(("rwnd_pkts", info.map_or(f64::NAN, |x| x.rwnd_pkts)));
            }
            if *more == TracedColumns::Bbr {
                let bbr = fd.filter(|_| info.is_some_and(|x| x.connected)).and_then(bbr_info);
                for (k, key) in ["bbr_bw_bps", "bbr_min_rtt_s", "bbr_pacing_gain", "bbr_cwnd_gain"].into_iter().enumerate() {
                    values.push((key, bbr.map_or(f64::NAN, |b| b[k])));
                }
            }
            for (key, v) in values {
                if self.columns.len() <= i {
                    self.columns.push((format!("{name}.{key}"), Vec::new()));
                }
                self.columns[i].1.push(v);
                i += 1;
            }
        }
    }

    /// [`TCP_COUNTERS`] summed over every host (zeros where a host's
    /// cannot be read).
    fn kernel_counters(&self) -> Vec<u64> {
        let mut sum = vec![0; TCP_COUNTERS.len()];
        for h in 0..self.ns.len() {
            // /proc/thread-self/net is the namespace of this thread.
            let text = self.enter(h).and_then(|_| std::fs::read_to_string("/proc/thread-self/net/netstat"));
            for (s, v) in sum.iter_mut().zip(netstat_values(&text.unwrap_or_default(), TCP_COUNTERS)) {
                *s += v;
            }
        }
        sum
    }

    fn enter(&self, host: usize) -> io::Result<()> {
        // SAFETY: setns on a namespace descriptor we hold.
        check(unsafe { libc::setns(self.ns[host].as_raw_fd(), libc::CLONE_NEWNET) } as _, "setns").map(|_| ())
    }

    fn watch(&self, fd: RawFd, events: u32, tok: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: tok };
        // SAFETY: `ev` is live for the call.
        check(unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) } as _, "epoll_ctl").map(|_| ())
    }

    fn now(&self) -> Time {
        Time(mono_ns().saturating_sub(self.t0))
    }

    /// Runs the flows from emulation time zero (`t0` on CLOCK_MONOTONIC)
    /// until `end` or `stop`; returns what each flow's hosts saw.
    pub fn run(mut self, t0: u64, end: Time, stop: &AtomicBool) -> io::Result<Outcome> {
        self.t0 = t0;
        if self.trace.is_some() {
            self.timers.push(Reverse((Time::ZERO, SAMPLE_FLOW)));
        }
        for f in 0..self.flows.len() {
            let start = self.flows[f].plan.start;
            let first = match &mut self.flows[f].plan.app {
                FlowApp::Tcp { app, .. } => app.next_timer(),
                FlowApp::Udp(src) => src.first(start),
                FlowApp::Http11 { .. } | FlowApp::Web(_) => Some(start),
            };
            if let Some(at) = first {
                self.timers.push(Reverse((at, f)));
            }
        }
        self.arm()?;
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 256];
        loop {
            if stop.load(Ordering::Relaxed) || self.now() >= end {
                break;
            }
            // Wake at least every 50 ms to see `stop` and the end.
            // SAFETY: `events` is live and its length passed.
            let n = unsafe { libc::epoll_wait(self.epoll.as_raw_fd(), events.as_mut_ptr(), events.len() as i32, 50) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            for ev in &events[..n as usize] {
                let (kind, f) = (ev.u64 >> 32, (ev.u64 & 0xffff_ffff) as usize);
                match kind {
                    TIMER => self.timers_due(end)?,
                    LISTEN => self.accept(f)?,
                    TCP_SINK if self.is_http(f) => self.http_server(f),
                    TCP_SEND if self.is_http(f) => self.http_client(f, end),
                    TCP_SINK => self.read_tcp(f, end)?,
                    TCP_SEND => self.write_tcp(f),
                    UDP_SINK => self.read_udp(f),
                    WEB => self.web_ready(f, end)?,
                    _ => unreachable!("tokens are ours"),
                }
            }
        }
        // The trace's sample at the end itself, as the simulator takes it.
        if !stop.load(Ordering::Relaxed) && self.timers.iter().any(|&Reverse((at, f))| f == SAMPLE_FLOW && at <= end) {
            self.sample();
        }
        // What the router delivered up to the end (it stops then too) and
        // this thread had not read yet: a moment for the router's last
        // frames to land, then every UDP socket drained.
        std::thread::sleep(std::time::Duration::from_millis(20));
        for f in 0..self.flows.len() {
            if let FlowApp::Udp(_) = self.flows[f].plan.app {
                self.read_udp(f);
            }
        }
        for fl in &mut self.flows {
            if let (Some(s), FlowApp::Tcp { .. } | FlowApp::Http11 { .. }) = (&fl.sender, &fl.plan.app) {
                fl.stats.info = tcp_info(s.as_raw_fd());
            }
        }
        let counters = self.kernel_counters();
        let window = self.window;
        for fl in &mut self.flows {
            let upto = window.end.max(fl.web.since());
            fl.web.open_changed(0, upto, window);
            fl.stats.open_area_ns = fl.web.open_area_ns;
        }
        Ok(Outcome {
            hosts: self.flows.into_iter().map(|f| f.stats).collect(),
            series: self.columns,
            tcp_counters: counters,
        })
    }

    /// Sets the timer descriptor for the earliest timer.
    fn arm(&self) -> io::Result<()> {
        let Some(&Reverse((at, _))) = self.timers.peek() else {
            return Ok(());
        };
        let abs = self.t0 + at.0.max(1);
        let spec = libc::itimerspec {
            it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 },
            it_value: libc::timespec {
                tv_sec: (abs / 1_000_000_000) as libc::time_t,
                tv_nsec: (abs % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` is live for the call.
        check(
            unsafe { libc::timerfd_settime(self.timerfd.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) } as _,
            "timerfd_settime",
        )
        .map(|_| ())
    }

    fn timers_due(&mut self, end: Time) -> io::Result<()> {
        let mut x = 0u64;
        // SAFETY: reads the expiry count into `x`.
        unsafe { libc::read(self.timerfd.as_raw_fd(), &mut x as *mut u64 as *mut libc::c_void, 8) };
        loop {
            let now = self.now();
            let Some(&Reverse((at, f))) = self.timers.peek() else { break };
            if at > now {
                break;
            }
            self.timers.pop();
            if f == SAMPLE_FLOW {
                self.sample();
                let next = at + self.trace.as_ref().expect("samples only when tracing").interval;
                if next <= self.window.end {
                    self.timers.push(Reverse((next, SAMPLE_FLOW)));
                }
                continue;
            }
            match &mut self.flows[f].plan.app {
                FlowApp::Tcp { app, .. } => {
                    let mut actions = Vec::new();
                    // The machine's time is the schedule's, not this
                    // thread's wake-up, so periods do not drift.
                    app.timer(at, &mut actions);
                    self.tcp_actions(f, &actions, end)?;
                }
                FlowApp::Http11 { .. } => {
                    let mut actions = Vec::new();
                    let started = self.flows[f].sender.is_some();
                    if !started {
                        // The start: open the persistent connection, then
                        // the first request.
                        self.connect(f, None)?;
                    }
                    let FlowApp::Http11 { client, .. } = &mut self.flows[f].plan.app else { unreachable!("HTTP/1.1") };
                    if started {
                        client.timer(at, &mut actions);
                    } else {
                        client.start(at, &mut actions);
                    }
                    self.http_actions(f, &actions, end);
                }
                FlowApp::Web(_) => self.web_timer(f, at, end)?,
                FlowApp::Udp(_) => {
                    if let Some(next) = self.send_udp(f, at) {
                        if next < end {
                            self.timers.push(Reverse((next, f)));
                        }
                    }
                }
            }
        }
        self.arm()
    }

}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_netstat_values_are_read_by_name_from_each_section() {
        let text = "TcpExt: TW TCPTimeouts TCPLossProbes\nTcpExt: 7 12 3\nIpExt: InNoRoutes TCPTimeouts\nIpExt: 1 100\n";
        assert_eq!(netstat_values(text, &["TCPLossProbes", "TCPTimeouts", "Missing"]), [3, 112, 0]);
    }
}
