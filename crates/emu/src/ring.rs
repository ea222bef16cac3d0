//! A router port: an AF_PACKET socket bound to one veth, receiving through a
//! memory-mapped TPACKET_V2 ring (no copy and no system call per frame) and
//! sending with `send`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::sys::check;

// linux/if_packet.h
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_STATISTICS: libc::c_int = 6;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const ETH_P_ALL: u16 = 0x0003;

#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

#[repr(C)]
struct Tpacket2Hdr {
    status: u32,
    len: u32,
    snaplen: u32,
    mac: u16,
    net: u16,
    sec: u32,
    nsec: u32,
    vlan_tci: u16,
    vlan_tpid: u16,
    padding: [u8; 4],
}

#[repr(C)]
#[derive(Default)]
struct TpacketStats {
    packets: u32,
    drops: u32,
}

/// A slot of the ring: room for a 1514-byte frame after its header.
const FRAME_SIZE: u32 = 2048;
const BLOCK_SIZE: u32 = 1 << 16;
/// 64 blocks of 32 frames: 2048 frames, 2.6 ms of a 10 Gb/s line, much
/// longer than the router ever leaves a port unread.
const BLOCKS: u32 = 64;

pub struct Port {
    fd: OwnedFd,
    ring: *mut u8,
    frames: u32,
    next: u32,
}

// SAFETY: the ring is owned by the port and only touched through `&mut self`.
unsafe impl Send for Port {}

impl Port {
    /// Opens the port on interface `ifname` of the calling thread's
    /// namespace.
    pub fn open(ifname: &str) -> io::Result<Port> {
        let ifindex = crate::sys::ifindex(ifname)?;
        // SAFETY: socket(2); the descriptor is owned at once.
        let fd = check(
            unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC, ETH_P_ALL.to_be() as i32) } as _,
            "AF_PACKET socket",
        )?;
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let set = |opt: libc::c_int, v: &libc::c_int, what: &str| -> io::Result<()> {
            // SAFETY: `v` is a live int for the call.
            check(
                unsafe { libc::setsockopt(fd.as_raw_fd(), libc::SOL_PACKET, opt, v as *const _ as *const libc::c_void, 4) } as _,
                what,
            )
            .map(|_| ())
        };
        set(PACKET_VERSION, &TPACKET_V2, "PACKET_VERSION")?;
        // Frames this socket sends are not read back.
        set(PACKET_IGNORE_OUTGOING, &1, "PACKET_IGNORE_OUTGOING")?;
        let req = TpacketReq {
            block_size: BLOCK_SIZE,
            block_nr: BLOCKS,
            frame_size: FRAME_SIZE,
            frame_nr: BLOCKS * (BLOCK_SIZE / FRAME_SIZE),
        };
        // SAFETY: `req` is a live tpacket_req for the call.
        check(
            unsafe {
                libc::setsockopt(
                    fd.as_raw_fd(),
                    libc::SOL_PACKET,
                    PACKET_RX_RING,
                    &req as *const _ as *const libc::c_void,
                    std::mem::size_of::<TpacketReq>() as u32,
                )
            } as _,
            "PACKET_RX_RING",
        )?;
        let len = (BLOCK_SIZE * BLOCKS) as usize;
        // SAFETY: maps the ring the kernel just made for this socket.
        let ring = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd.as_raw_fd(), 0)
        };
        if ring == libc::MAP_FAILED {
            return Err(io::Error::new(io::Error::last_os_error().kind(), format!("mmap of the ring on {ifname}: {}", io::Error::last_os_error())));
        }
        // SAFETY: a zeroed sockaddr_ll is valid; the fields are set below.
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex;
        // SAFETY: `sll` is a live sockaddr_ll for the call.
        let bound = check(
            unsafe {
                libc::bind(fd.as_raw_fd(), &sll as *const _ as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as u32)
            } as _,
            &format!("binding to {ifname}"),
        );
        let port = Port {
            fd,
            ring: ring as *mut u8,
            frames: req.frame_nr,
            next: 0,
        };
        bound?;
        Ok(port)
    }

    /// The next frame received, if any: handed to `f` with the time the
    /// kernel received it (CLOCK_REALTIME, ns), then its slot goes back to
    /// the kernel.
    #[inline]
    pub fn recv<T>(&mut self, f: impl FnOnce(&[u8], u64) -> T) -> Option<T> {
        // SAFETY: slot `next` lies inside the mapped ring; its status word is
        // shared with the kernel and read and written volatile, with
        // acquire/release fences around the frame's bytes.
        unsafe {
            let slot = self.ring.add((self.next * FRAME_SIZE) as usize);
            let hdr = slot as *mut Tpacket2Hdr;
            let status = std::ptr::read_volatile(&(*hdr).status);
            if status & TP_STATUS_USER == 0 {
                return None;
            }
            std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
            let data = std::slice::from_raw_parts(slot.add((*hdr).mac as usize), (*hdr).snaplen as usize);
            let stamp = (*hdr).sec as u64 * 1_000_000_000 + (*hdr).nsec as u64;
            let out = f(data, stamp);
            std::sync::atomic::fence(std::sync::atomic::Ordering::Release);
            std::ptr::write_volatile(&mut (*hdr).status, TP_STATUS_KERNEL);
            self.next = (self.next + 1) % self.frames;
            Some(out)
        }
    }

    /// Sends `frame` out of the port; false if the kernel refused it.
    #[inline]
    pub fn send(&self, frame: &[u8]) -> bool {
        // SAFETY: `frame` is a live buffer for the call.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        n == frame.len() as isize
    }

    pub fn fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Frames the kernel dropped because the ring was full, since the last
    /// call.
    pub fn ring_drops(&self) -> u64 {
        let mut st = TpacketStats::default();
        let mut len = std::mem::size_of::<TpacketStats>() as libc::socklen_t;
        // SAFETY: `st` and `len` are live for the call.
        unsafe {
            libc::getsockopt(self.fd.as_raw_fd(), libc::SOL_PACKET, PACKET_STATISTICS, &mut st as *mut _ as *mut libc::c_void, &mut len)
        };
        st.drops as u64
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        // SAFETY: unmaps the ring mapped in `open`.
        unsafe { libc::munmap(self.ring as *mut libc::c_void, (BLOCK_SIZE * BLOCKS) as usize) };
    }
}
