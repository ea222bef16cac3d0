//! Reading configuration values: a path-tracking reader over JSON values and
//! the parsers of quantities with units.
//!
//! Scenario files are TOML; the Python layer parses them (and applies
//! `--set` overrides) and hands the engine the same tree as JSON. This module
//! reads that tree by hand rather than through serde's derive because the
//! scenario schema is made of tagged alternatives (topology, qdisc and
//! traffic kinds, distributions) whose errors serde reports without the key
//! path, and because a user should see every problem of a file at once, not
//! the first one. Every error names the full key path, the value given and
//! what is allowed. The keys of each table are declared once, beside its
//! reader, in the terms of [`crate::config::schema`]; a [`Table`] knows only the
//! keys declared to it.

use std::fmt;

use aqmlab_qdisc::{Duration, Limit};
use serde_json::{Map, Value};

pub mod dist;
pub mod schema;

use crate::config::schema::Key;

/// One problem in a scenario: where it is and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Full key path, e.g. `topology.bottleneck.rate` or `traffic[1].count`.
    pub path: String,
    /// The value given and what is allowed.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Collects every problem found while reading a scenario.
#[derive(Debug, Default)]
pub struct Cx {
    pub errors: Vec<ConfigError>,
}

impl Cx {
    pub fn err(&mut self, path: &str, message: impl Into<String>) {
        self.errors.push(ConfigError {
            path: path.to_string(),
            message: message.into(),
        });
    }
}

/// Joins a key onto a path: `join("a.b", "c") == "a.b.c"`.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A JSON value as a user would write it in the file, for messages.
pub fn show(v: &Value) -> String {
    match v {
        Value::Object(_) => "a table".to_string(),
        Value::Array(_) => "a list".to_string(),
        other => other.to_string(),
    }
}

/// A TOML table being read. Its reader first declares every key the table
/// may have ([`Table::declare`], from the table's [`Key`] declarations),
/// so that [`Table::finish`] can reject the other keys and list the allowed
/// ones, and a missing required key's error can say what the key is.
pub struct Table<'v> {
    pub path: String,
    map: &'v Map<String, Value>,
    declared: Vec<&'static Key>,
    /// Required keys found missing, with the index of their error, so that a
    /// misspelling of one is reported once, as the misspelling.
    missing: Vec<(&'static str, usize)>,
    /// Keys the reader asked for that no declaration lists: the reader and
    /// its declaration are out of step (a bug, reported by `finish`).
    undeclared: Vec<&'static str>,
}

impl<'v> Table<'v> {
    /// Starts reading `value` as a table; an error if it is not one.
    pub fn new(cx: &mut Cx, value: &'v Value, path: &str) -> Option<Table<'v>> {
        match value {
            Value::Object(map) => Some(Table {
                path: path.to_string(),
                map,
                declared: Vec::new(),
                missing: Vec::new(),
                undeclared: Vec::new(),
            }),
            other => {
                cx.err(path, format!("expected a table, got {}", show(other)));
                None
            }
        }
    }

    /// Declares keys the table may have, before any of them is read. A
    /// reader stops at the first required key it cannot read, and the keys
    /// it would have asked for after it must still count as known: otherwise
    /// valid keys are reported as unknown beside the one missing, and the
    /// "allowed here" list is cut short.
    pub fn declare(&mut self, keys: &'static [Key]) {
        self.declared.extend(keys);
    }

    /// Declares keys that come in parts (see [`crate::config::schema::TableDecl`]).
    pub fn declare_parts(&mut self, parts: &'static [&'static [Key]]) {
        for keys in parts {
            self.declare(keys);
        }
    }

    /// The declaration of `key`, if declared.
    pub fn declared_key(&self, key: &str) -> Option<&'static Key> {
        self.declared.iter().copied().find(|k| k.name == key)
    }

    /// The string value of `key` without reading it (for a key that chooses
    /// which keys to declare, before they are).
    pub fn map_value(&self, key: &str) -> Option<&'v str> {
        self.map.get(key).and_then(Value::as_str)
    }

    pub fn key_path(&self, key: &str) -> String {
        join(&self.path, key)
    }

    /// The raw value of `key`, if present.
    pub fn raw(&mut self, key: &'static str) -> Option<&'v Value> {
        if self.declared_key(key).is_none() && !self.undeclared.contains(&key) {
            self.undeclared.push(key);
        }
        self.map.get(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// Reads an optional key with `parse`; a parse error is recorded and
    /// gives `None`, like an absent key.
    pub fn opt<T>(
        &mut self,
        cx: &mut Cx,
        key: &'static str,
        parse: impl FnOnce(&Value) -> Result<T, String>,
    ) -> Option<T> {
        let v = self.raw(key)?;
        match parse(v) {
            Ok(t) => Some(t),
            Err(msg) => {
                cx.err(&self.key_path(key), msg);
                None
            }
        }
    }

    /// Reads a required key; its absence is an error.
    pub fn req<T>(
        &mut self,
        cx: &mut Cx,
        key: &'static str,
        parse: impl FnOnce(&Value) -> Result<T, String>,
    ) -> Option<T> {
        if !self.has(key) {
            self.report_missing(cx, key);
            return None;
        }
        self.opt(cx, key, parse)
    }

    /// Records that the required `key` is absent, saying what it is (from
    /// its declaration).
    pub fn report_missing(&mut self, cx: &mut Cx, key: &'static str) {
        let what = match self.declared_key(key) {
            Some(k) => k.missing_text(),
            None => {
                self.undeclared.push(key);
                "required".to_string()
            }
        };
        self.missing.push((key, cx.errors.len()));
        cx.err(&self.key_path(key), format!("missing; {what}"));
    }

    /// [`Table::finish`] for a table whose `kind` (or `dist`) says which keys
    /// it may have: when that is missing or unknown, the other keys cannot
    /// be judged, so nothing more is reported.
    pub fn finish_if_kind(self, cx: &mut Cx, kind_known: bool) {
        if kind_known {
            self.finish(cx);
        }
    }

    /// Rejects every key that was not declared, suggesting the nearest
    /// allowed one. A misspelt required key replaces the "missing" error of
    /// the key it was meant to be.
    pub fn finish(self, cx: &mut Cx) {
        for key in &self.undeclared {
            cx.err(
                &self.key_path(key),
                "is read but not declared: aqmlab's reader of this table and its declaration are out of step (a bug)",
            );
        }
        let mut allowed: Vec<&str> = self.declared.iter().map(|k| k.name).collect();
        allowed.sort_unstable();
        allowed.dedup();
        // The keys found missing come first, so that a misspelling as close
        // to one of them as to another allowed key is taken for the missing one.
        let candidates: Vec<&str> = self
            .missing
            .iter()
            .map(|(m, _)| *m)
            .chain(allowed.iter().copied())
            .collect();
        for key in self.map.keys() {
            if self.declared_key(key).is_some() {
                continue;
            }
            let guess = nearest(key, &candidates);
            let hint = guess.map(|s| format!("; did you mean \"{s}\"?")).unwrap_or_default();
            let error = ConfigError {
                path: self.key_path(key),
                message: format!("unknown key \"{key}\"{hint} (allowed here: {})", allowed.join(", ")),
            };
            match guess.and_then(|g| self.missing.iter().find(|(m, _)| *m == g)) {
                Some(&(_, i)) => cx.errors[i] = error,
                None => cx.errors.push(error),
            }
        }
    }
}

/// The allowed word closest to `word` by edit distance, if close enough to
/// be a likely misspelling; on a tie, the first in `allowed`.
pub fn nearest<'a>(word: &str, allowed: &[&'a str]) -> Option<&'a str> {
    if let Some(same) = allowed.iter().find(|a| a.eq_ignore_ascii_case(word)) {
        return Some(same); // "START" for "start"
    }
    let (best, d) = allowed
        .iter()
        .map(|a| (*a, edit_distance(word, a)))
        .min_by_key(|&(_, d)| d)?;
    // One edit in a short word (at most 5 letters) already makes another
    // word: "ecn" is two edits from "on".
    (d <= 1.max(word.len() / 3)).then_some(best)
}

/// Edits (insertions, deletions, substitutions and swaps of two adjacent
/// letters) that turn `a` into `b`: the optimal string alignment distance, in
/// which "mni" is one swap from "min" and two substitutions from "max".
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Rows i - 2, i - 1 and i of the table of distances between prefixes.
    let mut before: Vec<usize> = Vec::new();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 0..a.len() {
        let mut cur = vec![i + 1; b.len() + 1];
        for j in 0..b.len() {
            cur[j + 1] = (prev[j] + usize::from(a[i] != b[j]))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
            if i > 0 && j > 0 && a[i] == b[j - 1] && a[i - 1] == b[j] {
                cur[j + 1] = cur[j + 1].min(before[j - 1] + 1);
            }
        }
        before = std::mem::replace(&mut prev, cur);
    }
    prev[b.len()]
}

// ---------------------------------------------------------------------------
// Scalars

pub fn parse_str(v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("expected a string, got {}", show(v)))
}

pub fn parse_bool(v: &Value) -> Result<bool, String> {
    v.as_bool()
        .ok_or_else(|| format!("expected true or false, got {}", show(v)))
}

/// A whole number at least `min`.
pub fn parse_count(v: &Value, min: u64) -> Result<u64, String> {
    match v.as_u64() {
        Some(n) if n >= min => Ok(n),
        _ => match v {
            Value::Number(_) => Err(format!("expected a whole number >= {min}, got {v}")),
            _ => Err(format!("expected a whole number >= {min}, got {}", show(v))),
        },
    }
}

/// A dimensionless real number in [lo, hi]; `f64::MIN` and `f64::MAX` stand
/// for no bound, `f64::MIN_POSITIVE` for "greater than 0".
pub fn parse_real_in(v: &Value, lo: f64, hi: f64) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x >= lo && x <= hi => Ok(x),
        _ => {
            let expected = match (lo, hi) {
                (f64::MIN, f64::MAX) => "a number".to_string(),
                (f64::MIN_POSITIVE, f64::MAX) => "a number greater than 0".to_string(),
                (lo, f64::MAX) => format!("a number >= {lo}"),
                (f64::MIN, hi) => format!("a number <= {hi}"),
                (lo, hi) => format!("a number in [{lo}, {hi}]"),
            };
            Err(format!("expected {expected}, got {}", show(v)))
        }
    }
}

/// One of a fixed set of words.
pub fn parse_choice<'a>(v: &Value, allowed: &[&'a str]) -> Result<&'a str, String> {
    let s = v
        .as_str()
        .ok_or_else(|| format!("expected one of {}, got {}", quoted(allowed), show(v)))?;
    allowed.iter().copied().find(|a| *a == s).ok_or_else(|| {
        let hint = nearest(s, allowed)
            .map(|n| format!("; did you mean \"{n}\"?"))
            .unwrap_or_default();
        format!("\"{s}\" is not allowed; expected one of {}{hint}", quoted(allowed))
    })
}

pub fn quoted(words: &[&str]) -> String {
    words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(", ")
}

// ---------------------------------------------------------------------------
// Quantities with units. Prefixes are decimal (1 KB = 1000 B, 1 Mbps = 1e6
// bit/s); KiB, MiB and GiB are binary.

/// Splits `"10.5Mbps"` or `"1e-3s"` into the number and the unit: the
/// longest leading run that reads as a number, then the rest. (No unit
/// starts with a digit, a sign, a point or the letter e.)
pub(crate) fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let numeric = |c: char| c.is_ascii_digit() || matches!(c, '.' | '_' | '+' | '-' | 'e' | 'E');
    let run = s.find(|c: char| !numeric(c)).unwrap_or(s.len());
    (1..=run).rev().filter(|&end| s.is_char_boundary(end)).find_map(|end| {
        let number: String = s[..end].chars().filter(|&c| c != '_').collect();
        number.parse::<f64>().ok().map(|x| (x, s[end..].trim()))
    })
}

/// The largest value of each kind of quantity aqmlab accepts, in base units.
/// Times stop at 10^9 s (31 years) so that nanosecond arithmetic never comes
/// near overflow.
pub const MAX_TIME_NS: f64 = 1e18;
pub const MAX_RATE_BPS: f64 = 1e15;
pub const MAX_SIZE_BYTES: f64 = 1e15;

fn unit_quantity(v: &Value, kind: &str, example: &str, units: &[(&str, f64)]) -> Result<f64, String> {
    let (max, max_text) = match kind {
        "time" => (MAX_TIME_NS, "1e9s"),
        "rate" => (MAX_RATE_BPS, "1e6Gbps"),
        _ => (MAX_SIZE_BYTES, "1e15B"),
    };
    let names: Vec<&str> = units.iter().map(|(u, _)| *u).collect();
    let expected = format!(
        "a {kind} as a string with a unit ({}), e.g. \"{example}\"",
        names.join(", ")
    );
    let s = match v {
        Value::String(s) => s,
        Value::Number(_) => return Err(format!("expected {expected}, got the bare number {v}")),
        other => return Err(format!("expected {expected}, got {}", show(other))),
    };
    let (x, unit) = split_number(s).ok_or_else(|| format!("\"{s}\" is not {expected}"))?;
    let scale = units.iter().find(|(u, _)| *u == unit).map(|(_, k)| *k).ok_or_else(|| {
        let other_kind = [("time", TIME_UNITS), ("rate", RATE_UNITS), ("size", SIZE_UNITS)]
            .into_iter()
            .find(|(k, table)| *k != kind && table.iter().any(|(u, _)| *u == unit));
        if unit.is_empty() {
            format!("\"{s}\" has no unit; expected {expected}")
        } else if let Some((other, _)) = other_kind {
            // No "did you mean": the nearest unit of this kind ("s" for "B") is a guess about the number too.
            format!("\"{s}\" is a {other}, not a {kind}; expected {expected}")
        } else {
            let hint = nearest(unit, &names)
                .map(|n| format!("; did you mean \"{n}\"?"))
                .unwrap_or_default();
            format!("\"{s}\" has unknown unit \"{unit}\"; expected {expected}{hint}")
        }
    })?;
    if x.is_nan() || x < 0.0 {
        return Err(format!("\"{s}\" must not be negative"));
    }
    let value = x * scale;
    if !value.is_finite() || value > max {
        return Err(format!("\"{s}\" is too large; at most {max_text}"));
    }
    Ok(value)
}

pub(crate) const TIME_UNITS: &[(&str, f64)] = &[("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9), ("min", 60e9)];
pub(crate) const RATE_UNITS: &[(&str, f64)] =
    &[("bps", 1.0), ("kbps", 1e3), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9)];
pub(crate) const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("KB", 1e3),
    ("kB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
];

/// A time such as `"20ms"`, in nanoseconds (rounded).
pub fn parse_duration(v: &Value) -> Result<Duration, String> {
    unit_quantity(v, "time", "20ms", TIME_UNITS).map(|ns| Duration(ns.round() as u64))
}

/// A time in seconds as a real number (for distributions of times).
pub fn parse_time_secs(v: &Value) -> Result<f64, String> {
    unit_quantity(v, "time", "20ms", TIME_UNITS).map(|ns| ns / 1e9)
}

/// A strictly positive bit rate such as `"10Mbps"`, in bit/s.
pub fn parse_rate(v: &Value) -> Result<f64, String> {
    let r = unit_quantity(v, "rate", "10Mbps", RATE_UNITS)?;
    if r <= 0.0 {
        return Err(format!("{} must be a positive rate", show(v)));
    }
    Ok(r)
}

/// A size such as `"1500B"` or `"2.3KB"`, in bytes (real).
pub fn parse_bytes_f64(v: &Value) -> Result<f64, String> {
    unit_quantity(v, "size", "1500B", SIZE_UNITS)
}

/// A packet size: whole bytes, at least 1.
pub fn parse_packet_size(v: &Value) -> Result<u32, String> {
    let b = parse_bytes_f64(v)?;
    if b < 1.0 || b.fract() != 0.0 || b > u32::MAX as f64 {
        return Err(format!("{} must be a whole number of bytes, at least 1B", show(v)));
    }
    Ok(b as u32)
}

/// A whole number of packets, written `20` or `"20pkt"`.
pub fn parse_pkts(v: &Value) -> Result<u32, String> {
    const EXPECTED: &str = "a whole number of packets, e.g. 20 or \"20pkt\"";
    let n = match v {
        Value::Number(_) => v.as_u64(),
        Value::String(s) => split_number(s)
            .filter(|(x, unit)| (*unit == "pkt" || *unit == "pkts") && x.fract() == 0.0 && *x >= 0.0)
            .map(|(x, _)| x as u64),
        _ => None,
    };
    n.filter(|&n| n <= u32::MAX as u64)
        .map(|n| n as u32)
        .ok_or_else(|| format!("expected {EXPECTED}, got {}", show(v)))
}

/// A packet rate, written `"10pps"` or `"10pkt/s"`, in packets per second.
pub fn parse_packet_rate(v: &Value) -> Result<f64, String> {
    const EXPECTED: &str = "a packet rate such as \"10pps\" or \"10pkt/s\"";
    let s = v
        .as_str()
        .ok_or_else(|| format!("expected {EXPECTED}, got {}", show(v)))?;
    match split_number(s) {
        Some((x, "pps" | "pkt/s")) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("\"{s}\" is not {EXPECTED}")),
    }
}

/// A buffer limit: `"300pkt"`, a size in bytes, or `"inf"`.
pub fn parse_limit(v: &Value) -> Result<Limit, String> {
    const EXPECTED: &str = "a buffer limit in packets (\"300pkt\"), in bytes (\"450000B\", \"450KB\") or \"inf\"";
    let s = v
        .as_str()
        .ok_or_else(|| format!("expected {EXPECTED}, got {}", show(v)))?;
    if s.trim() == "inf" {
        return Ok(Limit::Unlimited);
    }
    if let Some((x, unit)) = split_number(s) {
        if unit == "pkt" || unit == "pkts" || unit == "p" {
            if x < 1.0 || x.fract() != 0.0 || x > u32::MAX as f64 {
                return Err(format!("\"{s}\" must be a whole number of packets, at least 1"));
            }
            return Ok(Limit::Packets(x as u32));
        }
    }
    let b = unit_quantity(v, "size", "450000B", SIZE_UNITS).map_err(|_| format!("\"{s}\" is not {EXPECTED}"))?;
    if b < 1.0 || b.fract() != 0.0 {
        return Err(format!("\"{s}\" must be a whole number of bytes, at least 1B"));
    }
    Ok(Limit::Bytes(b as u64))
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::config::schema::Ty;
    use serde_json::json;

    #[test]
    fn test_units_parse_to_base_units() {
        assert_eq!(parse_duration(&json!("20ms")), Ok(Duration(20_000_000)));
        assert_eq!(parse_duration(&json!("0.1ms")), Ok(Duration(100_000)));
        assert_eq!(parse_duration(&json!("2min")), Ok(Duration(120_000_000_000)));
        assert_eq!(parse_rate(&json!("10Mbps")), Ok(10e6));
        assert_eq!(parse_rate(&json!("250kbps")), Ok(250e3));
        assert_eq!(parse_bytes_f64(&json!("2.3KB")), Ok(2300.0));
        assert_eq!(parse_bytes_f64(&json!("1KiB")), Ok(1024.0));
        assert_eq!(parse_limit(&json!("300pkt")), Ok(Limit::Packets(300)));
        assert_eq!(parse_limit(&json!("450KB")), Ok(Limit::Bytes(450_000)));
        assert_eq!(parse_limit(&json!("inf")), Ok(Limit::Unlimited));
        assert_eq!(parse_pkts(&json!(20)), Ok(20));
        assert_eq!(parse_pkts(&json!("25pkt")), Ok(25));
        assert!(parse_pkts(&json!("25B")).is_err());
        assert_eq!(parse_packet_rate(&json!("10pps")), Ok(10.0));
        assert_eq!(parse_packet_rate(&json!("2.5pkt/s")), Ok(2.5));
    }

    #[test]
    fn test_unit_errors_name_value_and_allowed() {
        let e = parse_rate(&json!("10Mbs")).unwrap_err();
        assert!(
            e.contains("\"10Mbs\"") && e.contains("Mbps") && e.contains("did you mean"),
            "{e}"
        );
        let e = parse_rate(&json!("-5Mbps")).unwrap_err();
        assert!(e.contains("negative"), "{e}");
        let e = parse_duration(&json!("1e999s")).unwrap_err();
        assert!(e.contains("too large") && e.contains("1e9s"), "{e}");
        let e = parse_duration(&json!("2e9s")).unwrap_err();
        assert!(e.contains("too large"), "{e}");
        let e = parse_duration(&json!(5)).unwrap_err();
        assert!(e.contains("bare number 5"), "{e}");
        let e = parse_packet_size(&json!("0B")).unwrap_err();
        assert!(e.contains("at least 1B"), "{e}");
        let e = parse_duration(&json!("0B")).unwrap_err();
        assert!(e.starts_with("\"0B\" is a size, not a time; expected a time"), "{e}");
        let e = parse_bytes_f64(&json!("500ms")).unwrap_err();
        assert!(e.starts_with("\"500ms\" is a time, not a size"), "{e}");
    }

    #[test]
    fn test_short_words_get_no_far_fetched_suggestion() {
        assert_eq!(nearest("ecn", &["on", "off", "rate"]), None);
        assert_eq!(nearest("mx", &["max", "min"]), Some("max"));
        assert_eq!(nearest("bottlenek", &["bottleneck"]), Some("bottleneck"));
        assert_eq!(nearest("delayed_akc", &["delayed_ack"]), Some("delayed_ack"));
        assert_eq!(nearest("PACKET_SIZE", &["packet_size", "size"]), Some("packet_size"));
    }

    #[test]
    fn test_swapped_letters_suggest_the_missing_key() {
        // "mni" is as far from "max" as from "min" by substitutions alone.
        let v = json!({"dist": "uniform", "mni": "0s", "max": "1s"});
        let mut cx = Cx::default();
        let mut t = Table::new(&mut cx, &v, "start").unwrap();
        const KEYS: &[Key] = &[
            Key::req("dist", Ty::Text, "the distribution"),
            Key::req("min", Ty::Time, "the lower bound"),
            Key::req("max", Ty::Time, "the upper bound"),
        ];
        t.declare(KEYS);
        t.req(&mut cx, "min", |_| Ok(()));
        t.raw("max");
        t.raw("dist");
        t.finish(&mut cx);
        assert_eq!(cx.errors.len(), 1, "{:?}", cx.errors);
        assert_eq!(cx.errors[0].path, "start.mni");
        assert!(
            cx.errors[0].message.contains("did you mean \"min\""),
            "{}",
            cx.errors[0].message
        );
    }

    #[test]
    fn test_edit_distance_counts_a_swap_as_one() {
        assert_eq!(edit_distance("mni", "min"), 1);
        assert_eq!(edit_distance("mni", "max"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("senders", "sendrs"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }

    #[test]
    fn test_number_range_errors_print_no_float_limits() {
        let e = parse_real_in(&json!("0.1"), f64::MIN, f64::MAX).unwrap_err();
        assert_eq!(e, "expected a number, got \"0.1\"");
        let e = parse_real_in(&json!(-1), 0.0, f64::MAX).unwrap_err();
        assert_eq!(e, "expected a number >= 0, got -1");
        let e = parse_real_in(&json!(0), f64::MIN_POSITIVE, f64::MAX).unwrap_err();
        assert_eq!(e, "expected a number greater than 0, got 0");
        let e = parse_real_in(&json!(1.5), 0.0, 1.0).unwrap_err();
        assert_eq!(e, "expected a number in [0, 1], got 1.5");
    }

    #[test]
    fn test_unknown_key_suggests_nearest() {
        const KEYS: &[Key] = &[
            Key::req("bottleneck", Ty::Text, "the bottleneck"),
            Key::req("senders", Ty::Text, "the senders"),
        ];
        let v = json!({"bottlenek": 1});
        let mut cx = Cx::default();
        let mut t = Table::new(&mut cx, &v, "topology").unwrap();
        t.declare(KEYS);
        t.raw("bottleneck");
        t.raw("senders");
        t.finish(&mut cx);
        assert_eq!(cx.errors.len(), 1);
        assert_eq!(cx.errors[0].path, "topology.bottlenek");
        assert!(
            cx.errors[0].message.contains("did you mean \"bottleneck\""),
            "{}",
            cx.errors[0].message
        );
    }

    #[test]
    fn test_reading_an_undeclared_key_is_reported_as_a_bug() {
        const KEYS: &[Key] = &[Key::opt("rate", Ty::Rate, "", "the rate")];
        let v = json!({"rate": "1Mbps", "delay": "1ms"});
        let mut cx = Cx::default();
        let mut t = Table::new(&mut cx, &v, "link").unwrap();
        t.declare(KEYS);
        t.raw("rate");
        t.raw("delay");
        t.finish(&mut cx);
        let paths: Vec<&str> = cx.errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["link.delay", "link.delay"]);
        assert!(
            cx.errors[0].message.contains("not declared"),
            "{}",
            cx.errors[0].message
        );
        assert!(cx.errors[1].message.contains("unknown key"), "{}", cx.errors[1].message);
    }

    #[test]
    fn test_edit_distance() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
