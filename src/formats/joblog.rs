//! Time and host prefixes of job logs: NCCL debug lines, PyTorch c10/glog and Python logging,
//! DeepSpeed/Megatron brackets, Fabric Manager, Slurm `--label` task prefixes.

use super::time::{civil_secs, digits, fraction, hms, iso_datetime, month_abbrev, number, NO_YEAR};
use super::{Prefix, Shape};
use crate::model::{LineStamp, WallStamp};

/// Strips launcher prefixes that precede everything else (`[rank3]:`, `[default0]:`, ` 3: `
/// of srun -l, and the other wrappers of [`super::wrapper`]). Returns the offset of what follows
/// and the rank they name.
pub fn launcher_prefix(line: &[u8]) -> (usize, Option<i64>) {
    let p = super::wrapper::peel(line);
    (p.off, p.rank)
}

/// `[2025-03-21 02:07:08] ` (NCCL ≥ 2.26, Megatron) or `[2024-03-12 02:29:19,487] ` (DeepSpeed, torch).
fn bracket_iso(line: &[u8]) -> Option<(WallStamp, usize)> {
    let start = if line.first() == Some(&b' ') { 1 } else { 0 };
    if line.get(start) != Some(&b'[') {
        return None;
    }
    let (ws, n) = iso_datetime(&line[start + 1..])?;
    let close = start + 1 + n;
    if line.get(close) != Some(&b']') {
        return None;
    }
    Some((ws, close + 1))
}

/// glog/c10 `E0321 02:07:08.408271257 ` (no year, local time); the fraction is not a wall fraction.
fn glog(line: &[u8]) -> Option<(WallStamp, usize)> {
    if !matches!(line.first()?, b'E' | b'W' | b'I' | b'F' | b'V' | b'C') {
        return None;
    }
    let mo = digits(&line[1..], 2)?;
    let d = digits(&line[3..], 2)?;
    if line.get(5) != Some(&b' ') {
        return None;
    }
    let sod = hms(line.get(6..)?)?;
    let (_, fl) = fraction(&line[14..]);
    let naive_secs = civil_secs(NO_YEAR, mo, d, sod)?;
    Some((
        WallStamp {
            naive_secs,
            micros: 0,
            offset: None,
            has_year: false,
        },
        14 + fl,
    ))
}

/// Fabric Manager `[Feb 27 2025 14:03:13] ` (local time, no zone).
fn fabric(line: &[u8]) -> Option<(WallStamp, usize)> {
    if line.first() != Some(&b'[') {
        return None;
    }
    let mo = month_abbrev(&line[1..])?;
    let (d, dl) = number(line.get(5..)?)?;
    let mut i = 5 + dl;
    if line.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let y = digits(&line[i..], 4)? as i32;
    i += 4;
    if line.get(i) != Some(&b' ') {
        return None;
    }
    let sod = hms(&line[i + 1..])?;
    i += 9;
    if line.get(i) != Some(&b']') {
        return None;
    }
    let ws = WallStamp {
        naive_secs: civil_secs(y, mo, d as u32, sod)?,
        micros: 0,
        offset: None,
        has_year: true,
    };
    Some((ws, i + 1))
}

/// NCCL `host:pid:tid [dev] ` prefix; returns the host and the prefix length.
pub fn nccl_host(line: &[u8]) -> Option<(&[u8], usize)> {
    let sp = memchr::memchr(b' ', &line[..line.len().min(200)])?;
    let head = &line[..sp];
    let mut parts = head.rsplitn(3, |&c| c == b':');
    let tid = parts.next()?;
    let pid = parts.next()?;
    let host = parts.next()?;
    if host.is_empty()
        || tid.is_empty()
        || pid.is_empty()
        || !tid.iter().all(u8::is_ascii_digit)
        || !pid.iter().all(u8::is_ascii_digit)
    {
        return None;
    }
    if line.get(sp + 1) != Some(&b'[') {
        return None;
    }
    Some((host, sp + 1))
}

/// Any job-log shape at the start of `line` (after launcher prefixes were stripped).
pub fn job_prefix(line: &[u8]) -> Option<Prefix<'_>> {
    let (ws, mut n, shape) = if let Some((ws, n)) = bracket_iso(line) {
        (Some(ws), n, Shape::JobBracket)
    } else if let Some((ws, n)) = fabric(line) {
        (Some(ws), n, Shape::FabricManager)
    } else if line.first() == Some(&b'[') {
        // c10 `[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] ` or `[E ProcessGroupNCCL.cpp:737] `
        let close = memchr::memchr(b']', &line[..line.len().min(96)])?;
        let inner = &line[1..close];
        if let Some((ws, n)) = hf_logging(line, close) {
            (Some(ws), n, Shape::JobBracket)
        } else if let Some((ws, _)) = glog_short(inner) {
            (Some(ws), close + 1, Shape::C10)
        } else if inner.len() > 2
            && matches!(inner[0], b'E' | b'W' | b'I' | b'F')
            && inner[1] == b' '
            && memchr::memchr(b':', inner).is_some()
        {
            (None, close + 1, Shape::C10)
        } else {
            return None;
        }
    } else if let Some((ws, n)) = glog(line) {
        (Some(ws), n, Shape::C10)
    } else if let Some((ws, n)) = logfmt(line).or_else(|| vllm(line)) {
        (Some(ws), n, Shape::JobBracket)
    } else if let Some((ws, n)) = iso_datetime(line) {
        // Python asctime `2024-03-12 02:29:19,487 ` without zone
        (Some(ws), n, Shape::JobBracket)
    } else {
        return None;
    };
    if line.get(n) == Some(&b' ') {
        n += 1;
    }
    let mut host = None;
    if let Some((h, hl)) = nccl_host(&line[n..]) {
        host = Some(h);
        n += hl;
    }
    Some(Prefix {
        stamp: LineStamp {
            wall: ws,
            mono_us: None,
            tod_us: None,
        },
        host,
        msg_start: n,
        shape,
    })
}

/// logfmt `time=2025-04-14T20:20:32.049+08:00 level=INFO ...` (Go slog, logrus): the time, and
/// the message from the fields after it.
fn logfmt(line: &[u8]) -> Option<(WallStamp, usize)> {
    let rest = line.strip_prefix(b"time=")?;
    let q = usize::from(rest.first() == Some(&b'"'));
    let (ws, n) = iso_datetime(&rest[q..])?;
    let mut end = 5 + q + n;
    if q == 1 && line.get(end) == Some(&b'"') {
        end += 1;
    }
    Some((ws, end))
}

/// Go `log` `2024/05/01 12:00:00[.000000] ` (local time, no zone).
pub fn go_log(line: &[u8]) -> Option<Prefix<'_>> {
    if line.len() < 20 || line[4] != b'/' || line[7] != b'/' || line[10] != b' ' {
        return None;
    }
    let y = digits(line, 4)? as i32;
    let mo = digits(&line[5..], 2)?;
    let d = digits(&line[8..], 2)?;
    let sod = hms(&line[11..])?;
    let (micros, fl) = fraction(&line[19..]);
    let mut n = 19 + fl;
    if line.get(n) == Some(&b' ') {
        n += 1;
    }
    Some(Prefix {
        stamp: LineStamp {
            wall: Some(WallStamp {
                naive_secs: civil_secs(y, mo, d, sod)?,
                micros,
                offset: None,
                has_year: true,
            }),
            mono_us: None,
            tod_us: None,
        },
        host: None,
        msg_start: n,
        shape: Shape::JobBracket,
    })
}

/// vLLM and Ray `INFO 05-01 12:00:00 [file.py:12] ` (also `file.py:12] ` of older vLLM).
fn vllm(line: &[u8]) -> Option<(WallStamp, usize)> {
    let sp = memchr::memchr(b' ', &line[..line.len().min(10)])?;
    if !matches!(
        &line[..sp],
        b"INFO" | b"WARNING" | b"ERROR" | b"DEBUG" | b"CRITICAL"
    ) {
        return None;
    }
    let b = line.get(sp + 1..)?;
    if b.len() < 14 || b[2] != b'-' || b[5] != b' ' {
        return None;
    }
    let mo = digits(b, 2)?;
    let d = digits(&b[3..], 2)?;
    let sod = hms(&b[6..])?;
    let (micros, fl) = fraction(&b[14..]);
    let mut n = sp + 1 + 14 + fl;
    if line.get(n) == Some(&b' ') {
        n += 1;
    }
    let rest = &line[n..];
    if let Some(close) = memchr::memchr(b']', &rest[..rest.len().min(80)]) {
        // the source location, when it holds no space
        if !rest[..close].contains(&b' ') {
            n += close + 1;
            if line.get(n) == Some(&b' ') {
                n += 1;
            }
        }
    }
    let ws = WallStamp {
        naive_secs: civil_secs(NO_YEAR, mo, d, sod)?,
        micros,
        offset: None,
        has_year: false,
    };
    Some((ws, n))
}

/// Hugging Face example scripts: `[INFO|trainer.py:2078] 2026-03-03 09:00:04,123 >> msg`
/// (`close` is the index of the first `]`); returns the stamp and where the message starts.
fn hf_logging(line: &[u8], close: usize) -> Option<(WallStamp, usize)> {
    let inner = &line[1..close];
    let bar = memchr::memchr(b'|', inner)?;
    if bar == 0 || !inner[..bar].iter().all(u8::is_ascii_uppercase) {
        return None;
    }
    if line.get(close + 1) != Some(&b' ') {
        return None;
    }
    let (ws, n) = iso_datetime(&line[close + 2..])?;
    let mut end = close + 2 + n;
    if line[end..].starts_with(b" >>") {
        end += 3;
    }
    Some((ws, end))
}

/// c10 `E321 02:07:08.408271257 File.cpp:607` inside brackets: month digits may be 1 or 2 wide.
fn glog_short(inner: &[u8]) -> Option<(WallStamp, usize)> {
    if !matches!(inner.first()?, b'E' | b'W' | b'I' | b'F' | b'V') {
        return None;
    }
    let sp = memchr::memchr(b' ', inner)?;
    let md = &inner[1..sp];
    if !(3..=4).contains(&md.len()) || !md.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let (mo, d) = if md.len() == 4 {
        (digits(md, 2)?, digits(&md[2..], 2)?)
    } else {
        (digits(md, 1)?, digits(&md[1..], 2)?)
    };
    let sod = hms(inner.get(sp + 1..)?)?;
    let naive_secs = civil_secs(NO_YEAR, mo, d, sod)?;
    Some((
        WallStamp {
            naive_secs,
            micros: 0,
            offset: None,
            has_year: false,
        },
        sp + 9,
    ))
}

/// Levels of Python's logging as rich's `RichHandler` prints them, in a column 8 wide.
const RICH_LEVELS: [&[u8]; 5] = [b"DEBUG", b"INFO", b"WARNING", b"ERROR", b"CRITICAL"];

/// A line of rich's logging layout (`RichHandler`, used by accelerate and torchrun when rich is
/// installed): a time column (`[15:58:29] `, `[01/10/25 15:58:29] `, or blanks when the time is
/// the line before's), the level padded to 8 columns, a space, the message (the source
/// location is right-aligned after it). The time column is a time of day (`%X`, the stamp holds
/// only that: the timeline dates it from the file's context) or a date and time (`%x %X`,
/// `MM/DD/YY` in the C locale); a blank column borrows the time of the line before. A message
/// wrapped by rich continues under the message column with a blank level column: that is a
/// continuation, not this shape.
pub fn rich(line: &[u8]) -> Option<Prefix<'_>> {
    let (col, stamp) = match line.first()? {
        b'[' => {
            let close = memchr::memchr(b']', &line[..line.len().min(24)])?;
            let inner = &line[1..close];
            let timelike = inner.len() >= 8
                && inner
                    .iter()
                    .all(|c| c.is_ascii_digit() || b":/. -".contains(c))
                && inner.contains(&b':');
            if !timelike || line.get(close + 1) != Some(&b' ') {
                return None;
            }
            (close + 2, rich_time(inner))
        }
        b' ' => (
            line.iter().take_while(|&&c| c == b' ').count(),
            LineStamp::default(),
        ),
        _ => return None,
    };
    let rest = &line[col..];
    let level = RICH_LEVELS.iter().find(|l| rest.starts_with(l))?;
    let pad = rest[level.len()..]
        .iter()
        .take_while(|&&c| c == b' ')
        .count();
    if pad + level.len() < 9 || rest.len() <= level.len() + pad {
        return None;
    }
    Some(Prefix {
        stamp,
        host: None,
        msg_start: col + level.len() + pad,
        shape: Shape::JobBracket,
    })
}

/// rich's time column: `15:58:29` (a time of day) or `01/10/25 15:58:29` (`%x %X`).
fn rich_time(inner: &[u8]) -> LineStamp {
    if let Some(tod) = super::clock::whole_time_of_day(inner) {
        return LineStamp::time_of_day(tod);
    }
    let dated = super::time::us_date(inner).and_then(|(y, mo, d, n)| {
        let rest = inner.get(n..)?.strip_prefix(b" ")?;
        let tod = super::clock::whole_time_of_day(rest)?;
        let sod = u32::try_from(tod / 1_000_000).ok()?;
        Some(WallStamp {
            naive_secs: civil_secs(y, mo, d, sod)?,
            micros: (tod % 1_000_000) as u32,
            offset: None,
            has_year: true,
        })
    });
    LineStamp {
        wall: dated,
        mono_us: None,
        tod_us: None,
    }
}

/// An NCCL line without any time: `host:pid:tid [dev] NCCL INFO …`.
pub fn nccl_untimed(line: &[u8]) -> Option<Prefix<'_>> {
    let (host, n) = nccl_host(line)?;
    Some(Prefix {
        stamp: LineStamp::default(),
        host: Some(host),
        msg_start: n,
        shape: Shape::Nccl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hugging_face_logging_prefix() {
        let line =
            b"[INFO|trainer.py:2078] 2026-03-03 09:00:04,123 >> ***** Running training *****";
        let p = job_prefix(line).expect("prefix");
        assert!(p.stamp.wall.is_some());
        assert_eq!(
            &line[p.msg_start..],
            b"***** Running training *****".as_slice()
        );
    }

    #[test]
    fn rich_logging_lines_are_lines_of_their_own() {
        let timed =
            b"[15:58:29] WARNING  Sending process 197 closing signal SIGTERM      api.py:699";
        let p = rich(timed).expect("timed rich line");
        assert!(timed[p.msg_start..].starts_with(b"Sending process 197"));
        assert_eq!(p.stamp.tod_us, Some((15 * 3600 + 58 * 60 + 29) * 1_000_000));
        assert!(p.stamp.wall.is_none());
        let blank =
            b"           WARNING  Sending process 198 closing signal SIGTERM      api.py:699";
        let p = rich(blank).expect("rich line under a time");
        assert!(blank[p.msg_start..].starts_with(b"Sending process 198"));
        let dated = rich(b"[01/10/25 15:58:29] INFO     Reading config  launch.py:12").unwrap();
        let w = dated.stamp.wall.expect("a date");
        assert!(w.has_year && dated.stamp.tod_us.is_none());
        assert_eq!(
            w.naive_secs,
            civil_secs(2025, 1, 10, 15 * 3600 + 58 * 60 + 29).unwrap()
        );
        assert!(rich(b"           CRITICAL Worker died").is_some());
        // rich's wrapped message lines, code in a traceback, a kernel call trace: not this shape
        for l in [
            &b"                    closing signal SIGTERM (continued)"[..],
            b"    INFO = 1",
            b"        ERROR: x",
            b"  ? __schedule+0x2c4/0x8a0",
            b"[15:58:29]WARNING  x",
        ] {
            assert!(rich(l).is_none(), "{}", String::from_utf8_lossy(l));
        }
    }

    #[test]
    fn launcher_prefixes() {
        assert_eq!(
            launcher_prefix(b"[rank5]: torch.OutOfMemoryError"),
            (9, Some(5))
        );
        assert_eq!(
            launcher_prefix(b"[rank0]:[E1122 06:40:00.5 x"),
            (8, Some(0))
        );
        assert_eq!(launcher_prefix(b" 3: hello"), (4, Some(3)));
        assert_eq!(launcher_prefix(b"12: hello"), (4, Some(12)));
        assert_eq!(launcher_prefix(b"hello: x"), (0, None));
    }

    #[test]
    fn c10_and_nccl_shapes() {
        let l = b"[E1122 06:40:00.504052851 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog";
        let p = job_prefix(l).unwrap();
        assert!(p.stamp.wall.is_some());
        assert_eq!(&l[p.msg_start..], b"[Rank 0] Watchdog");
        let l = b"[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog";
        let p = job_prefix(l).unwrap();
        assert!(p.stamp.wall.is_none());
        assert_eq!(&l[p.msg_start..], b"[Rank 1] Watchdog");
        let l = b"[2025-03-21 02:07:08] node7:123:456 [0] net.cc:789 NCCL WARN x";
        let p = job_prefix(l).unwrap();
        assert_eq!(p.host, Some(&b"node7"[..]));
        let l = b"kp-ddp-worker-0:3468:3905 [4] NCCL INFO x";
        assert_eq!(nccl_untimed(l).unwrap().host, Some(&b"kp-ddp-worker-0"[..]));
        let l = b"[Feb 27 2025 14:03:13] [ERROR] [tid 12727] detected NVSwitch";
        let p = job_prefix(l).unwrap();
        assert_eq!(p.shape, Shape::FabricManager);
        let l = b"time=2025-04-14T20:20:48.993+08:00 level=ERROR msg=x";
        let p = job_prefix(l).unwrap();
        assert_eq!(&l[p.msg_start..], b"level=ERROR msg=x");
        let l = b"INFO 05-01 12:00:00 [model_runner.py:12] Loading model";
        let p = job_prefix(l).unwrap();
        assert_eq!(&l[p.msg_start..], b"Loading model");
        let l = b"2024/05/01 12:00:00 exit status 1";
        let p = go_log(l).unwrap();
        assert_eq!(&l[p.msg_start..], b"exit status 1");
        let l = b"[2024-07-25 06:36:18,293] torch.distributed.elastic: [WARNING] x";
        assert_eq!(job_prefix(l).unwrap().stamp.wall.unwrap().micros, 293_000);
    }
}
