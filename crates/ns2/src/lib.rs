//! aqmlab-ns2: a scenario as an ns-2.35 Tcl script.
//!
//! The classic AQM studies ran on ns-2, and aqmlab's RED, one-way TCP
//! agents and traffic sources follow ns-2.35's semantics. [`export`] writes
//! the same scenario for `ns` so that anyone can check that claim: the
//! script builds the same nodes, links, queues and flows, runs, and prints
//! one JSON object with the keys of `aqmlab run --json` (plus `simulator =
//! "ns-2"`), measured over the same window.
//!
//! What ns-2.35 cannot express is refused with the key path of the setting
//! and the reason, never approximated in silence: disciplines ns-2 lacks
//! (BLUE, SFB, TED, CoDel, PIE, FQ-CoDel, RED+Tail, Bernoulli), RED options
//! it has no counterpart for, payload sizes drawn per packet, and traffic
//! kinds it has no generator for. Where ns-2 and aqmlab count the same event
//! differently the script says so in a comment and the summary keeps ns-2's
//! count (a RED buffer overflow is one of ns-2's forced drops).
//!
//! Traffic that ns-2 generates with its own machinery is given to it
//! (`Application/FTP`, `/Traffic/CBR`, `/Exponential`, `/Pareto`, and
//! PagePool/WebTraf for `web`, in a subclass whose hooks measure objects,
//! pages and connections); `file` transfers and `batch-poisson` batches are
//! driven by Tcl procedures of the script (`runtime.tcl`) on ns-2's agents.
//!
//! Conventions that differ between the two and that the script converts:
//! - buffer limits: aqmlab's `limit` counts packets waiting behind the one in
//!   transmission. ns-2's DropTail with `limit_ N` holds N - 1 waiting (it
//!   enqueues, then drops if the length reached N) and RED holds N (it checks
//!   before enqueueing), so DropTail gets `limit_ L + 1` and RED `limit_ L`;
//! - RED's defaults: ns-2.35 defaults to byte mode, gentle and `wait_`, and
//!   aqmlab does not, so every RED variable is set explicitly;
//! - thresholds of a byte queue are given to ns-2 in mean packets (it
//!   multiplies them by `mean_pktsize_`).

use aqmlab_qdisc::{
    Adapt, AredUpdate, AvgOf, DropSpacing, DropWhere, EcnAboveMaxTh, Gentle, GentleSlope, IdleDecay, Limit, QueueUnit,
    RedParams,
};
use aqmlab_sim::app::web::{WebParams, WebResponse};
use aqmlab_sim::config::dist::Dist;
use aqmlab_sim::config::ConfigError;
use aqmlab_sim::net::qdisc::{self, QdiscSpec};
use aqmlab_sim::scenario::{DelaySpec, GroupSpec, Report, Scenario, SourceSpec, NO_ROUTE};
use aqmlab_sim::transport::tcp::config::{EcnAtCwnd1, RtoConfig, TcpConfig, Variant};
use aqmlab_sim::transport::udp::Schedule;

/// The summary procedures every exported script carries.
const RUNTIME: &str = include_str!("runtime.tcl");

/// The window accounting of the flows' agents, used as the flows are made.
const FLOWS: &str = include_str!("flows.tcl");

/// WebTraf's pool with the hooks that measure it, for scripts with `web`.
const WEBTRAF: &str = include_str!("webtraf.tcl");

/// ns-2's `limit_` is a C int; an unlimited aqmlab queue gets this.
const NS2_UNLIMITED: u64 = 1_000_000_000;

/// The ns-2.35 script for `sc` run with `seed` (the script also takes a seed
/// as its first argument), or every setting ns-2.35 cannot express.
pub fn export(sc: &Scenario, seed: u64) -> Result<String, Vec<ConfigError>> {
    // The Linux-style family is aqmlab's, not one of ns-2's one-way agents.
    let refused: Vec<ConfigError> = sc
        .groups
        .iter()
        .enumerate()
        .filter_map(|(i, g)| {
            let v = g.source.tcp()?.variant;
            v.is_linux().then(|| ConfigError {
                path: format!("traffic[{i}].tcp.variant"),
                message: format!(
                    "ns-2.35 has no {:?} of aqmlab's Linux-style family; export \"reno\", \"newreno\" or \"sack\"",
                    v.name()
                ),
            })
        })
        .collect();
    if !refused.is_empty() {
        return Err(refused);
    }
    let mut w = Writer {
        out: String::new(),
        errors: Vec::new(),
        delays: Vec::new(),
    };
    w.script(sc, seed);
    if w.errors.is_empty() {
        Ok(w.out)
    } else {
        Err(w.errors)
    }
}

struct Writer {
    out: String,
    errors: Vec<ConfigError>,
    /// Each link's propagation delay in seconds, as a Tcl word.
    delays: Vec<String>,
}

/// `x` as Tcl reads it back exactly (Rust prints the shortest round-trip form).
fn num(x: f64) -> String {
    format!("{x:?}")
}

fn secs(ns: u64) -> String {
    num(ns as f64 / 1e9)
}

/// `s` as one Tcl word in double quotes, with every character that Tcl
/// would substitute escaped.
fn tcl_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' | '$' | '[' | ']' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

impl Writer {
    fn refuse(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(ConfigError {
            path: path.to_string(),
            message: message.into(),
        });
    }

    /// `array(name,key) = value`, the element's name quoted as one word
    /// (names are the user's and may hold any character).
    fn set(&mut self, array: &str, name: &str, key: &str, value: &str) {
        let var = tcl_str(&format!("{array}({name},{key})"));
        self.line(format!("set {var} {value}"));
    }

    /// Attaches `$s` at node `src` and `$k` at node `dst` and connects them.
    fn connect(&mut self, src: u32, dst: u32) {
        self.line(format!(
            "$ns attach-agent $n({src}) $s; $ns attach-agent $n({dst}) $k; $ns connect $s $k"
        ));
    }

    /// A UDP agent `$s` of flow `f` sending `size`-byte packets from `src`
    /// to a loss monitor `$k` at `dst`.
    fn udp_pair(&mut self, f: u32, size: u32, src: u32, dst: u32) {
        self.line(format!(
            "set s [new Agent/UDP]; $s set fid_ {f}; $s set packetSize_ {size}; set k [new Agent/LossMonitor]"
        ));
        self.connect(src, dst);
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.out.push_str(s.as_ref());
        self.out.push('\n');
    }

    fn script(&mut self, sc: &Scenario, seed: u64) {
        let name = &sc.name;
        self.line(format!(
            "# ns-2.35 script for the aqmlab scenario {name:?}, written by aqmlab {}.",
            aqmlab_sim::ENGINE_VERSION
        ));
        self.line("# Run it with `ns THIS_FILE [SEED]`: it prints one JSON object with the keys of");
        self.line("# `aqmlab run --json`, measured over the same window [warmup, duration].");
        self.line("");
        self.line(format!("set aq(seed) {seed}"));
        self.line("if {$argc >= 1} { set aq(seed) [lindex $argv 0] }");
        self.line("set ns [new Simulator]");
        self.line("# Every random draw (start times, RED's coin, sources) comes from ns-2's default");
        self.line("# generator; seed 0 would mean 'from the clock', so seeds are 1 and up.");
        self.line("global defaultRNG");
        self.line("$defaultRNG seed [expr {$aq(seed) + 1}]");
        self.line(format!("set aq(name) {}", tcl_str(name)));
        self.line(format!("set aq(warmup) {}", secs(sc.warmup.nanos())));
        self.line(format!("set aq(duration) {}", secs(sc.duration.nanos())));
        let classes: Vec<String> = sc.classes.iter().map(|c| tcl_str(c)).collect();
        self.line(format!("set aq(classes) [list {}]", classes.join(" ")));
        self.line("set aq(trace) [format aqmlab-ns2-%d.tr [pid]]");
        self.line("set aq(trace_ch) [open $aq(trace) w]");
        self.line("");
        self.network(sc);
        self.line("");
        self.out.push_str(FLOWS);
        self.line("");
        self.line("# The window opens: scheduled first, so it comes before what starts then.");
        self.line("$ns at $aq(warmup) {aq_warmup}");
        self.traffic(sc);
        self.line("");
        self.line("# ---------------------------------------------------------------------------");
        self.out.push_str(RUNTIME);
        self.line("");
        self.line("$ns at $aq(duration) {aq_finish}");
        self.line("$ns run");
    }

    // -----------------------------------------------------------------------
    // Nodes, links and queues

    fn network(&mut self, sc: &Scenario) {
        let net = &sc.net;
        self.line("# Nodes: ns-2 numbers them in creation order, as aqmlab does.");
        for (i, n) in net.nodes.iter().enumerate() {
            self.line(format!("set n({i}) [$ns node] ;# {}", n.name));
        }
        self.line("");
        self.line("# Propagation delays drawn once per run; both directions of an access link share one.");
        let mut streams: Vec<&str> = Vec::new();
        for l in &net.links {
            if let DelaySpec::Drawn { dist, stream } = &l.delay {
                if !streams.contains(&stream.as_str()) {
                    streams.push(stream);
                    let rv = self.random_variable(dist, "topology");
                    self.line(format!(
                        "set aqdelay({}) [expr {{max(0.0, [{rv} value])}}]",
                        streams.len() - 1
                    ));
                }
            }
        }
        self.delays = net
            .links
            .iter()
            .map(|l| match &l.delay {
                DelaySpec::Fixed(d) => secs(d.nanos()),
                DelaySpec::Drawn { stream, .. } => {
                    let k = streams
                        .iter()
                        .position(|s| s == stream)
                        .expect("every stream was drawn above");
                    format!("$aqdelay({k})")
                }
            })
            .collect();
        self.line("");
        self.line("# Links, one simplex link per direction with its own queue.");
        let mut queues = Vec::new();
        for (i, l) in net.links.iter().enumerate() {
            let (a, b) = (l.from, l.to);
            let kind = match &l.qdisc {
                QdiscSpec::DropTail(_) => "DropTail",
                QdiscSpec::Red(_) => "RED",
                other => {
                    let what = match other {
                        QdiscSpec::Bernoulli(_) => "bernoulli",
                        QdiscSpec::Ted(_) => "ted",
                        QdiscSpec::Pie(_) => "pie",
                        QdiscSpec::DualPi2(_) => "dualpi2",
                        QdiscSpec::Codel(_) => "codel",
                        QdiscSpec::FqCodel(_) => "fq_codel",
                        QdiscSpec::FqPie(_) => "fq_pie",
                        QdiscSpec::Cobalt(_) => "cobalt",
                        QdiscSpec::FqCobalt(_) => "fq_cobalt",
                        QdiscSpec::Blue(_) => "blue",
                        QdiscSpec::Sfb(_) => "sfb",
                        QdiscSpec::RedTail(_) => "red-tail",
                        QdiscSpec::DropTail(_) | QdiscSpec::Red(_) => unreachable!(),
                    };
                    self.refuse(
                        &format!("{}.kind", l.qdisc_path),
                        format!(
                            "\"{what}\" has no counterpart in ns-2.35; an export to ns-2 supports \"droptail\", \"red\", \"ared\" and \"feng-ared\""
                        ),
                    );
                    continue;
                }
            };
            let delay = self.delays[i].clone();
            self.line(format!(
                "$ns simplex-link $n({a}) $n({b}) {} {delay} {kind} ;# {}",
                l.rate_bps, l.name
            ));
            self.line(format!("set aqlq({i}) [[$ns link $n({a}) $n({b})] queue]"));
            self.queue(i, l);
            let traced =
                l.report == Report::Always || !matches!(l.qdisc, QdiscSpec::DropTail(p) if p.limit == Limit::Unlimited);
            if traced {
                queues.push(i);
            }
        }
        self.line("");
        self.line("# The queues measured: every reported queue and every queue that can drop.");
        self.line("set aq(queues) {}");
        for &i in &queues {
            let l = &net.links[i];
            let q = tcl_str(&l.name);
            let built = l.qdisc.build(l.info(), 0, &sc.classes);
            let desc = qdisc::describe(&built, &sc.classes).to_string();
            let kind = if matches!(l.qdisc, QdiscSpec::Red(_)) {
                "red"
            } else {
                "droptail"
            };
            self.line(format!("lappend aq(queues) {q}"));
            let report = if l.report == Report::Always {
                "always"
            } else {
                "ifdropped"
            };
            for (key, value) in [
                ("from", tcl_str(&net.nodes[l.from as usize].name)),
                ("to", tcl_str(&net.nodes[l.to as usize].name)),
                ("rate", l.rate_bps.to_string()),
                ("delay", self.delays[i].clone()),
                ("kind", kind.to_string()),
                ("report", report.to_string()),
                ("qdisc", tcl_str(&desc)),
            ] {
                self.set("aqq", &l.name, key, &value);
            }
            self.line(format!("set aqlink({}:{}) {q}", l.from, l.to));
            // The link's own trace ('+', '-', 'd', 'r'); not `$ns trace-queue`,
            // which would also trace RED's early drops as 'd' lines.
            self.line(format!(
                "[$ns link $n({}) $n({})] trace $ns $aq(trace_ch)",
                l.from, l.to
            ));
            if kind == "red" {
                // Early drops go to their own trace ('e') so they can be
                // told from forced drops ('d').
                self.line(format!(
                    "set aqet [$ns create-trace EDrop $aq(trace_ch) $n({}) $n({})]",
                    l.from, l.to
                ));
                self.line("$aqet target [$ns set nullAgent_]");
                self.line(format!("$aqlq({i}) early-drop-target $aqet"));
            }
        }
    }

    fn queue(&mut self, i: usize, l: &aqmlab_sim::scenario::LinkSpec) {
        let q = format!("$aqlq({i})");
        let path = l.qdisc_path.clone();
        match &l.qdisc {
            QdiscSpec::DropTail(p) => {
                // ns-2 enqueues and then drops when the length has reached
                // limit_, so it holds limit_ - 1 behind the packet in
                // transmission.
                match p.limit {
                    Limit::Packets(n) => self.line(format!("{q} set limit_ {}", n as u64 + 1)),
                    Limit::Unlimited => self.line(format!("{q} set limit_ {NS2_UNLIMITED}")),
                    // In byte mode ns-2 admits a packet while bytes queued
                    // plus its size stay below limit_ x mean_pktsize_;
                    // aqmlab admits up to the limit itself, so one byte more.
                    Limit::Bytes(b) if b < i32::MAX as u64 => {
                        self.line(format!(
                            "{q} set queue_in_bytes_ true; {q} set mean_pktsize_ 1; {q} set limit_ {}",
                            b + 1
                        ));
                    }
                    Limit::Bytes(_) => self.refuse(
                        &format!("{path}.limit"),
                        "ns-2.35 keeps a byte limit in a C int; give at most 2147483646B",
                    ),
                }
                if p.drop == DropWhere::Front {
                    self.line(format!("{q} set drop_front_ true"));
                }
            }
            QdiscSpec::Red(p) => {
                let built = l.qdisc.build(l.info(), 0, &[]);
                let eff = match &built {
                    aqmlab_qdisc::AnyQdisc::Red(r) => r.effective(),
                    _ => unreachable!("a red spec builds a RED queue"),
                };
                self.red(&q, &path, p, &eff);
            }
            _ => unreachable!("refused before"),
        }
    }

    fn red(&mut self, q: &str, path: &str, p: &RedParams, eff: &RedParams) {
        let unit = eff.unit();
        let mean = eff.mean_pktsize_bytes as f64;
        match eff.limit {
            Limit::Packets(n) => self.line(format!("{q} set limit_ {n}")),
            Limit::Unlimited => self.line(format!("{q} set limit_ {NS2_UNLIMITED}")),
            Limit::Bytes(b) => {
                // ns-2's byte limit is limit_ x mean_pktsize_.
                if b % eff.mean_pktsize_bytes as u64 != 0 {
                    self.refuse(
                        &format!("{path}.limit"),
                        format!(
                            "ns-2.35 takes a RED byte limit as a whole number of mean packets (limit_ x mean_pktsize_); \
                             {b} B is not a multiple of mean_pktsize {} B",
                            eff.mean_pktsize_bytes
                        ),
                    );
                }
                self.line(format!("{q} set limit_ {}", b / eff.mean_pktsize_bytes as u64));
            }
        }
        let th = |t: aqmlab_qdisc::Threshold| match t {
            aqmlab_qdisc::Threshold::Packets(x) => x,
            aqmlab_qdisc::Threshold::Bytes(x) => x / mean,
            aqmlab_qdisc::Threshold::Auto => unreachable!("effective thresholds are resolved"),
        };
        let w_q = match eff.w_q {
            aqmlab_qdisc::Weight::Value(w) => w,
            aqmlab_qdisc::Weight::Auto => unreachable!("the effective weight is resolved"),
        };
        let byte_queue = unit == QueueUnit::Bytes;
        self.line(format!("{q} set queue_in_bytes_ {}", byte_queue));
        self.line(format!("{q} set bytes_ {}", eff.byte_mode));
        self.line(format!("{q} set mean_pktsize_ {}", eff.mean_pktsize_bytes));
        self.line(format!("{q} set thresh_ {}", num(th(eff.min_th))));
        self.line(format!("{q} set maxthresh_ {}", num(th(eff.max_th))));
        let w_q = if eff.avg_of == AvgOf::Instantaneous { 1.0 } else { w_q };
        self.line(format!("{q} set q_weight_ {}", num(w_q)));
        self.line(format!("{q} set linterm_ {}", num(1.0 / eff.max_p)));
        if eff.gentle == Gentle::ToLimit {
            self.refuse(
                &format!("{path}.gentle"),
                "\"to_limit\" has no ns-2.35 counterpart (ns-2's gentle_ line always reaches 1 at 2 max_th); use true or false",
            );
        }
        let gentle = eff.gentle != Gentle::Off;
        self.line(format!("{q} set gentle_ {gentle}"));
        self.line(format!("{q} set wait_ {}", eff.wait));
        self.line(format!("{q} set targetdelay_ {}", secs(eff.target_delay.nanos())));
        self.line(format!("{q} set drop_tail_ true"));
        self.line(format!("{q} set setbit_ {}", eff.ecn));
        // ECN: ns-2 marks an ECN-capable arrival hit by an early drop; with
        // use_mark_p_ it marks only while p_b <= mark_p_ and drops (as an
        // early drop) above. Without use_mark_p_, avg >= max_th (2 max_th
        // gentle) is a forced drop, as aqmlab's `ecn_above_max_th = "drop"`
        // without gentle. With gentle, mark_p_ = max_p marks exactly below
        // max_th. "mark" marks everywhere: mark_p_ = 1.
        let (use_mark_p, mark_p) = match (eff.ecn, eff.ecn_above_max_th, gentle) {
            (false, _, _) => (false, 1.0),
            (true, EcnAboveMaxTh::Drop, false) => (false, 1.0),
            (true, EcnAboveMaxTh::Drop, true) => (true, eff.max_p),
            (true, EcnAboveMaxTh::Mark, _) => (true, 1.0),
        };
        self.line(format!("{q} set use_mark_p_ {use_mark_p}"));
        self.line(format!("{q} set mark_p_ {}", num(mark_p)));
        if p.drop_spacing == DropSpacing::None {
            self.refuse(
                &format!("{path}.drop_spacing"),
                "\"none\" has no ns-2.35 counterpart (ns-2 always spaces drops with the count); use \"count\"",
            );
        }
        if p.idle_decay != IdleDecay::Ns2 && p.avg_of == AvgOf::Average {
            self.refuse(
                &format!("{path}.idle_decay"),
                "ns-2.35 has only its own idle correction; use \"ns2\"",
            );
        }
        if !p.exempt_first {
            self.refuse(
                &format!("{path}.exempt_first"),
                "false has no ns-2.35 counterpart (ns-2 never drops with at most one packet queued or the first arrival above min_th); use true",
            );
        }
        match eff.adapt {
            Adapt::None => {
                self.line(format!("{q} set adaptive_ 0"));
            }
            Adapt::Ared(a) => {
                if a.update != AredUpdate::Arrival {
                    self.refuse(
                        &format!("{path}.update"),
                        "\"timer\" has no ns-2.35 counterpart (ns-2's Adaptive RED checks max_p at arrivals); use \"arrival\"",
                    );
                }
                if a.gentle_slope != GentleSlope::Initial {
                    self.refuse(
                        &format!("{path}.gentle_slope"),
                        "\"current\" has no ns-2.35 counterpart (ns-2's gentle line keeps the initial max_p); use \"initial\"",
                    );
                }
                if eff.ecn && gentle && eff.ecn_above_max_th == EcnAboveMaxTh::Drop {
                    self.refuse(
                        &format!("{path}.ecn_above_max_th"),
                        "\"drop\" with Adaptive RED, gentle and ECN has no ns-2.35 counterpart (ns-2 would mark up to its fixed mark_p_, not up to the adapted max_p); use \"mark\"",
                    );
                }
                self.line(format!("{q} set adaptive_ 1"));
                self.line(format!("{q} set feng_adaptive_ 0"));
                self.line(format!("{q} set interval_ {}", secs(a.interval.nanos())));
                self.line(format!("{q} set alpha_ {}", num(a.alpha)));
                self.line(format!("{q} set beta_ {}", num(a.beta)));
                self.line(format!("{q} set top_ {}", num(a.top)));
                self.line(format!("{q} set bottom_ {}", num(a.bottom)));
                self.line("# ns-2 tests max_p against top_ and bottom_ strictly, aqmlab inclusively.");
            }
            Adapt::Feng(f) => {
                if f.dynamic.is_some() {
                    self.refuse(
                        &format!("{path}.dynamic_thresholds"),
                        "dynamic thresholds have no ns-2.35 counterpart; set dynamic_thresholds = false",
                    );
                }
                self.line(format!("{q} set adaptive_ 1"));
                self.line(format!("{q} set feng_adaptive_ 1"));
                self.line(format!("{q} set alpha_ {}", num(f.a)));
                self.line(format!("{q} set beta_ {}", num(f.b)));
                self.line(format!(
                    "# ns-2 leaves max_p unbounded; aqmlab keeps it in [{}, 1].",
                    num(f.bottom)
                ));
            }
        }
    }

    /// A Tcl command that creates an ns-2 random variable with the law of
    /// `dist`, or a refusal at `path`.
    fn random_variable(&mut self, dist: &Dist, path: &str) -> String {
        match *dist {
            Dist::Constant(v) => format!("aq_constant {}", num(v)),
            Dist::Uniform { min, max } => format!("aq_rv Uniform min_ {} max_ {}", num(min), num(max)),
            Dist::Exponential { mean } => format!("aq_rv Exponential avg_ {}", num(mean)),
            Dist::Pareto { shape, scale } if shape > 1.0 => format!(
                "aq_rv Pareto avg_ {} shape_ {}",
                num(scale * shape / (shape - 1.0)),
                num(shape)
            ),
            Dist::Pareto2 { shape, scale } if shape > 1.0 => {
                format!(
                    "aq_rv ParetoII avg_ {} shape_ {}",
                    num(scale / (shape - 1.0)),
                    num(shape)
                )
            }
            _ => {
                self.refuse(
                    path,
                    "this distribution has no ns-2.35 random variable with the same law (ns-2 has uniform, exponential, and Pareto I and II with shape > 1)",
                );
                String::from("aq_constant 0")
            }
        }
    }

    // -----------------------------------------------------------------------
    // Traffic

    fn traffic(&mut self, sc: &Scenario) {
        self.line("# A random variable that always gives v, and one of ns-2's with its parameters set.");
        self.line("proc aq_constant {v} { set r [new RandomVariable/Constant]; $r set val_ $v; return $r }");
        self.line("proc aq_rv {kind args} { set r [new RandomVariable/$kind]; foreach {k v} $args { $r set $k $v }; return $r }");
        self.line("set aq(groups) {}");
        self.line("set aq(flows) {}");
        self.line("set aq(webgroups) {}");
        if sc.groups.iter().any(|g| matches!(g.source, SourceSpec::Web { .. })) {
            self.out.push_str(WEBTRAF);
        }
        let mut fid = 0u32;
        for (gi, g) in sc.groups.iter().enumerate() {
            let path = format!("traffic[{gi}]");
            self.group(sc, g, gi, &path, &mut fid);
        }
    }

    fn group(&mut self, sc: &Scenario, g: &GroupSpec, gi: usize, path: &str, fid: &mut u32) {
        let kind = g.source.kind();
        let gname = tcl_str(&g.name);
        self.line("");
        self.line(format!("# {path}: {} x {kind}", g.count));
        self.line(format!("lappend aq(groups) {gname}"));
        self.set("aqgrp", &g.name, "kind", kind);
        self.set("aqgrp", &g.name, "class", &tcl_str(&sc.classes[g.class as usize]));
        self.set("aqgrp", &g.name, "tcp", &(g.source.is_tcp() as u8).to_string());
        self.set("aqgrp", &g.name, "index", &gi.to_string());
        self.set("aqgrp", &g.name, "count", &g.count.to_string());
        self.set("aqgrp", &g.name, "flows", "{}");
        if g.ted_deadline.is_some() {
            self.refuse(
                &format!("{path}.ted_deadline"),
                "ns-2.35 has no TED queue; remove ted_deadline",
            );
        }
        let start = self.random_variable(&g.start, &format!("{path}.start"));
        self.line(format!("set aqstart [{start}]"));
        // What each flow is made of, checked once per group.
        let proto = match &g.source {
            SourceSpec::Ftp {
                on_off:
                    Some(aqmlab_sim::scenario::TcpOnOff {
                        on,
                        off,
                        rate_bps: Some(rate),
                    }),
                payload,
                tcp,
                ..
            } => {
                self.paced_onoff(sc, g, gi, path, *rate, on, off, payload, tcp, fid);
                return;
            }
            SourceSpec::Ftp {
                size_bytes,
                payload,
                tcp,
                on_off,
                repeat,
            } => {
                if on_off.is_some() {
                    self.refuse(
                        &format!("{path}.kind"),
                        "\"onoff\" over TCP without \"rate\" sends unlimited data while ON; ns-2's Pareto and \
                         Exponential applications send at a rate, so there is no exact ns-2.35 counterpart (give \"rate\")",
                    );
                    return;
                }
                let Some(pay) = self.constant_payload(payload, &format!("{path}.packet_size")) else {
                    return;
                };
                self.tcp_defaults(tcp, &format!("{path}.tcp"));
                self.tcp_procs(gi, tcp, pay);
                match repeat {
                    Some((size, gap)) => {
                        let size = self.random_variable(size, &format!("{path}.size"));
                        let gap = self.random_variable(gap, &format!("{path}.gap"));
                        self.line(format!("set aqfile({gi},size) [{size}]"));
                        self.line(format!("set aqfile({gi},gap) [{gap}]"));
                        Proto::File { pay, tcp: *tcp }
                    }
                    None => Proto::Tcp {
                        pay,
                        tcp: *tcp,
                        packets: size_bytes.map(|b| b.div_ceil(pay as u64)),
                    },
                }
            }
            SourceSpec::Udp(Schedule::Cbr {
                rate_bps,
                size_bytes,
                jitter,
            }) => Proto::Udp(format!(
                "set app [new Application/Traffic/CBR]; $app set rate_ {}; $app set packetSize_ {size_bytes}; $app set random_ {}",
                num(*rate_bps),
                *jitter as u8
            ), *size_bytes),
            SourceSpec::Udp(Schedule::Poisson { rate_bps, size }) => {
                let Some(s) = self.constant_payload(size, &format!("{path}.size")) else {
                    return;
                };
                // An exponential on/off source with zero-length bursts sends
                // one packet per idle period: Poisson arrivals, the gap being
                // the idle time plus one packet time at rate_ (negligible at
                // the rate set here).
                let gap = s as f64 * 8.0 / rate_bps;
                Proto::Udp(format!(
                    "set app [new Application/Traffic/Exponential]; $app set packetSize_ {s}; $app set burst_time_ 0; $app set idle_time_ {}; $app set rate_ 1e15",
                    num(gap)
                ), s)
            }
            SourceSpec::Udp(Schedule::OnOff {
                rate_bps,
                size_bytes,
                on,
                off,
            }) => match self.onoff_app(*rate_bps, *size_bytes, on, off, path) {
                Some(app) => Proto::Udp(app, *size_bytes),
                None => return,
            },
            SourceSpec::Udp(Schedule::Batch { gap, batch, size }) => {
                let Some(s) = self.constant_payload(size, &format!("{path}.size")) else {
                    return;
                };
                let gap = self.random_variable(gap, &format!("{path}.gap"));
                let batch = self.random_variable(batch, &format!("{path}.batch"));
                self.line(format!("set aqbatch({gi},gap) [{gap}]"));
                self.line(format!("set aqbatch({gi},batch) [{batch}]"));
                let stop = g.stop.map_or(String::from("$aq(duration)"), |t| secs(t.nanos()));
                self.line(format!("set aqbatch({gi},stop) [expr {{min({stop}, $aq(duration))}}]"));
                Proto::Batch(s)
            }
            SourceSpec::Web {
                params,
                payload_bytes,
                tcp,
                response,
            } => {
                self.web(sc, g, gi, path, params, *payload_bytes, tcp, *response, fid);
                return;
            }
            SourceSpec::Http11 { .. } => {
                self.refuse(
                    &format!("{path}.kind"),
                    "\"http11\" has no ns-2.35 counterpart (one-way TCP agents cannot carry persistent request/response exchanges)",
                );
                return;
            }
        };
        for j in 0..g.count {
            let (src, dst) = g.endpoints(j);
            let f = *fid;
            *fid += 1;
            let rtt = self.rtt_expr(sc, src, dst);
            self.line("set t [expr {max(0.0, [$aqstart value])}]");
            let start = "$t";
            let (syn, tcp, payload, hdr) = match &proto {
                Proto::Tcp { pay, tcp, packets } => {
                    self.line(format!("set s [aq_sender_{gi} {f}]; set k [aq_sink_{gi} {f}]"));
                    self.connect(src, dst);
                    self.line("set app [$s attach-app FTP]");
                    match packets {
                        None => self.line(format!("$ns at {start} [list $app start]")),
                        Some(n) => self.line(format!("$ns at {start} [list $app produce {n}]")),
                    }
                    (tcp.syn, true, *pay, tcp.header_bytes)
                }
                Proto::File { pay, tcp } => {
                    // The agents come with each transfer.
                    self.line("set s {}; set k {}");
                    self.line(format!("$ns at {start} [list aq_file_next {f}]"));
                    (tcp.syn, true, *pay, tcp.header_bytes)
                }
                Proto::Udp(app, size) => {
                    self.udp_pair(f, *size, src, dst);
                    self.line(format!("{app}; $app attach-agent $s"));
                    self.line(format!("$ns at {start} [list $app start]"));
                    if let Some(stop) = g.stop {
                        self.line(format!("$ns at {} [list $app stop]", secs(stop.nanos())));
                    }
                    (false, false, *size, 0)
                }
                Proto::Batch(size) => {
                    self.udp_pair(f, *size, src, dst);
                    // The first batch one gap after the start, as aqmlab's.
                    self.line(format!("set t1 [expr {{{start} + [$aqbatch({gi},gap) value]}}]"));
                    self.line(format!(
                        "if {{$t1 < $aqbatch({gi},stop)}} {{ $ns at $t1 [list aq_batch {f}] }}"
                    ));
                    (false, false, *size, 0)
                }
            };
            let kind = match &proto {
                Proto::File { .. } => "file",
                Proto::Tcp { packets: None, .. } => "bulk",
                _ => "",
            };
            self.flow_record(syn, g, gi, j, f, src, dst, &rtt, tcp, kind, payload, hdr, sc);
        }
    }

    /// A `web` group: one PagePool/WebTraf of `count` sessions.
    #[allow(clippy::too_many_arguments)]
    fn web(
        &mut self,
        sc: &Scenario,
        g: &GroupSpec,
        gi: usize,
        path: &str,
        params: &WebParams,
        pay: u32,
        tcp: &TcpConfig,
        response: WebResponse,
        fid: &mut u32,
    ) {
        if response != WebResponse::NewConnection {
            self.refuse(
                &format!("{path}.response"),
                "\"same-connection\" has no ns-2.35 counterpart (WebTraf sends each response on a connection of its own); use \"new-connection\"",
            );
        }
        if params.replace_finished {
            self.refuse(
                &format!("{path}.replace"),
                "ns-2.35's WebTraf deletes a finished session and starts none in its place; set replace = false \
                 (the same thing when no session runs out of pages within the run)",
            );
        }
        // ns-2 rounds counts and sizes up with no floor of 1: a draw of 0 or
        // less would make an empty page or object, where aqmlab makes 1.
        for (key, d) in [
            ("pages_per_session", &params.pages_per_session),
            ("objects_per_page", &params.objects_per_page),
            ("object_size", &params.object_size),
        ] {
            let nonpositive = match *d {
                Dist::Constant(v) => v <= 0.0,
                Dist::Uniform { min, .. } => min < 0.0,
                _ => false,
            };
            if nonpositive {
                self.refuse(
                    &format!("{path}.{key}"),
                    "ns-2.35's WebTraf rounds up without a floor of 1, so draws of 0 or less have no counterpart; give a law of positive values",
                );
            }
        }
        self.tcp_defaults(tcp, &format!("{path}.tcp"));
        self.tcp_procs(gi, tcp, pay);
        let f = *fid;
        *fid += 1;
        // Servers are the group's src hosts and clients its dst hosts, as
        // aqmlab's: a session picks its client when it is created, each page
        // its server, uniformly.
        self.line(format!(
            "set aqfid({f},class) {}",
            tcl_str(&sc.classes[g.class as usize])
        ));
        self.line(format!("set pool [new PagePool/WebTraf/Aq]; $pool set aqg_ {gi}"));
        self.line(format!("$pool set-num-client {}", g.dst.len()));
        for (i, c) in g.dst.iter().enumerate() {
            self.line(format!("$pool set-client {i} $n({c})"));
        }
        self.line(format!("$pool set-num-server {}", g.src.len()));
        for (i, s) in g.src.iter().enumerate() {
            self.line(format!("$pool set-server {i} $n({s})"));
        }
        let per_page = match params.objects_per_page {
            Dist::Constant(v) => ((v.ceil() as u64).max(1)).to_string(),
            _ => "null".to_string(),
        };
        for (key, value) in [
            ("fid", f.to_string()),
            ("payload", pay.to_string()),
            ("hdr", tcp.header_bytes.to_string()),
            ("per_page", per_page),
        ] {
            self.line(format!("set aqw({gi},{key}) {value}"));
        }
        self.line(format!(
            "foreach v {{ndatapack_ ndatabytes_ nrexmitpack_ nrexmit_ necnresponses_ bytes_ dpkts reqpkts active}} {{ set aqw({gi},$v) 0 }}"
        ));
        self.line(format!(
            "set aqw({gi},area) 0.0; set aqw({gi},since) 0.0; set aqw({gi},objects) {{}}; set aqw({gi},pages) {{}}"
        ));
        self.line(format!("lappend aq(webgroups) {gi}"));
        // Every session has random variables of its own: WebTraf deletes a
        // session's when the session ends.
        let pages = self.random_variable(&params.pages_per_session, &format!("{path}.pages_per_session"));
        let inter_page = self.random_variable(&params.inter_page, &format!("{path}.inter_page"));
        let objects = self.random_variable(&params.objects_per_page, &format!("{path}.objects_per_page"));
        let inter_object = self.random_variable(&params.inter_object, &format!("{path}.inter_object"));
        let size = self.random_variable(&params.object_size, &format!("{path}.object_size"));
        self.line(format!("set aqpages [{pages}]"));
        self.line(format!("$pool set-num-session {}", g.count));
        self.line(format!("for {{set j 0}} {{$j < {}}} {{incr j}} {{", g.count));
        self.line("    set t [expr {max(0.0, [$aqstart value])}]");
        self.line("    set np [expr {max(1, int(ceil([$aqpages value])))}]");
        self.line(format!(
            "    $pool create-session $j $np $t [{inter_page}] [{objects}] [{inter_object}] [{size}]"
        ));
        self.line("}");
    }

    /// The command that creates `$app`, ns-2.35's on/off application with
    /// the law of `on` and `off`, or a refusal at `path`.
    fn onoff_app(&mut self, rate_bps: f64, size_bytes: u32, on: &Dist, off: &Dist, path: &str) -> Option<String> {
        match (on, off) {
            (Dist::Exponential { mean: a }, Dist::Exponential { mean: b }) => Some(format!(
                "set app [new Application/Traffic/Exponential]; $app set packetSize_ {size_bytes}; $app set burst_time_ {}; $app set idle_time_ {}; $app set rate_ {}",
                num(*a),
                num(*b),
                num(rate_bps)
            )),
            (Dist::Pareto { shape: s1, scale: k1 }, Dist::Pareto { shape: s2, scale: k2 }) if s1 == s2 && *s1 > 1.0 => {
                let m = |k: f64| k * s1 / (s1 - 1.0);
                Some(format!(
                    "set app [new Application/Traffic/Pareto]; $app set packetSize_ {size_bytes}; $app set burst_time_ {}; $app set idle_time_ {}; $app set rate_ {}; $app set shape_ {}",
                    num(m(*k1)),
                    num(m(*k2)),
                    num(rate_bps),
                    num(*s1)
                ))
            }
            _ => {
                self.refuse(
                    &format!("{path}.on"),
                    "ns-2.35's on/off sources need exponential ON and OFF times, or Pareto ones with one shape > 1",
                );
                None
            }
        }
    }

    /// An `onoff` group over TCP with `rate`: each flow is ns-2.35's
    /// Pareto or Exponential application attached to the TCP agent and sink
    /// `ftp` gets. Its `packetSize_` is the agent's, so each packet it makes
    /// adds one packet to what the agent may send (`sendmsg`), which the
    /// agent sends when its window allows, as aqmlab's paced application.
    /// ns-2's agent sends its SYN with the first packet made, an interval
    /// and an OFF period after the start, never at the start itself, so its
    /// `ndatapack_` counts the SYN inside the window as aqmlab does and the
    /// flow record asks for no correction (`syn` 0).
    #[allow(clippy::too_many_arguments)]
    fn paced_onoff(
        &mut self,
        sc: &Scenario,
        g: &GroupSpec,
        gi: usize,
        path: &str,
        rate_bps: f64,
        on: &Dist,
        off: &Dist,
        payload: &Dist,
        tcp: &TcpConfig,
        fid: &mut u32,
    ) {
        let Some(pay) = self.constant_payload(payload, &format!("{path}.packet_size")) else {
            return;
        };
        self.tcp_defaults(tcp, &format!("{path}.tcp"));
        let Some(app) = self.onoff_app(rate_bps, pay, on, off, path) else {
            return;
        };
        self.tcp_procs(gi, tcp, pay);
        for j in 0..g.count {
            let (src, dst) = g.endpoints(j);
            let f = *fid;
            *fid += 1;
            let rtt = self.rtt_expr(sc, src, dst);
            self.line("set t [expr {max(0.0, [$aqstart value])}]");
            self.line(format!("set s [aq_sender_{gi} {f}]; set k [aq_sink_{gi} {f}]"));
            self.connect(src, dst);
            self.line(format!("{app}; $app attach-agent $s"));
            self.line("$ns at $t [list $app start]");
            self.flow_record(false, g, gi, j, f, src, dst, &rtt, true, "", pay, tcp.header_bytes, sc);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn flow_record(
        &mut self,
        syn: bool,
        g: &GroupSpec,
        gi: usize,
        j: u32,
        f: u32,
        src: u32,
        dst: u32,
        rtt: &str,
        tcp: bool,
        kind: &str,
        payload: u32,
        hdr: u32,
        sc: &Scenario,
    ) {
        let syn = syn as u8;
        self.line(format!(
            "array set aqflow [list {f},start $t {f},syn {syn} {f},group {} {f},gi {gi} {f},id {j} {f},fid {f} {f},src {} {f},dst {} {f},srcn {src} {f},dstn {dst} {f},rtt {rtt} {f},tcp {} {f},file {} {f},bulk {} {f},payload {payload} {f},hdr {hdr} {f},agent $s {f},sink $k]",
            tcl_str(&g.name),
            tcl_str(&sc.net.nodes[src as usize].name),
            tcl_str(&sc.net.nodes[dst as usize].name),
            tcp as u8,
            (kind == "file") as u8,
            (kind == "bulk") as u8,
        ));
        self.line(format!(
            "set aqfid({f},class) {}",
            tcl_str(&sc.classes[g.class as usize])
        ));
        self.line(format!("lappend {} {f}", tcl_str(&format!("aqgrp({},flows)", g.name))));
        self.line(format!("lappend aq(flows) {f}; aq_flow_init {f}"));
    }

    /// The round-trip propagation delay from `src` to `dst` and back, as a
    /// Tcl expression over the links' delays.
    /// `null` when there is no way back (a one-way UDP path), as aqmlab
    /// reports it.
    fn rtt_expr(&self, sc: &Scenario, src: u32, dst: u32) -> String {
        if sc.net.route(dst, src) == NO_ROUTE {
            return "null".to_string();
        }
        let mut terms = vec!["0.0".to_string()];
        for l in sc.net.path(src, dst).into_iter().chain(sc.net.path(dst, src)) {
            terms.push(self.delays[l as usize].clone());
        }
        format!("[expr {{{}}}]", terms.join(" + "))
    }

    fn constant_payload(&mut self, d: &Dist, path: &str) -> Option<u32> {
        match *d {
            Dist::Constant(v) => Some(v.round() as u32),
            _ => {
                self.refuse(
                    path,
                    "ns-2.35's agents send packets of one size; a size drawn per packet has no counterpart (give a constant size)",
                );
                None
            }
        }
    }

    /// Checks the TCP options that ns-2.35 cannot express.
    fn tcp_defaults(&mut self, tcp: &TcpConfig, path: &str) {
        match tcp.rto {
            RtoConfig::Ns2 { .. } => {}
            RtoConfig::Rfc6298 { .. } => self.refuse(
                &format!("{path}.rto"),
                "\"rfc6298\" (real-number arithmetic) has no ns-2.35 counterpart; use \"ns2\"",
            ),
            RtoConfig::Fixed(_) | RtoConfig::Ted => self.refuse(
                &format!("{path}.rto"),
                "a fixed retransmission timeout has no ns-2.35 counterpart; use \"ns2\"",
            ),
            // The Linux-style family is refused before this, by variant.
            RtoConfig::Linux { .. } => {}
        }
        if tcp.ecn && !tcp.ecn_negotiate {
            self.refuse(
                &format!("{path}.ecn_negotiate"),
                "ns-2.35 always sends packet 0 without ECT (it negotiates ECN); remove ecn_negotiate = false",
            );
        }
        if tcp.initial_ssthresh_pkts != tcp.rwnd_pkts {
            self.refuse(
                &format!("{path}.initial_ssthresh"),
                "ns-2.35 starts ssthresh at the receiver window (window_); its max_ssthresh_ also changes slow start, so a different initial ssthresh has no counterpart",
            );
        }
    }

    /// The procedures `aq_sender_GI FID` and `aq_sink_GI FID` that create
    /// group GI's TCP agents with its settings; every agent of a group comes
    /// from them (WebTraf's pool asks for its agents through them too).
    fn tcp_procs(&mut self, gi: usize, tcp: &TcpConfig, pay: u32) {
        let (agent, sink) = tcp_agent_classes(tcp);
        let mut s = vec![
            "fid_ $fid".to_string(),
            format!("packetSize_ {pay}"),
            format!("window_ {}", tcp.rwnd_pkts),
            format!("windowInit_ {}", tcp.initial_window),
            format!("numdupacks_ {}", tcp.dupack_threshold),
            format!("singledup_ {}", tcp.limited_transmit as u8),
            format!("slow_start_restart_ {}", tcp.slow_start_restart),
            format!("ecn_ {}", tcp.ecn as u8),
            format!("old_ecn_ {}", (tcp.ecn_at_cwnd1 == EcnAtCwnd1::Ignore) as u8),
            format!("maxburst_ {}", tcp.max_burst),
            format!("syn_ {}", tcp.syn),
            format!("tcpip_base_hdr_size_ {}", tcp.header_bytes),
        ];
        if let RtoConfig::Ns2 {
            tick,
            min,
            max,
            initial,
        } = tcp.rto
        {
            s.push(format!("tcpTick_ {}", secs(tick.nanos())));
            s.push(format!("minrto_ {}", secs(min.nanos())));
            s.push(format!("maxrto_ {}", secs(max.nanos())));
            s.push(format!("rtxcur_init_ {}", secs(initial.nanos())));
        }
        let sets: Vec<String> = s.iter().map(|kv| format!("$s set {kv}")).collect();
        self.line(format!("proc aq_sender_{gi} {{fid}} {{"));
        self.line(format!("    set s [new {agent}]"));
        self.line(format!("    {}", sets.join("; ")));
        self.line("    return $s");
        self.line("}");
        let mut k = vec![format!("$k set ecn_ {}", tcp.ecn as u8)];
        if tcp.delayed_ack {
            k.push(format!("$k set interval_ {}", secs(tcp.delack_interval.nanos())));
        }
        self.line(format!("proc aq_sink_{gi} {{fid}} {{"));
        self.line(format!("    set k [new {sink}]"));
        self.line(format!("    {}", k.join("; ")));
        self.line("    return $k");
        self.line("}");
    }
}

/// ns-2.35's TCP sender and sink classes for `tcp`.
fn tcp_agent_classes(tcp: &TcpConfig) -> (&'static str, &'static str) {
    let agent = match tcp.variant {
        Variant::Reno => "Agent/TCP/Reno",
        Variant::NewReno => "Agent/TCP/Newreno",
        Variant::Sack => "Agent/TCP/Sack1",
        _ => unreachable!("refused by export: the Linux-style family"),
    };
    let sink = match (tcp.variant, tcp.delayed_ack) {
        (Variant::Sack, false) => "Agent/TCPSink/Sack1",
        (Variant::Sack, true) => "Agent/TCPSink/Sack1/DelAck",
        (_, false) => "Agent/TCPSink",
        (_, true) => "Agent/TCPSink/DelAck",
    };
    (agent, sink)
}

enum Proto {
    Tcp {
        pay: u32,
        tcp: TcpConfig,
        packets: Option<u64>,
    },
    /// Repeated transfers, each on new agents.
    File { pay: u32, tcp: TcpConfig },
    /// The command that creates `$app`, and the packet size.
    Udp(String, u32),
    /// Batches of packets of this size, sent by Tcl.
    Batch(u32),
}

#[cfg(test)]
mod test {
    use super::*;
    use serde_json::json;

    // Helpers

    /// A one-flow dumbbell with `qdisc` at the bottleneck and `traffic`.
    fn scenario(qdisc: serde_json::Value, traffic: serde_json::Value) -> Scenario {
        let v = json!({
            "name": "t", "duration": "10s", "warmup": "2s",
            "topology": { "kind": "dumbbell", "senders": 1, "access_rate": "100Mbps",
                          "access_delay": "5ms", "bottleneck": { "rate": "10Mbps", "delay": "20ms" },
                          "qdisc": qdisc },
            "traffic": [traffic],
        });
        Scenario::from_json(&v.to_string()).expect("a valid scenario")
    }

    fn ftp() -> serde_json::Value {
        json!({ "name": "ftp", "kind": "ftp", "count": 1, "packet_size": "1000B" })
    }

    #[track_caller]
    fn refused(sc: &Scenario) -> Vec<(String, String)> {
        export(sc, 1)
            .expect_err("the export is refused")
            .into_iter()
            .map(|e| (e.path, e.message))
            .collect()
    }

    #[track_caller]
    fn script(sc: &Scenario) -> String {
        export(sc, 1).unwrap_or_else(|e| panic!("refused: {e:?}"))
    }

    #[test]
    fn test_droptail_limit_gets_one_more_for_the_packet_ns2_counts() {
        let s = script(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), ftp()));
        assert!(s.contains("$aqlq(0) set limit_ 51\n"), "{s}");
    }

    #[test]
    fn test_droptail_byte_limit_admits_up_to_the_limit_itself() {
        let s = script(&scenario(json!({"kind": "droptail", "limit": "30000B"}), ftp()));
        assert!(
            s.contains("$aqlq(0) set queue_in_bytes_ true; $aqlq(0) set mean_pktsize_ 1; $aqlq(0) set limit_ 30001\n"),
            "{s}"
        );
    }

    #[test]
    fn test_red_limit_is_the_same_and_every_ns2_default_is_overridden() {
        let s = script(&scenario(
            json!({"kind": "red", "limit": "50pkt", "min_th": "5pkt", "max_th": "15pkt", "max_p": 0.1, "w_q": 0.002}),
            ftp(),
        ));
        for line in [
            "$aqlq(0) set limit_ 50\n",
            "$aqlq(0) set thresh_ 5.0\n",
            "$aqlq(0) set maxthresh_ 15.0\n",
            "$aqlq(0) set linterm_ 10.0\n",
            "$aqlq(0) set q_weight_ 0.002\n",
            // ns-2.35 defaults these to true; aqmlab's RED to false.
            "$aqlq(0) set bytes_ false\n",
            "$aqlq(0) set queue_in_bytes_ false\n",
            "$aqlq(0) set gentle_ false\n",
            "$aqlq(0) set wait_ false\n",
        ] {
            assert!(s.contains(line), "missing {line:?}");
        }
    }

    #[test]
    fn test_red_auto_values_are_resolved_as_aqmlab_resolves_them() {
        // 10 Mb/s in 500-byte packets: C = 2500 pkt/s, so w_q = 1 - exp(-1/2500)
        // and min_th = max(5, 0.005 * 2500 / 2) = 6.25, max_th = 18.75.
        let s = script(&scenario(
            json!({"kind": "red", "limit": "50pkt", "min_th": "auto", "max_th": "auto", "max_p": 0.1, "w_q": "auto"}),
            ftp(),
        ));
        assert!(s.contains("set thresh_ 6.25\n"), "{s}");
        assert!(s.contains("set maxthresh_ 18.75\n"), "{s}");
        let w: f64 = s
            .lines()
            .find_map(|l| l.strip_prefix("$aqlq(0) set q_weight_ "))
            .and_then(|v| v.parse().ok())
            .expect("q_weight_ is set");
        let expected = 1.0 - (-1.0f64 / 2500.0).exp();
        assert!((w - expected).abs() < 1e-15, "{w} against {expected}");
    }

    #[test]
    fn test_red_ecn_above_max_th_maps_to_mark_p() {
        let red = |gentle: bool, above: &str| {
            script(&scenario(
                json!({"kind": "red", "limit": "50pkt", "min_th": "5pkt", "max_th": "15pkt", "max_p": 0.05,
                       "w_q": 0.002, "ecn": true, "gentle": gentle, "ecn_above_max_th": above}),
                ftp(),
            ))
        };
        let s = red(false, "drop");
        assert!(s.contains("set use_mark_p_ false\n") && s.contains("set setbit_ true\n"));
        let s = red(true, "drop");
        assert!(s.contains("set use_mark_p_ true\n") && s.contains("set mark_p_ 0.05\n"));
        let s = red(true, "mark");
        assert!(s.contains("set use_mark_p_ true\n") && s.contains("set mark_p_ 1.0\n"));
    }

    #[test]
    fn test_red_gentle_to_limit_is_refused_and_true_exports_as_gentle() {
        let red = |gentle: serde_json::Value| {
            scenario(
                json!({"kind": "red", "limit": "20pkt", "min_th": "3pkt", "max_th": "9pkt", "max_p": 0.1,
                       "w_q": 0.002, "gentle": gentle}),
                ftp(),
            )
        };
        let errs = refused(&red(json!("to_limit")));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, "topology.qdisc.gentle");
        assert!(
            errs[0].1.contains("\"to_limit\" has no ns-2.35 counterpart"),
            "{errs:?}"
        );
        assert!(script(&red(json!(true))).contains("set gentle_ true\n"));
        assert!(script(&red(json!(false))).contains("set gentle_ false\n"));
    }

    #[test]
    fn test_disciplines_ns2_lacks_are_refused_at_their_kind() {
        for kind in ["codel", "pie", "dualpi2", "fq_codel", "fq_pie", "cobalt", "fq_cobalt", "blue"] {
            let errs = refused(&scenario(json!({"kind": kind, "limit": "50pkt"}), ftp()));
            assert_eq!(errs.len(), 1, "{errs:?}");
            assert_eq!(errs[0].0, "topology.qdisc.kind");
            assert!(
                errs[0].1.contains(&format!("\"{kind}\" has no counterpart in ns-2.35")),
                "{errs:?}"
            );
        }
    }

    #[test]
    fn test_paced_tcp_onoff_attaches_ns2s_application_to_the_ftp_agents() {
        let onoff = |rate: Option<&str>, on: serde_json::Value, off: serde_json::Value| {
            let mut t = json!({ "name": "o", "kind": "onoff", "transport": "tcp", "count": 2, "on": on, "off": off,
                                "packet_size": "1000B", "tcp": { "variant": "sack", "syn": false } });
            if let Some(r) = rate {
                t["rate"] = json!(r);
            }
            scenario(json!({"kind": "droptail", "limit": "50pkt"}), t)
        };
        let pareto = |mean: &str| json!({ "dist": "pareto", "shape": 1.5, "mean": mean });
        let s = script(&onoff(Some("200kbps"), pareto("1s"), pareto("2s")));
        // Each flow: the agents ftp gets, then the application on the agent,
        // its packetSize_ the agent's, started at the flow's start.
        assert!(s.contains("    set s [new Agent/TCP/Sack1]\n"), "{s}");
        assert!(
            s.contains("$s set packetSize_ 1000;") && s.contains("$s set syn_ false;"),
            "{s}"
        );
        for f in 0..2 {
            let agents = format!("set s [aq_sender_0 {f}]; set k [aq_sink_0 {f}]\n");
            let at = s.find(&agents).unwrap_or_else(|| panic!("no agents for flow {f}: {s}"));
            let rest = &s[at..];
            let app = "set app [new Application/Traffic/Pareto]; $app set packetSize_ 1000; $app set burst_time_ 1.0; \
                       $app set idle_time_ 2.0; $app set rate_ 200000.0; $app set shape_ 1.5; $app attach-agent $s";
            let lines: Vec<&str> = rest.lines().take(4).collect();
            assert_eq!(
                lines[1], "$ns attach-agent $n(2) $s; $ns attach-agent $n(3) $k; $ns connect $s $k",
                "{lines:?}"
            );
            assert_eq!(lines[2], app);
            assert_eq!(lines[3], "$ns at $t [list $app start]");
        }
        assert!(!s.contains("attach-app FTP"), "{s}");
        // Exponential periods give the Exponential application.
        let exp = |mean: &str| json!({ "dist": "exponential", "mean": mean });
        let s = script(&onoff(Some("64kbps"), exp("500ms"), exp("1s")));
        assert!(s.contains(
            "set app [new Application/Traffic/Exponential]; $app set packetSize_ 1000; $app set burst_time_ 0.5; \
             $app set idle_time_ 1.0; $app set rate_ 64000.0; $app attach-agent $s\n"
        ));
        // Other laws have no ns-2 application; without a rate, no
        // counterpart at all.
        let errs = refused(&onoff(Some("64kbps"), exp("500ms"), json!("1s")));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, "traffic[0].on");
        let errs = refused(&onoff(None, exp("500ms"), exp("1s")));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, "traffic[0].kind");
        assert!(errs[0].1.contains("without \"rate\""), "{}", errs[0].1);
    }

    #[test]
    fn test_payload_drawn_per_packet_is_refused_at_its_key() {
        let mut t = ftp();
        t["packet_size"] = json!({"dist": "uniform", "min": "1400B", "max": "1628B"});
        let errs = refused(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].0, "traffic[0].packet_size");
    }

    #[test]
    fn test_ared_timer_update_is_refused_and_arrival_exported() {
        let ared = |update: &str| {
            scenario(
                json!({"kind": "ared", "limit": "100pkt", "update": update, "gentle_slope": "initial"}),
                ftp(),
            )
        };
        let errs = refused(&ared("timer"));
        assert_eq!(
            errs.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["topology.qdisc.update"]
        );
        let s = script(&ared("arrival"));
        assert!(
            s.contains("set adaptive_ 1\n") && s.contains("set interval_ 0.5\n"),
            "{s}"
        );
    }

    #[test]
    fn test_every_problem_is_reported_at_once() {
        let mut t = ftp();
        t["packet_size"] = json!({"dist": "exponential", "mean": "1000B"});
        t["tcp"] = json!({"rto": "rfc6298"});
        let errs = refused(&scenario(json!({"kind": "codel"}), t));
        let paths: Vec<&str> = errs.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(paths, ["topology.qdisc.kind", "traffic[0].packet_size"]);
    }

    #[test]
    fn test_a_one_way_path_has_no_round_trip() {
        let v = json!({
            "name": "oneway", "duration": "10s",
            "topology": { "kind": "graph", "nodes": ["a", "b"],
                          "links": [{ "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms", "duplex": false,
                                      "qdisc": { "kind": "droptail", "limit": "10pkt" } }] },
            "traffic": [{ "name": "p", "kind": "poisson", "count": 1, "rate": "5Mbps", "size": "1000B",
                          "src": ["a"], "dst": ["b"] }],
        });
        let s = script(&Scenario::from_json(&v.to_string()).unwrap());
        assert!(s.contains("0,rtt null "), "{s}");
    }

    #[test]
    fn test_names_are_quoted_for_tcl() {
        let mut t = ftp();
        t["name"] = json!("a [b] $c \"d\"");
        let s = script(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        assert!(s.contains(r#"lappend aq(groups) "a \[b\] \$c \"d\"""#), "{s}");
    }

    fn web(extra: serde_json::Value) -> serde_json::Value {
        let mut t = json!({ "name": "web", "kind": "web", "count": 5, "packet_size": "1000B", "replace": false,
                            "tcp": { "variant": "sack", "delayed_ack": true } });
        for (k, v) in extra.as_object().expect("an object") {
            t[k] = v.clone();
        }
        t
    }

    #[test]
    fn test_web_is_a_webtraf_pool_with_servers_at_src_and_clients_at_dst() {
        let s = script(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), web(json!({}))));
        // A dumbbell numbers its routers 0 and 1, then the sender and the receiver.
        for line in [
            "set pool [new PagePool/WebTraf/Aq]; $pool set aqg_ 0\n",
            "$pool set-num-client 1\n",
            "$pool set-client 0 $n(3)\n",
            "$pool set-num-server 1\n",
            "$pool set-server 0 $n(2)\n",
            "$pool set-num-session 5\n",
            "set aqpages [aq_constant 250.0]\n",
            "    $pool create-session $j $np $t [aq_rv Exponential avg_ 15.0] [aq_constant 1.0] [aq_rv Exponential avg_ 0.01] [aq_rv ParetoII avg_ 12.",
            "    set s [new Agent/TCP/Sack1]\n",
            "    set k [new Agent/TCPSink/Sack1/DelAck]\n",
            "set aqw(0,per_page) 1\n",
            "PagePool/WebTraf set FID_ASSIGNING_MODE_ 2\n",
        ] {
            assert!(s.contains(line), "missing {line:?}");
        }
        // The hooks come before the pool is made.
        assert!(s.find("Class PagePool/WebTraf/Aq").unwrap() < s.find("new PagePool/WebTraf/Aq").unwrap());
    }

    #[test]
    fn test_web_without_ns2_counterpart_is_refused_at_its_key() {
        let mut t = web(
            json!({ "response": "same-connection", "object_size": {"dist": "lognormal", "mu": 1.0, "sigma": 1.0},
                                "objects_per_page": 0 }),
        );
        t.as_object_mut().unwrap().remove("replace");
        let errs = refused(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        let paths: Vec<&str> = errs.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            paths,
            [
                "traffic[0].response",
                "traffic[0].replace",
                "traffic[0].objects_per_page",
                "traffic[0].object_size"
            ]
        );
    }

    #[test]
    fn test_web_pages_are_timed_only_with_a_constant_object_count() {
        let s = script(&scenario(
            json!({"kind": "droptail", "limit": "50pkt"}),
            web(json!({ "objects_per_page": {"dist": "uniform", "min": 1, "max": 4} })),
        ));
        assert!(s.contains("set aqw(0,per_page) null\n"), "{s}");
        assert!(s.contains("[aq_rv Uniform min_ 1.0 max_ 4.0]"), "{s}");
    }

    #[test]
    fn test_file_draws_each_transfer_on_new_agents() {
        let t = json!({ "name": "f", "kind": "file", "count": 2, "packet_size": "1000B",
                        "size": {"dist": "exponential", "mean": "100KB"}, "gap": {"dist": "exponential", "mean": "500ms"} });
        let s = script(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        for line in [
            "set aqfile(0,size) [aq_rv Exponential avg_ 100000.0]\n",
            "set aqfile(0,gap) [aq_rv Exponential avg_ 0.5]\n",
            "$ns at $t [list aq_file_next 0]\n",
            "$ns at $t [list aq_file_next 1]\n",
        ] {
            assert!(s.contains(line), "missing {line:?}");
        }
        assert!(s.contains("file 1"), "flows are marked as file flows");
    }

    #[test]
    fn test_file_size_law_ns2_cannot_draw_is_refused() {
        let t = json!({ "name": "f", "kind": "file", "count": 1, "size": {"dist": "lognormal", "mu": 10.0, "sigma": 1.0},
                        "gap": "1s" });
        let errs = refused(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        assert_eq!(
            errs.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["traffic[0].size"]
        );
    }

    #[test]
    fn test_ecn_packet_0_ecn_capable_is_refused() {
        let t = json!({ "name": "f", "kind": "ftp", "count": 1,
                        "tcp": {"ecn": true, "syn": false, "ecn_negotiate": false} });
        let errs = refused(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        assert_eq!(
            errs.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["traffic[0].tcp.ecn_negotiate"]
        );
    }

    #[test]
    fn test_batch_poisson_sends_whole_batches_from_tcl() {
        let t = json!({ "name": "b", "kind": "batch-poisson", "count": 1, "size": "500B",
                        "batch": {"dist": "uniform", "min": 1, "max": 8}, "gap": {"dist": "pareto", "shape": 1.5, "scale": "10ms"} });
        let s = script(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        for line in [
            "set aqbatch(0,batch) [aq_rv Uniform min_ 1.0 max_ 8.0]\n",
            "set aqbatch(0,gap) [aq_rv Pareto avg_ 0.03 shape_ 1.5]\n",
            "set aqbatch(0,stop) [expr {min($aq(duration), $aq(duration))}]\n",
            "if {$t1 < $aqbatch(0,stop)} { $ns at $t1 [list aq_batch 0] }\n",
        ] {
            assert!(s.contains(line), "missing {line:?}");
        }
        assert!(s.contains("$s set packetSize_ 500"), "{s}");
    }

    #[test]
    fn test_batch_poisson_with_drawn_packet_sizes_is_refused() {
        let t = json!({ "name": "b", "kind": "batch-poisson", "count": 1, "size": {"dist": "exponential", "mean": "500B"},
                        "batch": 3, "rate": "1Mbps" });
        let errs = refused(&scenario(json!({"kind": "droptail", "limit": "50pkt"}), t));
        assert_eq!(
            errs.iter().map(|e| e.0.as_str()).collect::<Vec<_>>(),
            ["traffic[0].size"]
        );
    }
}
