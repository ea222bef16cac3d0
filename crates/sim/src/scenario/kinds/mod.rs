//! Each traffic kind declares, reads and validates its own table in one
//! file of this folder (`tcp.rs`, `udp.rs`, `web.rs`), and is registered
//! once, in [`KINDS`].

use super::*;

mod tcp;
mod udp;
mod web;

pub(super) use udp::parse_udp_ecn;

pub(in crate::scenario) use tcp::{read_tcp_app, TCP_APP};

/// A traffic kind: its keys (beside the keys every group has), with the
/// help line the schema and README show, and how its table is read.
pub struct TrafficKind {
    pub variant: Variant,
    pub read: fn(&mut Cx, &mut Table) -> Option<SourceSpec>,
}

/// Every traffic kind, registered once, in the order the schema lists
/// them. The two `onoff` kinds share a name; `transport` chooses.
const KINDS: [TrafficKind; 9] = [
    tcp::FTP,
    tcp::FILE,
    web::WEB,
    web::HTTP11,
    udp::CBR,
    udp::POISSON,
    udp::BATCH,
    tcp::ONOFF_TCP,
    udp::ONOFF_UDP,
];

/// The number of kind names: a kind with a `when` shares its name with
/// another.
const N_NAMES: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < KINDS.len() {
        if KINDS[i].variant.when.is_none() {
            n += 1;
        }
        i += 1;
    }
    n
};

const fn names() -> [&'static str; N_NAMES] {
    let mut out = [""; N_NAMES];
    let (mut i, mut j) = (0, 0);
    while i < KINDS.len() {
        if KINDS[i].variant.when.is_none() {
            out[j] = KINDS[i].variant.name;
            j += 1;
        }
        i += 1;
    }
    out
}

const fn variants() -> [Variant; KINDS.len()] {
    let mut out = [KINDS[0].variant; KINDS.len()];
    let mut i = 0;
    while i < KINDS.len() {
        out[i] = KINDS[i].variant;
        i += 1;
    }
    out
}

/// The `kind` of every traffic group.
pub const TRAFFIC_KINDS: &[&str] = &names();

/// Every traffic group, by `kind` (see `schema`): [`read_group`] reads
/// the common keys, the kind's reader exactly its own.
pub const TRAFFIC: Tagged = Tagged {
    id: "traffic",
    title: "traffic group",
    tag: &[Key::req("kind", Ty::Choice(TRAFFIC_KINDS), "the traffic model")],
    common: GROUP,
    variants: &variants(),
};

pub(super) fn read_source(cx: &mut Cx, t: &mut Table, kind: &str) -> Option<SourceSpec> {
    // `transport` chooses between the two `onoff` variants, so it is looked
    // at before their keys are declared.
    let transport = t.map_value("transport");
    let variant = TRAFFIC.variant(kind, |key, value| key == "transport" && transport == Some(value));
    t.declare_parts(variant.parts);
    if kind == "onoff" {
        t.opt(cx, "transport", |v| parse_choice(v, &["udp", "tcp"]));
    }
    let kind = KINDS
        .iter()
        .find(|k| k.variant.name == variant.name && k.variant.when == variant.when)
        .expect("a registered kind");
    (kind.read)(cx, t)
}
