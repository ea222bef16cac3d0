//! `blue` and `sfb` in scenario files. The disciplines:
//! `crates/qdisc/src/blue.rs` and `crates/qdisc/src/sfb.rs`.

use super::*;

pub(super) const BLUE_KEYS: &[Key] = &[
    Key::opt(
        "d1",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.02",
        "the increment of p_m on overflow",
    ),
    Key::opt(
        "d2",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.002",
        "the decrement of p_m when the link goes idle",
    ),
    Key::opt(
        "freeze_time",
        Ty::Time,
        "\"100ms\"",
        "the least time between two changes of p_m",
    ),
    Key::opt(
        "l_threshold",
        Ty::Limit,
        "the limit",
        "a queue longer than this counts as overflow",
    ),
];

pub(super) const SFB_KEYS: &[Key] = &[
    Key::opt("target", Ty::Pkts, "20", "the bin length that raises p_mark"),
    Key::opt("max", Ty::Pkts, "25", "the bin length at which arrivals are dropped"),
    Key::opt(
        "increment",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.0005",
        "the increment of a bin's p_mark",
    ),
    Key::opt(
        "decrement",
        Ty::Number(Range::PROBABILITY),
        "0.00005",
        "the decrement of a bin's p_mark",
    ),
    Key::opt(
        "penalty_rate",
        Ty::PacketRate,
        "\"10pps\"",
        "the rate of the penalty box's token bucket",
    ),
    Key::opt(
        "penalty_burst",
        Ty::Pkts,
        "20",
        "the depth of the penalty box's token bucket",
    ),
    Key::opt(
        "rehash_interval",
        Ty::Time,
        "\"600s\"",
        "how often the flow hash changes",
    ),
    Key::opt(
        "warmup",
        Ty::Time,
        "\"60s\"",
        "how long the next hash learns before it takes over",
    ),
];

pub(super) fn parse_blue(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = BlueParams::new(limit?);
    set(cx, t, "d1", &mut p.d1, real);
    set(cx, t, "d2", &mut p.d2, real);
    set(cx, t, "freeze_time", &mut p.freeze_time, parse_duration);
    set(cx, t, "l_threshold", &mut p.l_threshold, |v| {
        config::parse_limit(v).map(Some)
    });
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    Some(QdiscSpec::Blue(p))
}

pub(super) fn parse_sfb(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = SfbParams::new(limit?);
    set(cx, t, "target", &mut p.target_pkts, config::parse_pkts);
    set(cx, t, "max", &mut p.max_pkts, config::parse_pkts);
    set(cx, t, "increment", &mut p.increment, real);
    set(cx, t, "decrement", &mut p.decrement, real);
    set(cx, t, "penalty_rate", &mut p.penalty_rate_pps, |v| {
        let r = config::parse_packet_rate(v)?;
        if r.fract() == 0.0 && r <= u32::MAX as f64 {
            Ok(r as u32)
        } else {
            Err(format!(
                "{} must be a whole number of packets per second",
                config::show(v)
            ))
        }
    });
    set(cx, t, "penalty_burst", &mut p.penalty_burst_pkts, config::parse_pkts);
    set(cx, t, "rehash_interval", &mut p.rehash_interval, parse_duration);
    set(cx, t, "warmup", &mut p.warmup, parse_duration);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    Some(QdiscSpec::Sfb(p))
}

pub(super) const BLUE: Kind = Kind {
    variant: Variant {
        name: "blue",
        help: "BLUE (Feng et al.)",
        when: None,
        parts: &[LIMIT, BLUE_KEYS, ECN_OFF],
    },
    read: parse_blue,
    default_limit: None,
};

pub(super) const SFB: Kind = Kind {
    variant: Variant {
        name: "sfb",
        help: "Stochastic Fair BLUE as Linux's sch_sfb",
        when: None,
        parts: &[LIMIT, SFB_KEYS, ECN_ON],
    },
    read: parse_sfb,
    default_limit: None,
};

pub(super) fn describe_blue(q: &Blue) -> Value {
    let p = q.effective();
    json!({
        "kind": "blue", "limit": limit_value(p.limit), "d1": p.d1, "d2": p.d2,
        "freeze_time_s": secs(p.freeze_time), "l_threshold": p.l_threshold.map(limit_value), "ecn": p.ecn,
    })
}

pub(super) fn describe_sfb(q: &Sfb) -> Value {
    let p = q.effective();
    json!({
        "kind": "sfb", "limit": limit_value(p.limit), "target_pkts": p.target_pkts, "max_pkts": p.max_pkts,
        "increment": p.increment, "decrement": p.decrement, "penalty_rate_pps": p.penalty_rate_pps,
        "penalty_burst_pkts": p.penalty_burst_pkts, "rehash_interval_s": secs(p.rehash_interval),
        "warmup_s": secs(p.warmup), "ecn": p.ecn,
    })
}
