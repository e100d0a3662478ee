//! Kernel ring-buffer shapes: `dmesg` raw/`-T`/`--time-format iso`/`-r`/`-x`, and `/dev/kmsg` records.

use super::time::{
    bracket_uptime, civil_secs, ctime_datetime, digits, iso_datetime, number, NO_YEAR,
};
use super::{Prefix, Shape};
use crate::model::{LineStamp, WallStamp};

/// `[    5.123456] msg` (also `<6>[ ... ]` from `dmesg -r`, and a journal `short-monotonic` host/tag).
pub fn raw(line: &[u8]) -> Option<Prefix<'_>> {
    let (start, shape) = if line.first() == Some(&b'<') {
        let close = line.iter().take(5).position(|&c| c == b'>')?;
        number(&line[1..close])?;
        (close + 1, Shape::DmesgRaw)
    } else {
        (0, Shape::DmesgRaw)
    };
    let (mono, n) = bracket_uptime(&line[start..]).or_else(|| uptime_and_delta(&line[start..]))?;
    let mut msg = start + n;
    if line.get(msg) == Some(&b' ') {
        msg += 1;
    }
    // caller id bracket `[    T123] `
    if line.get(msg) == Some(&b'[') {
        if let Some(close) = line[msg..].iter().take(14).position(|&c| c == b']') {
            let inner = &line[msg + 1..msg + close];
            let t = inner
                .iter()
                .skip_while(|&&c| c == b' ')
                .copied()
                .collect::<Vec<u8>>();
            if t.len() >= 2
                && (t[0] == b'T' || t[0] == b'C')
                && t[1..].iter().all(u8::is_ascii_digit)
            {
                msg += close + 1;
                if line.get(msg) == Some(&b' ') {
                    msg += 1;
                }
            }
        }
    }
    let host = journal_host(&line[msg..]).map(|(host, skip)| {
        msg += skip;
        host
    });
    Some(Prefix {
        stamp: LineStamp {
            wall: None,
            mono_us: Some(mono),
            tod_us: None,
        },
        host,
        msg_start: msg,
        shape,
    })
}

/// The `host tag: ` that `journalctl -o short-monotonic` (and `short-delta`) puts after the
/// uptime: only when the tag is `kernel` or `ident[pid]`, so that dmesg's own `driver device: `
/// (`usb 1-1: `, `pcieport 0000:00:02.0: `) is never taken for a host.
fn journal_host(b: &[u8]) -> Option<(&[u8], usize)> {
    let sp = b.iter().take(65).position(|&c| c == b' ')?;
    let host = &b[..sp];
    if host.is_empty()
        || !host
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'))
    {
        return None;
    }
    let rest = &b[sp + 1..];
    let colon = rest.iter().take(64).position(|&c| c == b':')?;
    if rest.get(colon + 1) != Some(&b' ') {
        return None;
    }
    let tag = &rest[..colon];
    let ok = tag == b"kernel"
        || tag.strip_suffix(b"]").and_then(|t| {
            let open = t.iter().position(|&c| c == b'[')?;
            let (ident, pid) = (&t[..open], &t[open + 1..]);
            (!ident.is_empty()
                && !ident.contains(&b' ')
                && !pid.is_empty()
                && pid.iter().all(u8::is_ascii_digit))
            .then_some(())
        }) == Some(());
    ok.then_some((host, sp + 1 + colon + 2))
}

/// `[Sun Feb 23 16:24:18 2025] msg` from `dmesg -T`.
pub fn ctime(line: &[u8]) -> Option<Prefix<'_>> {
    if line.first() != Some(&b'[') {
        return None;
    }
    let (ws, n) = ctime_datetime(&line[1..])?;
    let mut i = 1 + n;
    // `dmesg -T -d` adds a delta before the bracket closes
    while i < line.len() && line[i] != b']' && i < 48 {
        i += 1;
    }
    if line.get(i) != Some(&b']') {
        return None;
    }
    i += 1;
    if line.get(i) == Some(&b' ') {
        i += 1;
    }
    Some(Prefix {
        stamp: LineStamp {
            wall: Some(ws),
            mono_us: None,
            tod_us: None,
        },
        host: None,
        msg_start: i,
        shape: Shape::DmesgCtime,
    })
}

/// `[May19 19:57] msg` of `dmesg -H` / `-e` (`--reltime`): printed when the minute changes; the
/// month name may be localized (`[Mär14 02:13]`). Minute resolution, no year, no zone.
pub fn reltime(line: &[u8]) -> Option<Prefix<'_>> {
    if line.first() != Some(&b'[') {
        return None;
    }
    let (month, ml) = super::locale::month_name(&line[1..])?;
    let mut i = 1 + ml;
    if line.get(i) == Some(&b' ') {
        i += 1;
    }
    let (day, dl) = number(line.get(i..)?)?;
    i += dl;
    if dl > 2 || !(1..=31).contains(&day) || line.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let b = line.get(i..i + 6)?;
    if b[2] != b':' || b[5] != b']' {
        return None;
    }
    let (h, m) = (digits(b, 2)?, digits(&b[3..], 2)?);
    if h > 23 || m > 59 {
        return None;
    }
    i += 6;
    if line.get(i) == Some(&b' ') {
        i += 1;
    }
    let naive_secs = civil_secs(NO_YEAR, month, day as u32, h * 3600 + m * 60)?;
    Some(Prefix {
        stamp: LineStamp {
            wall: Some(WallStamp {
                naive_secs,
                micros: 0,
                offset: None,
                has_year: false,
            }),
            mono_us: None,
            tod_us: None,
        },
        host: None,
        msg_start: i,
        shape: Shape::DmesgRel,
    })
}

/// The delta of a `dmesg -H` line `[  +0.000127] msg`, or of a `dmesg --time-format delta` line
/// `[<    0.000127>] msg`, in microseconds, and the prefix length.
pub fn delta_us(line: &[u8]) -> Option<(u64, usize)> {
    if line.first() != Some(&b'[') {
        return None;
    }
    let angle = line.get(1) == Some(&b'<');
    let mut i = 1 + angle as usize;
    while line.get(i) == Some(&b' ') {
        i += 1;
    }
    if !angle {
        if line.get(i) != Some(&b'+') {
            return None;
        }
        i += 1;
    }
    let (us, n) = secs_micros(line.get(i..)?)?;
    i += n;
    if angle {
        if line.get(i) != Some(&b'>') {
            return None;
        }
        i += 1;
    }
    (line.get(i) == Some(&b']')).then_some((us, i + 1))
}

/// `SECS.MICROS` (six fraction digits) in microseconds, and its length.
fn secs_micros(b: &[u8]) -> Option<(u64, usize)> {
    let (secs, sl) = number(b)?;
    if b.get(sl) != Some(&b'.') || secs > super::time::MAX_UPTIME_S {
        return None;
    }
    let (frac, fl) = number(b.get(sl + 1..)?)?;
    (fl == 6).then_some((secs * 1_000_000 + frac, sl + 1 + fl))
}

/// `[  123.456789 <    0.000127>]` of `dmesg --time-format delta,raw` (`dmesg -d`): the uptime
/// in microseconds and the prefix length.
fn uptime_and_delta(b: &[u8]) -> Option<(u64, usize)> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut i = 1;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    let (mono, n) = secs_micros(b.get(i..)?)?;
    i += n;
    if b.get(i) != Some(&b' ') {
        return None;
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    // `journalctl -o short-delta` pads the first entry's empty delta with spaces
    if b.get(i) == Some(&b']') {
        return Some((mono, i + 1));
    }
    if b.get(i) != Some(&b'<') {
        return None;
    }
    i += 1;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    let (_, n) = secs_micros(b.get(i..)?)?;
    i += n;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    (b.get(i..i + 2) == Some(b">]")).then_some((mono, i + 2))
}

/// `[  +0.000127] msg` of `dmesg -H`: a time relative to the line before; see [`reltime_stamp`].
pub fn reldelta(line: &[u8]) -> Option<Prefix<'_>> {
    let (_, mut n) = delta_us(line)?;
    if line.get(n) == Some(&b' ') {
        n += 1;
    }
    Some(Prefix {
        stamp: LineStamp::default(),
        host: None,
        msg_start: n,
        shape: Shape::DmesgDelta,
    })
}

/// Lines walked back from a `dmesg -H` delta line to the full stamp it counts from.
const RELTIME_LINES: usize = 20_000;

/// The time of the `dmesg -H` delta line starting at `start`: the last full `[May19 19:57]` stamp
/// above it plus every delta since (continuation lines carry none). `None` when no full stamp is
/// within reach.
pub fn reltime_stamp(buf: &[u8], start: usize) -> Option<WallStamp> {
    let mut total = 0u64;
    let mut pos = start;
    let mut le = memchr::memchr(b'\n', &buf[start..]).map_or(buf.len(), |p| start + p);
    for _ in 0..RELTIME_LINES {
        let line = &buf[pos..le];
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some((d, _)) = delta_us(line) {
            total += d;
        } else if let Some(p) = reltime(line) {
            let mut w = p.stamp.wall?;
            let us = w.micros as u64 + total;
            w.naive_secs += (us / 1_000_000) as i64;
            w.micros = (us % 1_000_000) as u32;
            return Some(w);
        }
        if pos == 0 {
            return None;
        }
        le = pos - 1;
        pos = memchr::memrchr(b'\n', &buf[..le]).map_or(0, |p| p + 1);
    }
    None
}

/// `2025-01-21T04:41:44,283302+00:00 msg` from `dmesg --time-format iso`.
pub fn iso(line: &[u8]) -> Option<Prefix<'_>> {
    let (ws, n) = iso_datetime(line)?;
    if line.get(n) != Some(&b' ') || ws.offset.is_none() {
        return None;
    }
    Some(Prefix {
        stamp: LineStamp {
            wall: Some(ws),
            mono_us: None,
            tod_us: None,
        },
        host: None,
        msg_start: n + 1,
        shape: Shape::DmesgIso,
    })
}

/// `kern  :warn  : ` prefix of `dmesg -x`, followed by any other dmesg shape.
pub fn decoded(line: &[u8]) -> Option<Prefix<'_>> {
    let colon = line.iter().take(8).position(|&c| c == b':')?;
    let fac = line[..colon].trim_ascii_end();
    if !matches!(
        fac,
        b"kern"
            | b"user"
            | b"daemon"
            | b"syslog"
            | b"auth"
            | b"local0"
            | b"local7"
            | b"mail"
            | b"cron"
    ) {
        return None;
    }
    let rest = &line[colon + 1..];
    let colon2 = rest.iter().take(8).position(|&c| c == b':')?;
    let lvl = rest[..colon2].trim_ascii();
    if !matches!(
        lvl,
        b"emerg" | b"alert" | b"crit" | b"err" | b"warn" | b"notice" | b"info" | b"debug"
    ) {
        return None;
    }
    let mut off = colon + 1 + colon2 + 1;
    if line.get(off) == Some(&b' ') {
        off += 1;
    }
    let inner = &line[off..];
    let mut p = raw(inner).or_else(|| ctime(inner)).or_else(|| iso(inner))?;
    p.msg_start += off;
    Some(p)
}

/// How kernel messages start when they are copied without any time or host prefix (`dmesg
/// --time-format notime`, a terminal or a ticket): the driver's and the kernel's own tags.
const BARE_STARTS: &[&[u8]] = &[
    b"NVRM: ",
    b"kernel: ",
    b"nvidia-nvswitch",
    b"nvidia-modeset: ",
    b"nvidia-uvm: ",
    b"nvidia ",
    b"pcieport ",
    b"mlx5_core ",
    b"INFO: task ",
    b"BUG: ",
    b"Call Trace:",
    b"mce: ",
    b"EDAC ",
    b"Out of memory: ",
    b"Memory cgroup out of memory",
    b"watchdog: ",
    b"rcu: ",
    b"Kernel panic",
    b"WARNING: CPU: ",
    b"[Hardware Error]: ",
];

/// True when a line without prefix is a kernel message by how it starts (see [`BARE_STARTS`]),
/// also with the `{N}` tag of a firmware error record.
pub fn is_bare_message(line: &[u8]) -> bool {
    let t = line.trim_ascii_start();
    let t = match t.first() {
        Some(b'{') => t
            .iter()
            .position(|&c| c == b'}')
            .filter(|&p| p < 6)
            .map_or(t, |p| &t[p + 1..]),
        _ => t,
    };
    BARE_STARTS.iter().any(|s| t.starts_with(s))
}

/// `/dev/kmsg` record: `prio,seq,usec,flags[,...];msg`.
pub fn kmsg(line: &[u8]) -> Option<Prefix<'_>> {
    let semi = memchr::memchr(b';', &line[..line.len().min(64)])?;
    let head = &line[..semi];
    let mut fields = head.split(|&c| c == b',');
    let prio = fields.next()?;
    let seq = fields.next()?;
    let usec = fields.next()?;
    let flags = fields.next()?;
    if prio.is_empty()
        || !prio.iter().all(u8::is_ascii_digit)
        || seq.is_empty()
        || !seq.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    let (us, ul) = number(usec)?;
    if ul != usec.len() || !matches!(flags, b"-" | b"c" | b"+") {
        return None;
    }
    Some(Prefix {
        stamp: LineStamp {
            wall: None,
            mono_us: Some(us),
            tod_us: None,
        },
        host: None,
        msg_start: semi + 1,
        shape: Shape::Kmsg,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_shapes() {
        let p = raw(b"[74785.660366] pcieport 0000:00:02.0: AER").unwrap();
        assert_eq!(p.stamp.mono_us, Some(74_785_660_366));
        assert_eq!(&b"[74785.660366] pcieport"[p.msg_start..], b"pcieport");
        let p = raw(b"<4>[    1.500000] NVRM: x").unwrap();
        assert_eq!(p.stamp.mono_us, Some(1_500_000));
        let p = raw(b"[    1.234567] [    T123] msg").unwrap();
        assert_eq!(&b"[    1.234567] [    T123] msg"[p.msg_start..], b"msg");
        assert!(raw(b"[UFW BLOCK] x").is_none());
        // journalctl -o short-monotonic: host and tag, never a driver and its device
        let l = b"[    5.000000] gpu-node7 kernel: NVRM: Xid";
        let p = raw(l).unwrap();
        assert_eq!(
            (p.host, &l[p.msg_start..]),
            (Some(&b"gpu-node7"[..]), &b"NVRM: Xid"[..])
        );
        let l = b"[    5.000000] n7 systemd[1]: Started x.";
        assert_eq!(raw(l).unwrap().host, Some(&b"n7"[..]));
        for l in [
            &b"[    5.000000] usb 1-1: new high-speed USB device"[..],
            b"[    5.000000] pcieport 0000:00:02.0: AER: x",
            b"[    5.000000] python[1234]: segfault at 0",
            b"[    5.000000] NVRM: Xid (PCI:0000:3b:00): 79",
        ] {
            assert_eq!(raw(l).unwrap().host, None, "{}", String::from_utf8_lossy(l));
        }
    }

    #[test]
    fn ctime_and_iso_and_decode() {
        let l = b"[Sun Feb 23 16:24:18 2025] NVRM: Xid";
        let p = ctime(l).unwrap();
        assert_eq!(&l[p.msg_start..], b"NVRM: Xid");
        let l = b"2025-01-21T04:41:44,283302+00:00 NVRM: Xid";
        let p = iso(l).unwrap();
        assert_eq!(&l[p.msg_start..], b"NVRM: Xid");
        let l = b"kern  :warn  : [    5.000001] NVRM: Xid";
        let p = decoded(l).unwrap();
        assert_eq!(&l[p.msg_start..], b"NVRM: Xid");
    }

    #[test]
    fn kmsg_records() {
        let l = b"6,339,5140900,-;NET: Registered protocol family 10";
        let p = kmsg(l).unwrap();
        assert_eq!(p.stamp.mono_us, Some(5_140_900));
        assert_eq!(&l[p.msg_start..], b"NET: Registered protocol family 10");
        assert!(kmsg(b"6,339,5140900,-,caller=T1;x").is_some());
        assert!(kmsg(b"1,2,3").is_none());
    }

    #[test]
    fn bare_kernel_messages() {
        assert!(is_bare_message(
            b"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus."
        ));
        assert!(is_bare_message(b"  kernel: NVRM: GPU at PCI:0000:3b:00"));
        assert!(is_bare_message(
            b"{1}[Hardware Error]: event severity: fatal"
        ));
        assert!(!is_bare_message(b"Epoch 1: loss 0.5"));
    }

    #[test]
    fn delta_time_formats() {
        let p = raw(b"[  721.028170 <    0.000059>] INFO: task x:1 blocked").unwrap();
        assert_eq!(p.stamp.mono_us, Some(721_028_170));
        assert_eq!(p.msg_start, 30);
        let p = reldelta(b"[<    0.000127>] NVRM: Xid").unwrap();
        assert_eq!(p.shape, Shape::DmesgDelta);
        assert_eq!(&b"[<    0.000127>] NVRM: Xid"[p.msg_start..], b"NVRM: Xid");
        assert_eq!(delta_us(b"[<    1.500000>] x"), Some((1_500_000, 16)));
        assert!(raw(b"[  721.028170 <    0.000059] x").is_none());
    }

    #[test]
    fn reltime_minute_stamps_and_deltas() {
        let text = b"[May19 19:57] usb 1-1: new high-speed USB device\n[  +0.000127] usb 1-1: New USB device found\n               continued record\n[  +1.500000] NVRM: Xid (PCI:0000:3b:00): 79, x\n[May19 19:58] next minute\n";
        let p = reltime(text).unwrap();
        let base = p.stamp.wall.unwrap();
        assert!(!base.has_year);
        assert_eq!(&text[p.msg_start..p.msg_start + 3], b"usb");
        let xid = text
            .windows(14)
            .position(|w| w == b"[  +1.500000] ")
            .unwrap();
        let p = reldelta(&text[xid..]).unwrap();
        assert!(p.stamp.is_empty());
        assert!(text[xid + p.msg_start..].starts_with(b"NVRM"));
        let w = reltime_stamp(text, xid).unwrap();
        assert_eq!(w.naive_secs, base.naive_secs + 1);
        assert_eq!(w.micros, 500_127);
        // a zero-padded or space-padded day, a localized month
        assert!(reltime(b"[May 9 19:57] x").is_some());
        assert!(reltime(b"[Mar 14 02:13] x").is_some());
        let de = reltime("[Mär14 02:13] x".as_bytes()).unwrap();
        assert_eq!(
            de.stamp.wall.unwrap().naive_secs,
            civil_secs(NO_YEAR, 3, 14, 2 * 3600 + 13 * 60).unwrap()
        );
        // a delta with no full stamp above it has no time
        assert!(reltime_stamp(b"[  +0.000127] x\n", 0).is_none());
        assert!(delta_us(b"[    5.123456] raw").is_none());
        assert!(reltime(b"[UFW BLOCK] x").is_none());
    }
}
