//! The scenario schema: which keys each table of a scenario file has, their
//! types with units, defaults, allowed ranges and one line of help.
//!
//! Every table is declared once, beside its reader: the scenario root,
//! topologies and trace in [`crate::scenario`], traffic kinds there too,
//! queue disciplines in [`crate::net::qdisc`], `tcp` in [`crate::transport::tcp::config`],
//! distributions in [`crate::config::dist`]. A reader declares its table's keys to
//! [`Table`](crate::config::Table) before it reads any, so the declaration
//! is the list of known keys and the text of a missing key's error. This
//! module turns the same declarations into a JSON Schema (draft 2020-12) that
//! editors use to complete and check scenario files, and into the README's
//! key tables.
//!
//! A schema checks what one key or one table says. What only the readers
//! check (min_th below max_th, routes between hosts, a node name that
//! exists, one of `scale` and `mean`) stays with them; the schema never
//! rejects a scenario the engine accepts.

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use crate::config::dist::Quantity;
use crate::config::{RATE_UNITS, SIZE_UNITS, TIME_UNITS};

/// Bounds of a dimensionless number; infinite ends are unbounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    /// `min` itself is not allowed.
    pub min_open: bool,
    pub max: f64,
    pub max_open: bool,
}

impl Range {
    pub const ANY: Range = Range::new(f64::NEG_INFINITY, false, f64::INFINITY, false);
    pub const NON_NEGATIVE: Range = Range::new(0.0, false, f64::INFINITY, false);
    pub const POSITIVE: Range = Range::new(0.0, true, f64::INFINITY, false);
    /// A probability, [0, 1].
    pub const PROBABILITY: Range = Range::new(0.0, false, 1.0, false);
    /// (0, 1]: a weight or step that must move something.
    pub const UNIT_POSITIVE: Range = Range::new(0.0, true, 1.0, false);
    /// (0, 1).
    pub const UNIT_OPEN: Range = Range::new(0.0, true, 1.0, true);

    pub const fn new(min: f64, min_open: bool, max: f64, max_open: bool) -> Range {
        Range {
            min,
            min_open,
            max,
            max_open,
        }
    }

    fn text(&self) -> String {
        match (self.min.is_finite(), self.max.is_finite()) {
            (false, false) => String::new(),
            (true, false) => format!("{} {}", if self.min_open { ">" } else { ">=" }, self.min),
            (false, true) => format!("{} {}", if self.max_open { "<" } else { "<=" }, self.max),
            (true, true) => format!(
                "in {}{}, {}{}",
                if self.min_open { "(" } else { "[" },
                self.min,
                self.max,
                if self.max_open { ")" } else { "]" }
            ),
        }
    }
}

/// What a key's value is. Quantities with units are strings with the unit
/// (see `config`); bare numbers are dimensionless.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    /// A time such as `"20ms"`.
    Time,
    /// A bit rate such as `"10Mbps"`.
    Rate,
    /// A size in bytes such as `"1500B"`.
    Size,
    /// A whole number of packets, `20` or `"20pkt"`.
    Pkts,
    /// A buffer limit: `"300pkt"`, a size in bytes, or `"inf"`.
    Limit,
    /// A packet rate such as `"10pps"`.
    PacketRate,
    /// A RED threshold: `"auto"`, packets (`"45pkt"`) or bytes.
    Threshold,
    /// A dimensionless real number.
    Number(Range),
    /// A whole number in [min, max].
    Whole {
        min: u64,
        max: u64,
    },
    Bool,
    /// Free text: a name.
    Text,
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    Table(&'static TableDecl),
    Tagged(&'static Tagged),
    List(&'static Ty),
    /// A list of at least one item.
    NonEmptyList(&'static Ty),
    /// A constant of the quantity or a distribution table (`dist = ...`).
    Dist(Quantity),
    /// Inside a distribution table: a value of the distribution's quantity.
    Value,
    /// Any one of these.
    AnyOf(&'static [Ty]),
}

/// One key of a table.
#[derive(Clone, Copy, Debug)]
pub struct Key {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    /// The value taken when the key is absent, written as a value (TOML and
    /// JSON alike: `"\"1000pkt\""`, `0.1`, `true`) or, where it depends on
    /// other keys, in words. Empty for required keys and for keys whose
    /// absence means "none". A value becomes the schema's `default`, and a
    /// test checks that the reader takes it.
    pub default: &'static str,
    /// One line: what the key is. For a required key it completes the
    /// error "missing; ...".
    pub help: &'static str,
}

impl Key {
    pub const fn req(name: &'static str, ty: Ty, help: &'static str) -> Key {
        Key {
            name,
            ty,
            required: true,
            default: "",
            help,
        }
    }

    pub const fn opt(name: &'static str, ty: Ty, default: &'static str, help: &'static str) -> Key {
        Key {
            name,
            ty,
            required: false,
            default,
            help,
        }
    }

    /// What the error of a missing required key says after "missing; ".
    pub fn missing_text(&self) -> String {
        match self.ty {
            Ty::Choice(words) => format!("one of {}", crate::config::quoted(words)),
            _ => self.help.to_string(),
        }
    }
}

/// A table whose keys do not depend on a `kind`. Its keys come in parts so
/// that tables sharing keys (every link's rate, delay and MTU) declare them
/// once.
#[derive(Debug)]
pub struct TableDecl {
    /// Names the table in the schema's `$defs` and in the README.
    pub id: &'static str,
    pub title: &'static str,
    pub parts: &'static [&'static [Key]],
}

impl TableDecl {
    pub fn keys(&self) -> impl Iterator<Item = &'static Key> {
        self.parts.iter().flat_map(|p| p.iter())
    }
}

/// A table whose `tag` key (`kind`, `dist`) chooses among variants, each
/// with its own keys besides the `common` ones.
#[derive(Debug)]
pub struct Tagged {
    pub id: &'static str,
    pub title: &'static str,
    /// The choosing key; its type is the [`Ty::Choice`] of variant names.
    pub tag: &'static [Key],
    pub common: &'static [Key],
    pub variants: &'static [Variant],
}

#[derive(Clone, Copy, Debug)]
pub struct Variant {
    pub name: &'static str,
    pub help: &'static str,
    /// A second key that chooses between variants of one name: this one
    /// holds when `key = value` (`onoff` with `transport = "tcp"`); a
    /// variant of the same name without it holds otherwise.
    pub when: Option<(&'static str, &'static str)>,
    pub parts: &'static [&'static [Key]],
}

impl Variant {
    pub fn keys(&self) -> impl Iterator<Item = &'static Key> {
        self.parts.iter().flat_map(|p| p.iter())
    }
}

impl Tagged {
    /// The variant named `name`; `holds(key, value)` tells whether a
    /// variant's `when` is true of the table.
    pub fn variant(&self, name: &str, holds: impl Fn(&str, &str) -> bool) -> &Variant {
        self.variants
            .iter()
            .filter(|v| v.name == name)
            .find(|v| v.when.is_none_or(|(k, val)| holds(k, val)))
            .unwrap_or_else(|| panic!("{}: no variant {name}", self.id))
    }

    /// The variant names, each once, in order.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = Vec::new();
        for v in self.variants {
            if !names.contains(&v.name) {
                names.push(v.name);
            }
        }
        names
    }
}

// ---------------------------------------------------------------------------
// Patterns of quantities with units, from the units the parsers accept.

/// A number as `config::split_number` reads it (underscores allowed, no
/// sign: negative quantities are refused).
const NUMBER: &str = r"\+?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9]+)?";

fn units(list: &[(&str, f64)]) -> String {
    list.iter().map(|(u, _)| *u).collect::<Vec<_>>().join("|")
}

fn pattern(alternatives: &[String]) -> String {
    format!(r"^\s*(?:{})\s*$", alternatives.join("|"))
}

fn with_unit(units: &str) -> String {
    format!(r"{NUMBER}\s*(?:{units})")
}

fn unit_string(alternatives: &[String], description: &str) -> Value {
    json!({ "type": "string", "pattern": pattern(alternatives), "description": description })
}

// ---------------------------------------------------------------------------
// JSON Schema

/// The JSON Schema (draft 2020-12) of tables declared by `root`.
pub fn json_schema(root: &'static TableDecl, title: &str, description: &str) -> Value {
    let mut g = Gen::default();
    let mut out = Map::new();
    out.insert("$schema".into(), json!("https://json-schema.org/draft/2020-12/schema"));
    if let Value::Object(body) = g.table(root) {
        out.extend(body);
    }
    out.insert("title".into(), json!(title));
    out.insert("description".into(), json!(description));
    out.insert("$defs".into(), Value::Object(g.defs));
    Value::Object(out)
}

#[derive(Default)]
struct Gen {
    defs: Map<String, Value>,
    /// Definitions begun (a table may contain itself through a path).
    started: BTreeSet<String>,
}

impl Gen {
    fn reference(&mut self, id: &str, make: impl FnOnce(&mut Gen) -> Value) -> Value {
        if self.started.insert(id.to_string()) {
            let schema = make(self);
            self.defs.insert(id.to_string(), schema);
        }
        json!({ "$ref": format!("#/$defs/{id}") })
    }

    /// Quantities with units are definitions of their own, so that the
    /// patterns appear once.
    fn unit(&mut self, id: &str, ty: &Ty) -> Value {
        let time = with_unit(&units(TIME_UNITS));
        let size = with_unit(&units(SIZE_UNITS));
        let pkts = with_unit("pkt|pkts");
        let text = ty.text();
        self.reference(id, |_| match ty {
            Ty::Time => unit_string(&[time], &text),
            Ty::Rate => unit_string(&[with_unit(&units(RATE_UNITS))], &text),
            Ty::Size => unit_string(&[size], &text),
            Ty::PacketRate => unit_string(&[with_unit(r"pps|pkt/s")], &text),
            Ty::Limit => unit_string(&["inf".into(), with_unit("pkt|pkts|p"), size], &text),
            Ty::Threshold => unit_string(&["auto".into(), pkts, size], &text),
            Ty::Pkts => json!({ "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string", "pattern": pattern(&[pkts]) },
            ], "description": text }),
            _ => unreachable!("not a quantity with a unit"),
        })
    }

    fn ty(&mut self, ty: &Ty, q: Option<Quantity>) -> Value {
        match *ty {
            Ty::Time => self.unit("time", ty),
            Ty::Rate => self.unit("rate", ty),
            Ty::Size => self.unit("size", ty),
            Ty::PacketRate => self.unit("packet-rate", ty),
            Ty::Limit => self.unit("limit", ty),
            Ty::Threshold => self.unit("threshold", ty),
            Ty::Pkts => self.unit("packets", ty),
            Ty::Number(r) => {
                let mut m = Map::new();
                m.insert("type".into(), json!("number"));
                if r.min.is_finite() {
                    m.insert(
                        (if r.min_open { "exclusiveMinimum" } else { "minimum" }).into(),
                        json!(r.min),
                    );
                }
                if r.max.is_finite() {
                    m.insert(
                        (if r.max_open { "exclusiveMaximum" } else { "maximum" }).into(),
                        json!(r.max),
                    );
                }
                Value::Object(m)
            }
            Ty::Whole { min, max } => {
                let mut m = Map::new();
                m.insert("type".into(), json!("integer"));
                m.insert("minimum".into(), json!(min));
                if max != u64::MAX {
                    m.insert("maximum".into(), json!(max));
                }
                Value::Object(m)
            }
            Ty::Bool => json!({ "type": "boolean" }),
            Ty::Text => json!({ "type": "string" }),
            Ty::Choice(words) => json!({ "enum": words }),
            Ty::Table(t) => self.reference(t.id, |g| g.table(t)),
            Ty::Tagged(t) => self.tagged_ref(t, None),
            Ty::List(item) => json!({ "type": "array", "items": self.ty(item, q) }),
            Ty::NonEmptyList(item) => json!({ "type": "array", "minItems": 1, "items": self.ty(item, q) }),
            Ty::Dist(q) => {
                let scalar = self.ty(&Ty::Value, Some(q));
                let table = self.tagged_ref(&crate::config::dist::DIST, Some(q));
                // Dispatch on the type rather than anyOf, so that an error
                // inside a distribution table is reported at its key.
                json!({ "if": { "type": "object" }, "then": table, "else": scalar })
            }
            Ty::Value => match q.expect("a distribution's value has a quantity") {
                Quantity::Time => self.ty(&Ty::Time, None),
                Quantity::Bytes => self.ty(&Ty::Size, None),
                Quantity::Count => json!({ "type": "number", "minimum": 0 }),
            },
            Ty::AnyOf(tys) => json!({ "anyOf": tys.iter().map(|t| self.ty(t, q)).collect::<Vec<_>>() }),
        }
    }

    fn key(&mut self, k: &Key, q: Option<Quantity>) -> Value {
        let mut s = match self.ty(&k.ty, q) {
            Value::Object(m) => m,
            _ => unreachable!("a type's schema is an object"),
        };
        let mut description = k.help.to_string();
        if !k.default.is_empty() {
            description.push_str(&format!(". Default: {}", k.default));
        }
        // `$ref` beside other keywords is fine in 2020-12.
        s.insert("description".into(), json!(description));
        if let Ok(default) = serde_json::from_str::<Value>(k.default) {
            s.insert("default".into(), default);
        }
        Value::Object(s)
    }

    fn object<'k>(&mut self, keys: impl Iterator<Item = &'k Key>, q: Option<Quantity>) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for k in keys {
            properties.insert(k.name.into(), self.key(k, q));
            if k.required {
                required.push(k.name);
            }
        }
        json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
    }

    fn table(&mut self, t: &TableDecl) -> Value {
        let mut s = self.object(t.keys(), None);
        s["title"] = json!(t.title);
        s
    }

    fn tagged_ref(&mut self, t: &'static Tagged, q: Option<Quantity>) -> Value {
        let id = match q {
            None => t.id.to_string(),
            Some(q) => format!("{}-{}", t.id, q.name()),
        };
        self.reference(&id, |g| g.tagged(t, q))
    }

    /// The tag and common keys at the top (what editors complete first),
    /// then one `if tag = name then these keys` per variant. `if`/`then`
    /// rather than `oneOf`, so that an error is reported at the key of the
    /// variant the table names, not as "matches none of 12 alternatives".
    fn tagged(&mut self, t: &Tagged, q: Option<Quantity>) -> Value {
        let mut top = self.object(t.tag.iter().chain(t.common), q);
        top["title"] = json!(t.title);
        top.as_object_mut().unwrap().remove("additionalProperties");
        let tag = t.tag[0].name;
        let mut cases = Vec::new();
        for v in t.variants {
            let mut cond = Map::new();
            cond.insert(tag.into(), json!({ "const": v.name }));
            let mut cond_required = vec![tag];
            match v.when {
                Some((k, value)) => {
                    cond.insert(k.into(), json!({ "const": value }));
                    cond_required.push(k);
                }
                None => {
                    for other in t.variants.iter().filter(|o| o.name == v.name) {
                        if let Some((k, value)) = other.when {
                            cond.insert(k.into(), json!({ "not": { "const": value } }));
                        }
                    }
                }
            }
            let mut then = self.object(v.keys(), q);
            let props = then["properties"].as_object_mut().unwrap();
            for k in t.tag.iter().chain(t.common) {
                props.insert(k.name.into(), json!(true));
            }
            then["description"] = json!(v.help);
            cases.push(json!({
                "if": { "properties": cond, "required": cond_required },
                "then": then,
            }));
        }
        top["allOf"] = json!(cases);
        top
    }
}

impl Quantity {
    fn name(self) -> &'static str {
        match self {
            Quantity::Time => "time",
            Quantity::Bytes => "size",
            Quantity::Count => "count",
        }
    }
}

// ---------------------------------------------------------------------------
// Words: the type of a key as the README and the schema's descriptions say it

impl Ty {
    pub fn text(&self) -> String {
        match *self {
            Ty::Time => "time, e.g. \"20ms\"".into(),
            Ty::Rate => "rate, e.g. \"10Mbps\"".into(),
            Ty::Size => "size in bytes, e.g. \"1500B\"".into(),
            Ty::Pkts => "packets, e.g. 20 or \"20pkt\"".into(),
            Ty::Limit => "buffer limit: \"300pkt\", bytes (\"450KB\") or \"inf\"".into(),
            Ty::PacketRate => "packet rate, e.g. \"10pps\"".into(),
            Ty::Threshold => "\"auto\", packets (\"45pkt\") or bytes (\"45000B\")".into(),
            Ty::Number(r) if r == Range::PROBABILITY => "probability in [0, 1]".into(),
            Ty::Number(r) => match r.text() {
                t if t.is_empty() => "number".into(),
                t => format!("number {t}"),
            },
            Ty::Whole { min, max } if max == u64::MAX => format!("whole number >= {min}"),
            Ty::Whole { min, max } => format!("whole number in [{min}, {max}]"),
            Ty::Bool => "true or false".into(),
            Ty::Text => "text".into(),
            Ty::Choice(words) => crate::config::quoted(words).replace(", ", " | "),
            Ty::Table(t) => format!("table: {}", t.title),
            Ty::Tagged(t) => format!("table: {}", t.title),
            Ty::List(item) => format!("list of {}", item.text()),
            Ty::NonEmptyList(item) => format!("non-empty list of {}", item.text()),
            Ty::Dist(Quantity::Time) => "time or time distribution".into(),
            Ty::Dist(Quantity::Bytes) => "size or size distribution".into(),
            Ty::Dist(Quantity::Count) => "number or count distribution".into(),
            Ty::Value => "the distribution's quantity".into(),
            Ty::AnyOf(tys) => tys.iter().map(Ty::text).collect::<Vec<_>>().join("; or "),
        }
    }
}

// ---------------------------------------------------------------------------
// Markdown: one table of keys per declared table, for the README

/// Every table reachable from `root`, each once, as Markdown key tables:
/// depth first in the order of the keys, distributions (used everywhere)
/// last.
pub fn markdown(root: &'static TableDecl) -> String {
    let mut out = String::new();
    let mut seen = BTreeSet::from([crate::config::dist::DIST.id]);
    md_table(root, &mut out, &mut seen);
    seen.remove(crate::config::dist::DIST.id);
    md_tagged(&crate::config::dist::DIST, &mut out, &mut seen);
    out
}

fn md_rows<'k>(keys: impl Iterator<Item = &'k Key>, out: &mut String) {
    let mut keys = keys.peekable();
    if keys.peek().is_none() {
        out.push_str("No other keys.\n\n");
        return;
    }
    out.push_str("| key | type | default | meaning |\n|---|---|---|---|\n");
    for k in keys {
        let default = if k.required {
            "required".to_string()
        } else if serde_json::from_str::<Value>(k.default).is_ok() {
            format!("`{}`", k.default)
        } else {
            k.default.to_string()
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            k.name,
            md_escape(&k.ty.text()),
            md_escape(&default),
            md_escape(k.help)
        ));
    }
    out.push('\n');
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The tables a key's type leads to.
fn nested(ty: &Ty, out: &mut Vec<Nested>) {
    match *ty {
        Ty::Table(t) => out.push(Nested::Table(t)),
        Ty::Tagged(t) => out.push(Nested::Tagged(t)),
        Ty::Dist(_) => out.push(Nested::Tagged(&crate::config::dist::DIST)),
        Ty::List(item) | Ty::NonEmptyList(item) => nested(item, out),
        Ty::AnyOf(tys) => tys.iter().for_each(|t| nested(t, out)),
        _ => {}
    }
}

enum Nested {
    Table(&'static TableDecl),
    Tagged(&'static Tagged),
}

fn md_follow<'k>(keys: impl Iterator<Item = &'k Key>, out: &mut String, seen: &mut BTreeSet<&'static str>) {
    let mut next = Vec::new();
    for k in keys {
        nested(&k.ty, &mut next);
    }
    for n in next {
        match n {
            Nested::Table(t) => md_table(t, out, seen),
            Nested::Tagged(t) => md_tagged(t, out, seen),
        }
    }
}

fn md_table(t: &'static TableDecl, out: &mut String, seen: &mut BTreeSet<&'static str>) {
    if !seen.insert(t.id) {
        return;
    }
    out.push_str(&format!("**{}**\n\n", t.title));
    md_rows(t.keys(), out);
    md_follow(t.keys(), out, seen);
}

fn md_tagged(t: &'static Tagged, out: &mut String, seen: &mut BTreeSet<&'static str>) {
    if !seen.insert(t.id) {
        return;
    }
    let tag = t.tag[0].name;
    out.push_str(&format!(
        "**{}**: `{tag}` is one of {}",
        t.title,
        crate::config::quoted(&t.names())
    ));
    if t.common.is_empty() {
        out.push_str(".\n\n");
    } else {
        out.push_str("; every kind has these keys:\n\n");
        md_rows(t.common.iter(), out);
    }
    for v in t.variants {
        let when = v
            .when
            .map(|(k, val)| format!(", `{k} = \"{val}\"`"))
            .unwrap_or_default();
        out.push_str(&format!("*`{tag} = \"{}\"`{when}*: {}\n\n", v.name, v.help));
        md_rows(v.keys(), out);
    }
    md_follow(t.common.iter(), out, seen);
    for v in t.variants {
        md_follow(v.keys(), out, seen);
    }
}
