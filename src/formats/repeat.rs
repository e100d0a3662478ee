//! The head of a line that repeats the syslog prefix of the line read before it. A storm's lines
//! share their host and tag, and their date, with the line before; only the time of day (and a
//! kernel uptime after the tag) changes. [`HeadCache::parse`] gives exactly what
//! [`parse_head_with`] gives, reading only what differs.
//!
//! Why this is the same reading: a line that [`super::looks_syslog`] (`Mmm dd HH:MM:SS` at fixed
//! places) and does not start with the file's learned wrapper token has no wrapper to peel
//! ([`super::wrapper::peel_with`] sees a three-letter word followed by a space, then a digit or a
//! space and a digit), so its head is what [`syslog::rfc3164`] reads, when that succeeds. The
//! cache keeps a line that rfc3164 read with the English/German date reader and whose tag ends in
//! `": "`: everything rfc3164 read of it lies before that tag's end `M`. A later line with the
//! same bytes before `M`, except a valid `HH:MM:SS`, reads alike: same month and day (so the same
//! day, valid), same host, same tag; its time is that day plus its own time of day, and what
//! follows `M` (a kernel uptime) is read as rfc3164 reads it.

use super::time::{bracket_uptime, hms, syslog_datetime};
use super::{find_colon_space, looks_syslog, parse_head_with, syslog, LineHead, Prefix, Shape};
use crate::model::{LineStamp, WallStamp};

/// Where the time of day stands in a line that [`looks_syslog`].
const TIME: std::ops::Range<usize> = 7..15;

/// The last syslog prefix read (see the module doc).
#[derive(Default)]
pub struct HeadCache {
    /// The line's bytes up to the end of its tag (`M`); empty when nothing is cached.
    prefix: Vec<u8>,
    /// Naive seconds of the start of the line's day.
    day: i64,
    /// Microseconds of the time stamp.
    micros: u32,
    /// Where the host is in the line.
    host: (usize, usize),
    /// Counts the prefixes cached so far (names the one cached now).
    generation: u64,
    /// The last line parsed repeats (or set) the cached prefix.
    last: bool,
}

impl HeadCache {
    /// [`parse_head_with`]`(line, learned)`, from the cached prefix when `line` repeats it.
    pub fn parse<'a>(&mut self, line: &'a [u8], learned: Option<&[u8]>) -> LineHead<'a> {
        let unwrapped = learned.is_none_or(|t| !line.starts_with(t));
        if unwrapped {
            if let Some(head) = self.repeat(line) {
                self.last = true;
                return head;
            }
        }
        let head = parse_head_with(line, learned);
        self.prefix.clear();
        if unwrapped {
            self.learn(line, &head);
        }
        self.last = !self.prefix.is_empty();
        head
    }

    /// When the line parsed last repeats the cached prefix (or set it): which prefix that is
    /// (the same number for every line that repeats it) and where it ends. The bytes before that
    /// end are the same in all those lines but for the digits of the time of day, and the last
    /// of them is a space.
    pub fn repeated(&self) -> Option<(u64, usize)> {
        self.last.then_some((self.generation, self.prefix.len()))
    }

    /// The head of `line` when it repeats the cached prefix but for its time of day.
    fn repeat<'a>(&self, line: &'a [u8]) -> Option<LineHead<'a>> {
        let m = self.prefix.len();
        if m == 0
            || line.len() < m
            || line[..TIME.start] != self.prefix[..TIME.start]
            || line[TIME.end..m] != self.prefix[TIME.end..]
        {
            return None;
        }
        let sod = hms(&line[TIME])?;
        let wall = WallStamp {
            naive_secs: self.day + sod as i64,
            micros: self.micros,
            offset: None,
            has_year: false,
        };
        let (mono_us, msg_start) = after_tag(line, m);
        let prefix = Prefix {
            stamp: LineStamp {
                wall: Some(wall),
                mono_us,
                tod_us: None,
            },
            host: Some(&line[self.host.0..self.host.1]),
            msg_start,
            shape: Shape::Syslog,
        };
        Some(LineHead {
            prefix: Some(prefix),
            rank: None,
            msg_start,
            host: None,
            wrapped: false,
            peeled: 0,
        })
    }

    /// Caches the prefix of `line` (its head `head`, no learned wrapper token at its start) when
    /// it can be repeated (see the module doc).
    fn learn(&mut self, line: &[u8], head: &LineHead<'_>) {
        let Some(p) = head.prefix else { return };
        if !looks_syslog(line)
            || p.shape != Shape::Syslog
            || head.peeled != 0
            || head.wrapped
            || head.rank.is_some()
            || head.host.is_some()
        {
            return;
        }
        let (Some((wall, n)), Some(host)) = (syslog_datetime(line), p.host) else {
            return;
        };
        let Some(sod) = hms(&line[TIME]) else { return };
        let hs = n + 1;
        let he = hs + host.len();
        if p.stamp.wall != Some(wall)
            || line.get(n) != Some(&b' ')
            || line.get(hs..he) != Some(host)
        {
            return;
        }
        let window = &line[(he + 1).min(line.len())..line.len().min(he + 1 + 96)];
        let Some(q) = find_colon_space(window) else {
            return;
        };
        let m = he + 1 + q + 2;
        if after_tag(line, m) != (p.stamp.mono_us, p.msg_start)
            || syslog::rfc3164(line).map(|r| (r.stamp, r.msg_start)) != Some((p.stamp, p.msg_start))
        {
            return;
        }
        self.prefix.extend_from_slice(&line[..m]);
        self.generation += 1;
        self.day = wall.naive_secs - sod as i64;
        self.micros = wall.micros;
        self.host = (hs, he);
    }
}

/// What rfc3164 reads after a tag that ends at `m`: a kernel uptime and the space after it.
fn after_tag(line: &[u8], m: usize) -> (Option<u64>, usize) {
    match bracket_uptime(&line[m.min(line.len())..]) {
        Some((mono, n)) => {
            let mut msg = m + n;
            if line.get(msg) == Some(&b' ') {
                msg += 1;
            }
            (Some(mono), msg.min(line.len()))
        }
        None => (None, m.min(line.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `lines` in order through one cache and checks every head against the full reader.
    fn agree(lines: &[&[u8]], learned: Option<&[u8]>) -> usize {
        let mut cache = HeadCache::default();
        let mut hits = 0;
        for l in lines {
            let cached = cache.repeat(l).is_some() && learned.is_none_or(|t| !l.starts_with(t));
            hits += cached as usize;
            let got = cache.parse(l, learned);
            let want = parse_head_with(l, learned);
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{}",
                String::from_utf8_lossy(l)
            );
        }
        hits
    }

    #[test]
    fn repeated_prefixes_read_as_the_full_reader_reads_them() {
        let lines: Vec<&[u8]> = vec![
            b"Jan 12 00:00:00 gpu-node-01 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=13671",
            b"Jan 12 00:00:00 gpu-node-01 kernel: NVRM: Xid (PCI:0000:b7:00): 43, pid=2926",
            b"Jan 12 00:00:01 gpu-node-01 kernel: NVRM: Xid (PCI:0000:b7:00): 43, pid=2926",
            b"Jan 12 23:59:59 gpu-node-01 kernel: [ 4099.980000] nvidia-nvswitch1: SXid",
            b"Jan 12 23:59:60 gpu-node-01 kernel: [12099.980000]nvidia-nvswitch1: SXid",
            b"Jan 12 24:00:00 gpu-node-01 kernel: x",
            b"Jan 12 23:60:00 gpu-node-01 kernel: x",
            b"Jan 12 2x:00:00 gpu-node-01 kernel: x",
            b"Jan 12 00:00:00 gpu-node-01 kernel: ",
            b"Jan 12 00:00:00 gpu-node-01 kernel:",
            b"Jan 12 00:00:00 gpu-node-01 kernel: [ 1.5] short uptime",
            b"Jan 12 00:00:00 gpu-node-02 kernel: other host",
            b"Jan 12 00:00:00 gpu-node-02 kernel: [",
            b"Feb 29 10:00:00 gpu-node-02 kernel: leap day",
            b"Feb 29 10:00:01 gpu-node-02 kernel: leap day",
            b"Feb 30 10:00:00 gpu-node-02 kernel: no such day",
            b"Feb 30 10:00:01 gpu-node-02 kernel: no such day",
            b"Feb 31 10:00:00 gpu-node-02 kernel: no such day",
            b"Apr 31 10:00:00 gpu-node-02 kernel: no such day",
            b"Apr 30 10:00:00 gpu-node-02 kernel: x",
            b"Apr 30 10:00:00.123456 gpu-node-02 kernel: fraction",
            b"Apr 30 10:00:01.123456 gpu-node-02 kernel: fraction",
            b"Apr  3 10:00:01 gpu-node-02 kernel: padded day",
            b"Apr  3 10:00:02 gpu-node-02 kernel: padded day",
            b"Apr  3 10:00:02 ERROR kernel: a level, no host",
            b"Apr  3 10:00:02 ERROR kernel: a level, no host",
            b"Apr  3 10:00:02 gpu-node-02 no tag at all here",
            b"Apr  3 10:00:03 gpu-node-02 no tag at all here",
            b"Apr  3 10:00:03 gpu-node-02 sshd[123]: tag with pid",
            b"Apr  3 10:00:04 gpu-node-02 sshd[124]: tag with pid",
            b"Mai  3 10:00:04 gpu-node-02 kernel: German",
            b"Mai  3 10:00:05 gpu-node-02 kernel: German",
            b"Mar 14 02:13:07 | ERROR | trainer | x",
            b"Mar 14 02:13:07 fe80::1 kernel: v6",
            b"Mar 14 02:13:08 fe80::1 kernel: v6",
            b"Jan 12 00:00:00 gpu-node-01 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=13671",
            b"Jan 12 00:00:00 gpu-node-01 kernel",
            b"Jan 12 00:00:00 gpu-node-01 kernel: ok",
            b"Jan 12 00:00:00 gpu-node-01",
            b"Jan 12 00:00:00",
            b"Jan 12 00:00:00 gpu-node-01 kernel: ok",
            b"Jxn 12 00:00:00 gpu-node-01 kernel: ok",
            b"[rank1]: Jan 12 00:00:00 gpu-node-01 kernel: ok",
            b"Jan 12 00:00:00 gpu-node-01 kernel: ok",
            b"Jan 12 00:00:0",
        ];
        let hits = agree(&lines, None);
        assert!(hits >= 10, "{hits} hits");
        agree(&lines, Some(b"Jan"));
        agree(&lines, Some(b"Jan 12 00:00:00 gpu-node-01 kernel: NVRM"));
    }
}
