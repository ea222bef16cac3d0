//! The scenario schema: reading and validating a scenario, and compiling its
//! topology into nodes, links and routes.
//!
//! A [`Scenario`] that exists is valid: every key was known, every value in
//! range, every name resolved and every flow routable. Random choices (an
//! access delay drawn from a distribution) are left for the run, because they
//! depend on the seed.

use aqmlab_qdisc::{Duration, LinkInfo};
use serde_json::Value;

use crate::config::dist::{Dist, Quantity};
use crate::config::schema::{Key, TableDecl, Tagged, Ty, Variant};
pub use crate::config::ConfigError;
use crate::config::{
    self, join, parse_bool, parse_choice, parse_count, parse_duration, parse_rate, parse_str, Cx, Table,
};
pub use crate::net::qdisc::QdiscSpec;
use crate::net::qdisc::QDISC;
pub use crate::net::topology::{DelaySpec, LinkSpec, NetSpec, NodeSpec, Report, NO_ROUTE};
pub use crate::net::CLASSES;
use crate::transport::tcp::config::TCP;
pub use crate::transport::tcp::MAX_TCP_PAYLOAD_BYTES;
use crate::transport::tcp::{RtoConfig, TcpConfig};

mod kinds;
#[cfg(test)]
mod tests;
mod topology;
mod traffic;

use kinds::*;
pub use kinds::{TrafficKind, TRAFFIC, TRAFFIC_KINDS};
pub use topology::*;
pub use traffic::*;

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub duration: Duration,
    pub warmup: Duration,
    pub seed: u64,
    pub trace: Option<TraceSpec>,
    pub net: NetSpec,
    pub groups: Vec<GroupSpec>,
    /// Traffic class labels, indexed by `Packet::class`.
    pub classes: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct TraceSpec {
    pub interval: Duration,
    /// Indices of the links whose queues are sampled.
    pub links: Vec<u32>,
    /// TCP flows whose cwnd, ssthresh, srtt and RTO are sampled (and the
    /// Linux-style family's pacing rate and receiver window, BBR's model),
    /// as (global flow index, name `group[j]`).
    pub flows: Vec<(u32, String)>,
    /// Traffic groups whose one-way delays are sampled, as (group index,
    /// name).
    pub groups: Vec<(u16, String)>,
}

impl Scenario {
    /// Reads and validates a scenario from its JSON form (the TOML file as a
    /// JSON tree). Returns every problem found, not only the first.
    pub fn from_json(text: &str) -> Result<Scenario, Vec<ConfigError>> {
        let v: Value = serde_json::from_str(text).map_err(|e| {
            vec![ConfigError {
                path: String::new(),
                message: format!("not a valid scenario document: {e}"),
            }]
        })?;
        Scenario::from_value(&v)
    }

    pub fn from_value(v: &Value) -> Result<Scenario, Vec<ConfigError>> {
        let mut cx = Cx::default();
        let sc = read_scenario(&mut cx, v);
        match sc {
            Some(sc) if cx.errors.is_empty() => Ok(sc),
            _ => {
                if cx.errors.is_empty() {
                    cx.err("", "invalid scenario");
                }
                Err(cx.errors)
            }
        }
    }

    /// Length of the measurement window [warmup, duration].
    pub fn window(&self) -> Duration {
        Duration(self.duration.0 - self.warmup.0)
    }
}

/// The keys of a scenario file's top level (see `schema`).
pub const SCENARIO: TableDecl = TableDecl {
    id: "scenario",
    title: "scenario",
    parts: &[&[
        Key::opt("name", Ty::Text, "\"scenario\"", "the scenario's name, for reports"),
        Key::req("duration", Ty::Time, "the simulated time, e.g. \"100s\""),
        Key::opt("warmup", Ty::Time, "\"0s\"", "measurements cover [warmup, duration]"),
        Key::opt(
            "seed",
            Ty::Whole { min: 0, max: u64::MAX },
            "1",
            "the run's seed; --seed overrides it",
        ),
        Key::req(
            "topology",
            Ty::Tagged(&TOPOLOGY),
            "a [topology] table with kind = \"dumbbell\", \"chain\" or \"graph\"",
        ),
        Key::opt("trace", Ty::Table(&TRACE), "", "time series to sample"),
        Key::req(
            "traffic",
            Ty::NonEmptyList(&Ty::Tagged(&TRAFFIC)),
            "at least one [[traffic]] group is needed",
        ),
    ]],
};

pub const TRACE: TableDecl = TableDecl {
    id: "trace",
    title: "trace",
    parts: &[&[
        Key::req("interval", Ty::Time, "the sampling interval, e.g. \"100ms\""),
        Key::opt(
            "queues",
            Ty::List(&Ty::Text),
            "every queue the result reports",
            "the queues whose backlog and discipline state are sampled",
        ),
        Key::opt(
            "flows",
            Ty::List(&Ty::Text),
            "",
            "TCP flows whose cwnd, ssthresh, srtt and RTO are sampled (the Linux-style family adds its pacing rate and the receiver's window, BBR its model), e.g. [\"ftp[0]\"]",
        ),
        Key::opt(
            "groups",
            Ty::List(&Ty::Text),
            "",
            "traffic groups whose one-way delay is sampled: mean and largest over each interval",
        ),
    ]],
};

fn read_scenario(cx: &mut Cx, v: &Value) -> Option<Scenario> {
    let mut t = Table::new(cx, v, "")?;
    t.declare_parts(SCENARIO.parts);
    let name = t.opt(cx, "name", parse_str).unwrap_or_else(|| "scenario".to_string());
    let duration = t.req(cx, "duration", parse_duration);
    let warmup = t.opt(cx, "warmup", parse_duration).unwrap_or(Duration::ZERO);
    let seed = t.opt(cx, "seed", |v| parse_count(v, 0)).unwrap_or(1);
    let net = match t.raw("topology") {
        Some(tv) => read_topology(cx, tv, "topology"),
        None => {
            t.report_missing(cx, "topology");
            None
        }
    };
    let trace_v = t.raw("trace");
    let traffic_v = t.raw("traffic");
    if traffic_v.is_none() {
        t.report_missing(cx, "traffic");
    }
    t.finish(cx);

    let duration = duration?;
    if duration == Duration::ZERO {
        cx.err("duration", "must be longer than 0s");
    }
    // A zero duration is reported above; the warmup is judged against a real one.
    if duration > Duration::ZERO && warmup >= duration {
        cx.err(
            "warmup",
            format!(
                "must be shorter than duration ({}s), got {}s",
                duration.as_secs_f64(),
                warmup.as_secs_f64()
            ),
        );
    }
    let mut classes: Vec<String> = Vec::new();
    let groups = match traffic_v {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut groups = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let name = item.get("name").and_then(Value::as_str);
                if let Some(n) = name.filter(|n| {
                    items[..i]
                        .iter()
                        .any(|o| o.get("name").and_then(Value::as_str) == Some(n))
                }) {
                    cx.err(
                        &format!("traffic[{i}].name"),
                        format!("\"{n}\" is used by another traffic group; names must be unique"),
                    );
                }
                if let Some(g) = read_group(cx, item, &format!("traffic[{i}]"), net.as_ref(), &mut classes) {
                    groups.push(g);
                }
            }
            groups
        }
        None => Vec::new(),
        Some(Value::Array(_)) => {
            cx.err("traffic", "is empty; at least one [[traffic]] group is needed");
            Vec::new()
        }
        Some(other) => {
            cx.err(
                "traffic",
                format!("expected a list of [[traffic]] tables, got {}", config::show(other)),
            );
            Vec::new()
        }
    };
    // Traffic is read even when the topology is broken, so that its problems
    // are reported too; with no network there is nothing more to check.
    let net = net?;
    let trace = trace_v.and_then(|tv| read_trace(cx, tv, &net, &groups));
    Some(Scenario {
        name,
        duration,
        warmup,
        seed,
        trace,
        net,
        groups,
        classes,
    })
}

fn read_trace(cx: &mut Cx, v: &Value, net: &NetSpec, groups: &[GroupSpec]) -> Option<TraceSpec> {
    let mut t = Table::new(cx, v, "trace")?;
    t.declare_parts(TRACE.parts);
    let interval = t.req(cx, "interval", parse_duration);
    let queues = t.opt(cx, "queues", |v| {
        let names = v
            .as_array()
            .ok_or_else(|| format!("expected a list of queue names, got {}", config::show(v)))?;
        names.iter().map(parse_str).collect::<Result<Vec<_>, _>>()
    });
    let flow_names = t.opt(cx, "flows", |v| {
        let names = v.as_array().ok_or_else(|| {
            format!(
                "expected a list of TCP flows such as [\"ftp[0]\"], got {}",
                config::show(v)
            )
        })?;
        names.iter().map(parse_str).collect::<Result<Vec<_>, _>>()
    });
    let group_names = t.opt(cx, "groups", |v| {
        let names = v
            .as_array()
            .ok_or_else(|| format!("expected a list of traffic group names, got {}", config::show(v)))?;
        names.iter().map(parse_str).collect::<Result<Vec<_>, _>>()
    });
    t.finish(cx);
    let mut traced_groups = Vec::new();
    for (i, name) in group_names.unwrap_or_default().into_iter().enumerate() {
        match groups.iter().position(|g| g.name == name) {
            Some(g) => traced_groups.push((g as u16, name)),
            None => {
                let all: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
                cx.err(
                    &format!("trace.groups[{i}]"),
                    format!("no traffic group is named \"{name}\"; groups: {}", config::quoted(&all)),
                );
            }
        }
    }
    let mut flows = Vec::new();
    for (i, name) in flow_names.unwrap_or_default().into_iter().enumerate() {
        let found = name
            .strip_suffix(']')
            .and_then(|n| n.split_once('['))
            .and_then(|(g, j)| {
                let j: u32 = j.parse().ok()?;
                let mut first = 0;
                for group in groups {
                    if group.name == g {
                        return (j < group.count && group.source.is_tcp()).then_some(first + j);
                    }
                    first += group.count;
                }
                None
            });
        match found {
            Some(f) => flows.push((f, name)),
            None => cx.err(
                &format!("trace.flows[{i}]"),
                format!("\"{name}\" is not a TCP flow; write \"<group>[<j>]\" with j below the group's count"),
            ),
        }
    }
    let interval = interval?;
    if interval == Duration::ZERO {
        cx.err("trace.interval", "must be longer than 0s");
        return None;
    }
    let links = match queues {
        None => (0..net.links.len() as u32)
            .filter(|&l| net.links[l as usize].report == Report::Always)
            .collect(),
        Some(names) => {
            let mut links = Vec::new();
            for (i, n) in names.iter().enumerate() {
                match net.links.iter().position(|l| &l.name == n) {
                    Some(l) => links.push(l as u32),
                    None => {
                        let all: Vec<&str> = net.links.iter().map(|l| l.name.as_str()).collect();
                        cx.err(
                            &format!("trace.queues[{i}]"),
                            format!("no queue is named \"{n}\"; queues: {}", config::quoted(&all)),
                        );
                    }
                }
            }
            links
        }
    };
    Some(TraceSpec {
        interval,
        links,
        flows,
        groups: traced_groups,
    })
}

/// The JSON Schema of a scenario file, as `aqmlab schema scenario` prints it.
pub fn scenario_schema() -> Value {
    crate::config::schema::json_schema(
        &SCENARIO,
        "aqmlab scenario",
        "A network, its traffic and its queue disciplines, simulated by aqmlab. Quantities with units are \
         strings (\"20ms\", \"10Mbps\", \"1500B\", \"300pkt\"); bare numbers are dimensionless.",
    )
}

/// The key tables of a scenario file, as the README shows them.
pub fn scenario_markdown() -> String {
    crate::config::schema::markdown(&SCENARIO)
}
