//! `web` on kernel sockets: the simulator's HTTP/1.0 web sessions
//! (`aqmlab_sim::app::web::WebSession`, the same stream and draws, so the
//! i-th page of a session has the same server, objects and sizes as in the
//! simulator), each object a request and a response on new connections.
//!
//! Flow `f` is session slot `f` of its group. Every server host of the
//! group listens on port `FLOW_PORT_BASE + f` for the session's requests,
//! and with `new-connection` every client host listens on the same port for
//! its responses, so the router tells the session's packets apart by that
//! port as for any flow. A request is `packet_size` bytes (one packet)
//! whose first 16 say what a real request's URL would: the object's id,
//! the response's bytes (its packets of `packet_size`) and the client's
//! host. The objects, as the group's `response` says:
//!
//! ```text
//! same-connection: the client connects to the server and writes the
//!   request; the server, once it has read it whole, writes the response on
//!   the same connection and shuts down writing; the object is done when the
//!   client reads the end of the response (as the simulator's: the client
//!   has the last packet), then both ends close.
//! new-connection (ns-2's WebTraf): the client connects and writes the
//!   request; the server, once it has read it whole, closes that
//!   connection and connects to the client for the response, writes it and
//!   shuts down writing; the client reads it to its end and closes, and the
//!   object is done when the server reads that close (as the simulator's:
//!   the server has the acknowledgement of the last packet, a half round
//!   trip after the client has it).
//! ```
//!
//! One difference from the simulator remains in `new-connection`: the
//! response's connection opens when the server has read the request, where
//! ns-2 opens it when the client has the request's acknowledgement, half a
//! round trip later; no socket tells the client that moment. Each
//! connection is Linux's own from its SYN, as WebTraf resets its agents.
//!
//! An object's time runs from its launch to its completion, a page's from
//! its start to its last object's completion, those that end inside the
//! window, as the simulator's; the group's open connections (from
//! connect(2) to the opening end's close) are averaged over the window.

use std::cmp::Reverse;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use aqmlab_qdisc::Time;
use aqmlab_sim::app::web::{Action as WebAction, WebResponse, WebSession};

use super::tcp::set_congestion_control;
use super::*;

/// The bytes at the head of a request: object id, response bytes (both
/// u64) and the client's host (u32), little-endian.
pub const REQUEST_HEAD: usize = 20;

/// A web group's session slot.
pub struct WebFlow {
    pub cc: String,
    pub session: WebSession,
    /// The hosts of the group's servers (`src`) and clients (`dst`), in the
    /// order the session numbers them.
    pub servers: Vec<usize>,
    pub clients: Vec<usize>,
    pub payload_bytes: u32,
    pub response: WebResponse,
}

/// What a web socket is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A listener: for requests (at a server) or, with `new-connection`,
    /// for responses (at a client).
    Listen { requests: bool },
    /// The client's end of a request's connection.
    ClientRequest,
    /// The server's end of it.
    ServerRequest,
    /// `new-connection`: the server's end of a response's connection.
    ServerResponse,
    /// `new-connection`: the client's end of it.
    ClientResponse,
}

/// A web socket and what is left to do on it.
pub(super) struct WebConn {
    f: usize,
    role: Role,
    fd: OwnedFd,
    /// The host the socket is in.
    host: usize,
    object: u64,
    /// Bytes still to write; writing is shut down once they are written
    /// if `shut_after`.
    write_left: u64,
    shut_after: bool,
    /// The request: its head as written or read, and the bytes of it
    /// written or read so far.
    head: [u8; REQUEST_HEAD],
    done_bytes: u64,
    /// The server has started the response to the request it read.
    responded: bool,
    /// Opened by this end (counted among the group's open connections).
    opener: bool,
}

impl WebConn {
    /// A socket with nothing to write and nothing read yet.
    fn new(f: usize, role: Role, fd: OwnedFd, host: usize) -> WebConn {
        WebConn {
            f,
            role,
            fd,
            host,
            object: 0,
            write_left: 0,
            shut_after: false,
            head: [0; REQUEST_HEAD],
            done_bytes: 0,
            responded: false,
            opener: false,
        }
    }
}

/// A web session's objects in flight and open connections.
#[derive(Default)]
pub(super) struct WebState {
    pub(super) started: bool,
    /// (object, launch time) of the objects not done yet.
    in_flight: Vec<(u64, Time)>,
    /// Open connections, since when, and their integral over the window
    /// (connection-nanoseconds).
    open: u64,
    since: Time,
    pub(super) open_area_ns: u128,
}

impl WebState {
    pub(super) fn since(&self) -> Time {
        self.since
    }

    /// The number of open connections changes by `delta` at `now`.
    pub(super) fn open_changed(&mut self, delta: i64, now: Time, window: Window) {
        self.open_area_ns += self.open as u128 * window.overlap_ns(self.since, now) as u128;
        self.since = now;
        self.open = (self.open as i64 + delta) as u64;
    }
}

impl Traffic {
    fn web(&self, f: usize) -> &WebFlow {
        match &self.flows[f].plan.app {
            FlowApp::Web(w) => w,
            _ => unreachable!("a web flow"),
        }
    }

    fn request_bytes(&self, f: usize) -> u64 {
        aqmlab_sim::app::REQUEST_PKTS as u64 * self.web(f).payload_bytes as u64
    }

    /// Opens flow `f`'s listeners: for requests on each server host, and
    /// with `new-connection` for responses on each client host.
    pub(super) fn web_listen(&mut self, f: usize) -> io::Result<()> {
        let w = self.web(f);
        let mut at: Vec<(usize, bool)> = w.servers.iter().map(|&h| (h, true)).collect();
        if w.response == WebResponse::NewConnection {
            at.extend(w.clients.iter().map(|&h| (h, false)));
        }
        at.sort_unstable();
        at.dedup();
        for (host, requests) in at {
            self.enter(host)?;
            let l = socket(libc::SOCK_STREAM)?;
            setopt(l.as_raw_fd(), libc::SOL_SOCKET, libc::SO_REUSEADDR, &1i32, "SO_REUSEADDR")?;
            bind(l.as_raw_fd(), lab::host_ip(host), FLOW_PORT_BASE + f as u16)?;
            // SAFETY: listen(2) on our socket.
            check(unsafe { libc::listen(l.as_raw_fd(), 128) } as _, "listen")?;
            self.web_add(WebConn::new(f, Role::Listen { requests }, l, host), libc::EPOLLIN as u32)?;
        }
        Ok(())
    }

    /// Puts `c` in the slab and watches it for `events`.
    fn web_add(&mut self, c: WebConn, events: u32) -> io::Result<usize> {
        let slot = match self.web_free.pop() {
            Some(k) => k,
            None => {
                self.web_conns.push(None);
                self.web_conns.len() - 1
            }
        };
        self.watch(c.fd.as_raw_fd(), events, token(WEB, slot))?;
        self.web_conns[slot] = Some(c);
        Ok(slot)
    }

    /// Closes the socket in `slot` (closing takes it out of the epoll set).
    fn web_close(&mut self, slot: usize) {
        if let Some(c) = self.web_conns[slot].take() {
            if c.opener {
                let (now, window) = (self.now(), self.window);
                self.flows[c.f].web.open_changed(-1, now, window);
            }
            self.web_free.push(slot);
        }
    }

    /// Opens a connection from `from` to `to` for flow `f`, with the
    /// group's congestion control.
    fn web_connect(&mut self, f: usize, from: usize, to: usize) -> io::Result<OwnedFd> {
        self.enter(from)?;
        let s = socket(libc::SOCK_STREAM)?;
        set_congestion_control(s.as_raw_fd(), &self.web(f).cc)?;
        let sa = sockaddr(lab::host_ip(to), FLOW_PORT_BASE + f as u16);
        // SAFETY: `sa` is live for the call.
        let r = unsafe { libc::connect(s.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(io::Error::other(format!("connect for web flow {f}: {}", io::Error::last_os_error())));
        }
        let (now, window) = (self.now(), self.window);
        self.flows[f].web.open_changed(1, now, window);
        Ok(s)
    }

    /// Flow `f`'s session timer at `at` (its start, the first time).
    pub(super) fn web_timer(&mut self, f: usize, at: Time, end: Time) -> io::Result<()> {
        let mut actions = Vec::new();
        let started = std::mem::replace(&mut self.flows[f].web.started, true);
        let FlowApp::Web(w) = &mut self.flows[f].plan.app else { unreachable!("a web flow") };
        if started {
            w.session.timer(at, &mut actions);
        } else {
            w.session.start(at, &mut actions);
        }
        self.web_actions(f, &actions, end)
    }

    /// Carries out what flow `f`'s session asked for, then sets its timer.
    fn web_actions(&mut self, f: usize, actions: &[WebAction], end: Time) -> io::Result<()> {
        let now = self.now();
        for &a in actions {
            match a {
                WebAction::Launch {
                    object,
                    client,
                    server,
                    size_pkts,
                    ..
                } => {
                    let w = self.web(f);
                    let (c, s) = (w.clients[client as usize], w.servers[server as usize]);
                    let resp = size_pkts as u64 * w.payload_bytes as u64;
                    let fd = self.web_connect(f, c, s)?;
                    let mut head = [0u8; REQUEST_HEAD];
                    head[0..8].copy_from_slice(&object.to_le_bytes());
                    head[8..16].copy_from_slice(&resp.to_le_bytes());
                    head[16..20].copy_from_slice(&(c as u32).to_le_bytes());
                    let write_left = self.request_bytes(f);
                    self.flows[f].web.in_flight.push((object, now));
                    // Edge-triggered both ways: the request is written once
                    // the connection is up, and the end read when it comes.
                    self.web_add(
                        WebConn {
                            object,
                            write_left,
                            head,
                            opener: true,
                            ..WebConn::new(f, Role::ClientRequest, fd, c)
                        },
                        (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32,
                    )?;
                }
                WebAction::PageDone { started, now, .. } => {
                    if self.window.contains(now) {
                        self.flows[f].stats.page_times.push((now.0 - started.0) as f64 * 1e-9);
                    }
                }
                WebAction::SessionDone => {}
            }
        }
        if let Some(at) = self.web(f).session.next_timer() {
            if at < end {
                self.timers.push(Reverse((at, f)));
            }
        }
        self.arm()
    }

    /// Object `object` of flow `f` is done now.
    fn web_object_done(&mut self, f: usize, object: u64, end: Time) -> io::Result<()> {
        let now = self.now();
        let web = &mut self.flows[f].web;
        let Some(k) = web.in_flight.iter().position(|o| o.0 == object) else {
            return Ok(());
        };
        let (_, launched) = web.in_flight.swap_remove(k);
        if self.window.contains(now) {
            self.flows[f].stats.transfer_times.push((now.0 - launched.0) as f64 * 1e-9);
        }
        let mut actions = Vec::new();
        let FlowApp::Web(w) = &mut self.flows[f].plan.app else { unreachable!("a web flow") };
        w.session.object_done(object, now, &mut actions);
        self.web_actions(f, &actions, end)
    }

    /// Socket `slot` is ready: accepts on a listener; otherwise writes what
    /// is left, then reads until EAGAIN, and acts on what it read.
    pub(super) fn web_ready(&mut self, slot: usize, end: Time) -> io::Result<()> {
        let Some(c) = &self.web_conns[slot] else { return Ok(()) };
        let (f, role) = (c.f, c.role);
        if let Role::Listen { requests } = role {
            return self.web_accept(slot, requests, end);
        }
        self.web_write(slot);
        let inside = self.window.contains(self.now());
        let request = self.request_bytes(f);
        let mut ended = false;
        loop {
            let c = self.web_conns[slot].as_mut().expect("a live socket");
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::recv(c.fd.as_raw_fd(), self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0) };
            if n == 0 {
                ended = true;
                break;
            }
            if n < 0 {
                if io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock {
                    // Reset or refused: nothing more comes on it.
                    ended = true;
                }
                break;
            }
            let n = n as u64;
            let st = &mut self.flows[f].stats;
            match role {
                Role::ServerRequest => {
                    let at = c.done_bytes as usize;
                    if at < REQUEST_HEAD {
                        let k = (n as usize).min(REQUEST_HEAD - at);
                        c.head[at..at + k].copy_from_slice(&self.buf[..k]);
                    }
                    c.done_bytes += n;
                    if inside {
                        st.request_bytes += n;
                    }
                }
                Role::ClientRequest | Role::ClientResponse => {
                    st.transfer_bytes += n;
                    if inside {
                        st.delivered_bytes += n;
                    }
                }
                Role::ServerResponse | Role::Listen { .. } => {}
            }
        }
        let c = self.web_conns[slot].as_ref().expect("a live socket");
        if role == Role::ServerRequest && c.done_bytes >= request && !c.responded {
            return self.web_respond(slot);
        }
        if !ended {
            return Ok(());
        }
        let object = c.object;
        self.web_close(slot);
        let same = self.web(f).response == WebResponse::SameConnection;
        match role {
            // The client has the whole response, or the server the
            // client's close after it.
            Role::ClientRequest if same => self.web_object_done(f, object, end),
            Role::ServerResponse => self.web_object_done(f, object, end),
            _ => Ok(()),
        }
    }

    /// The server has read a whole request on `slot`: the response goes
    /// out on the same connection or a new one.
    fn web_respond(&mut self, slot: usize) -> io::Result<()> {
        let c = self.web_conns[slot].as_mut().expect("a live socket");
        let f = c.f;
        let object = u64::from_le_bytes(c.head[0..8].try_into().expect("8 bytes"));
        let resp = u64::from_le_bytes(c.head[8..16].try_into().expect("8 bytes"));
        let client = u32::from_le_bytes(c.head[16..20].try_into().expect("4 bytes")) as usize;
        c.object = object;
        c.responded = true;
        let server = c.host;
        if self.web(f).response == WebResponse::SameConnection {
            let c = self.web_conns[slot].as_mut().expect("a live socket");
            c.write_left = resp;
            c.shut_after = true;
            self.web_write(slot);
            return Ok(());
        }
        // The client's end reads the close and closes too.
        self.web_close(slot);
        let fd = self.web_connect(f, server, client)?;
        let slot = self.web_add(
            WebConn {
                object,
                write_left: resp,
                shut_after: true,
                responded: true,
                opener: true,
                ..WebConn::new(f, Role::ServerResponse, fd, server)
            },
            (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32,
        )?;
        self.web_write(slot);
        Ok(())
    }

    fn web_accept(&mut self, slot: usize, requests: bool, end: Time) -> io::Result<()> {
        loop {
            let c = self.web_conns[slot].as_ref().expect("a listener");
            let (f, host) = (c.f, c.host);
            // SAFETY: accept4 on our listener; the result is owned at once.
            let fd = unsafe { libc::accept4(c.fd.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
            if fd < 0 {
                return Ok(());
            }
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            if requests {
                // Its responses use the group's congestion control.
                set_congestion_control(fd.as_raw_fd(), &self.web(f).cc)?;
            }
            let role = if requests { Role::ServerRequest } else { Role::ClientResponse };
            let new = self.web_add(
                WebConn::new(f, role, fd, host),
                (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32,
            )?;
            // Data may have come with the connection.
            self.web_ready(new, end)?;
        }
    }

    /// Writes what is left on `slot` until done or EAGAIN (a request's head
    /// first, in the same write as the rest, so that Nagle's algorithm does
    /// not hold the rest back for a round trip); then shuts writing down if
    /// asked.
    fn web_write(&mut self, slot: usize) {
        let c = self.web_conns[slot].as_mut().expect("a live socket");
        while c.write_left > 0 {
            let at = c.done_bytes as usize;
            if c.role == Role::ClientRequest && at < REQUEST_HEAD {
                self.buf[..REQUEST_HEAD - at].copy_from_slice(&c.head[at..]);
            }
            let want = (self.buf.len() as u64).min(c.write_left) as usize;
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::send(c.fd.as_raw_fd(), self.buf.as_ptr() as *const libc::c_void, want, libc::MSG_NOSIGNAL) };
            if n <= 0 {
                return;
            }
            c.write_left -= n as u64;
            if c.role == Role::ClientRequest {
                c.done_bytes += n as u64;
            }
        }
        if c.shut_after {
            c.shut_after = false;
            // SAFETY: shutdown of our socket.
            unsafe { libc::shutdown(c.fd.as_raw_fd(), libc::SHUT_WR) };
        }
    }
}
