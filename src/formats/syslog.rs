//! Syslog file shapes: RFC 3164 (`kern.log`, `/var/log/messages`, journal `short`), RFC 3339 /
//! rsyslog high precision (journal `short-iso`), RFC 5424, and Talos-style `host: facility: level: [time]:`.

use super::time::{bracket_uptime, iso_datetime, syslog_datetime};
use super::{Prefix, Shape};
use crate::model::LineStamp;

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
    let host_end = i + line[i..].iter().take(255).position(|&c| c == b' ')?;
    let host = &line[i..host_end];
    if host.is_empty() || host.ends_with(b":") || !host.iter().all(|&c| c.is_ascii_graphic()) {
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
        },
        host: Some(host),
        msg_start: i,
        shape: Shape::Talos,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
