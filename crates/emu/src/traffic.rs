//! The hosts' traffic, through real kernel sockets in the hosts'
//! namespaces: the TCP applications `ftp`, `file` and `onoff` (without a
//! rate) with the kernel's congestion control, driven by the simulator's
//! own application machine (`aqmlab_sim::app::bulk::Bulk`: the same
//! streams, the same draws for the same seed), and the open-loop UDP
//! sources on the simulator's own schedules
//! (`aqmlab_sim::transport::udp::UdpSource`). One thread drives them all
//! from an epoll loop; a socket belongs to the namespace the thread was in
//! when it opened it.
//!
//! The machine's actions on a kernel socket:
//! - Start / Open { size }: a new connection, written until the transfer's
//!   bytes are in the socket (then SHUT_WR) or, unlimited, for ever;
//! - Pause / Resume (ON/OFF): stop and restart writing. The kernel sends
//!   what is already in the socket, so an ON/OFF socket keeps little
//!   unsent data (TCP_NOTSENT_LOWAT = [`ONOFF_UNSENT_BYTES`], one write of
//!   at most that per wake-up): at most about twice that leaves after an
//!   ON period ends, where the simulator's sender sends only what it had
//!   sent once already;
//! - a transfer is delivered when the receiver reads the sender's FIN after
//!   its last byte (as the simulator's, at the receiving end); `file` then
//!   closes both ends (Close) and the next connection opens a drawn gap
//!   later. A transfer's time runs from its connect(2) to that read.
//!
//! `http11` (the simulator's `Http11Client`, same stream and draws): the
//! client (the group's dst) keeps one connection to its server (the
//! group's src) and writes a request of one payload (`packet_size`); when
//! the server has read it whole, it writes the drawn response, its packets
//! of that payload; when the client has read it whole, the machine thinks
//! and asks again. A response's time runs from the request to its last
//! byte read, as the simulator's. Both ends are edge-triggered and written
//! and read until EAGAIN.
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

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::CString;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use aqmlab_qdisc::Time;
use aqmlab_sim::app::bulk::{Bulk, BulkAction};
use aqmlab_sim::app::http11::{Http11Action, Http11Client};
use aqmlab_sim::monitor::{DelayStats, Window};
use aqmlab_sim::transport::udp::UdpSource;

use crate::lab;
use crate::router::FLOW_PORT_BASE;
use crate::sys::{check, mono_ns, realtime_ns};

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
    /// `bounded_unsent` for ON/OFF (see [`ONOFF_UNSENT_BYTES`]).
    Tcp { cc: String, app: Box<Bulk>, bounded_unsent: bool },
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
}

pub struct FlowPlan {
    pub src_host: usize,
    pub dst_host: usize,
    pub start: Time,
    pub app: FlowApp,
}

/// What the hosts saw of a flow.
#[derive(Clone, Debug, Default)]
pub struct HostStats {
    /// Delivered to the receiving application inside the window: TCP
    /// payload bytes, or UDP packets' bytes (headers included).
    pub delivered_bytes: u64,
    pub delivered_pkts: u64,
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
    pub total_retrans: u32,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt_s: f64,
    pub rto_s: f64,
}

const LISTEN: u64 = 1;
const TCP_SINK: u64 = 2;
const TCP_SEND: u64 = 3;
const UDP_SINK: u64 = 4;
const TIMER: u64 = 5;

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

/// The flows `[trace]` asks for: every `interval` from time zero up to the
/// window's end, flows by index with their names.
#[derive(Clone, Debug)]
pub struct FlowTrace {
    pub interval: aqmlab_qdisc::Duration,
    pub flows: Vec<(u32, String)>,
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
                })
                .collect(),
            ns,
            epoll,
            timerfd,
            timers: BinaryHeap::new(),
            window,
            t0: 0,
            buf: vec![0u8; 1 << 16],
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
        for (f, name) in &tr.flows {
            let info = self.flows[*f as usize].sender.as_ref().and_then(|s| tcp_info(s.as_raw_fd()));
            let values = [
                ("cwnd", info.map_or(f64::NAN, |x| x.cwnd as f64)),
                ("ssthresh", info.map_or(f64::NAN, |x| x.ssthresh as f64)),
                ("srtt_s", info.map_or(f64::NAN, |x| x.srtt_s)),
                ("rto_s", info.map_or(f64::NAN, |x| x.rto_s)),
                ("retransmits", info.map_or(f64::NAN, |x| x.total_retrans as f64)),
            ];
            for (key, v) in values {
                if self.columns.len() <= i {
                    self.columns.push((format!("{name}.{key}"), Vec::new()));
                }
                self.columns[i].1.push(v);
                i += 1;
            }
        }
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
    pub fn run(mut self, t0: u64, end: Time, stop: &AtomicBool) -> io::Result<(Vec<HostStats>, crate::Series)> {
        self.t0 = t0;
        if self.trace.is_some() {
            self.timers.push(Reverse((Time::ZERO, SAMPLE_FLOW)));
        }
        for f in 0..self.flows.len() {
            let start = self.flows[f].plan.start;
            let first = match &mut self.flows[f].plan.app {
                FlowApp::Tcp { app, .. } => app.next_timer(),
                FlowApp::Udp(src) => src.first(start),
                FlowApp::Http11 { .. } => Some(start),
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
                    _ => unreachable!("tokens are ours"),
                }
            }
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
        Ok((self.flows.into_iter().map(|f| f.stats).collect(), self.columns))
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
                if next <= self.window.end && next < end {
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

    /// Carries out what flow `f`'s application asked for, then sets its
    /// next timer.
    fn tcp_actions(&mut self, f: usize, actions: &[BulkAction], end: Time) -> io::Result<()> {
        for &a in actions {
            match a {
                BulkAction::Start => {
                    let FlowApp::Tcp { app, .. } = &self.flows[f].plan.app else { unreachable!("a TCP flow") };
                    let size = app.size_bytes();
                    self.connect(f, size)?;
                }
                BulkAction::Open { size_bytes } => self.connect(f, Some(size_bytes))?,
                BulkAction::Pause => {
                    self.flows[f].paused = true;
                    self.want_writes(f, false);
                }
                BulkAction::Resume => {
                    self.flows[f].paused = false;
                    self.want_writes(f, true);
                }
                BulkAction::Close => {
                    let fl = &mut self.flows[f];
                    if let Some(s) = &fl.sender {
                        fl.stats.congestion_control = congestion_control(s.as_raw_fd());
                    }
                    // Closing a descriptor takes it out of the epoll set.
                    fl.sender = None;
                    fl.sink = None;
                }
                BulkAction::Send { .. } => unreachable!("paced ON/OFF is refused before emulating"),
            }
        }
        if let FlowApp::Tcp { app, .. } = &self.flows[f].plan.app {
            if let Some(at) = app.next_timer() {
                if at < end {
                    self.timers.push(Reverse((at, f)));
                }
            }
        }
        // Called from a delivery too, not only from the timer.
        self.arm()
    }

    /// Starts or stops watching flow `f`'s sender for room to write.
    fn want_writes(&mut self, f: usize, on: bool) {
        if let Some(s) = &self.flows[f].sender {
            let mut ev = libc::epoll_event {
                events: if on { libc::EPOLLOUT as u32 } else { 0 },
                u64: token(TCP_SEND, f),
            };
            // SAFETY: `ev` is live for the call; the socket is in the set
            // (or already shut down, when this fails harmlessly).
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_MOD, s.as_raw_fd(), &mut ev) };
        }
    }

    /// Opens a TCP connection for flow `f` from its source host, to carry
    /// `size` bytes (None: unlimited).
    fn connect(&mut self, f: usize, size: Option<u64>) -> io::Result<()> {
        let (src, dst) = (self.flows[f].plan.src_host, self.flows[f].plan.dst_host);
        self.enter(src)?;
        let s = socket(libc::SOCK_STREAM)?;
        if let FlowApp::Tcp { bounded_unsent: true, .. } = &self.flows[f].plan.app {
            setopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, &(ONOFF_UNSENT_BYTES as i32), "TCP_NOTSENT_LOWAT")?;
        }
        if let FlowApp::Tcp { cc, .. } | FlowApp::Http11 { cc, .. } = &self.flows[f].plan.app {
            let name = CString::new(cc.as_str()).expect("no NUL");
            // SAFETY: the name's bytes are live for the call.
            check(
                unsafe {
                    libc::setsockopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_ptr() as *const libc::c_void, cc.len() as u32)
                } as _,
                &format!("congestion control {cc:?}"),
            )?;
        }
        let sa = sockaddr(lab::host_ip(dst), FLOW_PORT_BASE + f as u16);
        // SAFETY: `sa` is live for the call.
        let r = unsafe { libc::connect(s.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(io::Error::other(format!("connect for flow {f}: {}", io::Error::last_os_error())));
        }
        let events = if self.is_http(f) {
            // Both ways, edge-triggered: written and read until EAGAIN.
            (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32
        } else if self.flows[f].paused {
            0
        } else {
            libc::EPOLLOUT as u32
        };
        self.watch(s.as_raw_fd(), events, token(TCP_SEND, f))?;
        let now = self.now();
        let fl = &mut self.flows[f];
        fl.stats.congestion_control = congestion_control(s.as_raw_fd());
        fl.sender = Some(s);
        fl.sent = 0;
        fl.target = size;
        fl.opened_at = now;
        Ok(())
    }

    fn accept(&mut self, f: usize) -> io::Result<()> {
        let Some(l) = &self.flows[f].listener else { return Ok(()) };
        // SAFETY: accept4 on our listener; the result is owned at once.
        let c = unsafe { libc::accept4(l.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
        if c < 0 {
            return Ok(());
        }
        let c = unsafe { OwnedFd::from_raw_fd(c) };
        if let FlowApp::Http11 { cc, .. } = &self.flows[f].plan.app {
            // The server's responses use the group's congestion control.
            let name = CString::new(cc.as_str()).expect("no NUL");
            // SAFETY: the name's bytes are live for the call.
            check(
                unsafe { libc::setsockopt(c.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_ptr() as *const libc::c_void, cc.len() as u32) } as _,
                &format!("congestion control {cc:?}"),
            )?;
            self.watch(c.as_raw_fd(), (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32, token(TCP_SINK, f))?;
            self.flows[f].sink = Some(c);
            self.http_server(f);
            return Ok(());
        }
        self.watch(c.as_raw_fd(), libc::EPOLLIN as u32, token(TCP_SINK, f))?;
        self.flows[f].sink = Some(c);
        Ok(())
    }

    fn is_http(&self, f: usize) -> bool {
        matches!(self.flows[f].plan.app, FlowApp::Http11 { .. })
    }

    /// Carries out flow `f`'s HTTP/1.1 requests, then sets its next timer.
    fn http_actions(&mut self, f: usize, actions: &[Http11Action], end: Time) {
        let now = self.now();
        for &a in actions {
            let Http11Action::Request { response_pkts, .. } = a;
            let fl = &mut self.flows[f];
            let FlowApp::Http11 { request_bytes, .. } = fl.plan.app else { unreachable!("HTTP/1.1") };
            fl.http.req_write += request_bytes;
            fl.http.req_read += request_bytes;
            fl.http.resp_pkts = response_pkts;
            fl.http.asked_at = now;
        }
        if !actions.is_empty() {
            self.http_client(f, end);
        }
        if let FlowApp::Http11 { client, .. } = &self.flows[f].plan.app {
            if let Some(at) = client.next_timer() {
                if at < end {
                    self.timers.push(Reverse((at, f)));
                }
            }
        }
        let _ = self.arm();
    }

    /// Writes `*left` bytes to `fd` until done or EAGAIN.
    fn write_some(fd: RawFd, buf: &[u8], left: &mut u64) {
        while *left > 0 {
            let want = (*left).min(buf.len() as u64) as usize;
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, want, libc::MSG_NOSIGNAL) };
            if n <= 0 {
                return;
            }
            *left -= n as u64;
        }
    }

    /// The client's end: writes the request, reads the response; a whole
    /// response goes to the machine (think, then the next request).
    fn http_client(&mut self, f: usize, end: Time) {
        let now = self.now();
        let inside = self.window.contains(now);
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sender else { return };
        let fd = s.as_raw_fd();
        Self::write_some(fd, &self.buf, &mut fl.http.req_write);
        let mut done = false;
        loop {
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::recv(fd, self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0) };
            if n <= 0 {
                break;
            }
            let n = n as u64;
            fl.stats.transfer_bytes += n;
            if inside {
                fl.stats.delivered_bytes += n;
            }
            fl.http.resp_read = fl.http.resp_read.saturating_sub(n);
            if fl.http.resp_read == 0 && fl.http.resp_pkts > 0 {
                done = true;
            }
        }
        if done {
            if inside {
                fl.stats.response_times.push((fl.http.resp_pkts, (now.0.saturating_sub(fl.http.asked_at.0)) as f64 * 1e-9));
                fl.stats.transfer_times.push((now.0.saturating_sub(fl.http.asked_at.0)) as f64 * 1e-9);
            }
            fl.http.resp_pkts = 0;
            let FlowApp::Http11 { client, .. } = &mut fl.plan.app else { unreachable!("HTTP/1.1") };
            let mut actions = Vec::new();
            client.response_done(now, &mut actions);
            self.http_actions(f, &actions, end);
        }
    }

    /// The server's end: reads the request; a whole one makes it write the
    /// response.
    fn http_server(&mut self, f: usize) {
        let inside = self.window.contains(self.now());
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sink else { return };
        let fd = s.as_raw_fd();
        loop {
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::recv(fd, self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0) };
            if n <= 0 {
                break;
            }
            let n = n as u64;
            if inside {
                fl.stats.request_bytes += n;
            }
            let before = fl.http.req_read;
            fl.http.req_read = before.saturating_sub(n);
            if before > 0 && fl.http.req_read == 0 {
                let FlowApp::Http11 { payload_bytes, .. } = fl.plan.app else { unreachable!("HTTP/1.1") };
                let bytes = fl.http.resp_pkts as u64 * payload_bytes as u64;
                fl.http.resp_write += bytes;
                fl.http.resp_read += bytes;
            }
        }
        Self::write_some(fd, &self.buf, &mut fl.http.resp_write);
    }

    fn write_tcp(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sender else { return };
        let FlowApp::Tcp { bounded_unsent, .. } = fl.plan.app else { return };
        if fl.paused {
            return;
        }
        let chunk = if bounded_unsent { ONOFF_UNSENT_BYTES } else { self.buf.len() };
        loop {
            let want = match fl.target {
                Some(b) => (b - fl.sent).min(chunk as u64) as usize,
                None => chunk,
            };
            if want == 0 {
                // SAFETY: shutdown of our socket; epoll stops watching it.
                unsafe {
                    libc::shutdown(s.as_raw_fd(), libc::SHUT_WR);
                    libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, s.as_raw_fd(), std::ptr::null_mut());
                }
                return;
            }
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::send(s.as_raw_fd(), self.buf.as_ptr() as *const libc::c_void, want, libc::MSG_NOSIGNAL) };
            if n <= 0 {
                return;
            }
            fl.sent += n as u64;
            // ON/OFF: one write per wake-up, so the unsent data stays
            // near TCP_NOTSENT_LOWAT.
            if bounded_unsent && fl.target.is_none() {
                return;
            }
        }
    }

    fn read_tcp(&mut self, f: usize, end: Time) -> io::Result<()> {
        let now = self.now();
        let inside = self.window.contains(now);
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sink else { return Ok(()) };
        loop {
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::recv(s.as_raw_fd(), self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0) };
            if n == 0 {
                // SAFETY: stop watching the finished connection.
                unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, s.as_raw_fd(), std::ptr::null_mut()) };
                let FlowApp::Tcp { app, .. } = &mut fl.plan.app else { return Ok(()) };
                if inside {
                    fl.stats.transfer_times.push((now.0.saturating_sub(fl.opened_at.0)) as f64 * 1e-9);
                }
                if !app.repeats() {
                    fl.stats.done_at.get_or_insert(now);
                }
                let mut actions = Vec::new();
                app.transfer_done(now, &mut actions);
                return self.tcp_actions(f, &actions, end);
            }
            if n < 0 {
                return Ok(());
            }
            fl.stats.transfer_bytes += n as u64;
            if inside {
                fl.stats.delivered_bytes += n as u64;
            }
        }
    }

    /// Emits flow `f`'s packets due at `at`; returns when it sends next.
    fn send_udp(&mut self, f: usize, at: Time) -> Option<Time> {
        if self.flows[f].sender.is_none() {
            let (src, dst) = (self.flows[f].plan.src_host, self.flows[f].plan.dst_host);
            self.enter(src).ok()?;
            let s = socket(libc::SOCK_DGRAM).ok()?;
            setopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF, &(4i32 << 20), "SO_SNDBUF").ok()?;
            let sa = sockaddr(lab::host_ip(dst), FLOW_PORT_BASE + f as u16);
            // SAFETY: `sa` is live for the call.
            unsafe { libc::connect(s.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) };
            self.flows[f].sender = Some(s);
        }
        let fl = &mut self.flows[f];
        let FlowApp::Udp(src) = &mut fl.plan.app else { return None };
        let (n, next) = src.fire(at);
        let late = mono_ns().saturating_sub(self.t0).saturating_sub(at.0);
        if self.window.contains(at) && fl.stats.send_late_ns.len() < MAX_DELAY_SAMPLES {
            fl.stats.send_late_ns.push(late);
        }
        for _ in 0..n {
            let size = src.packet_size().max(UDP_HEADERS + 16);
            let len = (size - UDP_HEADERS) as usize;
            let len = len.min(self.buf.len());
            fl.udp_seq += 1;
            self.buf[0..8].copy_from_slice(&fl.udp_seq.to_le_bytes());
            self.buf[8..16].copy_from_slice(&realtime_ns().to_le_bytes());
            let s = fl.sender.as_ref().expect("opened above");
            // SAFETY: `buf` is live for the call.
            let r = unsafe { libc::send(s.as_raw_fd(), self.buf.as_ptr() as *const libc::c_void, len, 0) };
            if r < 0 {
                fl.stats.send_errors += 1;
            }
        }
        next
    }

    fn read_udp(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sink else { return };
        let mut control = [0u64; 16];
        loop {
            let mut iov = libc::iovec {
                iov_base: self.buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: self.buf.len(),
            };
            // SAFETY: a zeroed msghdr is valid; its buffers are set to live
            // arrays below.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = std::mem::size_of_val(&control);
            // SAFETY: `msg` points to live buffers for the call.
            let n = unsafe { libc::recvmsg(s.as_raw_fd(), &mut msg, 0) };
            if n < 16 {
                return;
            }
            let arrived = rx_stamp(&msg).unwrap_or_else(realtime_ns);
            // Inside the window by the kernel's arrival stamp (on the
            // emulation's clock), not by when this thread got to it, so a
            // late wake-up near the window's end loses nothing.
            let (mono, real) = (mono_ns(), realtime_ns());
            let at = Time(mono.saturating_sub(real.saturating_sub(arrived)).saturating_sub(self.t0));
            let sent = u64::from_le_bytes(self.buf[8..16].try_into().expect("8 bytes"));
            if self.window.contains(at) {
                let d = arrived.saturating_sub(sent);
                fl.stats.delivered_pkts += 1;
                fl.stats.delivered_bytes += n as u64 + UDP_HEADERS as u64;
                fl.stats.delay.push(aqmlab_qdisc::Duration(d));
                if fl.stats.delays_ns.len() < MAX_DELAY_SAMPLES {
                    fl.stats.delays_ns.push(d);
                }
            }
        }
    }
}

/// The kernel's receive stamp (SCM_TIMESTAMPNS) of a received message.
fn rx_stamp(msg: &libc::msghdr) -> Option<u64> {
    // SAFETY: walks the control messages the kernel wrote into `msg`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    None
}

/// The congestion control a TCP socket uses (getsockopt TCP_CONGESTION).
fn congestion_control(fd: RawFd) -> Option<String> {
    let mut name = [0u8; 16];
    let mut len = name.len() as libc::socklen_t;
    // SAFETY: `name` is live and its length passed.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_mut_ptr() as *mut libc::c_void, &mut len) };
    (r == 0).then(|| {
        let b = &name[..(len as usize).min(name.len())];
        String::from_utf8_lossy(b.split(|&c| c == 0).next().unwrap_or(b)).into_owned()
    })
}

fn tcp_info(fd: RawFd) -> Option<TcpInfo> {
    // SAFETY: a zeroed tcp_info is valid; the kernel fills what it has.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut info as *mut _ as *mut libc::c_void, &mut len) };
    (r == 0).then(|| TcpInfo {
        total_retrans: info.tcpi_total_retrans,
        cwnd: info.tcpi_snd_cwnd,
        ssthresh: info.tcpi_snd_ssthresh,
        srtt_s: info.tcpi_rtt as f64 * 1e-6,
        rto_s: info.tcpi_rto as f64 * 1e-6,
    })
}
