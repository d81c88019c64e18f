//! The SSRF guard: which addresses a crawler may connect to.
//!
//! By default a crawler must not reach the machine it runs on or the networks behind it: a
//! link (or a redirect) to `http://127.0.0.1:6379/`, `http://169.254.169.254/` or
//! `http://10.0.0.5/admin` is refused. The check runs on the addresses a host name resolves
//! to (so a public name that resolves to a private address is caught), on IP literals in
//! URLs, and again on every redirect hop. `allow_private_ips = true` lifts it (tests and the
//! demo crawl a loopback server).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// Why an address is refused, or `None` when it may be reached.
pub fn refused_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return refused_v4(v4);
            }
            let segments = v6.segments();
            if v6.is_loopback() {
                Some("loopback address")
            } else if v6.is_unspecified() {
                Some("unspecified address")
            } else if segments[0] & 0xfe00 == 0xfc00 {
                Some("unique local (private) address")
            } else if segments[0] & 0xffc0 == 0xfe80 {
                Some("link-local address")
            } else if v6.is_multicast() {
                Some("multicast address")
            } else if segments[0] == 0x2001 && segments[1] == 0x0db8 {
                Some("documentation address")
            } else if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                // NAT64 well-known prefix: the embedded IPv4 address decides.
                let v4 = Ipv4Addr::new(
                    (segments[6] >> 8) as u8,
                    segments[6] as u8,
                    (segments[7] >> 8) as u8,
                    segments[7] as u8,
                );
                refused_v4(v4)
            } else {
                None
            }
        }
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some("loopback address")
    } else if ip.is_private() {
        Some("private address")
    } else if ip.is_link_local() {
        Some("link-local address")
    } else if o[0] == 100 && (64..128).contains(&o[1]) {
        Some("shared (CGNAT) address")
    } else if ip.is_unspecified() || o[0] == 0 {
        Some("unspecified address")
    } else if ip.is_broadcast() || ip.is_multicast() || o[0] >= 240 {
        Some("broadcast, multicast or reserved address")
    } else if ip.is_documentation() || (o[0] == 198 && (o[1] == 18 || o[1] == 19)) {
        Some("documentation or benchmarking address")
    } else if o[0] == 192 && o[1] == 0 && o[2] == 0 {
        Some("IETF protocol address")
    } else {
        None
    }
}

/// A DNS resolver for reqwest that drops refused addresses (and fails when none is left),
/// so the guard holds for every connection the client opens.
#[derive(Debug, Clone)]
pub struct GuardedResolver {
    allow_private: bool,
}

impl GuardedResolver {
    /// A resolver; with `allow_private` every address is allowed.
    pub fn new(allow_private: bool) -> Arc<GuardedResolver> {
        Arc::new(GuardedResolver { allow_private })
    }
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_string();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if allow_private {
                return Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs);
            }
            let mut reason = "no address";
            let allowed: Vec<SocketAddr> = addrs
                .into_iter()
                .filter(|a| match refused_reason(a.ip()) {
                    Some(r) => {
                        reason = r;
                        false
                    }
                    None => true,
                })
                .collect();
            if allowed.is_empty() {
                return Err(
                    Box::new(GuardError(format!("{host} resolves to a {reason}{LIFT}")))
                        as Box<dyn std::error::Error + Send + Sync>,
                );
            }
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// A refused connection.
#[derive(Debug)]
pub struct GuardError(pub String);

impl std::fmt::Display for GuardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GuardError {}

/// Checks a URL whose host is an IP literal (the resolver never sees those).
pub(crate) fn check_literal(url: &url::Url, allow_private: bool) -> Result<(), String> {
    if allow_private {
        return Ok(());
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        _ => return Ok(()),
    };
    match refused_reason(ip) {
        Some(reason) => Err(format!("{ip} is a {reason}{LIFT}")),
        None => Ok(()),
    }
}

/// What every refusal says about lifting the guard.
pub const LIFT: &str = " (--allow-private-ips, crawl.allow_private_ips = true, lifts the guard)";

/// Why the guard refuses `url` without `--allow-private-ips`, as far as can be told without
/// resolving its host: an IP literal of a refused range, or `localhost`.
pub fn private_address(url: &url::Url) -> Option<String> {
    if let Err(reason) = check_literal(url, false) {
        return Some(reason);
    }
    let host = url.host_str()?;
    let host = host.to_ascii_lowercase();
    (host == "localhost" || host.ends_with(".localhost"))
        .then(|| format!("{host} is a loopback name{LIFT}"))
}

/// Whether `ip` may be reached under the guard.
#[cfg(test)]
fn is_allowed(ip: IpAddr) -> bool {
    refused_reason(ip).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_special_addresses_are_refused() {
        for ip in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.255",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "240.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "192.0.0.8",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(!is_allowed(ip), "{ip} must be refused");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "100.128.0.1",
            "172.32.0.1",
            "2606:4700::1111",
            "64:ff9b::808:808",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(is_allowed(ip), "{ip} must be allowed");
        }
    }

    #[test]
    fn literals_in_urls_are_checked() {
        let url = url::Url::parse("http://169.254.169.254/latest/meta-data/").unwrap();
        assert!(
            check_literal(&url, false)
                .unwrap_err()
                .contains("link-local")
        );
        assert!(check_literal(&url, true).is_ok());
        let url = url::Url::parse("http://[::1]:8080/").unwrap();
        assert!(check_literal(&url, false).is_err());
        let url = url::Url::parse("http://example.com/").unwrap();
        assert!(check_literal(&url, false).is_ok());
    }
}
