//! The namespaces of one emulation: a router namespace holding one port per
//! host, and one namespace per host, joined by veth pairs, addressed from
//! 198.18.0.0/15 (RFC 2544's range for benchmarking) and routed nowhere
//! else. Everything is named after the process (`aqm<pid>-...`) and removed
//! when the [`Lab`] is dropped: on return, on error and on unwinding.

use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::process::{Command, Stdio};

use crate::sys;

/// 198.18.0.0, the first address of the benchmarking range.
const BASE: u32 = 0xC612_0000;
/// Its prefix length: 198.18.0.0/15.
const PREFIX: u8 = 15;

/// The name prefix of this process's namespaces.
pub fn prefix(pid: u32) -> String {
    format!("aqm{pid}-")
}

/// Host `k`'s address: 198.18.0.1 for the first.
pub fn host_ip(k: usize) -> Ipv4Addr {
    Ipv4Addr::from(BASE + 1 + k as u32)
}

/// The host a 198.18.0.0/15 address belongs to, if it is one of ours.
#[inline]
pub fn host_of_ip(ip: u32, hosts: usize) -> Option<usize> {
    let k = ip.wrapping_sub(BASE + 1) as usize;
    (k < hosts).then_some(k)
}

/// Host `k`'s MAC address (locally administered).
pub fn host_mac(k: usize) -> [u8; 6] {
    let b = (k as u32).to_be_bytes();
    [0x02, 0xa9, b[0], b[1], b[2], b[3]]
}

/// The MAC address of the router's port facing host `k`.
pub fn port_mac(k: usize) -> [u8; 6] {
    let b = (k as u32).to_be_bytes();
    [0x02, 0xaa, b[0], b[1], b[2], b[3]]
}

fn mac_str(m: [u8; 6]) -> String {
    m.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
}

/// The router's port facing host `k` (in the router namespace).
pub fn port_name(k: usize) -> String {
    format!("h{k}")
}

/// A host's one interface (in its namespace).
pub const HOST_IF: &str = "eth0";

/// Runs `ip -batch -` with `lines`, in the calling thread's namespace.
fn ip_batch(lines: &[String]) -> io::Result<()> {
    let mut child = Command::new("ip")
        .args(["-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("running ip (iproute2): {e}")))?;
    child.stdin.take().expect("piped").write_all(lines.join("\n").as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "ip -batch failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// The namespaces and links of one emulation.
pub struct Lab {
    pub router: String,
    pub hosts: Vec<String>,
    /// Namespaces made so far (all of them once `new` returns).
    made: Vec<String>,
}

impl Lab {
    /// Makes the router namespace and `n_hosts` host namespaces, joins each
    /// host to the router by a veth pair, addresses the hosts, turns off the
    /// offloads on every veth and brings everything up. `configure` runs in
    /// each host namespace (on a thread of its own) before its link comes up,
    /// for the host's sysctls.
    pub fn new(n_hosts: usize, configure: &(dyn Fn(usize) -> io::Result<()> + Sync)) -> io::Result<Lab> {
        let p = prefix(std::process::id());
        let mut lab = Lab {
            router: format!("{p}r"),
            hosts: (0..n_hosts).map(|k| format!("{p}h{k}")).collect(),
            made: Vec::new(),
        };
        // Namespaces one by one, so that a failure leaves `made` exact.
        for name in std::iter::once(lab.router.clone()).chain(lab.hosts.clone()) {
            ip_batch(&[format!("netns add {name}")])?;
            lab.made.push(name);
        }
        let links: Vec<String> = (0..n_hosts)
            .map(|k| {
                format!(
                    "link add {} netns {} address {} type veth peer name {HOST_IF} netns {} address {}",
                    port_name(k),
                    lab.router,
                    mac_str(port_mac(k)),
                    lab.hosts[k],
                    mac_str(host_mac(k)),
                )
            })
            .collect();
        ip_batch(&links)?;
        // The router: no IPv6 (no neighbour discovery to forward), no
        // addresses, no forwarding by the kernel; its ports up.
        let n = n_hosts;
        sys::in_netns(&lab.router, move || {
            sys::sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
            sys::sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
            sys::sysctl("net.ipv4.ip_forward", "0")?;
            let mut lines = vec!["link set lo up".to_string()];
            for k in 0..n {
                sys::offloads_off(&port_name(k))?;
                lines.push(format!("link set {} up", port_name(k)));
            }
            ip_batch(&lines)
        })?;
        // The hosts, a few at a time on threads of their own.
        std::thread::scope(|s| -> io::Result<()> {
            let handles: Vec<_> = lab
                .hosts
                .iter()
                .enumerate()
                .map(|(k, name)| {
                    s.spawn(move || -> io::Result<()> {
                        sys::enter_netns(name)?;
                        sys::sysctl("net.ipv6.conf.all.disable_ipv6", "1")?;
                        sys::sysctl("net.ipv6.conf.default.disable_ipv6", "1")?;
                        configure(k)?;
                        sys::offloads_off(HOST_IF)?;
                        // No ARP: frames leave for the router whatever their
                        // destination address, and all 198.18.0.0/15 is
                        // reached through it; a deep device queue, so that
                        // the host's kernel never drops what the scenario's
                        // queues should decide about.
                        ip_batch(&[
                            "link set lo up".to_string(),
                            format!("link set {HOST_IF} txqueuelen 100000 arp off up"),
                            format!("addr add {}/32 dev {HOST_IF}", host_ip(k)),
                            format!("route add {}/{PREFIX} dev {HOST_IF}", Ipv4Addr::from(BASE)),
                        ])
                    })
                })
                .collect();
            for h in handles {
                h.join().map_err(|_| io::Error::other("a host thread panicked"))??;
            }
            Ok(())
        })?;
        Ok(lab)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let lines: Vec<String> = self.made.iter().map(|n| format!("netns del {n}")).collect();
        if !lines.is_empty() {
            // Deleting a namespace removes its ends of the veth pairs too.
            let _ = Command::new("ip")
                .args(["-force", "-batch", "-"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .and_then(|mut c| {
                    c.stdin.take().expect("piped").write_all(lines.join("\n").as_bytes())?;
                    c.wait()
                });
        }
    }
}

/// This machine's namespaces left by emulations whose process is gone
/// (`aqm<pid>-...` with no process `pid`).
pub fn leftovers() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return Vec::new();
    };
    let mut out: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            let Some(rest) = name.strip_prefix("aqm") else { return false };
            let Some((pid, _)) = rest.split_once('-') else { return false };
            let Ok(pid) = pid.parse::<i32>() else { return false };
            // SAFETY: signal 0 only asks whether the process exists.
            (unsafe { libc::kill(pid, 0) } != 0) && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        })
        .collect();
    out.sort();
    out
}

/// Removes the namespaces [`leftovers`] finds; returns their names.
pub fn cleanup() -> io::Result<Vec<String>> {
    let names = leftovers();
    if !names.is_empty() {
        ip_batch(&names.iter().map(|n| format!("netns del {n}")).collect::<Vec<_>>())?;
    }
    Ok(names)
}

/// Why emulation cannot run here, if it cannot: it needs root and network
/// namespaces.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("emulation needs root (it creates network namespaces and veth pairs)".into());
    }
    if !std::path::Path::new("/proc/self/ns/net").exists() {
        return Some("this kernel has no network namespaces".into());
    }
    if Command::new("ip").arg("-V").stdout(Stdio::null()).status().is_err() {
        return Some("emulation needs the ip command (iproute2)".into());
    }
    None
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn hosts_are_numbered_from_198_18_0_1_and_found_again() {
        assert_eq!(host_ip(0), Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(host_ip(255), Ipv4Addr::new(198, 18, 1, 0));
        for k in [0, 1, 254, 255, 70_000] {
            assert_eq!(host_of_ip(u32::from(host_ip(k)), 70_001), Some(k));
        }
        // Not ours: the network address, one past the last host, elsewhere.
        assert_eq!(host_of_ip(u32::from(Ipv4Addr::new(198, 18, 0, 0)), 4), None);
        assert_eq!(host_of_ip(u32::from(host_ip(4)), 4), None);
        assert_eq!(host_of_ip(u32::from(Ipv4Addr::new(10, 0, 0, 1)), 4), None);
        // Every host stays inside 198.18.0.0/15.
        assert!(u32::from(host_ip(131_069)) <= u32::from(Ipv4Addr::new(198, 19, 255, 254)));
    }

    #[test]
    fn names_fit_linux_interface_and_namespace_limits() {
        assert!(port_name(99_999).len() < libc::IFNAMSIZ);
        assert!(prefix(4_194_304).len() + "h99999".len() < 64);
        assert_eq!(host_mac(258), [0x02, 0xa9, 0, 0, 1, 2]);
        assert_ne!(host_mac(7), port_mac(7));
    }
}
