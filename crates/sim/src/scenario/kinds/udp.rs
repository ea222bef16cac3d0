//! The open-loop kinds over UDP: `cbr`, `poisson`, `batch-poisson` and
//! `onoff`.

use super::*;
use crate::transport::udp::Schedule;
use aqmlab_qdisc::Ecn;

pub(super) const CBR: TrafficKind = TrafficKind {
    variant: Variant {
        name: "cbr",
        help: "constant bit rate over UDP",
        when: None,
        parts: &[
            &[
                Key::req("rate", Ty::Rate, "the sending rate, e.g. \"1Mbps\""),
                Key::req("size", Ty::Size, "the packet size, e.g. \"1000B\""),
                Key::opt(
                    "jitter",
                    Ty::Bool,
                    "false",
                    "each gap is the interval +-50% uniform, as ns-2's random_",
                ),
            ],
            UDP_ECN,
        ],
    },
    read: read_cbr,
};

pub(super) const POISSON: TrafficKind = TrafficKind {
    variant: Variant {
        name: "poisson",
        help: "Poisson packet arrivals over UDP",
        when: None,
        parts: &[
            &[Key::req("rate", Ty::Rate, "the mean sending rate, e.g. \"9Mbps\"")],
            PACKET_SIZES,
            UDP_ECN,
        ],
    },
    read: read_poisson,
};

pub(super) const BATCH: TrafficKind = TrafficKind {
    variant: Variant {
        name: "batch-poisson",
        help: "batches of packets arriving at once; give rate or gap",
        when: None,
        parts: &[
            &[Key::req(
                "batch",
                Ty::Dist(Quantity::Count),
                "the number of packets per batch, e.g. 3, or a count distribution",
            )],
            PACKET_SIZES,
            &[
                Key::opt("rate", Ty::Rate, "", "the mean bit rate, for Poisson batch times"),
                Key::opt(
                    "gap",
                    Ty::Dist(Quantity::Time),
                    "",
                    "the time between batches, instead of rate",
                ),
            ],
            UDP_ECN,
        ],
    },
    read: read_batch,
};

pub(super) const ONOFF_UDP: TrafficKind = TrafficKind {
    variant: Variant {
        name: "onoff",
        help: "ON/OFF packets over UDP (transport \"udp\" or absent)",
        when: None,
        parts: &[
            ON_OFF,
            &[
                Key::req("rate", Ty::Rate, "the sending rate during ON periods, e.g. \"64kbps\""),
                Key::req("size", Ty::Size, "the packet size, e.g. \"210B\""),
            ],
            UDP_ECN,
        ],
    },
    read: read_onoff_udp,
};

/// The codepoints an open-loop source may set (RFC 3168 §5; ECT(1) is
/// L4S's identifier, RFC 9331). An open-loop source does not react to
/// marks: the key is there to offer a queue ECN-capable or L4S traffic.
const UDP_ECN_CODEPOINTS: &[&str] = &["not-ect", "ect0", "ect1"];

const UDP_ECN: &[Key] = &[Key::opt(
    "ecn",
    Ty::Choice(UDP_ECN_CODEPOINTS),
    "\"not-ect\"",
    "the ECN codepoint of the packets: Not-ECT, ECT(0) (classic ECN) or ECT(1) (L4S)",
)];

/// An `ecn` value of a UDP group.
pub(in crate::scenario) fn parse_udp_ecn(v: &Value) -> Result<Ecn, String> {
    Ok(match parse_choice(v, UDP_ECN_CODEPOINTS)? {
        "ect0" => Ecn::Ect0,
        "ect1" => Ecn::Ect1,
        _ => Ecn::NotEct,
    })
}

const PACKET_SIZES: &[Key] = &[Key::req(
    "size",
    Ty::Dist(Quantity::Bytes),
    "the packet size, e.g. \"1000B\" or a size distribution",
)];

pub(in crate::scenario) const ON_OFF: &[Key] = &[
    Key::opt(
        "transport",
        Ty::Choice(&["udp", "tcp"]),
        "\"udp\"",
        "what carries the packets",
    ),
    Key::req(
        "on",
        Ty::Dist(Quantity::Time),
        "the ON period length distribution, e.g. { dist = \"pareto\", shape = 1.5, mean = \"500ms\" }",
    ),
    Key::req(
        "off",
        Ty::Dist(Quantity::Time),
        "the OFF period length distribution, e.g. { dist = \"pareto\", shape = 1.5, mean = \"500ms\" }",
    ),
];

fn read_cbr(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
    let rate = t.req(cx, "rate", parse_rate);
    let size = t.req(cx, "size", config::parse_packet_size);
    let jitter = t.opt(cx, "jitter", parse_bool).unwrap_or(false);
    fast_enough(
        cx,
        t,
        Schedule::Cbr {
            rate_bps: rate?,
            size_bytes: size?,
            jitter,
        },
    )
}

fn read_poisson(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
    let rate = t.req(cx, "rate", parse_rate);
    let size = size_dist(t, cx);
    fast_enough(
        cx,
        t,
        Schedule::Poisson {
            rate_bps: rate?,
            size: size?,
        },
    )
}

fn read_batch(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
    let batch = match t.raw("batch") {
        Some(bv) => Dist::parse(cx, bv, &t.key_path("batch"), Quantity::Count),
        None => {
            t.report_missing(cx, "batch");
            None
        }
    };
    let size = size_dist(t, cx);
    let rate = t.opt(cx, "rate", parse_rate);
    let gap = t
        .raw("gap")
        .and_then(|gv| Dist::parse(cx, gv, &t.key_path("gap"), Quantity::Time));
    let (batch, size) = (batch?, size?);
    if let Dist::Constant(b) = batch {
        if b < 1.0 || b.fract() != 0.0 {
            cx.err(
                &t.key_path("batch"),
                format!("expected a whole number of packets >= 1, got {b}"),
            );
            return None;
        }
    }
    let gap = match (rate, gap, t.has("rate"), t.has("gap")) {
        (Some(r), None, _, false) => {
            // Drawn batch and packet sizes are rounded to whole
            // numbers; the rate is met with the rounded means.
            let Some(mean_batch) = batch.rounded_mean() else {
                cx.err(
                    &t.key_path("batch"),
                    "a batch size distribution with an infinite mean cannot be given a rate; give \"gap\" instead",
                );
                return None;
            };
            Dist::Exponential {
                mean: mean_batch * size.rounded_mean()? * 8.0 / r,
            }
        }
        (None, Some(g), false, _) => g,
        (_, _, true, true) => {
            cx.err(&t.path, "give either \"rate\" (Poisson batch arrivals) or \"gap\" (a distribution of times between batches), not both");
            return None;
        }
        (_, _, false, false) => {
            cx.err(&t.path, "missing \"rate\" (Poisson batch arrivals at a mean bit rate) or \"gap\" (a distribution of times between batches)");
            return None;
        }
        _ => return None,
    };
    fast_enough(cx, t, Schedule::Batch { gap, batch, size })
}

fn read_onoff_udp(cx: &mut Cx, t: &mut Table) -> Option<SourceSpec> {
    let rate = t.req(cx, "rate", parse_rate);
    let size = t.req(cx, "size", config::parse_packet_size);
    let period = |t: &mut Table, cx: &mut Cx, key: &'static str| match t.raw(key) {
        Some(pv) => Dist::parse(cx, pv, &t.key_path(key), Quantity::Time),
        None => {
            t.report_missing(cx, key);
            None
        }
    };
    let on = period(t, cx, "on");
    let off = period(t, cx, "off");
    fast_enough(
        cx,
        t,
        Schedule::OnOff {
            rate_bps: rate?,
            size_bytes: size?,
            on: on?,
            off: off?,
        },
    )
}

/// The packet sizes of a `poisson` or `batch-poisson` group: one size or a
/// distribution with a finite mean.
fn size_dist(t: &mut Table, cx: &mut Cx) -> Option<Dist> {
    match t.raw("size") {
        Some(sv) => {
            let d = Dist::parse(cx, sv, &t.key_path("size"), Quantity::Bytes)?;
            if let Dist::Constant(b) = d {
                if b < 1.0 || b.fract() != 0.0 {
                    cx.err(
                        &t.key_path("size"),
                        format!("{} must be a whole number of bytes, at least 1B", config::show(sv)),
                    );
                    return None;
                }
            }
            if d.mean().is_none() {
                cx.err(
                    &t.key_path("size"),
                    "the packet size distribution must have a finite mean",
                );
                return None;
            }
            Some(d)
        }
        None => {
            t.report_missing(cx, "size");
            None
        }
    }
}

/// `source` if it can be simulated: the clock ticks in nanoseconds, so a
/// source whose packets (or batches) would come less than 1 ns apart on
/// average cannot be.
fn fast_enough(cx: &mut Cx, t: &mut Table, schedule: Schedule) -> Option<SourceSpec> {
    let (gap_s, key) = match &schedule {
        Schedule::Cbr {
            rate_bps, size_bytes, ..
        }
        | Schedule::OnOff {
            rate_bps, size_bytes, ..
        } => (*size_bytes as f64 * 8.0 / rate_bps, "rate"),
        Schedule::Poisson { rate_bps, size } => (size.rounded_mean()? * 8.0 / rate_bps, "rate"),
        Schedule::Batch { gap, .. } => (
            gap.mean().unwrap_or(f64::INFINITY),
            if t.has("gap") { "gap" } else { "rate" },
        ),
    };
    if gap_s < 1e-9 {
        cx.err(&t.key_path(key), format!("sends {:.3e} packets or batches per second; at most 1e9 per second can be simulated (the clock ticks in nanoseconds)", 1.0 / gap_s));
        return None;
    }
    Some(SourceSpec::Udp(schedule))
}
