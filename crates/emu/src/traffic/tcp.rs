//! TCP applications on kernel sockets: `ftp`, `file` and `onoff`, driven by
//! the simulator's own machine (`aqmlab_sim::app::bulk::Bulk`), with the
//! kernel's congestion control; and the connections' common parts (opening,
//! accepting, the congestion control and TCP_INFO a socket reports), which
//! the HTTP kinds use too.
//!
//! The machine's actions on a kernel socket:
//! - Start / Open { size }: a new connection, written until the transfer's
//!   bytes are in the socket (then SHUT_WR) or, unlimited, for ever;
//! - Pause / Resume (ON/OFF): stop and restart writing. The kernel sends
//!   what is already in the socket, so an ON/OFF socket keeps little
//!   unsent data (TCP_NOTSENT_LOWAT = [`ONOFF_UNSENT_BYTES`], one write of
//!   at most that per wake-up): at most about twice that leaves after an
//!   ON period ends, where the simulator's sender sends only what it had
//!   sent once already;
//! - Send { pkts } (`onoff` with a rate): `pkts` application packets of the
//!   group's `packet_size` more to write; the first opens the connection.
//!   The socket sends them as its window allows, as ns-2's `sendmsg` hands
//!   them to its agent, and the schedule never waits for TCP;
//! - a transfer is delivered when the receiver reads the sender's FIN after
//!   its last byte (as the simulator's, at the receiving end); `file` then
//!   closes both ends (Close) and the next connection opens a drawn gap
//!   later. A transfer's time runs from its connect(2) to that read.

use std::cmp::Reverse;
use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use aqmlab_qdisc::Time;
use aqmlab_sim::app::bulk::BulkAction;

use super::*;

impl Traffic {
    /// Carries out what flow `f`'s application asked for, then sets its
    /// next timer.
    pub(super) fn tcp_actions(&mut self, f: usize, actions: &[BulkAction], end: Time) -> io::Result<()> {
        for &a in actions {
            match a {
                BulkAction::Start => {
                    let FlowApp::Tcp { app, .. } = &self.flows[f].plan.app else { unreachable!("a TCP flow") };
                    let size = app.size_bytes();
                    self.connect(f, size)?;
                }
                BulkAction::Open { size_bytes } => self.connect(f, Some(size_bytes))?,
                BulkAction::Pause => {
                    self.flows[f].paused = true;
                    self.want_writes(f, false);
                }
                BulkAction::Resume => {
                    self.flows[f].paused = false;
                    self.want_writes(f, true);
                }
                BulkAction::Close => {
                    let fl = &mut self.flows[f];
                    if let Some(s) = &fl.sender {
                        fl.stats.congestion_control = congestion_control(s.as_raw_fd());
                    }
                    // Closing a descriptor takes it out of the epoll set.
                    fl.sender = None;
                    fl.sink = None;
                }
                BulkAction::Send { pkts } => {
                    let FlowApp::Tcp { paced_bytes: Some(bytes), .. } = self.flows[f].plan.app else { unreachable!("a paced application") };
                    if self.flows[f].sender.is_none() {
                        self.connect(f, Some(0))?;
                    }
                    let fl = &mut self.flows[f];
                    fl.target = Some(fl.target.unwrap_or(0) + pkts * bytes as u64);
                    self.want_writes(f, true);
                }
            }
        }
        if let FlowApp::Tcp { app, .. } = &self.flows[f].plan.app {
            if let Some(at) = app.next_timer() {
                if at < end {
                    self.timers.push(Reverse((at, f)));
                }
            }
        }
        // Called from a delivery too, not only from the timer.
        self.arm()
    }

    /// Starts or stops watching flow `f`'s sender for room to write.
    pub(super) fn want_writes(&mut self, f: usize, on: bool) {
        if let Some(s) = &self.flows[f].sender {
            let mut ev = libc::epoll_event {
                events: if on { libc::EPOLLOUT as u32 } else { 0 },
                u64: token(TCP_SEND, f),
            };
            // SAFETY: `ev` is live for the call; the socket is in the set
            // (or already shut down, when this fails harmlessly).
            unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_MOD, s.as_raw_fd(), &mut ev) };
        }
    }

    /// Opens a TCP connection for flow `f` from its source host, to carry
    /// `size` bytes (None: unlimited).
    pub(super) fn connect(&mut self, f: usize, size: Option<u64>) -> io::Result<()> {
        let (src, dst) = (self.flows[f].plan.src_host, self.flows[f].plan.dst_host);
        self.enter(src)?;
        let s = socket(libc::SOCK_STREAM)?;
        if let FlowApp::Tcp { bounded_unsent: true, .. } = &self.flows[f].plan.app {
            setopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, &(ONOFF_UNSENT_BYTES as i32), "TCP_NOTSENT_LOWAT")?;
        }
        if let FlowApp::Tcp { paced_bytes: Some(_), .. } = &self.flows[f].plan.app {
            // Each application packet leaves as a segment of its own when
            // the window allows, as ns-2's agent sends what `sendmsg` hands
            // it; Nagle would hold a packet while one is unacknowledged.
            setopt(s.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_NODELAY, &1i32, "TCP_NODELAY")?;
        }
        if let FlowApp::Tcp { cc, .. } | FlowApp::Http11 { cc, .. } = &self.flows[f].plan.app {
            set_congestion_control(s.as_raw_fd(), cc)?;
        }
        let sa = sockaddr(lab::host_ip(dst), FLOW_PORT_BASE + f as u16);
        // SAFETY: `sa` is live for the call.
        let r = unsafe { libc::connect(s.as_raw_fd(), &sa as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_in>() as u32) };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(io::Error::other(format!("connect for flow {f}: {}", io::Error::last_os_error())));
        }
        let events = if self.is_http(f) {
            // Both ways, edge-triggered: written and read until EAGAIN.
            (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32
        } else if self.flows[f].paused {
            0
        } else {
            libc::EPOLLOUT as u32
        };
        self.watch(s.as_raw_fd(), events, token(TCP_SEND, f))?;
        let now = self.now();
        let fl = &mut self.flows[f];
        fl.stats.congestion_control = congestion_control(s.as_raw_fd());
        fl.sender = Some(s);
        fl.sent = 0;
        fl.target = size;
        fl.opened_at = now;
        Ok(())
    }

    pub(super) fn accept(&mut self, f: usize) -> io::Result<()> {
        let Some(l) = &self.flows[f].listener else { return Ok(()) };
        // SAFETY: accept4 on our listener; the result is owned at once.
        let c = unsafe { libc::accept4(l.as_raw_fd(), std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC) };
        if c < 0 {
            return Ok(());
        }
        let c = unsafe { OwnedFd::from_raw_fd(c) };
        if let FlowApp::Http11 { cc, .. } = &self.flows[f].plan.app {
            // The server's responses use the group's congestion control.
            set_congestion_control(c.as_raw_fd(), cc)?;
            self.watch(c.as_raw_fd(), (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLET) as u32, token(TCP_SINK, f))?;
            self.flows[f].sink = Some(c);
            self.http_server(f);
            return Ok(());
        }
        self.watch(c.as_raw_fd(), libc::EPOLLIN as u32, token(TCP_SINK, f))?;
        self.flows[f].sink = Some(c);
        Ok(())
    }

    pub(super) fn is_http(&self, f: usize) -> bool {
        matches!(self.flows[f].plan.app, FlowApp::Http11 { .. })
    }

    pub(super) fn write_tcp(&mut self, f: usize) {
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sender else { return };
        let FlowApp::Tcp { bounded_unsent, paced_bytes, .. } = fl.plan.app else { return };
        let paced = paced_bytes.is_some();
        if fl.paused {
            return;
        }
        let chunk = if bounded_unsent { ONOFF_UNSENT_BYTES } else { self.buf.len() };
        loop {
            let want = match fl.target {
                Some(b) => (b - fl.sent).min(chunk as u64) as usize,
                None => chunk,
            };
            if want == 0 && paced {
                break;
            }
            if want == 0 {
                // SAFETY: shutdown of our socket; epoll stops watching it.
                unsafe {
                    libc::shutdown(s.as_raw_fd(), libc::SHUT_WR);
                    libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, s.as_raw_fd(), std::ptr::null_mut());
                }
                return;
            }
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::send(s.as_raw_fd(), self.buf.as_ptr() as *const libc::c_void, want, libc::MSG_NOSIGNAL) };
            if n <= 0 {
                return;
            }
            fl.sent += n as u64;
            // ON/OFF: one write per wake-up, so the unsent data stays
            // near TCP_NOTSENT_LOWAT.
            if bounded_unsent && fl.target.is_none() {
                return;
            }
        }
        // Paced: all handed over is written; until the application hands
        // over more.
        self.want_writes(f, false);
    }

    pub(super) fn read_tcp(&mut self, f: usize, end: Time) -> io::Result<()> {
        let now = self.now();
        let inside = self.window.contains(now);
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sink else { return Ok(()) };
        loop {
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::recv(s.as_raw_fd(), self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0) };
            if n == 0 {
                // SAFETY: stop watching the finished connection.
                unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), libc::EPOLL_CTL_DEL, s.as_raw_fd(), std::ptr::null_mut()) };
                let FlowApp::Tcp { app, .. } = &mut fl.plan.app else { return Ok(()) };
                if inside {
                    fl.stats.transfer_times.push((now.0.saturating_sub(fl.opened_at.0)) as f64 * 1e-9);
                }
                if !app.repeats() {
                    fl.stats.done_at.get_or_insert(now);
                }
                let mut actions = Vec::new();
                app.transfer_done(now, &mut actions);
                return self.tcp_actions(f, &actions, end);
            }
            if n < 0 {
                return Ok(());
            }
            fl.stats.transfer_bytes += n as u64;
            if inside {
                fl.stats.delivered_bytes += n as u64;
            }
        }
    }

}

/// The congestion control a TCP socket uses (getsockopt TCP_CONGESTION).
fn congestion_control(fd: RawFd) -> Option<String> {
    let mut name = [0u8; 16];
    let mut len = name.len() as libc::socklen_t;
    // SAFETY: `name` is live and its length passed.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_mut_ptr() as *mut libc::c_void, &mut len) };
    (r == 0).then(|| {
        let b = &name[..(len as usize).min(name.len())];
        String::from_utf8_lossy(b.split(|&c| c == 0).next().unwrap_or(b)).into_owned()
    })
}

pub(super) fn tcp_info(fd: RawFd) -> Option<TcpInfo> {
    // SAFETY: a zeroed tcp_info is valid; the kernel fills what it has.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut info as *mut _ as *mut libc::c_void, &mut len) };
    // Fields a kernel older than the struct leaves out (tcpi_snd_wnd came in
    // 5.4) are NaN, not its zeros; so is what the stack has not set before
    // the handshake is done (TCP_SYN_SENT), as in the simulator.
    let has = |end: usize| (len as usize) >= end;
    // TCP_SYN_SENT in include/net/tcp_states.h.
    const SYN_SENT: u8 = 2;
    let connected = info.tcpi_state != SYN_SENT;
    (r == 0).then(|| TcpInfo {
        connected,
        total_retrans: info.tcpi_total_retrans,
        cwnd: info.tcpi_snd_cwnd,
        ssthresh: info.tcpi_snd_ssthresh,
        srtt_s: info.tcpi_rtt as f64 * 1e-6,
        rto_s: info.tcpi_rto as f64 * 1e-6,
        pacing_rate_bps: match info.tcpi_pacing_rate {
            u64::MAX => f64::NAN,
            _ if !connected || !has(std::mem::offset_of!(libc::tcp_info, tcpi_pacing_rate) + 8) => f64::NAN,
            bytes => bytes as f64 * 8.0,
        },
        rwnd_pkts: match info.tcpi_snd_mss {
            _ if !connected || !has(std::mem::offset_of!(libc::tcp_info, tcpi_snd_wnd) + 4) => f64::NAN,
            0 => f64::NAN,
            mss => f64::from(info.tcpi_snd_wnd) / f64::from(mss),
        },
    })
}

/// BBR's state as the socket reports it (getsockopt TCP_CC_INFO, Linux's
/// `struct tcp_bbr_info`): the bandwidth estimate in bits per second of
/// payload, min_rtt in seconds (NaN before a sample) and the pacing and
/// cwnd gains; `None` if the socket's congestion control is not BBR's.
pub(super) fn bbr_info(fd: RawFd) -> Option<[f64; 4]> {
    // bbr_bw_lo, bbr_bw_hi (bytes/s), bbr_min_rtt (us), bbr_pacing_gain and
    // bbr_cwnd_gain (in 1/256).
    let mut b = [0u32; 5];
    let mut len = std::mem::size_of_val(&b) as libc::socklen_t;
    // SAFETY: `b` is live and its length passed; the kernel writes at most that.
    let r = unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, b.as_mut_ptr() as *mut libc::c_void, &mut len) };
    if r != 0 || (len as usize) < std::mem::size_of_val(&b) || congestion_control(fd).as_deref() != Some("bbr") {
        return None;
    }
    Some(decode_bbr_info(b))
}

/// `struct tcp_bbr_info` as [`bbr_info`] reports it: bits per second,
/// seconds (NaN for the ~0U before a sample) and gains.
fn decode_bbr_info(b: [u32; 5]) -> [f64; 4] {
    let bw = (u64::from(b[1]) << 32 | u64::from(b[0])) as f64 * 8.0;
    let min_rtt = if b[2] == u32::MAX { f64::NAN } else { f64::from(b[2]) * 1e-6 };
    [bw, min_rtt, f64::from(b[3]) / 256.0, f64::from(b[4]) / 256.0]
}

#[cfg(test)]
mod bbr_info_tests {
    use super::decode_bbr_info;

    #[test]
    fn test_tcp_bbr_info_decodes_to_bits_seconds_and_gains() {
        // 1 206 666 bytes/s (10 Mb/s of 1448-B payloads in 1500-B packets),
        // min_rtt 10 299 us, PROBE_BW's 1.25 (320/256) and cwnd gain 2.
        let [bw, rtt, pacing, cwnd] = decode_bbr_info([1_206_666, 0, 10_299, 320, 512]);
        assert_eq!((bw, pacing, cwnd), (9_653_328.0, 1.25, 2.0));
        assert!((rtt - 0.010299).abs() < 1e-15);
        // The high word counts 2^32 bytes/s; ~0U is "no sample yet".
        let [bw, rtt, ..] = decode_bbr_info([0, 1, u32::MAX, 739, 739]);
        assert_eq!(bw, 4_294_967_296.0 * 8.0);
        assert!(rtt.is_nan());
    }
}

/// Sets a TCP socket's congestion control (TCP_CONGESTION).
pub(super) fn set_congestion_control(fd: RawFd, cc: &str) -> io::Result<()> {
    let name = CString::new(cc).expect("no NUL");
    // SAFETY: the name's bytes are live for the call.
    check(
        unsafe { libc::setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, name.as_ptr() as *const libc::c_void, cc.len() as u32) } as _,
        &format!("congestion control {cc:?}"),
    )
    .map(|_| ())
}
