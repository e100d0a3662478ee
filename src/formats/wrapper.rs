//! Launcher and collector wrappers: what pdsh, srun, mpirun, torchrun, kubectl, docker compose,
//! Ray, job runners, grep, Markdown quoting and terminals put in front of a line before the
//! program's own prefix. [`peel`] removes them without allocating and keeps what they name
//! (host, rank, stream, pod, container); [`FileWrappers`] learns, per file, a repeated leading
//! token that no format explains and whether the file's lines mostly carry a wrapper (then a line
//! without one is a terminal's hard wrap of the line before it).

use super::time::{iso_datetime, number};
use crate::model::WallStamp;

/// The output stream a wrapper names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// What the wrappers at the start of a line named.
#[derive(Clone, Copy, Debug, Default)]
pub struct Peeled<'a> {
    /// Where the wrapped line starts.
    pub off: usize,
    /// Rank (`[rankN]:`, `[defaultN]:`, srun `--label`, mpirun `[J,R]`).
    pub rank: Option<i64>,
    /// Host (pdsh/clush, `<job>.<node> [stderr]`, Ray's `ip=`).
    pub host: Option<&'a [u8]>,
    /// Stream named by mpirun or a job runner.
    pub stream: Option<Stream>,
    /// Kubernetes pod (kubectl `--prefix`).
    pub pod: Option<&'a [u8]>,
    /// Container (kubectl `--prefix`, docker compose service).
    pub container: Option<&'a [u8]>,
    /// File named by grep.
    pub file: Option<&'a [u8]>,
    /// Time written by the launcher (mpirun `--timestamp-output`).
    pub stamp: Option<WallStamp>,
    /// How many wrappers were peeled.
    pub layers: u8,
}

/// The most wrappers peeled off one line.
const MAX_LAYERS: u8 = 6;

/// Peels every known wrapper at the start of `line` (see the module doc).
pub fn peel(line: &[u8]) -> Peeled<'_> {
    peel_with(line, None)
}

/// Like [`peel`], also peeling a wrapper token learned for the file.
pub fn peel_with<'a>(line: &'a [u8], learned: Option<&[u8]>) -> Peeled<'a> {
    let mut p = Peeled::default();
    while p.layers < MAX_LAYERS {
        let rest = &line[p.off..];
        let Some(n) = one_layer(rest, &mut p, learned) else {
            break;
        };
        if n == 0 {
            break;
        }
        p.off += n;
        p.layers += 1;
    }
    p
}

/// Peels one wrapper from `rest`; returns its length.
fn one_layer<'a>(rest: &'a [u8], p: &mut Peeled<'a>, learned: Option<&[u8]>) -> Option<usize> {
    let first = *rest.first()?;
    match first {
        0x1b => ansi(rest),
        b'>' => quote(rest),
        b'[' => mpi_tag(rest, p)
            .or_else(|| role_rank(rest, p))
            .or_else(|| kubectl(rest, p)),
        b'(' => ray(rest, p),
        b' ' | b'0'..=b'9' => srun_label(rest, p)
            .or_else(|| mpi_time(rest, p))
            .or_else(|| learned_token(rest, learned)),
        _ => learned_token(rest, learned).or_else(|| {
            if plain_word(rest) {
                return None;
            }
            job_stream(rest, p)
                .or_else(|| compose(rest, p))
                .or_else(|| grep_file(rest, p))
        }),
    }
}

/// ANSI escape sequences (`ESC [ params final`), any number of them.
fn ansi(rest: &[u8]) -> Option<usize> {
    let mut i = 0;
    while rest.get(i) == Some(&0x1b) && rest.get(i + 1) == Some(&b'[') {
        let mut j = i + 2;
        while j < rest.len() && !(0x40..=0x7e).contains(&rest[j]) {
            j += 1;
        }
        if j >= rest.len() {
            return None;
        }
        i = j + 1;
    }
    (i > 0).then_some(i)
}

/// Removes ANSI colour sequences anywhere in a candidate record's text.
pub fn strip_ansi(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut kept = 0;
    while let Some(p) = memchr::memchr(0x1b, &b[i..]) {
        let at = i + p;
        match ansi(&b[at..]) {
            Some(n) => {
                out.push_str(&s[kept..at]);
                i = at + n;
                kept = i;
            }
            None => i = at + 1,
        }
    }
    out.push_str(&s[kept..]);
    out
}

/// Markdown quote `> ` (or a lone `>`).
fn quote(rest: &[u8]) -> Option<usize> {
    match rest.get(1) {
        Some(b' ') => Some(2),
        None => Some(1),
        _ => None,
    }
}

/// mpirun `--tag-output`: `[1,12]<stdout>:` (job, rank, stream), optionally followed by a space.
fn mpi_tag<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let (_, jl) = number(&rest[1..])?;
    let mut i = 1 + jl;
    if rest.get(i) != Some(&b',') {
        return None;
    }
    let (r, rl) = number(&rest[i + 1..])?;
    i += 1 + rl;
    if rest.get(i) != Some(&b']') {
        return None;
    }
    i += 1;
    let tail = &rest[i..];
    let (stream, sl) = if tail.starts_with(b"<stdout>:") {
        (Some(Stream::Stdout), 9)
    } else if tail.starts_with(b"<stderr>:") {
        (Some(Stream::Stderr), 9)
    } else if tail.starts_with(b"<stddiag>:") {
        (None, 10)
    } else if tail.first() == Some(&b':') {
        (None, 1)
    } else {
        return None;
    };
    i += sl;
    if rest.get(i) == Some(&b' ') {
        i += 1;
    }
    p.rank = Some(r as i64);
    p.stream = stream.or(p.stream);
    Some(i)
}

/// mpirun `--timestamp-output`: `2019-06-02T16:13:44.884Z: ` before its tag.
fn mpi_time<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let (ws, n) = iso_datetime(rest)?;
    if rest.get(n) != Some(&b':')
        || rest.get(n + 1) != Some(&b' ')
        || rest.get(n + 2) != Some(&b'[')
    {
        return None;
    }
    let mut probe = Peeled::default();
    mpi_tag(&rest[n + 2..], &mut probe)?;
    p.stamp = Some(ws);
    Some(n + 2)
}

/// torchrun `[rank3]:` / `[default0]:` (any role name followed by the local rank), and the older
/// `[rank3]` without a colon.
fn role_rank<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let close = rest.iter().take(40).position(|&c| c == b']')?;
    let inner = &rest[1..close];
    let digits_at = inner.iter().position(u8::is_ascii_digit)?;
    let (role, num) = inner.split_at(digits_at);
    if role.is_empty()
        || !role
            .iter()
            .all(|c| c.is_ascii_alphabetic() || *c == b'_' || *c == b'-')
    {
        return None;
    }
    let (r, n) = number(num)?;
    if n != num.len() {
        return None;
    }
    let mut off = close + 1;
    let colon = rest.get(off) == Some(&b':');
    if colon {
        off += 1;
    } else if role != b"rank" {
        return None;
    }
    if rest.get(off) == Some(&b' ') {
        off += 1;
    }
    p.rank = Some(r as i64);
    Some(off)
}

/// kubectl logs `--prefix`: `[pod/trainer-0/pytorch] `.
fn kubectl<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    if !rest.starts_with(b"[pod/") {
        return None;
    }
    let close = memchr::memchr(b']', &rest[..rest.len().min(320)])?;
    let inner = &rest[5..close];
    let slash = memchr::memchr(b'/', inner)?;
    p.pod = Some(&inner[..slash]);
    p.container = Some(&inner[slash + 1..]);
    let mut off = close + 1;
    if rest.get(off) == Some(&b' ') {
        off += 1;
    }
    Some(off)
}

/// Ray worker output: `(RayWorkerWrapper pid=1234, ip=10.0.0.2) ` or `(pid=1234) `.
fn ray<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let close = memchr::memchr(b')', &rest[..rest.len().min(200)])?;
    let inner = &rest[1..close];
    let pid = memchr::memmem::find(inner, b"pid=")?;
    if pid > 0 && inner[pid - 1] != b' ' {
        return None;
    }
    if let Some(ip) = memchr::memmem::find(inner, b"ip=") {
        let v = &inner[ip + 3..];
        let end = v
            .iter()
            .position(|&c| c == b',' || c == b' ')
            .unwrap_or(v.len());
        p.host = Some(&v[..end]);
    }
    let mut off = close + 1;
    if rest.get(off) == Some(&b' ') {
        off += 1;
    }
    Some(off)
}

/// srun `--label`: optional spaces, the task number, `: `.
fn srun_label<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let mut i = 0;
    while i < rest.len() && i < 6 && rest[i] == b' ' {
        i += 1;
    }
    let (r, n) = number(&rest[i..])?;
    if n <= 5 && rest.get(i + n) == Some(&b':') && rest.get(i + n + 1) == Some(&b' ') {
        p.rank = Some(r as i64);
        return Some(i + n + 2);
    }
    None
}

/// The characters of a host, service or file token.
fn token_len(rest: &[u8], extra: &[u8]) -> usize {
    rest.iter()
        .take(200)
        .position(|c| !(c.is_ascii_alphanumeric() || b"-_.".contains(c) || extra.contains(c)))
        .unwrap_or(rest.len().min(200))
}

/// A token followed by one space and then neither `[`, a space nor `|` (`Jan 12 ...`,
/// `gpu-node-01 kernel: ...`): no job runner's stream, compose bar or grep file name can be
/// there, as each of [`job_stream`], [`compose`] and [`grep_file`] needs one of those (or a `:`)
/// right after the token.
fn plain_word(rest: &[u8]) -> bool {
    let n = token_len(rest, b"");
    rest.get(n) == Some(&b' ') && !matches!(rest.get(n + 1), Some(b'[' | b' ' | b'|'))
}

/// A job runner's `<name>.<node> [stderr] ` (the node is the host).
fn job_stream<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let n = token_len(rest, b"");
    if n == 0 {
        return None;
    }
    let tail = &rest[n..];
    let stream = if tail.starts_with(b" [stderr]") {
        Stream::Stderr
    } else if tail.starts_with(b" [stdout]") {
        Stream::Stdout
    } else {
        return None;
    };
    let token = &rest[..n];
    let mut parts = token.split(|&c| c == b'.');
    let first = parts.next();
    p.host = parts.next().filter(|h| !h.is_empty()).or(first);
    p.stream = Some(stream);
    let mut off = n + 9;
    if rest.get(off) == Some(&b' ') {
        off += 1;
    }
    Some(off)
}

/// docker compose: `svc-1  | ` (the service name, padding, a bar).
fn compose<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let n = token_len(rest, b"");
    if n == 0 || rest.get(n) != Some(&b' ') {
        return None;
    }
    let mut i = n;
    while rest.get(i) == Some(&b' ') {
        i += 1;
    }
    if rest.get(i) != Some(&b'|') {
        return None;
    }
    let after = rest.get(i + 1);
    if !(after == Some(&b' ') || after.is_none()) {
        return None;
    }
    p.container = Some(&rest[..n]);
    Some((i + 2).min(rest.len()))
}

/// File name endings of logs, as grep names them (a module path such as
/// `torch.distributed.elastic.multiprocessing.api:` is not a file).
const LOG_EXTENSIONS: [&[u8]; 9] = [
    b"log", b"txt", b"out", b"err", b"stdout", b"stderr", b"json", b"jsonl", b"md",
];

/// grep over several files: `name.log:` or `name.log:123:` straight before the line (a file name
/// has an extension or a directory; a pdsh host is followed by `: `, which this leaves alone).
fn grep_file<'a>(rest: &'a [u8], p: &mut Peeled<'a>) -> Option<usize> {
    let n = token_len(rest, b"/");
    if n < 3 || rest.get(n) != Some(&b':') {
        return None;
    }
    let token = &rest[..n];
    let ext = memchr::memrchr(b'.', token).map(|d| &token[d + 1..]);
    let file_like =
        memchr::memchr(b'/', token).is_some() || ext.is_some_and(|e| LOG_EXTENSIONS.contains(&e));
    if !file_like {
        return None;
    }
    let mut i = n + 1;
    if let Some((_, dl)) = number(&rest[i..]) {
        if rest.get(i + dl) == Some(&b':') {
            i += dl + 1;
        } else {
            return None;
        }
    } else if matches!(rest.get(i), Some(b' ') | None) {
        return None;
    }
    p.file = Some(token);
    Some(i)
}

/// pdsh/clush `host: ` (checked by the caller: only when what follows is a known line shape).
pub fn host_colon(rest: &[u8]) -> Option<(&[u8], usize)> {
    let n = token_len(rest, b"");
    if n < 2 || rest.get(n) != Some(&b':') || rest.get(n + 1) != Some(&b' ') {
        return None;
    }
    if !rest[0].is_ascii_alphanumeric() {
        return None;
    }
    Some((&rest[..n], n + 2))
}

/// A wrapper token learned for the file (see [`FileWrappers::learn`]) and the spaces after it.
fn learned_token(rest: &[u8], learned: Option<&[u8]>) -> Option<usize> {
    let t = learned?;
    if !rest.starts_with(t) {
        return None;
    }
    let mut i = t.len();
    while rest.get(i) == Some(&b' ') {
        i += 1;
    }
    Some(i)
}

/// What a file's first lines say about its wrappers.
#[derive(Clone, Debug, Default)]
pub struct FileWrappers {
    /// A leading token repeated on most lines that no format explains.
    pub learned: Option<Vec<u8>>,
    /// At least half the lines carry a wrapper and almost none has a bare prefix: a line with
    /// neither continues the line before it.
    pub mostly_wrapped: bool,
}

/// Lines sampled from the start of a file.
const SAMPLE_LINES: usize = 200;

impl FileWrappers {
    /// Learns from the first lines of `buf` (see the module doc).
    /// `is_message` tells a token that names a known emitter (`NVRM:`, `NCCL`): never a wrapper.
    pub fn learn(buf: &[u8], is_message: impl Fn(&[u8]) -> bool) -> FileWrappers {
        let window = &buf[..buf.len().min(64 * 1024)];
        let mut total = 0usize;
        let mut wrapped = 0usize;
        let mut first_token: Option<&[u8]> = None;
        let mut same = 0usize;
        let mut unexplained = 0usize;
        let mut bare_prefixed = 0usize;
        for line in window.split(|&c| c == b'\n').take(SAMPLE_LINES) {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.trim_ascii().is_empty() {
                continue;
            }
            total += 1;
            let head = super::parse_head(line);
            if head.wrapped {
                wrapped += 1;
            } else if head.prefix.is_some() {
                bare_prefixed += 1;
            }
            let rest = &line[head.peeled..];
            let n = rest.iter().position(|&c| c == b' ').unwrap_or(rest.len());
            let tok = &rest[..n];
            if head.prefix.is_none() {
                unexplained += 1;
            }
            match first_token {
                None => {
                    first_token = Some(tok);
                    same = 1;
                }
                Some(t) if t == tok => same += 1,
                Some(_) => {}
            }
        }
        let mut out = FileWrappers {
            learned: None,
            // every record wrapped once by the terminal makes half the lines bare: those
            // carry no prefix of their own either
            mostly_wrapped: total >= 3 && wrapped * 2 >= total && bare_prefixed * 10 <= total,
        };
        if let Some(t) = first_token {
            if total >= 8
                && same * 5 >= total * 4
                && unexplained * 5 >= total * 4
                && learnable(t)
                && !is_message(t)
            {
                out.learned = Some(t.to_vec());
                out.mostly_wrapped = true;
            }
        }
        out
    }
}

/// A token may be a wrapper when it looks like a name (a host, a job, a service), not a word.
fn learnable(t: &[u8]) -> bool {
    (3..=64).contains(&t.len())
        && t.iter()
            .all(|c| c.is_ascii_graphic() && !b"\"'`(){}".contains(c))
        && t.iter()
            .any(|c| c.is_ascii_digit() || b"-_.:|[".contains(c))
        && !t.iter().all(|c| c.is_ascii_digit() || b"-_.:/".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rest<'a>(line: &'a [u8]) -> (&'a [u8], Peeled<'a>) {
        let p = peel(line);
        (&line[p.off..], p)
    }

    #[test]
    fn launcher_wrappers() {
        let (r, p) = rest(b"[1,12]<stdout>:node7:815:864 [0] NCCL WARN x");
        assert_eq!(r, b"node7:815:864 [0] NCCL WARN x");
        assert_eq!((p.rank, p.stream), (Some(12), Some(Stream::Stdout)));
        let (r, p) = rest(b"2019-06-02T16:13:44.884Z: [1,3]<stderr>:hello");
        assert_eq!(r, b"hello");
        assert!(p.stamp.is_some());
        assert_eq!(p.rank, Some(3));
        let (r, p) = rest(b"[default3]:[rank3]: RuntimeError: x");
        assert_eq!((r, p.rank), (&b"RuntimeError: x"[..], Some(3)));
        let (r, p) = rest(b"[pod/trainer-0/pytorch] NCCL WARN x");
        assert_eq!(r, b"NCCL WARN x");
        assert_eq!(p.pod, Some(&b"trainer-0"[..]));
        assert_eq!(p.container, Some(&b"pytorch"[..]));
        let (r, p) = rest(b"trainer-1  | CUDA error: x");
        assert_eq!(
            (r, p.container),
            (&b"CUDA error: x"[..], Some(&b"trainer-1"[..]))
        );
        let (r, p) = rest(b"(RayWorkerWrapper pid=311, ip=10.0.0.7) INFO x");
        assert_eq!((r, p.host), (&b"INFO x"[..], Some(&b"10.0.0.7"[..])));
        let (r, p) = rest(b"dinov2.cn-d004 [stderr] [rank14]:[E909 x");
        assert_eq!(r, b"[E909 x");
        assert_eq!((p.host, p.rank), (Some(&b"cn-d004"[..]), Some(14)));
        let (r, p) = rest(b"prefill-2.log:[2025-09-17 15:16:23] x");
        assert_eq!(
            (r, p.file),
            (&b"[2025-09-17 15:16:23] x"[..], Some(&b"prefill-2.log"[..]))
        );
        let (r, _) = rest(b"logs/a.txt:120:[rank0]: x");
        assert_eq!(r, b"x");
        let (r, _) = rest(b"> \x1b[31m  3: hello\x1b[0m");
        assert_eq!(r, b"hello\x1b[0m");
    }

    #[test]
    fn words_are_not_wrappers() {
        for l in [
            &b"RuntimeError: CUDA error: x"[..],
            b"srun: error: node1: task 0: Killed",
            b"hello world",
            b"C:\\a\\b.cu:73: CUDA error",
            b"[E ProcessGroupNCCL.cpp:737] [Rank 1] x",
            b"[2025-01-01 00:00:00] x",
            b"| 0 | x |",
            b"(most recent call first)",
        ] {
            assert_eq!(peel(l).off, 0, "{}", String::from_utf8_lossy(l));
        }
    }

    #[test]
    fn ansi_is_stripped_from_text() {
        assert_eq!(strip_ansi("\x1b[1;31mERROR\x1b[0m: x"), "ERROR: x");
        assert_eq!(strip_ansi("a\x1bb"), "a\x1bb");
    }

    #[test]
    fn learns_a_repeated_token() {
        let mut f = Vec::new();
        for i in 0..10 {
            f.extend_from_slice(format!("gpu-node-7 message {i}\n").as_bytes());
        }
        let w = FileWrappers::learn(&f, |_| false);
        assert_eq!(w.learned.as_deref(), Some(&b"gpu-node-7"[..]));
        assert!(peel_with(b"gpu-node-7  NCCL WARN x", w.learned.as_deref()).off == 12);
        let w = FileWrappers::learn(b"hello there\nhello you\nhello me\n", |_| false);
        assert!(w.learned.is_none());
        let w = FileWrappers::learn(&f, |t| t.starts_with(b"gpu"));
        assert!(w.learned.is_none());
    }
}
