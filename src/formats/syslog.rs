//! Syslog file shapes: RFC 3164 (`kern.log`, `/var/log/messages`, journal `short`), RFC 3339 /
//! rsyslog high precision (journal `short-iso`), RFC 5424, and Talos-style `host: facility: level: [time]:`.

use super::time::{bracket_uptime, iso_datetime, syslog_datetime};
use super::{Prefix, Shape};
use crate::model::LineStamp;

/// Words that stand where a syslog line has its host in other timed logs: log levels (Python
/// logging `2026-03-14 02:13:07,412 | ERROR | …`, dnf `… SUBDEBUG Upgrade: …`) and dpkg.log actions
/// (`2025-06-11 06:25:40 upgrade nvidia-driver-535 …`). Compared without regard to case.
const NOT_HOSTS: [&str; 24] = [
    "alert",
    "configure",
    "conffile",
    "crit",
    "critical",
    "ddebug",
    "debug",
    "emerg",
    "err",
    "error",
    "fatal",
    "info",
    "install",
    "notice",
    "purge",
    "remove",
    "startup",
    "status",
    "subdebug",
    "trace",
    "trigproc",
    "upgrade",
    "warn",
    "warning",
];

/// Whether the word after a syslog time stamp can be a host: a name of letters, digits, dots,
/// dashes and underscores with at least one letter or digit (an IPv4 address is one), or an IPv6
/// address; never a lone punctuation mark, a log level or a package-log action.
pub fn plausible_host(h: &[u8]) -> bool {
    // one pass over the word: every byte a name's, every byte an IPv6 address's, colons, letters
    let (mut name, mut hex, mut colons, mut alnum) = (true, true, 0usize, false);
    for &c in h {
        let a = c.is_ascii_alphanumeric();
        alnum |= a;
        name &= a || matches!(c, b'.' | b'-' | b'_');
        hex &= c.is_ascii_hexdigit() || matches!(c, b':' | b'.');
        colons += (c == b':') as usize;
    }
    let ipv6 = colons >= 2 && hex;
    (name || ipv6) && alnum && !not_host(h)
}

/// Whether `h` is one of [`NOT_HOSTS`] (whose words are 3 to 9 letters long).
fn not_host(h: &[u8]) -> bool {
    (3..=9).contains(&h.len())
        && NOT_HOSTS
            .iter()
            .any(|w| w.as_bytes().eq_ignore_ascii_case(h))
}

/// After the time: `host tag[pid]: msg`, possibly with a kernel `[uptime]` after the tag.
fn host_and_tag<'a>(
    line: &'a [u8],
    mut i: usize,
    stamp: &mut LineStamp,
) -> Option<(Option<&'a [u8]>, usize)> {
    if line.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let host_end = i + memchr::memchr(b' ', &line[i..line.len().min(i + 255)])?;
    let host = &line[i..host_end];
    if !plausible_host(host) {
        return None;
    }
    let mut msg = host_end + 1;
    // tag ends at the first ": " within a reasonable distance
    let window = &line[msg..line.len().min(msg + 96)];
    if let Some(p) = super::find_colon_space(window) {
        msg += p + 2;
    } else if window.ends_with(b":") {
        msg += window.len();
    }
    if let Some((mono, n)) = bracket_uptime(&line[msg.min(line.len())..]) {
        stamp.mono_us = Some(mono);
        msg += n;
        if line.get(msg) == Some(&b' ') {
            msg += 1;
        }
    }
    Some((Some(host), msg.min(line.len())))
}

/// `Mmm dd HH:MM:SS host tag: msg`.
pub fn rfc3164(line: &[u8]) -> Option<Prefix<'_>> {
    let (ws, n) = syslog_datetime(line).or_else(|| super::locale::cjk_syslog_prefix(line))?;
    let mut stamp = LineStamp {
        wall: Some(ws),
        mono_us: None,
        tod_us: None,
    };
    let (host, msg) = host_and_tag(line, n, &mut stamp)?;
    Some(Prefix {
        stamp,
        host,
        msg_start: msg,
        shape: Shape::Syslog,
    })
}

/// `2022-07-17T21:00:02.497397-04:00 host tag: msg`.
pub fn rfc3339(line: &[u8]) -> Option<Prefix<'_>> {
    let (ws, n) = iso_datetime(line)?;
    let mut stamp = LineStamp {
        wall: Some(ws),
        mono_us: None,
        tod_us: None,
    };
    let (host, msg) = host_and_tag(line, n, &mut stamp)?;
    Some(Prefix {
        stamp,
        host,
        msg_start: msg,
        shape: Shape::SyslogIso,
    })
}

/// `<PRI>1 TIMESTAMP HOST APP PROCID MSGID [SD] MSG`.
pub fn rfc5424(line: &[u8]) -> Option<Prefix<'_>> {
    let close = line.iter().take(6).position(|&c| c == b'>')?;
    if line.first() != Some(&b'<')
        || line.get(close + 1) != Some(&b'1')
        || line.get(close + 2) != Some(&b' ')
    {
        return None;
    }
    let rest_start = close + 3;
    let (ws, n) = iso_datetime(&line[rest_start..])?;
    let mut i = rest_start + n;
    let mut fields = Vec::with_capacity(4);
    for _ in 0..4 {
        if line.get(i) != Some(&b' ') {
            return None;
        }
        i += 1;
        let end = line[i..]
            .iter()
            .position(|&c| c == b' ')
            .map_or(line.len(), |p| i + p);
        fields.push(&line[i..end]);
        i = end;
    }
    // structured data: `-` or one or more `[...]`
    if line.get(i) == Some(&b' ') {
        i += 1;
        if line.get(i) == Some(&b'-') {
            i += 1;
        } else {
            while line.get(i) == Some(&b'[') {
                let close = line[i..]
                    .iter()
                    .position(|&c| c == b']')
                    .map_or(line.len(), |p| i + p + 1);
                i = close;
            }
        }
        if line.get(i) == Some(&b' ') {
            i += 1;
        }
    }
    let host = fields.first().copied().filter(|h| *h != b"-");
    Some(Prefix {
        stamp: LineStamp {
            wall: Some(ws),
            mono_us: None,
            tod_us: None,
        },
        host,
        msg_start: i.min(line.len()),
        shape: Shape::Syslog5424,
    })
}

/// Talos / machined kernel log: `192.168.11.119: kern: warning: [2026-04-22T21:26:20.599488292Z]: msg`.
pub fn talos(line: &[u8]) -> Option<Prefix<'_>> {
    let first = super::find_colon_space(&line[..line.len().min(80)])?;
    let host = &line[..first];
    if host.is_empty()
        || !host
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b':'))
    {
        return None;
    }
    let open = first + memchr::memchr(b'[', &line[first..line.len().min(first + 40)])?;
    let (ws, n) = iso_datetime(&line[open + 1..])?;
    let mut i = open + 1 + n;
    if line.get(i) != Some(&b']') {
        return None;
    }
    i += 1;
    if line.get(i) == Some(&b':') {
        i += 1;
    }
    if line.get(i) == Some(&b' ') {
        i += 1;
    }
    Some(Prefix {
        stamp: LineStamp {
            wall: Some(ws),
            mono_us: None,
            tod_us: None,
        },
        host: Some(host),
        msg_start: i,
        shape: Shape::Talos,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::parse_prefix;

    #[test]
    fn rfc3164_with_inner_uptime() {
        let l = b"Nov 15 12:43:10 sdu-dpai-turing-1 kernel: [ 7613.977841] NVRM: Xid (PCI:0000:03:00): 13";
        let p = rfc3164(l).unwrap();
        assert_eq!(p.host, Some(&b"sdu-dpai-turing-1"[..]));
        assert_eq!(p.stamp.mono_us, Some(7_613_977_841));
        assert!(l[p.msg_start..].starts_with(b"NVRM: Xid"));
    }

    #[test]
    fn rfc3164_without_uptime_and_odd_tags() {
        let l = b"Aug 30 11:13:05 host kernel: [UFW BLOCK] IN=eth0";
        let p = rfc3164(l).unwrap();
        assert_eq!(p.stamp.mono_us, None);
        assert!(l[p.msg_start..].starts_with(b"[UFW BLOCK]"));
        let l = b"Nov 16 14:26:18 idrac-X L4, S55 [1075]: GetGPGPUPwr: End";
        let p = rfc3164(l).unwrap();
        assert_eq!(p.host, Some(&b"idrac-X"[..]));
    }

    #[test]
    fn iso_and_5424_and_talos() {
        let l = b"2022-07-17T21:00:02.497397-04:00 host kernel: NVRM: x";
        let p = rfc3339(l).unwrap();
        assert_eq!(p.stamp.wall.unwrap().offset, Some(-4 * 3600));
        assert!(l[p.msg_start..].starts_with(b"NVRM"));
        let l = b"<4>1 2003-10-11T22:14:15.003Z gpu1 kernel - - - NVRM: x";
        let p = rfc5424(l).unwrap();
        assert_eq!(p.host, Some(&b"gpu1"[..]));
        assert!(l[p.msg_start..].starts_with(b"NVRM"));
        let l = b"192.168.11.119: kern: warning: [2026-04-22T21:26:20.599488292Z]: NVRM: Xid";
        let p = talos(l).unwrap();
        assert_eq!(p.host, Some(&b"192.168.11.119"[..]));
        assert!(l[p.msg_start..].starts_with(b"NVRM"));
    }

    #[test]
    fn iso_syslog_hosts_are_read() {
        for (l, host) in [
            (
                &b"2026-03-14T02:13:07.412+00:00 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 79"[..],
                &b"gpu-node-07"[..],
            ),
            (
                b"2026-03-14T02:13:07.412+00:00 gpu-node-07.cluster.example kernel: x",
                b"gpu-node-07.cluster.example",
            ),
            (b"2026-03-14T02:13:07Z node_12 kernel: x", b"node_12"),
            (b"2026-03-14T02:13:07Z 10.1.2.3 kernel: x", b"10.1.2.3"),
            (b"2026-03-14T02:13:07Z fe80::1 kernel: x", b"fe80::1"),
            (b"2026-03-14T02:13:07Z INFRA-7 kernel: x", b"INFRA-7"),
        ] {
            let p = rfc3339(l).unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(l)));
            assert_eq!(p.host, Some(host), "{}", String::from_utf8_lossy(l));
            assert_eq!(p.shape, Shape::SyslogIso);
        }
        let l = b"Mar 14 02:13:07 gpu-node-07 kernel: [1795955.589904] NVRM: x";
        assert_eq!(rfc3164(l).unwrap().host, Some(&b"gpu-node-07"[..]));
    }

    #[test]
    fn not_hosts_are_3_to_9_letters() {
        assert!(NOT_HOSTS.iter().all(|w| (3..=9).contains(&w.len())));
        assert!(!plausible_host(b"WARNING") && !plausible_host(b"Configure"));
        assert!(plausible_host(b"warnings") && plausible_host(b"fe80::1"));
        assert!(!plausible_host(b"::") && !plausible_host(b"a/b") && !plausible_host(b""));
    }

    #[test]
    fn words_that_are_no_host_are_not_taken_for_one() {
        for l in [
            &b"2026-03-14 02:13:07,412 | ERROR | trainer | CUDA error: an illegal memory access"[..],
            b"2026-03-14 02:13:07,412 - INFO - rank 3 started",
            b"2026-03-14 02:13:07,412 WARNING trainer: loss is nan",
            b"2025-06-11 06:25:40 upgrade nvidia-driver-535:amd64 535.161.08 535.183.01",
            b"2025-06-11 06:25:31 install libnvidia-cfg1-535:amd64 <none> 535.183.01",
            b"2025-06-11 06:26:02 status installed nvidia-driver-535:amd64 535.183.01",
            b"2025-04-02T09:14:51+0000 SUBDEBUG Upgrade: nvidia-driver-3:550.54.15-1.el8.x86_64",
            b"2026-03-14T02:13:07Z ... kernel: x",
            b"2026-03-14T02:13:07Z <gpu> kernel: x",
            b"Mar 14 02:13:07 | ERROR | trainer | x",
        ] {
            let p = parse_prefix(l);
            assert!(
                p.and_then(|p| p.host).is_none(),
                "{} gave host {:?}",
                String::from_utf8_lossy(l),
                p.and_then(|p| p.host).map(String::from_utf8_lossy)
            );
        }
        // the Python logging line is still read as a timed job-log line
        let l = b"2026-03-14 02:13:07,412 | ERROR | trainer | CUDA error";
        let p = parse_prefix(l).unwrap();
        assert_eq!(p.shape, Shape::JobBracket);
        assert!(p.stamp.wall.is_some());
    }
}
