//! The network: nodes, links with their queue disciplines, and static routes.

pub mod build;
pub mod link;
pub mod qdisc;
pub mod topology;

/// Traffic classes: the RED+Tail classifier and per-class metrics use them.
pub const CLASSES: &[&str] = &["bulk", "realtime"];
