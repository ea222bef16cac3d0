//! `codel` and `fq_codel` in scenario files. The disciplines:
//! `crates/qdisc/src/codel.rs` and `crates/qdisc/src/fq_codel.rs`.

use super::*;

pub(super) const CODEL_LAW: &[Key] = &[
    Key::opt("target", Ty::Time, "\"5ms\"", "the acceptable standing queue delay"),
    Key::opt(
        "interval",
        Ty::Time,
        "\"100ms\"",
        "the sliding window over which the minimum delay is taken",
    ),
    Key::opt(
        "ce_threshold",
        Ty::Time,
        "",
        "mark ECN-capable packets whose sojourn exceeds this (needs ecn)",
    ),
];

/// The keys of the flow-queueing scheduler that fq_codel, fq_pie and
/// fq_cobalt share.
pub(super) const FQ_KEYS: &[Key] = &[
    Key::opt(
        "flows",
        Ty::Whole {
            min: 1,
            max: aqmlab_qdisc::fq_codel::MAX_FLOWS as u64,
        },
        "1024",
        "the number of flow queues",
    ),
    Key::opt(
        "quantum",
        Ty::Size,
        "the link's mtu",
        "the bytes a flow may send per round",
    ),
];

pub(super) const DROP_BATCH: &[Key] = &[Key::opt(
    "drop_batch",
    Ty::Whole { min: 1, max: u64::MAX },
    "64",
    "the most packets dropped per overflow",
)];

pub(super) fn whole_u32(v: &Value) -> Result<u32, String> {
    config::parse_count(v, 0).map(|n| n.min(u32::MAX as u64) as u32)
}

pub(super) fn parse_codel(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = CodelParams {
        limit: limit?,
        ..CodelParams::default()
    };
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "interval", &mut p.interval, parse_duration);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "ce_threshold", &mut p.ce_threshold, |v| {
        parse_duration(v).map(Some)
    });
    Some(QdiscSpec::Codel(p))
}

pub(super) fn parse_fq_codel(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = FqCodelParams {
        limit: limit?,
        ..FqCodelParams::default()
    };
    set(cx, t, "flows", &mut p.flows, whole_u32);
    set(cx, t, "quantum", &mut p.quantum_bytes, |v| whole_bytes(v).map(Some));
    set(cx, t, "target", &mut p.target, parse_duration);
    set(cx, t, "interval", &mut p.interval, parse_duration);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "ce_threshold", &mut p.ce_threshold, |v| {
        parse_duration(v).map(Some)
    });
    set(cx, t, "drop_batch", &mut p.drop_batch_pkts, |v| {
        config::parse_count(v, 0).map(|n| n.min(u32::MAX as u64) as u32)
    });
    Some(QdiscSpec::FqCodel(p))
}

pub(super) const CODEL: Kind = Kind {
    variant: Variant {
        name: "codel",
        help: "CoDel (RFC 8289)",
        when: None,
        parts: &[LIMIT_1000, CODEL_LAW, ECN_OFF],
    },
    read: parse_codel,
    default_limit: Some(|| CodelParams::default().limit),
};

pub(super) const FQ_CODEL: Kind = Kind {
    variant: Variant {
        name: "fq_codel",
        help: "FQ-CoDel (RFC 8290)",
        when: None,
        parts: &[&[limit("\"10240pkt\"")], FQ_KEYS, DROP_BATCH, CODEL_LAW, ECN_ON],
    },
    read: parse_fq_codel,
    default_limit: Some(|| FqCodelParams::default().limit),
};

pub(super) fn describe_codel(q: &Codel) -> Value {
    let p = q.effective();
    json!({
        "kind": "codel", "limit": limit_value(p.limit), "target_s": secs(p.target),
        "interval_s": secs(p.interval), "ecn": p.ecn, "ce_threshold_s": p.ce_threshold.map(secs),
        "maxpacket_bytes": q.law().maxpacket_bytes,
    })
}

pub(super) fn describe_fq_codel(q: &FqCodel) -> Value {
    let p = q.effective();
    json!({
        "kind": "fq_codel", "limit": limit_value(p.limit), "flows": p.flows,
        "quantum_bytes": p.quantum_bytes, "target_s": secs(p.target), "interval_s": secs(p.interval),
        "ecn": p.ecn, "ce_threshold_s": p.ce_threshold.map(secs), "drop_batch_pkts": p.drop_batch_pkts,
        "maxpacket_bytes": q.law().maxpacket_bytes,
    })
}
