//! `cobalt` and `fq_cobalt` in scenario files. The disciplines:
//! `crates/qdisc/src/cobalt.rs` and `crates/qdisc/src/fq_cobalt.rs`.

use super::*;

/// COBALT's keys, each kind giving its own default for `blue_threshold`.
const fn cobalt_law(blue_threshold_default: &'static str) -> [Key; 5] {
    [
        Key::opt("target", Ty::Time, "\"5ms\"", "CoDel's target and BLUE's hysteresis"),
        Key::opt("interval", Ty::Time, "\"100ms\"", "CoDel's interval"),
        Key::opt(
            "increment",
            Ty::Number(Range::PROBABILITY),
            "0.00390625",
            "BLUE's p_drop step up on overflow (1/256)",
        ),
        Key::opt(
            "decrement",
            Ty::Number(Range::PROBABILITY),
            "0.000244140625",
            "BLUE's p_drop step down on an empty queue (1/4096)",
        ),
        Key::opt(
            "blue_threshold",
            BLUE_THRESHOLD,
            blue_threshold_default,
            "a sojourn above this also raises p_drop (ns-3), or \"none\"",
        ),
    ]
}

const BLUE_THRESHOLD: Ty = Ty::AnyOf(&[Ty::Time, Ty::Choice(&["none"])]);

pub(super) const COBALT_KEYS: &[Key] = &cobalt_law("\"400ms\"");
pub(super) const FQ_COBALT_KEYS: &[Key] = &cobalt_law("\"none\"");

pub(super) const DROP_BATCH_1: &[Key] = &[Key::opt(
    "drop_batch",
    Ty::Whole { min: 1, max: u64::MAX },
    "1",
    "the most packets dropped from the fattest flow per overflow step",
)];

fn blue_threshold(v: &Value) -> Result<Option<Duration>, String> {
    if v.as_str() == Some("none") {
        return Ok(None);
    }
    parse_duration(v).map(Some).map_err(|e| format!("{e}, or \"none\""))
}

pub(super) fn parse_cobalt(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = CobaltParams {
        limit: limit?,
        ..CobaltParams::default()
    };
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "interval", &mut p.interval, parse_duration);
    set(cx, t, "increment", &mut p.increment, real);
    set(cx, t, "decrement", &mut p.decrement, real);
    set(cx, t, "blue_threshold", &mut p.blue_threshold, blue_threshold);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    Some(QdiscSpec::Cobalt(p))
}

pub(super) fn parse_fq_cobalt(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = FqCobaltParams {
        limit: limit?,
        ..FqCobaltParams::default()
    };
    set(cx, t, "flows", &mut p.flows, whole_u32);
    set(cx, t, "quantum", &mut p.quantum_bytes, |v| whole_bytes(v).map(Some));
    set(cx, t, "drop_batch", &mut p.drop_batch_pkts, whole_u32);
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "interval", &mut p.interval, parse_duration);
    set(cx, t, "increment", &mut p.increment, real);
    set(cx, t, "decrement", &mut p.decrement, real);
    set(cx, t, "blue_threshold", &mut p.blue_threshold, blue_threshold);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    Some(QdiscSpec::FqCobalt(p))
}

pub(super) const COBALT: Kind = Kind {
    variant: Variant {
        name: "cobalt",
        help: "COBALT, CoDel + BLUE (CAKE's AQM on one queue, as ns-3)",
        when: None,
        parts: &[&[limit("\"1500000B\"")], COBALT_KEYS, ECN_OFF],
    },
    read: parse_cobalt,
    default_limit: Some(|| CobaltParams::default().limit),
};

pub(super) const FQ_COBALT: Kind = Kind {
    variant: Variant {
        name: "fq_cobalt",
        help: "FQ-COBALT (CAKE's flow queueing and AQM, no shaper)",
        when: None,
        parts: &[&[limit("\"10240pkt\"")], FQ_KEYS, DROP_BATCH_1, FQ_COBALT_KEYS, ECN_ON],
    },
    read: parse_fq_cobalt,
    default_limit: Some(|| FqCobaltParams::default().limit),
};

pub(super) fn describe_cobalt(q: &Cobalt) -> Value {
    let p = q.effective();
    json!({
        "kind": "cobalt", "limit": limit_value(p.limit), "target_s": secs(p.target),
        "interval_s": secs(p.interval), "ecn": p.ecn, "increment": p.increment, "decrement": p.decrement,
        "blue_threshold_s": p.blue_threshold.map(secs),
    })
}

pub(super) fn describe_fq_cobalt(q: &FqCobalt) -> Value {
    let p = q.effective();
    json!({
        "kind": "fq_cobalt", "limit": limit_value(p.limit), "flows": p.flows,
        "quantum_bytes": p.quantum_bytes, "drop_batch_pkts": p.drop_batch_pkts, "target_s": secs(p.target),
        "interval_s": secs(p.interval), "ecn": p.ecn, "increment": p.increment, "decrement": p.decrement,
        "blue_threshold_s": p.blue_threshold.map(secs),
    })
}
