//! aqmlab-emu: a scenario run on real Linux TCP/IP stacks instead of the
//! simulator's agents.
//!
//! Each host of the scenario (every node a traffic group sends from or to)
//! becomes a network namespace with one veth to a router namespace. There a
//! user-space router ([`router`]) reads the hosts' frames from AF_PACKET
//! rings and passes them through the scenario's links, queue disciplines
//! and monitors, built by `aqmlab_sim::net` exactly as the simulator builds
//! them, on CLOCK_MONOTONIC; a frame leaves for its destination host when
//! it reaches it. The hosts' traffic ([`traffic`]) is real sockets: the TCP
//! kinds `ftp`, `file`, `onoff`, `web` and `http11` on the simulator's own
//! application machines, with the kernel's congestion control
//! (`tcp.variant` "reno", "newreno" and "sack" as Linux's reno, the
//! Linux-style family's as the kernel's modules of the same name, refused
//! with what the kernel offers if it lacks them), and UDP on the simulator's own schedules. The result has the
//! simulator's summary keys for queues and
//! flows, plus `engine = "emulation"`, the timing accuracy of the router
//! and what the kernel dropped or refused outside the scenario's queues.
//!
//! Needs root and network namespaces; everything it makes is named
//! `aqm<pid>-...` and removed on return, on error and on Ctrl-C.

pub mod lab;
pub mod ring;
pub mod router;
mod summary;
pub mod sys;
pub mod traffic;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, Mutex};

use aqmlab_qdisc::{Duration, Time};
use aqmlab_sim::config::dist::Dist;
use aqmlab_sim::config::ConfigError;
use aqmlab_sim::monitor::Window;
use aqmlab_sim::net::link::Network;
use aqmlab_qdisc::rng;
use aqmlab_sim::app::bulk::Bulk;
use aqmlab_sim::app::http11::Http11Client;
use aqmlab_sim::app::web::{WebResponse, WebSession};
use aqmlab_sim::app::REQUEST_PKTS;
use aqmlab_sim::scenario::{Scenario, SourceSpec};
use aqmlab_sim::transport::tcp::config::Variant;
use aqmlab_sim::transport::udp::UdpSource;

use router::{FlowInfo, Router, FLOW_PORT_BASE};
use traffic::{FlowApp, FlowPlan, Traffic, WebFlow};

/// Why an emulation did not give a result.
#[derive(Debug)]
pub enum EmuError {
    /// Emulation cannot run on this machine (no root, no namespaces).
    Unavailable(String),
    /// The scenario asks for what emulation does not do, by key path.
    Config(Vec<ConfigError>),
    /// The system refused something while setting up or running.
    Io(String),
    /// Stopped by Ctrl-C (SIGINT) or SIGTERM; everything was removed.
    Interrupted,
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::Unavailable(m) | EmuError::Io(m) => f.write_str(m),
            EmuError::Config(errs) => {
                let lines: Vec<String> = errs.iter().map(|e| format!("{}: {}", e.path, e.message)).collect();
                f.write_str(&lines.join("\n"))
            }
            EmuError::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl From<std::io::Error> for EmuError {
    fn from(e: std::io::Error) -> Self {
        EmuError::Io(e.to_string())
    }
}

/// Set by the signal handler installed while an emulation runs.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM set [`SIGNALLED`] while this lives; the previous
/// handlers come back when it is dropped.
struct SignalGuard {
    old: [(libc::c_int, libc::sigaction); 2],
}

impl SignalGuard {
    fn install() -> SignalGuard {
        SIGNALLED.store(false, Ordering::Relaxed);
        // SAFETY: a zeroed sigaction with a plain handler is valid; the old
        // ones are kept to be restored.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            let mut old: [(libc::c_int, libc::sigaction); 2] = std::mem::zeroed();
            for (i, sig) in [libc::SIGINT, libc::SIGTERM].into_iter().enumerate() {
                old[i].0 = sig;
                libc::sigaction(sig, &sa, &mut old[i].1);
            }
            SignalGuard { old }
        }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        for (sig, sa) in &self.old {
            // SAFETY: restores a handler sigaction gave us.
            unsafe { libc::sigaction(*sig, sa, std::ptr::null_mut()) };
        }
    }
}

/// The kernel's congestion control for a group's `tcp.variant`, and
/// whether the sender's host uses SACK: the ns-2 variants all map to
/// Linux's `reno` (its loss recovery is always NewReno-style or SACK-based,
/// with PRR), SACK on only for `sack`; `cubic` and `bbr` are the kernel's
/// own, with SACK on as Linux has it by default.
fn kernel_cc(v: Variant) -> (&'static str, bool) {
    match v {
        Variant::Reno | Variant::NewReno => ("reno", false),
        Variant::Sack => ("reno", true),
        Variant::Cubic => ("cubic", true),
        Variant::Bbr => ("bbr", true),
        Variant::Dctcp => ("dctcp", true),
        Variant::Prague => ("prague", true),
        Variant::LinuxReno => ("reno", true),
    }
}

/// The further trace columns of the traced flow `name` ("group[j]", as
/// the scenario has checked it), as the simulator's sender for the same
/// variant has them.
fn traced_columns(sc: &Scenario, name: &str) -> traffic::TracedColumns {
    let group = name.split_once('[').and_then(|(g, _)| sc.groups.iter().find(|x| x.name == g));
    match group.and_then(|g| g.source.tcp()).map(|t| t.variant) {
        Some(Variant::Bbr) => traffic::TracedColumns::Bbr,
        Some(v) if v.is_linux() => traffic::TracedColumns::Linux,
        _ => traffic::TracedColumns::Ns2,
    }
}

/// Where the kernel lists the congestion controls it has loaded.
const AVAILABLE_CC: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// The error for group `gi` wanting `cc` when the kernel offers
/// `available` (the text of [`AVAILABLE_CC`]); None if it is offered.
fn cc_unavailable(gi: usize, variant: &str, cc: &str, available: &str) -> Option<ConfigError> {
    let offered: Vec<&str> = available.split_whitespace().collect();
    (!offered.contains(&cc)).then(|| ConfigError {
        path: format!("traffic[{gi}].tcp.variant"),
        message: format!(
            "{variant:?} needs the kernel's {cc:?} congestion control, which this kernel does not offer ({AVAILABLE_CC}: {}); load its module (tcp_{cc}) or choose another variant",
            if offered.is_empty() { "nothing".to_string() } else { offered.join(" ") }
        ),
    })
}

/// How a host's kernel is set up: SACK and ECN, from the flows it sends.
#[derive(Clone, Copy, Default, PartialEq)]
struct HostTcp {
    sack: Option<bool>,
    ecn: Option<bool>,
}

/// Named columns of a time series.
pub type Series = Vec<(String, Vec<f64>)>;

/// Where a TCP group's flow is planned, for [`host_tcp_for`]'s messages.
struct HostCheck<'a> {
    /// The group's first flow (problems are reported once per group).
    first: bool,
    gi: usize,
    path: &'a str,
    host: &'a str,
}

/// The kernel congestion control of a TCP flow with settings `tcp` sent
/// from a host whose kernel settings so far are `h`, which it joins:
/// problems (a congestion control the kernel lacks; SACK or ECN differing
/// from another group's on the same host) go to `errs`. `available` caches
/// the kernel's list of congestion controls.
fn host_tcp_for(
    h: &mut HostTcp,
    tcp: &aqmlab_sim::transport::tcp::config::TcpConfig,
    at: &HostCheck<'_>,
    available: &mut Option<String>,
    errs: &mut Vec<ConfigError>,
) -> &'static str {
    let (cc, sack) = kernel_cc(tcp.variant);
    if at.first && tcp.variant.is_linux() {
        let available = available.get_or_insert_with(|| std::fs::read_to_string(AVAILABLE_CC).unwrap_or_default());
        if let Some(e) = cc_unavailable(at.gi, tcp.variant.name(), cc, available) {
            errs.push(e);
        }
    }
    for (have, want, key) in [(&mut h.sack, sack, "tcp.variant"), (&mut h.ecn, tcp.ecn, "tcp.ecn")] {
        match *have {
            Some(x) if x != want => {
                if at.first {
                    errs.push(ConfigError {
                        path: format!("{}.{key}", at.path),
                        message: format!(
                            "differs from another group's on host {:?}; in emulation SACK and ECN are settings of a host's kernel, so the groups a host sends must agree (SACK is on for \"sack\", \"cubic\" and \"bbr\", off for \"reno\" and \"newreno\")",
                            at.host
                        ),
                    });
                }
            }
            _ => *have = Some(want),
        }
    }
    cc
}

/// What a web group asks that emulation cannot do: a request too small to
/// carry its head ([`traffic::REQUEST_HEAD`]), or with `new-connection` a
/// host that is both a server and a client (both would listen on the
/// session's port).
fn web_problems(g: &aqmlab_sim::scenario::GroupSpec, path: &str, payload_bytes: u32, response: WebResponse, nodes: &[aqmlab_sim::net::topology::NodeSpec]) -> Vec<ConfigError> {
    let mut errs = Vec::new();
    let request = REQUEST_PKTS as u64 * payload_bytes as u64;
    if request < traffic::REQUEST_HEAD as u64 {
        errs.push(ConfigError {
            path: format!("{path}.packet_size"),
            message: format!(
                "gives requests of {request} payload bytes; emulation's web requests carry a {}-byte head (the object, its size and the client), so the payload must be at least that",
                traffic::REQUEST_HEAD
            ),
        });
    }
    if response == WebResponse::NewConnection {
        if let Some(&n) = g.src.iter().find(|n| g.dst.contains(n)) {
            errs.push(ConfigError {
                path: format!("{path}.dst"),
                message: format!(
                    "node {:?} is both a server (src) and a client (dst); with response = \"new-connection\" emulation listens for requests at servers and responses at clients on the session's port, so the two lists must not share a node (or use response = \"same-connection\")",
                    nodes[n as usize].name
                ),
            });
        }
    }
    errs
}

/// What an emulation of a scenario needs, worked out before anything is
/// made: its hosts, the flows as the router and the hosts see them, and
/// each host's TCP settings.
struct Plan {
    host_node: Vec<u32>,
    window: Window,
    infos: Vec<FlowInfo>,
    plans: Vec<FlowPlan>,
    host_tcp: Vec<HostTcp>,
}

/// Everything in `sc` that emulation cannot run, by key path (empty if it
/// can run it all): what a sweep checks before its first run. Needs no
/// root.
pub fn check(sc: &Scenario, seed: u64) -> Vec<ConfigError> {
    plan(sc, seed).err().unwrap_or_default()
}

/// Plans the emulation of `sc` with `seed`, or says by key path what
/// emulation cannot run.
fn plan(sc: &Scenario, seed: u64) -> Result<Plan, Vec<ConfigError>> {
    // Hosts: every node traffic starts or ends at, in node order.
    let mut is_host = vec![false; sc.net.nodes.len()];
    for g in &sc.groups {
        for j in 0..g.count {
            let (s, d) = g.endpoints(j);
            is_host[s as usize] = true;
            is_host[d as usize] = true;
        }
        if let SourceSpec::Web { .. } = g.source {
            // A session may use any of the group's servers and clients.
            for &n in g.src.iter().chain(&g.dst) {
                is_host[n as usize] = true;
            }
        }
    }
    let host_node: Vec<u32> = (0..sc.net.nodes.len() as u32).filter(|&n| is_host[n as usize]).collect();
    let mut node_host = vec![usize::MAX; sc.net.nodes.len()];
    for (k, &n) in host_node.iter().enumerate() {
        node_host[n as usize] = k;
    }
    let window = Window {
        start: Time(sc.warmup.0),
        end: Time(sc.duration.0),
    };
    let mut errs = Vec::new();
    let mut infos = Vec::new();
    let mut plans = Vec::new();
    let mut host_tcp = vec![HostTcp::default(); host_node.len()];
    let mut available_cc: Option<String> = None;
    let n_flows: u32 = sc.groups.iter().map(|g| g.count).sum();
    if n_flows as u64 + FLOW_PORT_BASE as u64 > 32767 {
        errs.push(ConfigError {
            path: "traffic".into(),
            message: format!("has {n_flows} flows; emulation gives each a port from {FLOW_PORT_BASE} to 32767, so at most {}", 32767 - FLOW_PORT_BASE),
        });
    }
    for (gi, g) in sc.groups.iter().enumerate() {
        let path = format!("traffic[{gi}]");
        let stop = g.stop.map_or(Time::MAX, |d| Time(d.0));
        for j in 0..g.count {
            let (s, d) = g.endpoints(j);
            let name = g.flow_name(j);
            let start = g.start_of(seed, j);
            let app = match &g.source {
                SourceSpec::Udp(schedule) => FlowApp::Udp(Box::new(UdpSource::seeded(seed, &name, schedule, stop))),
                SourceSpec::Ftp {
                    size_bytes,
                    payload,
                    tcp,
                    on_off,
                    repeat,
                    ..
                } => {
                    let cc = host_tcp_for(&mut host_tcp[node_host[s as usize]], tcp, &HostCheck {
                        first: j == 0,
                        gi,
                        path: &path,
                        host: &sc.net.nodes[s as usize].name,
                    }, &mut available_cc, &mut errs);
                    // The simulator's application machine, with its streams.
                    let paced = g.source.schedule();
                    let app = match (on_off, repeat) {
                        (Some(_), _) if paced.is_some() => {
                            let schedule = paced.as_ref().expect("a paced application's schedule");
                            Bulk::paced(UdpSource::seeded(seed, &name, schedule, stop), start)
                        }
                        (Some(o), _) => Bulk::on_off(o.on.clone(), o.off.clone(), rng::stream(seed, &format!("{name}.onoff")), start),
                        (None, Some((size, gap))) => Bulk::file(size.clone(), gap.clone(), rng::stream(seed, &format!("{name}.repeat")), start),
                        (None, None) => Bulk::ftp(*size_bytes, start),
                    };
                    FlowApp::Tcp {
                        cc: cc.to_string(),
                        app: Box::new(app),
                        bounded_unsent: on_off.is_some() && paced.is_none(),
                        paced_bytes: match (&paced, payload) {
                            (Some(_), Dist::Constant(b)) => Some(*b as u32),
                            _ => None,
                        },
                    }
                }
                SourceSpec::Http11 { params, payload_bytes, tcp } => {
                    // The server (the group's src) sends the responses: its
                    // host's SACK and ECN are the group's.
                    let cc = host_tcp_for(&mut host_tcp[node_host[s as usize]], tcp, &HostCheck {
                        first: j == 0,
                        gi,
                        path: &path,
                        host: &sc.net.nodes[s as usize].name,
                    }, &mut available_cc, &mut errs);
                    let client = Http11Client::new(params, *payload_bytes, rng::stream(seed, &format!("{name}.http"))).map_err(|m| {
                        vec![ConfigError {
                            path: format!("{path}.packet_size"),
                            message: m,
                        }]
                    })?;
                    FlowApp::Http11 {
                        cc: cc.to_string(),
                        client: Box::new(client),
                        request_bytes: REQUEST_PKTS as u64 * *payload_bytes as u64,
                        payload_bytes: *payload_bytes,
                    }
                }
                SourceSpec::Web {
                    params,
                    payload_bytes,
                    tcp,
                    response,
                } => {
                    // Servers send the responses and clients the requests,
                    // each with the group's TCP.
                    let mut cc = "";
                    for (k, &n) in g.src.iter().chain(&g.dst).enumerate() {
                        cc = host_tcp_for(&mut host_tcp[node_host[n as usize]], tcp, &HostCheck {
                            first: j == 0 && k == 0,
                            gi,
                            path: &path,
                            host: &sc.net.nodes[n as usize].name,
                        }, &mut available_cc, &mut errs);
                    }
                    if j == 0 {
                        errs.extend(web_problems(g, &path, *payload_bytes, *response, &sc.net.nodes));
                    }
                    let session = WebSession::new(params, g.dst.len() as u32, g.src.len() as u32, rng::stream(seed, &format!("{name}.web")))
                        .expect("a validated web group");
                    FlowApp::Web(Box::new(WebFlow {
                        cc: cc.to_string(),
                        session,
                        servers: g.src.iter().map(|&n| node_host[n as usize]).collect(),
                        clients: g.dst.iter().map(|&n| node_host[n as usize]).collect(),
                        payload_bytes: *payload_bytes,
                        response: *response,
                    }))
                }
            };
            infos.push(FlowInfo {
                group: gi as u16,
                class: g.class,
                src: s,
                dst: d,
                ted_deadline: g.ted_deadline.unwrap_or(Duration::MAX),
            });
            // The listening end is the plan's dst_host: an HTTP/1.1 client
            // (the group's dst) connects to its server (the group's src).
            let (from, to) = if matches!(app, FlowApp::Http11 { .. }) { (d, s) } else { (s, d) };
            plans.push(FlowPlan {
                src_host: node_host[from as usize],
                dst_host: node_host[to as usize],
                start,
                app,
                ecn: g.ecn,
            });
        }
    }
    if sc.trace.as_ref().is_some_and(|t| !t.groups.is_empty()) {
        errs.push(ConfigError {
            path: "trace.groups".into(),
            message: "emulation does not sample groups' delays over time; the summary's delay percentiles and delay_histogram cover UDP groups".into(),
        });
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Plan {
        host_node,
        window,
        infos,
        plans,
        host_tcp,
    })
}

/// Runs `sc` with `seed` through real kernel stacks, in real time; the
/// summary only.
pub fn emulate(sc: &Scenario, seed: u64) -> Result<serde_json::Value, EmuError> {
    emulate_with_series(sc, seed).map(|(summary, _)| summary)
}

/// The series of a `[trace]`: `time_s` (the samples' scheduled times, every
/// interval from zero), the router's queue columns, then the hosts' flow
/// columns, each cut to the samples both threads took.
fn join_series(interval: Duration, queues: Series, flows: Series, queue_samples: usize) -> Series {
    let mut n = queue_samples;
    for (_, v) in &flows {
        n = n.min(v.len());
    }
    if queues.is_empty() && !flows.is_empty() {
        n = flows.iter().map(|(_, v)| v.len()).min().unwrap_or(0);
    }
    let mut out = vec![("time_s".to_string(), (0..n).map(|k| (interval.0 * k as u64) as f64 * 1e-9).collect())];
    for (name, mut v) in queues.into_iter().chain(flows) {
        v.truncate(n);
        out.push((name, v));
    }
    out
}

/// Runs `sc` with `seed` through real kernel stacks, in real time; the
/// summary and, with `[trace]`, the series.
pub fn emulate_with_series(sc: &Scenario, seed: u64) -> Result<(serde_json::Value, Series), EmuError> {
    if let Some(why) = lab::unavailable() {
        return Err(EmuError::Unavailable(why));
    }
    // From here on a Ctrl-C is this emulation's: it stops the run (or the
    // setup) and everything made is removed.
    let _signals = SignalGuard::install();
    let Plan {
        host_node,
        window,
        infos,
        plans,
        host_tcp,
    } = plan(sc, seed).map_err(EmuError::Config)?;
    let net = Network::build(&sc.net, &sc.classes, seed, window);
    let configure = |k: usize| -> std::io::Result<()> {
        let h = host_tcp[k];
        if let Some(sack) = h.sack {
            sys::sysctl("net.ipv4.tcp_sack", if sack { "1" } else { "0" })?;
        }
        // Receivers keep Linux's default (2: ECN when the peer asks).
        if let Some(ecn) = h.ecn {
            sys::sysctl("net.ipv4.tcp_ecn", if ecn { "1" } else { "0" })?;
        }
        Ok(())
    };
    let lab = lab::Lab::new(host_node.len(), &configure)?;
    if SIGNALLED.load(Ordering::Relaxed) {
        return Err(EmuError::Interrupted);
    }
    let qtrace = sc.trace.as_ref().map(|t| router::QueueTrace {
        interval: t.interval,
        links: t.links.iter().map(|&l| (l, sc.net.links[l as usize].name.clone())).collect(),
    });
    let ftrace = sc.trace.as_ref().map(|t| traffic::FlowTrace {
        interval: t.interval,
        flows: t.flows.iter().map(|(f, name)| (*f, name.clone(), traced_columns(sc, name))).collect(),
    });
    let outcome = run_threads(&lab, net, infos, plans, host_node.clone(), sc.net.nodes.len(), window, Time(sc.duration.0), qtrace, ftrace)?;
    drop(lab);
    if SIGNALLED.load(Ordering::Relaxed) {
        return Err(EmuError::Interrupted);
    }
    let (mut report, hosts) = outcome;
    let series = match &sc.trace {
        Some(t) => join_series(t.interval, std::mem::take(&mut report.series), hosts.series, report.samples),
        None => Vec::new(),
    };
    Ok((summary::build(sc, seed, report, hosts.hosts, &hosts.tcp_counters), series))
}

/// Starts the router and the traffic on threads of their own, each set up
/// in its namespaces, then lets both begin at the same time zero.
#[allow(clippy::too_many_arguments)]
fn run_threads(
    lab: &lab::Lab,
    net: Network,
    infos: Vec<FlowInfo>,
    plans: Vec<FlowPlan>,
    host_node: Vec<u32>,
    n_nodes: usize,
    window: Window,
    end: Time,
    qtrace: Option<router::QueueTrace>,
    ftrace: Option<traffic::FlowTrace>,
) -> Result<(router::RouterReport, traffic::Outcome), EmuError> {
    let barrier = Arc::new(Barrier::new(2));
    let t0 = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let first_error = Arc::new(Mutex::new(None::<String>));
    let n_hosts = host_node.len();
    let cpus = sys::cpus();
    let router_thread = {
        let (barrier, t0, failed, first_error) = (barrier.clone(), t0.clone(), failed.clone(), first_error.clone());
        let ns = lab.router.clone();
        std::thread::Builder::new()
            .name("aqmlab-router".into())
            .spawn(move || -> Option<router::RouterReport> {
                let setup = (|| -> std::io::Result<Vec<ring::Port>> {
                    sys::enter_netns(&ns)?;
                    (0..n_hosts).map(|k| ring::Port::open(&lab::port_name(k))).collect()
                })();
                let ports = match setup {
                    Ok(p) => Some(p),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        first_error.lock().expect("not poisoned").get_or_insert(e.to_string());
                        None
                    }
                };
                // The router gets the last CPU to itself if there are two.
                if cpus > 1 {
                    sys::pin_to_cpu(cpus - 1);
                }
                sys::tight_timer_slack();
                let router = Router::new(net, infos, host_node, n_nodes, window).with_trace(qtrace);
                barrier.wait();
                barrier.wait();
                let ports = ports?;
                if failed.load(Ordering::Relaxed) {
                    return None;
                }
                Some(router.run(ports, t0.load(Ordering::Relaxed), end, &SIGNALLED))
            })
            .map_err(|e| EmuError::Io(format!("starting the router thread: {e}")))?
    };
    let hosts = lab.hosts.clone();
    let traffic_thread = {
        let (barrier, t0, failed, first_error) = (barrier.clone(), t0.clone(), failed.clone(), first_error.clone());
        std::thread::Builder::new()
            .name("aqmlab-hosts".into())
            .spawn(move || -> Option<traffic::Outcome> {
                let traffic = match Traffic::new(plans, &hosts, window) {
                    Ok(t) => Some(t.with_trace(ftrace)),
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        first_error.lock().expect("not poisoned").get_or_insert(e.to_string());
                        None
                    }
                };
                if cpus > 1 {
                    sys::pin_to_cpu(0);
                }
                sys::tight_timer_slack();
                // Both are set up: time zero is now, plus a moment for the
                // router to reach its loop.
                barrier.wait();
                t0.store(sys::mono_ns() + 20_000_000, Ordering::Relaxed);
                barrier.wait();
                let traffic = traffic?;
                if failed.load(Ordering::Relaxed) {
                    return None;
                }
                match traffic.run(t0.load(Ordering::Relaxed), end, &SIGNALLED) {
                    Ok(stats) => Some(stats),
                    Err(e) => {
                        first_error.lock().expect("not poisoned").get_or_insert(e.to_string());
                        SIGNALLED.store(true, Ordering::Relaxed);
                        None
                    }
                }
            })
            .map_err(|e| EmuError::Io(format!("starting the traffic thread: {e}")))?
    };
    let report = router_thread.join().map_err(|_| EmuError::Io("the router thread panicked".into()))?;
    let stats = traffic_thread.join().map_err(|_| EmuError::Io("the traffic thread panicked".into()))?;
    if let Some(e) = first_error.lock().expect("not poisoned").take() {
        return Err(EmuError::Io(e));
    }
    match (report, stats) {
        (Some(r), Some(o)) => Ok((r, o)),
        _ if SIGNALLED.load(Ordering::Relaxed) => Err(EmuError::Interrupted),
        _ => Err(EmuError::Io("emulation stopped without a result".into())),
    }
}

/// Runs a scenario given as JSON; for the binding.
pub fn emulate_json(text: &str, seed: Option<u64>) -> Result<String, EmuError> {
    let sc = Scenario::from_json(text).map_err(EmuError::Config)?;
    let seed = seed.unwrap_or(sc.seed);
    let (v, series) = emulate_with_series(&sc, seed)?;
    let series: serde_json::Map<String, serde_json::Value> = series.into_iter().map(|(k, v)| (k, serde_json::json!(v))).collect();
    Ok(serde_json::to_string(&serde_json::json!({ "summary": v, "series": series })).expect("a JSON value serialises"))
}

#[cfg(test)]
mod test {
    use super::*;
    use aqmlab_qdisc::Ecn;

    #[test]
    fn test_series_are_cut_to_the_samples_both_threads_took() {
        let q = vec![("bn.backlog_pkts".to_string(), vec![1.0, 2.0, 3.0])];
        let f = vec![("ftp[0].cwnd".to_string(), vec![10.0, 20.0])];
        let s = join_series(Duration::from_millis(100), q, f, 3);
        let names: Vec<&str> = s.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["time_s", "bn.backlog_pkts", "ftp[0].cwnd"]);
        assert_eq!(s[0].1, [0.0, 0.1]);
        assert_eq!(s[1].1, [1.0, 2.0]);
        let s = join_series(Duration::from_millis(100), Vec::new(), vec![("a.cwnd".into(), vec![1.0, 2.0, 3.0])], 0);
        assert_eq!(s[0].1.len(), 3);
    }

    #[test]
    fn test_variants_map_to_the_kernels_congestion_control_and_sack() {
        assert_eq!(kernel_cc(Variant::NewReno), ("reno", false));
        assert_eq!(kernel_cc(Variant::Sack), ("reno", true));
        assert_eq!(kernel_cc(Variant::Cubic), ("cubic", true));
        assert_eq!(kernel_cc(Variant::Bbr), ("bbr", true));
    }

    #[test]
    fn test_a_missing_congestion_control_is_named_with_what_the_kernel_offers() {
        assert!(cc_unavailable(0, "bbr", "bbr", "reno bbr cubic\n").is_none());
        let e = cc_unavailable(2, "bbr", "bbr", "reno cubic\n").expect("missing");
        assert_eq!(e.path, "traffic[2].tcp.variant");
        assert!(e.message.starts_with("\"bbr\" needs the kernel's \"bbr\" congestion control"), "{}", e.message);
        assert!(e.message.contains(": reno cubic)"), "{}", e.message);
        let e = cc_unavailable(0, "cubic", "cubic", "").expect("missing");
        assert!(e.message.contains(": nothing)"), "{}", e.message);
    }

    #[test]
    fn test_a_udp_groups_ecn_codepoint_reaches_its_flows_plan() {
        // The sending socket sets the codepoint in IP_TOS (traffic/udp.rs).
        let v = serde_json::json!({
            "duration": "1s",
            "topology": { "kind": "graph", "nodes": ["a", "b"], "links": [
                { "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms", "name": "q",
                  "qdisc": { "kind": "dualpi2" } } ] },
            "traffic": [ { "name": "u", "kind": "cbr", "rate": "1Mbps", "size": "1000B", "src": "a", "dst": "b",
                           "ecn": "ect1" } ],
        });
        let sc = Scenario::from_value(&v).expect("a valid scenario");
        let plan = plan(&sc, 1).map_err(|e| format!("{e:?}")).expect("emulation runs it");
        assert_eq!(plan.plans[0].ecn, Ecn::Ect1);
        assert_eq!(plan.plans[0].ecn.bits(), 0b01);
    }
}
