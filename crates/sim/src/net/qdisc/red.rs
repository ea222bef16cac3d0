//! The RED family in scenario files: `red`, `ared`, `feng-ared` and
//! `red-tail` (with its RED queue 2), their keys and their effective
//! parameters. The disciplines themselves: `crates/qdisc/src/red.rs` and
//! `crates/qdisc/src/red_tail.rs`.

use super::*;

/// The drop curve: `red` and `feng-ared` need thresholds, `max_p` and `w_q`.
pub(super) const RED_SHAPE: &[Key] = &[
    Key::req("min_th", Ty::Threshold, "the lower threshold, e.g. \"45pkt\" or \"auto\""),
    Key::req("max_th", Ty::Threshold, "the upper threshold, e.g. \"195pkt\" or \"auto\""),
    Key::req("max_p", Ty::Number(Range::UNIT_POSITIVE), "the drop probability at max_th, e.g. 0.1"),
    Key::req("w_q", W_Q, "the averaging weight, e.g. 0.002, or \"auto\""),
    Key::opt(
        "gentle",
        GENTLE,
        "false",
        "above max_th, raise p_b to 1 at 2 max_th (true) or at the limit (\"to_limit\") instead of dropping every arrival",
    ),
];

/// `ared` defaults what `red` requires, and is gentle.
pub(super) const ARED_SHAPE: &[Key] = &[
    Key::opt("min_th", Ty::Threshold, "\"auto\"", "the lower threshold"),
    Key::opt("max_th", Ty::Threshold, "\"auto\"", "the upper threshold"),
    Key::opt(
        "max_p",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.1",
        "the initial drop probability at max_th",
    ),
    Key::opt("w_q", W_Q, "\"auto\"", "the averaging weight"),
    Key::opt(
        "gentle",
        GENTLE,
        "true",
        "above max_th, raise p_b to 1 at 2 max_th (true) or at the limit (\"to_limit\")",
    ),
];

pub(super) const W_Q: Ty = Ty::AnyOf(&[Ty::Number(Range::UNIT_POSITIVE), Ty::Choice(&["auto"])]);

pub(super) const GENTLE: Ty = Ty::AnyOf(&[Ty::Bool, Ty::Choice(&["to_limit"])]);

pub(super) const RED_OPTIONS: &[Key] = &[
    Key::opt("wait", Ty::Bool, "false", "space early drops out (ns-2's wait_)"),
    Key::opt(
        "byte_mode",
        Ty::Bool,
        "false",
        "scale the drop probability by packet size / mean_pktsize",
    ),
    Key::opt(
        "mean_pktsize",
        Ty::Size,
        "\"500B\"",
        "the mean packet size, for byte mode and the idle decay",
    ),
    Key::opt(
        "ecn",
        Ty::Bool,
        "false",
        "mark ECN-capable packets instead of dropping them early",
    ),
    Key::opt(
        "ecn_above_max_th",
        Ty::Choice(&["drop", "mark"]),
        "\"drop\"",
        "what ECN does above max_th",
    ),
    Key::opt(
        "drop_spacing",
        Ty::Choice(&["count", "none"]),
        "\"count\"",
        "p_a = p_b / (1 - count p_b) (\"count\") or p_a = p_b",
    ),
    Key::opt(
        "idle_decay",
        Ty::Choice(&["ns2", "paper", "none"]),
        "\"ns2\"",
        "how avg decays while the link is idle",
    ),
    Key::opt(
        "exempt_first",
        Ty::Bool,
        "true",
        "no early drop for the first arrival after avg crosses min_th",
    ),
    Key::opt(
        "avg_of",
        Ty::Choice(&["average", "instantaneous"]),
        "\"average\"",
        "compare the thresholds with the average or the instantaneous queue",
    ),
    Key::opt(
        "target_delay",
        Ty::Time,
        "\"5ms\"",
        "the queueing delay the \"auto\" thresholds aim at",
    ),
];

pub(super) const ARED_KEYS: &[Key] = &[
    Key::opt("interval", Ty::Time, "\"500ms\"", "how often max_p is adapted"),
    Key::opt(
        "alpha",
        Ty::Number(Range::POSITIVE),
        "0.01",
        "the additive increase of max_p",
    ),
    Key::opt(
        "beta",
        Ty::Number(Range::UNIT_OPEN),
        "0.9",
        "the multiplicative decrease of max_p",
    ),
    Key::opt(
        "top",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.5",
        "the upper bound of max_p",
    ),
    Key::opt(
        "bottom",
        Ty::Number(Range::UNIT_POSITIVE),
        "0.01",
        "the lower bound of max_p",
    ),
    Key::opt(
        "update",
        Ty::Choice(&["timer", "arrival"]),
        "\"timer\"",
        "adapt on a timer or at the first arrival after each interval",
    ),
    Key::opt(
        "gentle_slope",
        Ty::Choice(&["current", "initial"]),
        "\"current\"",
        "the gentle line starts at the current or the initial max_p",
    ),
];

pub(super) const FENG: &[Key] = &[
    Key::opt("a", Ty::Number(Range::new(1.0, true, f64::INFINITY, false)), "3", "max_p /= a when avg falls below min_th"),
    Key::opt("b", Ty::Number(Range::new(1.0, true, f64::INFINITY, false)), "2", "max_p *= b when avg rises above max_th"),
    Key::opt("bottom", Ty::Number(Range::UNIT_POSITIVE), "0.0001", "the lower bound of max_p"),
    Key::opt(
        "dynamic_thresholds",
        Ty::AnyOf(&[Ty::Bool, Ty::Table(&DYNAMIC_THRESHOLDS)]),
        "false",
        "move min_th to hold the averaged drop probability in [p_low, p_high] (Jou, Tan, Baras); true takes the defaults",
    ),
];

pub const DYNAMIC_THRESHOLDS: TableDecl = TableDecl {
    id: "dynamic-thresholds",
    title: "feng-ared's dynamic_thresholds",
    parts: &[&[
        Key::opt(
            "p_low",
            Ty::Number(Range::PROBABILITY),
            "0.01",
            "the lower end of the target band of P_d",
        ),
        Key::opt(
            "p_high",
            Ty::Number(Range::PROBABILITY),
            "0.02",
            "the upper end of the target band of P_d",
        ),
        Key::opt(
            "w_p",
            Ty::Number(Range::UNIT_POSITIVE),
            "0.002",
            "the averaging weight of P_d",
        ),
        Key::opt("interval", Ty::Time, "\"500ms\"", "how often min_th moves"),
        Key::opt(
            "gamma",
            Ty::Number(Range::UNIT_OPEN),
            "0.05",
            "the relative step of min_th",
        ),
    ]],
};

pub(super) const RED_TAIL_KEYS: &[Key] = &[
    Key::req(
        "red",
        Ty::Tagged(&RED_QUEUE2),
        "queue 2's RED as a table, e.g. red = { kind = \"ared\" }",
    ),
    Key::opt(
        "min_th1",
        Ty::Pkts,
        "\"5pkt\"",
        "queue 1's length below which it gets c1_min of the link",
    ),
    Key::opt(
        "max_th1",
        Ty::Pkts,
        "\"50pkt\"",
        "queue 1's length at which its share reaches c1_max",
    ),
    Key::opt(
        "c1_min",
        Ty::Number(Range::UNIT_OPEN),
        "0.2",
        "queue 1's smallest share of the link",
    ),
    Key::opt(
        "c1_max",
        Ty::Number(Range::UNIT_OPEN),
        "0.8",
        "queue 1's largest share of the link",
    ),
    Key::opt(
        "queue1_classes",
        Ty::List(&Ty::Choice(CLASSES)),
        "[\"realtime\"]",
        "the traffic classes queue 1 takes",
    ),
];

/// Queue 2 of `red-tail`: a RED table without a limit (it shares the
/// red-tail buffer).
pub const RED_QUEUE2: Tagged = Tagged {
    id: "red-queue2",
    title: "red-tail's queue 2",
    tag: &[Key::req(
        "kind",
        Ty::Choice(&["red", "ared", "feng-ared"]),
        "queue 2's RED",
    )],
    common: &[],
    variants: &[
        Variant {
            name: "red",
            help: "RED",
            when: None,
            parts: &[RED_SHAPE, RED_OPTIONS],
        },
        Variant {
            name: "ared",
            help: "Adaptive RED",
            when: None,
            parts: &[ARED_SHAPE, RED_OPTIONS, ARED_KEYS],
        },
        Variant {
            name: "feng-ared",
            help: "self-configuring RED",
            when: None,
            parts: &[RED_SHAPE, RED_OPTIONS, FENG],
        },
    ],
};

/// RED+Tail with queue 1's classes by name (indices are known only once
/// every traffic group has been read).
#[derive(Clone, Debug, PartialEq)]
pub struct RedTailSpec {
    pub params: RedTailParams,
    pub queue1_classes: Vec<String>,
}

/// A RED threshold: `"auto"`, packets (`"45pkt"`, fractions allowed) or a
/// size in bytes.
pub(super) fn threshold(v: &Value) -> Result<Threshold, String> {
    const EXPECTED: &str = "\"auto\", a number of packets such as \"45pkt\", or a size such as \"45000B\"";
    let s = v
        .as_str()
        .ok_or_else(|| format!("expected {EXPECTED}, got {}", config::show(v)))?;
    if s.trim() == "auto" {
        return Ok(Threshold::Auto);
    }
    match config::split_number(s) {
        Some((x, "pkt" | "pkts")) if x.is_finite() && x >= 0.0 => Ok(Threshold::Packets(x)),
        _ => config::parse_bytes_f64(v)
            .map(Threshold::Bytes)
            .map_err(|_| format!("\"{s}\" is not {EXPECTED}")),
    }
}

/// RED's `w_q`: `"auto"` or a number.
pub(super) fn weight(v: &Value) -> Result<Weight, String> {
    if v.as_str() == Some("auto") {
        return Ok(Weight::Auto);
    }
    real(v)
        .map(Weight::Value)
        .map_err(|_| format!("expected \"auto\" or a number in (0, 1], got {}", config::show(v)))
}

/// `red`, `ared` and `feng-ared`: one implementation, three sets of
/// defaults. `red` and `feng-ared` need thresholds, `max_p` and
/// `w_q`; `ared` defaults them to auto, auto and 0.1.
pub(super) fn parse_red(cx: &mut Cx, t: &mut Table, kind: &str, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mut p = if kind == "ared" {
        let mut p = RedParams::ared(Limit::Unlimited);
        set(cx, t, "min_th", &mut p.min_th, threshold);
        set(cx, t, "max_th", &mut p.max_th, threshold);
        set(cx, t, "max_p", &mut p.max_p, real);
        set(cx, t, "w_q", &mut p.w_q, weight);
        p
    } else {
        let min_th = t.req(cx, "min_th", threshold);
        let max_th = t.req(cx, "max_th", threshold);
        let max_p = t.req(cx, "max_p", real);
        let w_q = t.req(cx, "w_q", weight);
        let (min_th, max_th, max_p, w_q) = (min_th?, max_th?, max_p?, w_q?);
        if kind == "feng-ared" {
            RedParams::feng(Limit::Unlimited, min_th, max_th, max_p, w_q)
        } else {
            RedParams::red(Limit::Unlimited, min_th, max_th, max_p, w_q)
        }
    };
    set(cx, t, "gentle", &mut p.gentle, parse_gentle);
    set(cx, t, "wait", &mut p.wait, parse_bool);
    set(cx, t, "byte_mode", &mut p.byte_mode, parse_bool);
    set(cx, t, "mean_pktsize", &mut p.mean_pktsize_bytes, whole_bytes);
    set(cx, t, "ecn", &mut p.ecn, parse_bool);
    set(cx, t, "ecn_above_max_th", &mut p.ecn_above_max_th, |v| {
        Ok(if parse_choice(v, &["drop", "mark"])? == "mark" {
            EcnAboveMaxTh::Mark
        } else {
            EcnAboveMaxTh::Drop
        })
    });
    set(cx, t, "drop_spacing", &mut p.drop_spacing, |v| {
        Ok(if parse_choice(v, &["count", "none"])? == "none" {
            DropSpacing::None
        } else {
            DropSpacing::Count
        })
    });
    set(cx, t, "idle_decay", &mut p.idle_decay, |v| {
        Ok(match parse_choice(v, &["ns2", "paper", "none"])? {
            "paper" => IdleDecay::Paper,
            "none" => IdleDecay::None,
            _ => IdleDecay::Ns2,
        })
    });
    set(cx, t, "exempt_first", &mut p.exempt_first, parse_bool);
    set(cx, t, "avg_of", &mut p.avg_of, |v| {
        Ok(match parse_choice(v, &["average", "instantaneous"])? {
            "instantaneous" => AvgOf::Instantaneous,
            _ => AvgOf::Average,
        })
    });
    set(cx, t, "target_delay", &mut p.target_delay, parse_duration);
    match &mut p.adapt {
        Adapt::Ared(a) => parse_ared(cx, t, a),
        Adapt::Feng(f) => parse_feng(cx, t, f),
        Adapt::None => {}
    }
    p.limit = limit?;
    Some(QdiscSpec::Red(p))
}

/// `gentle`: false, true (ns-2's line to 2 max_th) or "to_limit"
/// (Brandauer et al.'s GRED, the line to the limit).
pub(super) fn parse_gentle(v: &Value) -> Result<Gentle, String> {
    match v {
        Value::Bool(false) => Ok(Gentle::Off),
        Value::Bool(true) => Ok(Gentle::TwiceMaxTh),
        Value::String(s) if s == "to_limit" => Ok(Gentle::ToLimit),
        _ => Err(format!(
            "expected false, true (the gentle line ends at 2 max_th, as ns-2) or \"to_limit\" (it ends at the limit), got {}",
            config::show(v)
        )),
    }
}

pub(super) fn parse_ared(cx: &mut Cx, t: &mut Table, a: &mut AredParams) {
    set(cx, t, "interval", &mut a.interval, parse_duration);
    set(cx, t, "alpha", &mut a.alpha, real);
    set(cx, t, "beta", &mut a.beta, real);
    set(cx, t, "top", &mut a.top, real);
    set(cx, t, "bottom", &mut a.bottom, real);
    set(cx, t, "update", &mut a.update, |v| {
        Ok(if parse_choice(v, &["arrival", "timer"])? == "arrival" {
            AredUpdate::Arrival
        } else {
            AredUpdate::Timer
        })
    });
    set(cx, t, "gentle_slope", &mut a.gentle_slope, |v| {
        Ok(if parse_choice(v, &["current", "initial"])? == "initial" {
            GentleSlope::Initial
        } else {
            GentleSlope::Current
        })
    });
}

pub(super) fn parse_feng(cx: &mut Cx, t: &mut Table, f: &mut FengParams) {
    set(cx, t, "a", &mut f.a, real);
    set(cx, t, "b", &mut f.b, real);
    set(cx, t, "bottom", &mut f.bottom, real);
    // `dynamic_thresholds = true` takes the defaults; a table sets them.
    let Some(v) = t.raw("dynamic_thresholds") else { return };
    let path = t.key_path("dynamic_thresholds");
    if let Value::Bool(on) = v {
        f.dynamic = on.then(DynThresholds::default);
        return;
    }
    let Some(mut d) = Table::new(cx, v, &path) else { return };
    d.declare_parts(DYNAMIC_THRESHOLDS.parts);
    let mut dynamic = DynThresholds::default();
    set(cx, &mut d, "p_low", &mut dynamic.p_low, real);
    set(cx, &mut d, "p_high", &mut dynamic.p_high, real);
    set(cx, &mut d, "w_p", &mut dynamic.w_p, real);
    set(cx, &mut d, "interval", &mut dynamic.interval, parse_duration);
    set(cx, &mut d, "gamma", &mut dynamic.gamma, real);
    d.finish(cx);
    f.dynamic = Some(dynamic);
}

/// `red-tail`: queue 1's thresholds and shares, the classes it takes, and
/// queue 2's RED as an inline `red` table without a limit (it shares the
/// red-tail buffer).
pub(super) fn parse_red_tail(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let red = match t.raw("red") {
        Some(Value::Object(m)) if m.contains_key("limit") => {
            cx.err(
                &join(&t.key_path("red"), "limit"),
                "queue 2 shares the red-tail buffer; set `limit` on the red-tail table only",
            );
            None
        }
        Some(Value::Object(m)) => {
            let mut with_limit = m.clone();
            with_limit.insert("limit".into(), json!("inf"));
            match QdiscSpec::parse(cx, &Value::Object(with_limit), &t.key_path("red"), None) {
                Some(QdiscSpec::Red(p)) => Some(p),
                Some(_) => {
                    cx.err(
                        &join(&t.key_path("red"), "kind"),
                        "queue 2 must be \"red\", \"ared\" or \"feng-ared\"",
                    );
                    None
                }
                None => None,
            }
        }
        Some(other) => {
            cx.err(
                &t.key_path("red"),
                format!(
                    "expected a table such as {{ kind = \"ared\" }}, got {}",
                    config::show(other)
                ),
            );
            None
        }
        None => {
            t.report_missing(cx, "red");
            None
        }
    };
    let mut p = RedTailParams {
        limit: limit?,
        min_th1_pkts: RedTailParams::DEFAULT_MIN_TH1_PKTS,
        max_th1_pkts: RedTailParams::DEFAULT_MAX_TH1_PKTS,
        c1_min: RedTailParams::DEFAULT_C1_MIN,
        c1_max: RedTailParams::DEFAULT_C1_MAX,
        queue1_classes: Vec::new(),
        red: red?,
    };
    set(cx, t, "min_th1", &mut p.min_th1_pkts, config::parse_pkts);
    set(cx, t, "max_th1", &mut p.max_th1_pkts, config::parse_pkts);
    set(cx, t, "c1_min", &mut p.c1_min, real);
    set(cx, t, "c1_max", &mut p.c1_max, real);
    let mut queue1_classes = vec!["realtime".to_string()];
    set(cx, t, "queue1_classes", &mut queue1_classes, |v| {
        let items = v
            .as_array()
            .ok_or_else(|| format!("expected a list of classes, got {}", config::show(v)))?;
        items
            .iter()
            .map(|c| parse_choice(c, CLASSES).map(str::to_string))
            .collect()
    });
    Some(QdiscSpec::RedTail(RedTailSpec {
        params: p,
        queue1_classes,
    }))
}

/// The effective parameters of RED (queue 2 of red-tail too).
pub(super) fn describe_red(p: &RedParams) -> Value {
    let kind = match p.adapt {
        Adapt::None => "red",
        Adapt::Ared(_) => "ared",
        Adapt::Feng(_) => "feng-ared",
    };
    let unit = if p.unit() == QueueUnit::Bytes { "bytes" } else { "pkts" };
    let th = |t: Threshold| match t {
        Threshold::Packets(x) | Threshold::Bytes(x) => json!(x),
        Threshold::Auto => Value::Null,
    };
    let w_q = match p.w_q {
        Weight::Value(w) => json!(w),
        Weight::Auto => Value::Null,
    };
    let mut m = json!({
        "kind": kind, "limit": limit_value(p.limit),
        format!("min_th_{unit}"): th(p.min_th), format!("max_th_{unit}"): th(p.max_th),
        "max_p": p.max_p, "w_q": w_q, "gentle": match p.gentle { Gentle::Off => json!(false), Gentle::TwiceMaxTh => json!(true), Gentle::ToLimit => json!("to_limit") },
        "wait": p.wait, "byte_mode": p.byte_mode,
        "mean_pktsize_bytes": p.mean_pktsize_bytes, "ecn": p.ecn,
        "ecn_above_max_th": if p.ecn_above_max_th == EcnAboveMaxTh::Mark { "mark" } else { "drop" },
        "drop_spacing": if p.drop_spacing == DropSpacing::None { "none" } else { "count" },
        "idle_decay": match p.idle_decay { IdleDecay::Ns2 => "ns2", IdleDecay::Paper => "paper", IdleDecay::None => "none" },
        "exempt_first": p.exempt_first,
        "avg_of": if p.avg_of == AvgOf::Instantaneous { "instantaneous" } else { "average" },
        "target_delay_s": secs(p.target_delay),
    });
    match p.adapt {
        Adapt::Ared(a) => {
            m["interval_s"] = secs(a.interval);
            m["alpha"] = json!(a.alpha);
            m["beta"] = json!(a.beta);
            m["top"] = json!(a.top);
            m["bottom"] = json!(a.bottom);
            m["update"] = json!(if a.update == AredUpdate::Arrival {
                "arrival"
            } else {
                "timer"
            });
            m["gentle_slope"] = json!(if a.gentle_slope == GentleSlope::Initial {
                "initial"
            } else {
                "current"
            });
        }
        Adapt::Feng(f) => {
            m["a"] = json!(f.a);
            m["b"] = json!(f.b);
            m["bottom"] = json!(f.bottom);
            m["dynamic_thresholds"] = match f.dynamic {
                Some(d) => json!({ "p_low": d.p_low, "p_high": d.p_high, "w_p": d.w_p,
                                   "interval_s": secs(d.interval), "gamma": d.gamma }),
                None => json!(false),
            };
        }
        Adapt::None => {}
    }
    m
}

pub(super) const RED: Kind = Kind {
    variant: Variant {
        name: "red",
        help: "RED (Floyd and Jacobson 1993)",
        when: None,
        parts: &[LIMIT, RED_SHAPE, RED_OPTIONS],
    },
    read: |cx, t, limit| parse_red(cx, t, "red", limit),
    default_limit: None,
};

pub(super) const ARED: Kind = Kind {
    variant: Variant {
        name: "ared",
        help: "Adaptive RED (Floyd, Gummadi, Shenker 2001)",
        when: None,
        parts: &[LIMIT, ARED_SHAPE, RED_OPTIONS, ARED_KEYS],
    },
    read: |cx, t, limit| parse_red(cx, t, "ared", limit),
    default_limit: None,
};

pub(super) const FENG_ARED: Kind = Kind {
    variant: Variant {
        name: "feng-ared",
        help: "self-configuring RED (Feng et al. 1999)",
        when: None,
        parts: &[LIMIT, RED_SHAPE, RED_OPTIONS, FENG],
    },
    read: |cx, t, limit| parse_red(cx, t, "feng-ared", limit),
    default_limit: None,
};

pub(super) const RED_TAIL: Kind = Kind {
    variant: Variant {
        name: "red-tail",
        help: "RED+Tail: a drop-tail queue 1 for some classes beside a RED queue 2, one buffer",
        when: None,
        parts: &[LIMIT, RED_TAIL_KEYS],
    },
    read: parse_red_tail,
    default_limit: None,
};

/// RED+Tail with queue 1's classes by index, once every class is known.
pub(super) fn build_red_tail(
    s: &RedTailSpec,
    link: LinkInfo,
    seed: u64,
    classes: &[String],
) -> Result<AnyQdisc, ParamError> {
    let mut p = s.params.clone();
    p.queue1_classes = (0..classes.len() as u8)
        .filter(|&i| s.queue1_classes.contains(&classes[i as usize]))
        .collect();
    Ok(AnyQdisc::RedTail(Box::new(RedTail::new(p, link, seed)?)))
}

pub(super) fn describe_red_tail(q: &RedTail, classes: &[String]) -> Value {
    let p = q.params();
    let names: Vec<&String> = p.queue1_classes.iter().map(|&i| &classes[i as usize]).collect();
    json!({
        "kind": "red-tail", "limit": limit_value(p.limit), "min_th1_pkts": p.min_th1_pkts,
        "max_th1_pkts": p.max_th1_pkts, "c1_min": p.c1_min, "c1_max": p.c1_max, "queue1_classes": names,
        "red": describe_red(q.red().effective()),
    })
}
