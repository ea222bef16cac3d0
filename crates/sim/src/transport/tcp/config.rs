//! TCP's parameters as a scenario sets them (`tcp = { ... }` on a traffic
//! group), with ns-2.35's defaults (`tcl/lib/ns-default.tcl` and the
//! agents' constructors in `tcp/tcp.cc`) except the receiver window.

use aqmlab_qdisc::Duration;

/// The congestion-control variant: one of ns-2's one-way agents, or a
/// congestion control of the Linux-style family
/// ([`crate::transport::linux`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `Agent/TCP/Reno`.
    Reno,
    /// `Agent/TCP/Newreno` (partial window deflation, "impatient" timer).
    NewReno,
    /// `Agent/TCP/Sack1`: a scoreboard of up to 3 SACK blocks and a pipe counter.
    Sack,
    /// Linux's CUBIC (RFC 9438).
    Cubic,
    /// Linux's BBR (v1 in mainline kernels).
    Bbr,
    /// Linux's DCTCP (RFC 8257).
    Dctcp,
    /// The L4S Prague sender.
    Prague,
    /// Linux's Reno (`tcp_reno`), with the family's loss recovery.
    LinuxReno,
}

impl Variant {
    /// The names a scenario spells the variants with, in declaration order.
    pub const NAMES: [&'static str; 8] = ["reno", "newreno", "sack", "cubic", "bbr", "dctcp", "prague", "linux-reno"];

    /// Every variant, in declaration order.
    pub const ALL: [Variant; 8] = [
        Variant::Reno,
        Variant::NewReno,
        Variant::Sack,
        Variant::Cubic,
        Variant::Bbr,
        Variant::Dctcp,
        Variant::Prague,
        Variant::LinuxReno,
    ];

    pub fn name(self) -> &'static str {
        Variant::NAMES[self as usize]
    }

    /// Whether this is a congestion control of the Linux-style family
    /// rather than an ns-2 agent.
    pub fn is_linux(self) -> bool {
        !matches!(self, Variant::Reno | Variant::NewReno | Variant::Sack)
    }

    /// Whether the sink sends SACK blocks.
    pub fn sack(self) -> bool {
        self == Variant::Sack || self.is_linux()
    }

}

/// How the retransmission timeout is computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RtoConfig {
    /// ns-2: srtt and rttvar in integer ticks of `tick`, RTO = srtt + 4
    /// rttvar truncated to whole ticks, clamped to [`min`, `max`] (the floor
    /// applied before the backoff), `initial` before the first sample.
    Ns2 {
        tick: Duration,
        min: Duration,
        max: Duration,
        initial: Duration,
    },
    /// RFC 6298 arithmetic in real numbers (G = 0), clamped to [`min`, `max`].
    Rfc6298 {
        min: Duration,
        max: Duration,
        initial: Duration,
    },
    /// A constant RTO (still doubled by backoff).
    Fixed(Duration),
    /// The TED paper's "TDTO": a fixed RTO equal to the largest round-trip
    /// time the TED deadlines on the flow's path allow; resolved by the
    /// engine into `Fixed` once the path is known.
    Ted,
    /// Linux's estimator ([`crate::transport::linux::rtt`]), the only one
    /// of the Linux-style family.
    Linux {
        min: Duration,
        max: Duration,
        initial: Duration,
    },
}

impl RtoConfig {
    /// ns-2.35: tick 10 ms, min 0.2 s, max 60 s, initial 3 s.
    pub const NS2: RtoConfig = RtoConfig::Ns2 {
        tick: Duration::from_millis(10),
        min: Duration::from_millis(200),
        max: Duration::from_secs(60),
        initial: Duration::from_secs(3),
    };
    /// Linux: min 200 ms, max 120 s, initial 1 s.
    pub const LINUX: RtoConfig = RtoConfig::Linux {
        min: Duration::from_millis(200),
        max: Duration::from_secs(120),
        initial: Duration::from_secs(1),
    };
    /// RFC 6298: min 1 s, max 60 s, initial 1 s.
    pub const RFC6298: RtoConfig = RtoConfig::Rfc6298 {
        min: Duration::from_secs(1),
        max: Duration::from_secs(60),
        initial: Duration::from_secs(1),
    };
}

/// What a sender does when an ECN echo arrives with cwnd at 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnAtCwnd1 {
    /// RFC 3168 and ns-2.35: halve to 0.5 (nothing may be sent) and wait for
    /// the retransmission timer, backing off while marks continue.
    Timeout,
    /// The older behaviour: keep sending at cwnd 1.
    Ignore,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub variant: Variant,
    /// Packets in the first data flight, after the SYN's ACK (ns-2 2).
    pub initial_window: u32,
    /// The receiver window in packets; the usable window is min(cwnd, rwnd).
    /// ns-2's `window_` is 20, which silently caps every flow; aqmlab
    /// defaults to 10000 (effectively unlimited) and says so.
    pub rwnd_pkts: u32,
    /// The Linux-style family's default (`rwnd = "auto"`): the sink
    /// advertises Linux's autotuned window
    /// ([`crate::transport::linux::rcvwnd`]) and `rwnd_pkts` is not used.
    pub rwnd_auto: bool,
    /// Initial ssthresh; ns-2 sets it to the receiver window.
    pub initial_ssthresh_pkts: u32,
    /// Duplicate ACKs that trigger fast retransmit (1 gives the TED paper's
    /// "1ACK").
    pub dupack_threshold: u32,
    /// RFC 3042: a new packet on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    pub rto: RtoConfig,
    /// cwnd back to 1 after an idle period of one RTO.
    pub slow_start_restart: bool,
    pub ecn: bool,
    /// Packet 0 negotiates ECN and is not ECN-capable (ns-2.35). Without
    /// it ECN is taken as agreed and every packet is ECN-capable.
    pub ecn_negotiate: bool,
    pub ecn_at_cwnd1: EcnAtCwnd1,
    /// Most packets sent in one burst (0: unlimited). NewReno uses 2 inside
    /// recovery whatever this says.
    pub max_burst: u32,
    /// Open with a 40-byte SYN; cwnd 1 until its ACK, then `initial_window`.
    pub syn: bool,
    /// The sink ACKs every second in-order packet, or `delack_interval`
    /// after the first unacknowledged one.
    pub delayed_ack: bool,
    pub delack_interval: Duration,
    /// Header bytes added to every data packet; an ACK or SYN is this size.
    pub header_bytes: u32,
    /// The Linux-style family: pace whatever the congestion control
    /// (BBR and Prague always pace).
    pub pacing: bool,
    /// The Linux-style family's loss detection: RACK (else RFC 6675's
    /// rule), tail loss probes, PRR (else cwnd = ssthresh at once).
    pub rack: bool,
    pub tlp: bool,
    pub prr: bool,
    /// The Linux-style family: TCP timestamps (Linux's `tcp_timestamps`),
    /// for the sender's RTT samples and the receiver's round trip.
    pub timestamps: bool,
}

impl Default for TcpConfig {
    /// ns-2.35's one-way TCP (`Agent/TCP/Newreno` and `TCPSink`), with an
    /// effectively unlimited receiver window.
    fn default() -> TcpConfig {
        TcpConfig {
            variant: Variant::NewReno,
            initial_window: 2,
            rwnd_pkts: 10_000,
            rwnd_auto: false,
            initial_ssthresh_pkts: 10_000,
            dupack_threshold: 3,
            limited_transmit: true,
            rto: RtoConfig::NS2,
            slow_start_restart: true,
            ecn: false,
            ecn_negotiate: true,
            ecn_at_cwnd1: EcnAtCwnd1::Timeout,
            max_burst: 0,
            syn: true,
            delayed_ack: false,
            delack_interval: Duration::from_millis(100),
            header_bytes: 40,
            pacing: false,
            rack: true,
            tlp: true,
            prr: true,
            timestamps: true,
        }
    }
}

impl TcpConfig {
    /// The defaults of a Linux-style variant: Linux's initial window of 10,
    /// delayed ACKs with Linux's 40 ms minimum delay, Linux's RTO.
    pub fn linux(variant: Variant) -> TcpConfig {
        TcpConfig {
            variant,
            initial_window: 10,
            delayed_ack: true,
            delack_interval: Duration::from_millis(40),
            rto: RtoConfig::LINUX,
            rwnd_auto: true,
            ..TcpConfig::default()
        }
    }

    /// What the Linux-style sender takes from this configuration; `mss`
    /// is the bytes per packet its pacing counts with.
    pub fn linux_params(&self, mss: u32) -> crate::transport::linux::sender::LinuxParams {
        let rto = match self.rto {
            RtoConfig::Linux { min, max, initial } => crate::transport::linux::rtt::RtoBounds { min, max, initial },
            _ => crate::transport::linux::rtt::RtoBounds::default(),
        };
        crate::transport::linux::sender::LinuxParams {
            initial_window: self.initial_window,
            rwnd: if self.rwnd_auto { u32::MAX } else { self.rwnd_pkts },
            syn: self.syn,
            ecn: self.ecn,
            pacing: self.pacing,
            rack: self.rack,
            tlp: self.tlp,
            prr: self.prr,
            timestamps: self.timestamps,
            dupthresh: self.dupack_threshold,
            rto,
            mss,
            header: self.header_bytes,
        }
    }
}

// ---------------------------------------------------------------------------
// Reading a `tcp = { ... }` table

use serde_json::Value;

use crate::config::schema::{Key, TableDecl, Ty};
use crate::config::{self, parse_bool, parse_choice, parse_duration, Cx, Table};

/// The largest TCP header aqmlab accepts.
pub const MAX_HEADER_BYTES: u32 = 1500;

/// The keys of a `tcp` table (see `schema`); [`TcpConfig::parse`] reads
/// exactly these.
pub const TCP: TableDecl = TableDecl {
    id: "tcp",
    title: "tcp",
    parts: &[&[
        Key::opt(
            "variant",
            Ty::Choice(&Variant::NAMES),
            "\"newreno\"",
            "the congestion control: ns-2's one-way agents (\"reno\", \"newreno\", \"sack\"), or the Linux-style family (\"cubic\", \"bbr\", \"dctcp\", \"prague\", \"linux-reno\")",
        ),
        Key::opt(
            "initial_window",
            Ty::Whole {
                min: 1,
                max: u32::MAX as u64,
            },
            "2 (Linux-style: 10)",
            "packets in the first flight after the SYN's ACK",
        ),
        Key::opt(
            "rwnd",
            Ty::AnyOf(&[Ty::Pkts, Ty::Choice(&["auto"])]),
            "\"10000pkt\" (Linux-style: \"auto\")",
            "the receiver window; \"auto\" (Linux-style only): Linux's, grown as data arrives",
        ),
        Key::opt(
            "initial_ssthresh",
            Ty::Pkts,
            "rwnd",
            "the initial slow-start threshold, at least 2 packets",
        ),
        Key::opt(
            "dupack_threshold",
            Ty::Whole {
                min: 1,
                max: u32::MAX as u64,
            },
            "3",
            "duplicate ACKs that trigger fast retransmit",
        ),
        Key::opt("limited_transmit", Ty::Bool, "true", "RFC 3042"),
        Key::opt(
            "rto",
            Ty::AnyOf(&[Ty::Choice(&["ns2", "rfc6298", "ted"]), Ty::Table(&RTO_FIXED)]),
            "\"ns2\"",
            "how ns-2's agents compute the retransmission timeout (the Linux-style family uses Linux's)",
        ),
        Key::opt("tick", Ty::Time, "\"10ms\"", "the timer granularity of rto = \"ns2\""),
        Key::opt("min_rto", Ty::Time, "\"200ms\" (rfc6298: \"1s\")", "the smallest RTO"),
        Key::opt("max_rto", Ty::Time, "\"60s\" (Linux-style: \"120s\")", "the largest RTO"),
        Key::opt(
            "initial_rto",
            Ty::Time,
            "\"3s\" (rfc6298 and Linux-style: \"1s\")",
            "the RTO before the first RTT sample",
        ),
        Key::opt("slow_start_restart", Ty::Bool, "true", "cwnd = 1 after an idle RTO"),
        Key::opt(
            "ecn",
            Ty::Bool,
            "false",
            "ECN-capable packets, one window reduction per window of marks",
        ),
        Key::opt(
            "ecn_negotiate",
            Ty::Bool,
            "true",
            "packet 0 negotiates ECN and is not ECN-capable (ns-2.35)",
        ),
        Key::opt(
            "ecn_at_cwnd1",
            Ty::Choice(&["timeout", "ignore"]),
            "\"timeout\"",
            "what an ECN echo does with cwnd at 1",
        ),
        Key::opt(
            "max_burst",
            Ty::Whole {
                min: 0,
                max: u32::MAX as u64,
            },
            "0",
            "packets per burst (0: no limit)",
        ),
        Key::opt("syn", Ty::Bool, "true", "open with a 40 B SYN"),
        Key::opt(
            "delayed_ack",
            Ty::Bool,
            "false (Linux-style: true)",
            "the sink ACKs every second in-order packet",
        ),
        Key::opt(
            "delack_interval",
            Ty::Time,
            "\"100ms\" (Linux-style: \"40ms\")",
            "the delayed-ACK timer (Linux-style with rwnd \"auto\": its least, adapted as Linux's)",
        ),
        Key::opt(
            "header",
            Ty::Size,
            "\"40B\"",
            "the header of data packets, at most 1500B",
        ),
        Key::opt(
            "pacing",
            Ty::Bool,
            "false (bbr, prague: always)",
            "Linux-style: pace at 200% of cwnd/srtt in slow start, 120% after",
        ),
        Key::opt("rack", Ty::Bool, "true", "Linux-style: RACK finds losses (false: RFC 6675's rule)"),
        Key::opt("tlp", Ty::Bool, "true", "Linux-style: tail loss probes"),
        Key::opt(
            "prr",
            Ty::Bool,
            "true",
            "Linux-style: PRR sets cwnd in recovery (false: cwnd = ssthresh at once)",
        ),
        Key::opt(
            "timestamps",
            Ty::Bool,
            "true",
            "Linux-style: TCP timestamps, for RTT samples of retransmitted data and the receiver's round trip",
        ),
    ]],
};

/// Keys only ns-2's agents read.
const NS2_ONLY: [&str; 7] = [
    "rto",
    "tick",
    "limited_transmit",
    "slow_start_restart",
    "ecn_negotiate",
    "ecn_at_cwnd1",
    "max_burst",
];
/// Keys only the Linux-style family reads.
const LINUX_ONLY: [&str; 5] = ["pacing", "rack", "tlp", "prr", "timestamps"];

/// `rto = { fixed = "40ms" }`.
pub const RTO_FIXED: TableDecl = TableDecl {
    id: "rto-fixed",
    title: "a fixed RTO",
    parts: &[&[Key::req("fixed", Ty::Time, "the RTO, still doubled by backoff")]],
};

impl TcpConfig {
    /// Reads a group's `tcp` table over the defaults.
    pub fn parse(cx: &mut Cx, v: &Value, path: &str) -> Option<TcpConfig> {
        let mut t = Table::new(cx, v, path)?;
        t.declare_parts(TCP.parts);
        let errors_before = cx.errors.len();
        let mut c = TcpConfig::default();
        let set_u32 = |cx: &mut Cx, t: &mut Table, key: &'static str, field: &mut u32, min: u64| {
            if let Some(n) = t.opt(cx, key, |v| {
                config::parse_count(v, min).and_then(|n| u32::try_from(n).map_err(|_| format!("{n} is too large")))
            }) {
                *field = n;
            }
        };
        if let Some(variant) = t.opt(cx, "variant", |v| parse_choice(v, &Variant::NAMES)) {
            let i = Variant::NAMES.iter().position(|n| *n == variant).expect("a checked choice");
            c.variant = Variant::ALL[i];
            if c.variant.is_linux() {
                c = TcpConfig::linux(c.variant);
            }
        }
        let linux = c.variant.is_linux();
        // Keys of one family only.
        let (theirs, family) = if linux {
            (&NS2_ONLY[..], "ns-2's variants (reno, newreno, sack)")
        } else {
            (&LINUX_ONLY[..], "the Linux-style variants (cubic, bbr, dctcp, prague, linux-reno)")
        };
        for key in theirs {
            if t.has(key) {
                cx.err(&t.key_path(key), format!("applies only to {family}; this group's variant is {:?}", c.variant.name()));
            }
        }
        for (key, field) in [
            ("pacing", &mut c.pacing),
            ("rack", &mut c.rack),
            ("tlp", &mut c.tlp),
            ("prr", &mut c.prr),
            ("timestamps", &mut c.timestamps),
        ] {
            if linux {
                if let Some(b) = t.opt(cx, key, parse_bool) {
                    *field = b;
                }
            }
        }
        set_u32(cx, &mut t, "initial_window", &mut c.initial_window, 1);
        // `None`: "auto".
        let rwnd = t.opt(cx, "rwnd", |v| match v.as_str() {
            Some("auto") if linux => Ok(None),
            Some("auto") => Err(format!(
                "\"auto\" applies only to the Linux-style variants (cubic, bbr, dctcp, prague, linux-reno); this group's variant is {:?}, give a number of packets",
                c.variant.name()
            )),
            _ if linux => config::parse_pkts(v).map(Some).map_err(|_| {
                format!(
                    "expected \"auto\" or a whole number of packets, e.g. 20 or \"20pkt\", got {}",
                    config::show(v)
                )
            }),
            _ => config::parse_pkts(v).map(Some),
        });
        if let Some(Some(rwnd)) = rwnd {
            if rwnd == 0 {
                cx.err(&t.key_path("rwnd"), "must be at least 1 packet");
            }
            c.rwnd_pkts = rwnd.max(1);
            c.rwnd_auto = false;
            c.initial_ssthresh_pkts = c.rwnd_pkts;
        }
        if let Some(ss) = t.opt(cx, "initial_ssthresh", config::parse_pkts) {
            if ss < 2 {
                cx.err(
                    &t.key_path("initial_ssthresh"),
                    format!("must be at least 2 packets (got {ss})"),
                );
            }
            c.initial_ssthresh_pkts = ss;
        }
        set_u32(cx, &mut t, "dupack_threshold", &mut c.dupack_threshold, 1);
        if let Some(b) = t.opt(cx, "limited_transmit", parse_bool) {
            c.limited_transmit = b;
        }
        if !linux {
            if let Some(rto) = t.opt(cx, "rto", parse_rto) {
                c.rto = rto;
            }
        }
        // Bounds of the ns2 and rfc6298 estimators.
        let tick = t.opt(cx, "tick", parse_duration);
        let min_rto = t.opt(cx, "min_rto", parse_duration);
        let max_rto = t.opt(cx, "max_rto", parse_duration);
        let initial_rto = t.opt(cx, "initial_rto", parse_duration);
        match &mut c.rto {
            RtoConfig::Ns2 {
                tick: tk,
                min,
                max,
                initial,
            } => {
                *tk = tick.unwrap_or(*tk);
                *min = min_rto.unwrap_or(*min);
                *max = max_rto.unwrap_or(*max);
                *initial = initial_rto.unwrap_or(*initial);
            }
            RtoConfig::Rfc6298 { min, max, initial } | RtoConfig::Linux { min, max, initial } => {
                *min = min_rto.unwrap_or(*min);
                *max = max_rto.unwrap_or(*max);
                *initial = initial_rto.unwrap_or(*initial);
                if tick.is_some() {
                    cx.err(&t.key_path("tick"), "applies only to rto = \"ns2\"");
                }
            }
            RtoConfig::Fixed(_) | RtoConfig::Ted => {
                for (key, given) in [
                    ("tick", tick),
                    ("min_rto", min_rto),
                    ("max_rto", max_rto),
                    ("initial_rto", initial_rto),
                ] {
                    if given.is_some() {
                        cx.err(&t.key_path(key), "applies only to rto = \"ns2\" or \"rfc6298\"");
                    }
                }
            }
        }
        if let RtoConfig::Ns2 { tick: Duration(0), .. } = c.rto {
            cx.err(&t.key_path("tick"), "must be longer than 0s");
        }
        if let Some(b) = t.opt(cx, "slow_start_restart", parse_bool) {
            c.slow_start_restart = b;
        }
        if let Some(b) = t.opt(cx, "ecn", parse_bool) {
            c.ecn = b;
        }
        if let Some(b) = t.opt(cx, "ecn_negotiate", parse_bool) {
            c.ecn_negotiate = b;
        }
        if let Some(mode) = t.opt(cx, "ecn_at_cwnd1", |v| parse_choice(v, &["timeout", "ignore"])) {
            c.ecn_at_cwnd1 = if mode == "ignore" {
                EcnAtCwnd1::Ignore
            } else {
                EcnAtCwnd1::Timeout
            };
        }
        set_u32(cx, &mut t, "max_burst", &mut c.max_burst, 0);
        if let Some(b) = t.opt(cx, "syn", parse_bool) {
            c.syn = b;
        }
        if let Some(b) = t.opt(cx, "delayed_ack", parse_bool) {
            c.delayed_ack = b;
        }
        if let Some(d) = t.opt(cx, "delack_interval", parse_duration) {
            c.delack_interval = d;
        }
        if let Some(h) = t.opt(cx, "header", config::parse_packet_size) {
            if h > MAX_HEADER_BYTES {
                cx.err(
                    &t.key_path("header"),
                    format!("must be at most {MAX_HEADER_BYTES}B (got {h}B)"),
                );
            }
            c.header_bytes = h;
        }
        // Every RTO bound must be positive: a zero RTO would fire forever at
        // one instant.
        for (key, given) in [("min_rto", min_rto), ("max_rto", max_rto), ("initial_rto", initial_rto)] {
            if given == Some(Duration::ZERO) {
                cx.err(&t.key_path(key), "must be longer than 0s");
            }
        }
        // The agent's own checks (min <= max, ...): an object that exists is
        // valid. A "ted" RTO is resolved per flow later; check the rest.
        let mut check = c;
        if check.rto == RtoConfig::Ted {
            check.rto = RtoConfig::Fixed(Duration::from_secs(1));
        }
        // Only on a table that passed the checks above: the agent repeats some
        // of them in its own terms ("rto.tick must be positive" beside
        // "tcp.tick: must be longer than 0s").
        if cx.errors.len() == errors_before {
            if let Err(e) = crate::transport::tcp::conn::Sender::new(&check, Duration::ZERO, 1500, 0) {
                cx.err(&t.path, e);
            }
        }
        t.finish(cx);
        Some(c)
    }
}

/// `"ns2"`, `"rfc6298"`, `"ted"` or `{ fixed = "40ms" }`.
fn parse_rto(v: &Value) -> Result<RtoConfig, String> {
    const EXPECTED: &str = "\"ns2\", \"rfc6298\", \"ted\" or { fixed = \"40ms\" }";
    match v {
        Value::String(_) => Ok(match parse_choice(v, &["ns2", "rfc6298", "ted"])? {
            "rfc6298" => RtoConfig::RFC6298,
            "ted" => RtoConfig::Ted,
            _ => RtoConfig::NS2,
        }),
        Value::Object(m) if m.len() == 1 && m.contains_key("fixed") => {
            let d = parse_duration(&m["fixed"])?;
            if d == Duration::ZERO {
                return Err("a fixed RTO must be longer than 0s".to_string());
            }
            Ok(RtoConfig::Fixed(d))
        }
        other => Err(format!("expected {EXPECTED}, got {}", config::show(other))),
    }
}
