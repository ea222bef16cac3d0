//! How promptly this machine wakes a thread: the router's own pattern
//! (sleep in `ppoll` until 100 us before a deadline, then spin) and a bare
//! `ppoll` to the deadline, each repeated for deadlines 800 us apart (a
//! 1000-byte packet at 10 Mb/s), pinned to the router's CPU. Prints one JSON
//! line per pattern with the lateness p50, p99 and max in microseconds.
//!   timer_latency [COUNT]

use aqmlab_emu::sys;

fn sleep_ns(ns: u64) {
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: no descriptors; `ts` is live for the call.
    unsafe { libc::ppoll(std::ptr::null_mut(), 0, &ts, std::ptr::null()) };
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(5000, |s| s.parse().expect("a count"));
    let cpus = sys::cpus();
    if cpus > 1 {
        sys::pin_to_cpu(cpus - 1);
    }
    sys::tight_timer_slack();
    for (name, margin) in [("sleep-then-spin", 100_000u64), ("sleep", 0)] {
        let mut late = Vec::with_capacity(n);
        for _ in 0..n {
            let deadline = sys::mono_ns() + 800_000;
            sleep_ns(800_000 - margin);
            while sys::mono_ns() < deadline {
                std::hint::spin_loop();
            }
            late.push(sys::mono_ns() - deadline);
        }
        late.sort_unstable();
        let q = |p: f64| late[((p * n as f64).ceil() as usize).clamp(1, n) - 1] as f64 / 1e3;
        println!(
            "{{\"pattern\": \"{name}\", \"count\": {n}, \"p50_us\": {:.1}, \"p99_us\": {:.1}, \"max_us\": {:.1}}}",
            q(0.5),
            q(0.99),
            late[n - 1] as f64 / 1e3
        );
    }
}
