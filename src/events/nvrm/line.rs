//! One NVRM line cut into its parts: GPU, function, message, NV_STATUS codes, init stage.

use super::compile::norm_function;
use super::Nvrm;

/// The parts of one NVRM line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NvrmLine {
    /// `GPU<n>`: the driver's GPU instance.
    pub gpu_instance: Option<u32>,
    /// `GPU 0000:3b:00.0:`, normalized.
    pub gpu: Option<String>,
    /// The function name, when printed.
    pub function: Option<String>,
    /// The message (continuation lines joined with a space, their `NVRM: ` dropped).
    pub message: String,
    /// NV_STATUS names found (by name, or by code after `status`).
    pub statuses: Vec<String>,
    /// The first status code as printed (`0x0000000f`).
    pub status_code: Option<String>,
    /// The source file an assertion names (`kernel_gsp.c`).
    pub assert_file: Option<String>,
    /// `RmInitAdapter failed! (0xSTAGE:0xSTATUS:LINE)`: stage and line.
    pub init_stage: Option<(i64, i64, u64)>,
}

fn is_function_like(name: &str) -> bool {
    let b = name.as_bytes();
    name.contains('_')
        || b.windows(2)
            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

fn hex_value(s: &str) -> Option<i64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    (!h.is_empty() && h.len() <= 8)
        .then(|| i64::from_str_radix(h, 16).ok())
        .flatten()
}

/// `GPU<n> ` or `GPU dddd:bb:dd.f: ` at the start of `s`: (instance, bus id, rest).
fn gpu_prefix(s: &str) -> (Option<u32>, Option<String>, &str) {
    let Some(r) = s.strip_prefix("GPU") else {
        return (None, None, s);
    };
    let digits = r.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && r.as_bytes().get(digits) == Some(&b' ') {
        return (r[..digits].parse().ok(), None, &r[digits + 1..]);
    }
    if let Some(r2) = r.strip_prefix(' ') {
        let n = r2
            .bytes()
            .take_while(|c| c.is_ascii_hexdigit() || *c == b':' || *c == b'.')
            .count();
        let id = &r2[..n];
        if n >= 7 && id.contains(':') && id.contains('.') {
            if let Some(rest) = r2[n..]
                .strip_prefix(": ")
                .or_else(|| r2[n..].strip_prefix(' '))
            {
                return (None, crate::ids::normalize_bdf(id), rest);
            }
        }
    }
    (None, None, s)
}

/// A function name and the rest, when `s` starts with `identifier: `.
fn function_prefix(s: &str) -> Option<(&str, &str)> {
    let n = s
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    if n < 3 || s.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let name = &s[..n];
    let rest = s[n..].strip_prefix(':')?;
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\n')) {
        return None;
    }
    is_function_like(name).then(|| (name, rest.trim_start_matches(' ')))
}

pub(super) fn parse_line(body: &str, k: &Nvrm) -> Option<NvrmLine> {
    let at = body.find("NVRM: ")?;
    let rest = &body[at + 6..];
    if rest.starts_with("Xid ") || rest.is_empty() {
        return None;
    }
    let mut rest = rest;
    if rest.starts_with([' ', '\t']) {
        // an indented line: a table row or continuation, unless it reports an error itself
        let t = rest.trim_start();
        let first = t.split('\n').next().unwrap_or("");
        if !k
            .lexicon
            .scan(first, &first.to_ascii_lowercase())
            .any(&k.error_words)
        {
            return None;
        }
        rest = t;
    }
    let (gpu_instance, gpu, rest) = gpu_prefix(rest);
    let (function, rest) = match function_prefix(rest) {
        Some((f, r)) => (Some(f.to_string()), r),
        None => (None, rest),
    };
    let mut message = String::new();
    for (i, l) in rest.split('\n').enumerate() {
        let l = if i == 0 { l } else { l.trim() };
        let l = l.strip_prefix("NVRM: ").unwrap_or(l);
        if l.is_empty() {
            continue;
        }
        if !message.is_empty() {
            message.push(' ');
        }
        message.push_str(l);
    }
    let message = message.trim().to_string();
    let mut line = NvrmLine {
        gpu_instance,
        gpu,
        function,
        ..NvrmLine::default()
    };
    statuses_in(&message, k, &mut line);
    if let Some(f) = &line.function {
        let f = norm_function(f);
        if f.starts_with("nvassert") || f.starts_with("nvcheck") {
            line.assert_file = assert_file(&message);
        }
    }
    line.message = message;
    Some(line)
}

/// The file of `... @ kernel_gsp.c:2387`.
fn assert_file(msg: &str) -> Option<String> {
    let at = msg.rfind(" @ ")?;
    let tail = &msg[at + 3..];
    let file: &str = tail.split(':').next()?;
    (file.ends_with(".c") || file.ends_with(".h") || file.ends_with(".cpp"))
        .then(|| file.trim().to_string())
}

fn push_status(line: &mut NvrmLine, name: &str, printed: Option<&str>) {
    if !line.statuses.iter().any(|s| s == name) {
        line.statuses.push(name.to_string());
    }
    if line.status_code.is_none() {
        line.status_code = printed.map(str::to_string);
    }
}

/// NV_STATUS names (`NV_ERR_...`, `NV_WARN_...`), codes after the word `status`, and the triple
/// of `RmInitAdapter failed!`.
fn statuses_in(msg: &str, k: &Nvrm, line: &mut NvrmLine) {
    let b = msg.as_bytes();
    let mut i = 0;
    while let Some(p) = msg[i..].find("NV_") {
        let s = i + p;
        let e = s + b[s..]
            .iter()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b'_')
            .count();
        let name = &msg[s..e];
        if (name.starts_with("NV_ERR_") || name.starts_with("NV_WARN_")) && k.status(name).is_some()
        {
            // the code printed next to the name, `[NV_ERR_GPU_IS_LOST] (0x0000000F)`
            let printed = msg[e..]
                .trim_start_matches([']', ' ', '('])
                .split(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .filter(|c| hex_value(c).is_some());
            push_status(line, name, printed);
        }
        i = e.max(s + 3);
    }
    let lower = msg.to_ascii_lowercase();
    let mut i = 0;
    while let Some(p) = lower[i..].find("status") {
        let s = i + p + 6;
        let rest = lower[s..].trim_start_matches([' ', '=', ':', '(']);
        let rest = rest
            .strip_prefix("is ")
            .or_else(|| rest.strip_prefix("of "))
            .unwrap_or(rest);
        let tok: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if let Some(v) = hex_value(&tok).filter(|&v| v != 0) {
            if let Some(st) = k.status_by_code(v) {
                let start = msg.len() - rest.len();
                let printed = msg[start..start + tok.len()].to_string();
                let name = st.name.clone();
                push_status(line, &name, Some(&printed));
            }
        }
        i = s;
    }
    if let Some(p) = msg.find("RmInitAdapter failed! (") {
        let inner = &msg[p + 23..];
        let inner = &inner[..inner.find(')').unwrap_or(inner.len())];
        let parts: Vec<&str> = inner.split(':').collect();
        if let [st, rs, ln] = parts.as_slice() {
            if let (Some(st), Some(rs)) = (hex_value(st), hex_value(rs)) {
                line.init_stage = Some((st, rs, ln.trim().parse().unwrap_or(0)));
                if let Some(s) = k.status_by_code(rs).filter(|_| rs != 0) {
                    let name = s.name.clone();
                    push_status(line, &name, Some(parts[1]));
                }
            }
        }
    }
}

/// `nvidia: probe of 0000:5d:00.0 failed with error -1` (the kernel's driver core line).
pub(super) fn probe_failure(body: &str) -> Option<(Option<String>, String)> {
    let p = body.find(": probe of ")?;
    if !body[..p].contains("nvidia") {
        return None;
    }
    let rest = &body[p + 11..];
    let (dev, rest) = rest.split_once(' ')?;
    let err = rest.strip_prefix("failed with error ")?;
    let err: String = err
        .chars()
        .take_while(|c| *c == '-' || c.is_ascii_digit())
        .collect();
    Some((crate::ids::normalize_bdf(dev), err))
}

/// The message part of a raw context line.
pub(super) fn message_of(raw: &str) -> &str {
    let head = crate::formats::parse_head(raw.as_bytes());
    raw.get(head.msg_start.min(raw.len())..).unwrap_or(raw)
}

/// A context line starts a new boot or driver load: the lines before it are another story.
pub(super) fn is_boundary(msg: &str) -> bool {
    msg.contains("loading NVIDIA UNIX")
        || msg.contains("Linux version ")
        || msg.contains("Command line: BOOT_IMAGE")
        || msg.starts_with("-- Boot ")
        || msg.starts_with("-- Reboot --")
}
