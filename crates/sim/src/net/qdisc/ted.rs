//! `ted` (time-driven early discard) in scenario files, with its deadlines
//! by class. The discipline: `crates/qdisc/src/ted.rs`.

use super::*;

pub(super) const TED_KEYS: &[Key] = &[
    Key::opt(
        "mode",
        Ty::Choice(&["lbd", "ebd"]),
        "\"lbd\"",
        "bound the sojourn at each queue (lbd) or spend an end-to-end budget (ebd)",
    ),
    Key::opt(
        "check",
        Ty::Choice(&["head", "departure", "arrival"]),
        "\"head\"",
        "where a packet's deadline is checked",
    ),
    Key::opt(
        "deadlines",
        Ty::Table(&TED_DEADLINES),
        "",
        "the deadline of each traffic class",
    ),
    Key::opt(
        "default_deadline",
        Ty::Time,
        "",
        "the deadline of packets whose class has none",
    ),
];

/// One key per traffic class (`scenario::CLASSES`).
pub const TED_DEADLINES: TableDecl = TableDecl {
    id: "ted-deadlines",
    title: "TED deadlines by class",
    parts: &[&[
        Key::opt("bulk", Ty::Time, "", "the deadline of class bulk"),
        Key::opt("realtime", Ty::Time, "", "the deadline of class realtime"),
    ]],
};

/// TED's parameters with deadlines by class name: class indices are only
/// known once every traffic group has been read.
#[derive(Clone, Debug, PartialEq)]
pub struct TedSpec {
    pub limit: Limit,
    pub mode: TedMode,
    pub check: TedCheck,
    pub deadlines: Vec<(String, Duration)>,
    pub default_deadline: Option<Duration>,
}

pub(super) fn parse_ted(cx: &mut Cx, t: &mut Table, limit: Option<Limit>) -> Option<QdiscSpec> {
    let mode = match t.opt(cx, "mode", |v| parse_choice(v, &["lbd", "ebd"])) {
        Some("ebd") => TedMode::Ebd,
        _ => TedMode::Lbd,
    };
    let check = match t.opt(cx, "check", |v| parse_choice(v, &["head", "departure", "arrival"])) {
        Some("departure") => TedCheck::Departure,
        Some("arrival") => TedCheck::Arrival,
        _ => TedCheck::Head,
    };
    let deadlines = match t.raw("deadlines") {
        None => Vec::new(),
        Some(dv) => {
            let path = t.key_path("deadlines");
            let mut d = Table::new(cx, dv, &path)?;
            d.declare_parts(TED_DEADLINES.parts);
            let mut out = Vec::new();
            for key in TED_DEADLINES.keys() {
                if let Some(x) = d.opt(cx, key.name, parse_duration) {
                    out.push((key.name.to_string(), x));
                }
            }
            d.finish(cx);
            out
        }
    };
    let default_deadline = t.opt(cx, "default_deadline", parse_duration);
    Some(QdiscSpec::Ted(TedSpec {
        limit: limit?,
        mode,
        check,
        deadlines,
        default_deadline,
    }))
}

pub(super) const TED: Kind = Kind {
    variant: Variant {
        name: "ted",
        help: "time-driven early discard (Baldi and Vesco)",
        when: None,
        parts: &[LIMIT, TED_KEYS],
    },
    read: parse_ted,
    default_limit: None,
};

/// TED with its deadlines by class index, once every class is known.
pub(super) fn build_ted(s: &TedSpec, link: LinkInfo, classes: &[String]) -> Result<AnyQdisc, ParamError> {
    Ok(AnyQdisc::Ted(Ted::new(
        TedParams {
            limit: s.limit,
            mode: s.mode,
            check: s.check,
            class_deadlines: classes
                .iter()
                .map(|c| s.deadlines.iter().find(|(n, _)| n == c).map(|(_, d)| *d))
                .collect(),
            default_deadline: s.default_deadline,
        },
        link,
    )?))
}

pub(super) fn describe_ted(q: &Ted, classes: &[String]) -> Value {
    let p = q.params();
    let deadlines: Map<String, Value> = classes
        .iter()
        .zip(&p.class_deadlines)
        .filter_map(|(c, d)| d.map(|d| (c.clone(), secs(d))))
        .collect();
    json!({
        "kind": "ted", "limit": limit_value(p.limit),
        "mode": if p.mode == TedMode::Ebd { "ebd" } else { "lbd" }, "check": p.check.as_str(),
        "deadlines_s": deadlines, "default_deadline_s": p.default_deadline.map(secs),
    })
}
