//! Applications that drive TCP connections: bulk transfers and ON/OFF
//! (`bulk.rs`), HTTP/1.0 web sessions and HTTP/1.1 clients (`web.rs`).
//! Each is a state machine that says what it asks of its connections and
//! when it wants to be woken; the engine (`crate::sim`) carries it out.

pub mod bulk;
pub mod web;
