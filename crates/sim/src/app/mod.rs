//! Applications that drive TCP connections.

pub mod web;
