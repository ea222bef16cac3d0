//! `http11` on kernel sockets (the simulator's `Http11Client`, same stream
//! and draws): the client (the group's dst) keeps one connection to its
//! server (the group's src) and writes a request of one payload
//! (`packet_size`); when the server has read it whole, it writes the drawn
//! response, its packets of that payload; when the client has read it
//! whole, the machine thinks and asks again. A response's time runs from
//! the request to its last byte read, as the simulator's. Both ends are
//! edge-triggered and written and read until EAGAIN.

use std::cmp::Reverse;
use std::os::fd::{AsRawFd, RawFd};

use aqmlab_qdisc::Time;
use aqmlab_sim::app::http11::Http11Action;

use super::*;

impl Traffic {
    /// Carries out flow `f`'s HTTP/1.1 requests, then sets its next timer.
    pub(super) fn http_actions(&mut self, f: usize, actions: &[Http11Action], end: Time) {
        let now = self.now();
        for &a in actions {
            let Http11Action::Request { response_pkts, .. } = a;
            let fl = &mut self.flows[f];
            let FlowApp::Http11 { request_bytes, .. } = fl.plan.app else { unreachable!("HTTP/1.1") };
            fl.http.req_write += request_bytes;
            fl.http.req_read += request_bytes;
            fl.http.resp_pkts = response_pkts;
            fl.http.asked_at = now;
        }
        if !actions.is_empty() {
            self.http_client(f, end);
        }
        if let FlowApp::Http11 { client, .. } = &self.flows[f].plan.app {
            if let Some(at) = client.next_timer() {
                if at < end {
                    self.timers.push(Reverse((at, f)));
                }
            }
        }
        let _ = self.arm();
    }

    /// Writes `*left` bytes to `fd` until done or EAGAIN.
    pub(super) fn write_some(fd: RawFd, buf: &[u8], left: &mut u64) {
        while *left > 0 {
            let want = (*left).min(buf.len() as u64) as usize;
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, want, libc::MSG_NOSIGNAL) };
            if n <= 0 {
                return;
            }
            *left -= n as u64;
        }
    }

    /// The client's end: writes the request, reads the response; a whole
    /// response goes to the machine (think, then the next request).
    pub(super) fn http_client(&mut self, f: usize, end: Time) {
        let now = self.now();
        let inside = self.window.contains(now);
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sender else { return };
        let fd = s.as_raw_fd();
        Self::write_some(fd, &self.buf, &mut fl.http.req_write);
        let mut done = false;
        loop {
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::recv(fd, self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0) };
            if n <= 0 {
                break;
            }
            let n = n as u64;
            fl.stats.transfer_bytes += n;
            if inside {
                fl.stats.delivered_bytes += n;
            }
            fl.http.resp_read = fl.http.resp_read.saturating_sub(n);
            if fl.http.resp_read == 0 && fl.http.resp_pkts > 0 {
                done = true;
            }
        }
        if done {
            if inside {
                fl.stats.response_times.push((fl.http.resp_pkts, (now.0.saturating_sub(fl.http.asked_at.0)) as f64 * 1e-9));
                fl.stats.transfer_times.push((now.0.saturating_sub(fl.http.asked_at.0)) as f64 * 1e-9);
            }
            fl.http.resp_pkts = 0;
            let FlowApp::Http11 { client, .. } = &mut fl.plan.app else { unreachable!("HTTP/1.1") };
            let mut actions = Vec::new();
            client.response_done(now, &mut actions);
            self.http_actions(f, &actions, end);
        }
    }

    /// The server's end: reads the request; a whole one makes it write the
    /// response.
    pub(super) fn http_server(&mut self, f: usize) {
        let inside = self.window.contains(self.now());
        let fl = &mut self.flows[f];
        let Some(s) = &fl.sink else { return };
        let fd = s.as_raw_fd();
        loop {
            // SAFETY: `buf` is live for the call.
            let n = unsafe { libc::recv(fd, self.buf.as_mut_ptr() as *mut libc::c_void, self.buf.len(), 0) };
            if n <= 0 {
                break;
            }
            let n = n as u64;
            if inside {
                fl.stats.request_bytes += n;
            }
            let before = fl.http.req_read;
            fl.http.req_read = before.saturating_sub(n);
            if before > 0 && fl.http.req_read == 0 {
                let FlowApp::Http11 { payload_bytes, .. } = fl.plan.app else { unreachable!("HTTP/1.1") };
                let bytes = fl.http.resp_pkts as u64 * payload_bytes as u64;
                fl.http.resp_write += bytes;
                fl.http.resp_read += bytes;
            }
        }
        Self::write_some(fd, &self.buf, &mut fl.http.resp_write);
    }

}
