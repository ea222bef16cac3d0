//! The few system calls the emulator needs, wrapped so that each failure is
//! an `io::Error` naming what failed.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// CLOCK_MONOTONIC in nanoseconds: the emulator's one clock.
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME in nanoseconds: the clock of the kernel's receive
/// stamps on frames and datagrams.
#[inline]
pub fn realtime_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// `r` as a result: the last OS error, with `what` in front, when negative.
pub fn check(r: libc::c_long, what: &str) -> io::Result<libc::c_long> {
    if r < 0 {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    } else {
        Ok(r)
    }
}

/// Moves the calling thread into network namespace `name` (a file under
/// /run/netns, as `ip netns add` makes). Sockets it opens afterwards belong
/// to that namespace for good, whichever thread uses them.
pub fn enter_netns(name: &str) -> io::Result<()> {
    let path = CString::new(format!("/run/netns/{name}")).expect("no NUL in a namespace name");
    // SAFETY: a valid C string; the descriptor is owned below.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) } as _, &format!("open /run/netns/{name}"))?;
    // SAFETY: `open` returned a descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: plain system call on an open descriptor.
    check(unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) } as _, &format!("setns into {name}"))?;
    Ok(())
}

/// Runs `f` on a new thread inside namespace `name` and returns its result
/// (the calling thread's namespace is left alone).
pub fn in_netns<T: Send + 'static>(name: &str, f: impl FnOnce() -> io::Result<T> + Send + 'static) -> io::Result<T> {
    let name = name.to_string();
    std::thread::spawn(move || {
        enter_netns(&name)?;
        f()
    })
    .join()
    .map_err(|_| io::Error::other("a namespace thread panicked"))?
}

/// Pins the calling thread to CPU `cpu` (ignored if the machine has fewer).
pub fn pin_to_cpu(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// The number of CPUs this process may run on.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Asks the kernel to wake this thread from timed sleeps within 1 ns of the
/// time asked (the default slack is 50 us).
pub fn tight_timer_slack() {
    // SAFETY: plain prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// CPU time (user + system) this thread has used, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec to write to.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

// ethtool's legacy "set" commands (linux/ethtool.h).
const ETHTOOL_SRXCSUM: u32 = 0x15;
const ETHTOOL_STXCSUM: u32 = 0x17;
const ETHTOOL_SSG: u32 = 0x19;
const ETHTOOL_STSO: u32 = 0x1f;
const ETHTOOL_SGSO: u32 = 0x24;
const ETHTOOL_SGRO: u32 = 0x2c;

#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

#[repr(C)]
struct IfreqData {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// Turns off every offload that would let a frame on `ifname` be larger
/// than the MTU or carry an unfinished checksum (TSO, GSO, GRO, scatter-
/// gather, checksum offload), as ethtool -K does; in the calling thread's
/// namespace.
pub fn offloads_off(ifname: &str) -> io::Result<()> {
    // SAFETY: a plain datagram socket for the ioctl, closed on return.
    let s = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) } as _, "socket")?;
    let s = unsafe { OwnedFd::from_raw_fd(s as i32) };
    // GRO and GSO first: TSO and checksum offload depend on nothing else.
    for cmd in [ETHTOOL_SGRO, ETHTOOL_SGSO, ETHTOOL_STSO, ETHTOOL_SSG, ETHTOOL_STXCSUM, ETHTOOL_SRXCSUM] {
        let mut v = EthtoolValue { cmd, data: 0 };
        let mut ifr = IfreqData {
            name: [0; libc::IFNAMSIZ],
            data: &mut v as *mut EthtoolValue as *mut libc::c_void,
            _pad: [0; 16],
        };
        for (d, b) in ifr.name.iter_mut().zip(ifname.bytes()) {
            *d = b as libc::c_char;
        }
        // SAFETY: `ifr` points to a live ethtool_value for the call.
        check(unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCETHTOOL, &mut ifr) } as _, &format!("ethtool command {cmd:#x} on {ifname}"))?;
    }
    Ok(())
}

/// Writes `value` to the sysctl file `/proc/sys/{key}` (dots as slashes),
/// in the calling thread's network namespace.
pub fn sysctl(key: &str, value: &str) -> io::Result<()> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    std::fs::write(&path, value).map_err(|e| io::Error::new(e.kind(), format!("writing {value} to {path}: {e}")))
}

/// The index of interface `ifname` in the calling thread's namespace.
pub fn ifindex(ifname: &str) -> io::Result<i32> {
    let c = CString::new(ifname).expect("no NUL in an interface name");
    // SAFETY: a valid C string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if i == 0 {
        return Err(io::Error::new(io::ErrorKind::NotFound, format!("no interface {ifname}")));
    }
    Ok(i as i32)
}
