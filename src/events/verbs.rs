//! InfiniBand verbs in NCCL's words: work-completion errors (`Got completion from peer ... with
//! error 4`, `status=IBV_WC_RETRY_EXC_ERR(12)`, `Unsupported completion status ... (N)`) and
//! asynchronous events (`Got async event : port error`, `mlx5_0:1 Got async error event: port
//! error`, `Got non-fatal async event: port error(10)`, `async fatal event: ...`, `GID table
//! changed`), decoded with the `ibv_wc_status` / `ibv_event_type` table of data/verbs.toml.
//! Each error yields an `nccl_error` and an `ib_link` event; flushed work requests are follow-ons
//! and routine events yield nothing.

use super::{Draft, Record};
use crate::model::Severity;
use serde::Deserialize;
use std::borrow::Cow;

/// The verbs table as shipped.
pub const BUILTIN_VERBS: &str = include_str!("../../data/verbs.toml");

/// One value of `ibv_wc_status` or `ibv_event_type`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerbsEntry {
    /// `wc_status` or `event_type`.
    #[serde(rename = "enum")]
    pub enumeration: String,
    /// Numeric value.
    pub value: i64,
    /// Enum name (`IBV_WC_RETRY_EXC_ERR`).
    pub name: String,
    /// The `*_str()` text (`transport retry counter exceeded`).
    pub text: String,
    /// What it means for a job (see data/verbs.toml).
    pub class: String,
    /// Severity on its own.
    pub severity: Severity,
}

/// The classes of data/verbs.toml; a user entry must use one of them.
pub const CLASSES: [&str; 10] = [
    "follow_on",
    "gdr_path",
    "link_or_peer",
    "transport",
    "device",
    "success",
    "link",
    "fabric",
    "recovery",
    "benign",
];

/// Which enum a record reports.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Completion,
    Async,
}

fn lookup<'t>(table: &'t [VerbsEntry], family: Family, key: Key<'_>) -> Option<&'t VerbsEntry> {
    let e = match family {
        Family::Completion => "wc_status",
        Family::Async => "event_type",
    };
    table
        .iter()
        .rev()
        .filter(|v| v.enumeration == e)
        .find(|v| match key {
            Key::Value(n) => v.value == n,
            Key::Word(w) => v.name == w || v.text.eq_ignore_ascii_case(w),
        })
}

#[derive(Clone, Copy)]
enum Key<'a> {
    Value(i64),
    Word(&'a str),
}

fn leading_int(s: &str) -> Option<i64> {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    s[..n].parse().ok()
}

/// `NAME(N)`, `N`, or `NAME (N)` at the start of `s`.
fn status_token(s: &str) -> Option<Key<'_>> {
    let s = s.trim_start();
    if let Some(v) = leading_int(s) {
        return Some(Key::Value(v));
    }
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    let rest = s[end..].trim_start();
    if let Some(v) = rest.strip_prefix('(').and_then(leading_int) {
        return Some(Key::Value(v));
    }
    (end > 0).then(|| Key::Word(&s[..end]))
}

/// The completion status named in `rest`: `with error N`, `status=...`, `status ...`.
fn completion_status(rest: &str) -> Option<Key<'_>> {
    if let Some(p) = rest.find("with error ") {
        if let Some(v) = leading_int(&rest[p + 11..]) {
            return Some(Key::Value(v));
        }
    }
    let p = rest.find("status")?;
    let after = rest[p + 6..].trim_start_matches(['=', ' ']);
    status_token(after)
}

/// The async event named in `rest`: the text after the last `: ` (a trailing `(N)` gives its
/// value), or `GID table changed`.
fn async_event(rest: &str) -> Option<Key<'_>> {
    if rest.contains("GID table changed") {
        return Some(Key::Value(18));
    }
    let tail = rest.rsplit(": ").next()?.trim();
    if let Some(open) = tail.rfind('(') {
        if let Some(v) = leading_int(&tail[open + 1..]) {
            return Some(Key::Value(v));
        }
        return Some(Key::Word(tail[..open].trim()));
    }
    Some(Key::Word(tail.trim_end_matches('.')))
}

/// `mlx5_32:1` before `Got async` / `async fatal event` in NCCL ≥ 2.12 wordings.
fn device_port(rest: &str) -> Option<&str> {
    let before = rest.split(" Got ").next()?;
    let before = before.split(" async").next()?;
    let tok = before.rsplit(' ').next()?;
    let (dev, port) = tok.rsplit_once(':')?;
    (!dev.is_empty() && !port.is_empty() && port.bytes().all(|c| c.is_ascii_digit())).then_some(tok)
}

fn detail<'a>(rest: &'a str, after: &str, end: &[char]) -> Option<&'a str> {
    let p = rest.find(after)? + after.len();
    let v = &rest[p..];
    let e = v.find(end).unwrap_or(v.len());
    let v = v[..e].trim_end_matches(',');
    (!v.is_empty()).then_some(v)
}

/// Reads an NCCL InfiniBand completion error or async event; returns whether the record was one.
pub fn ib_drafts(rec: &Record<'_>, table: &[VerbsEntry], out: &mut Vec<Draft>) -> bool {
    let body = rec.body;
    let Some((family, at)) = family_of(body) else {
        return false;
    };
    let rest = &body[at..];
    let key = match family {
        Family::Completion => completion_status(rest),
        Family::Async => async_event(rest),
    };
    let entry = key.and_then(|k| lookup(table, family, k));
    let mut d = Draft::new("nccl_error");
    // the details made at once, one block (an insert each made a block of its own)
    let mut attrs: Vec<(&str, Cow<'_, str>)> = vec![(
        "family",
        match family {
            Family::Completion => "ib_completion",
            Family::Async => "ib_async_event",
        }
        .into(),
    )];
    place_attrs(body, rest, &mut attrs);
    let class = entry.map_or("unknown", |e| e.class.as_str());
    if let Some(e) = entry {
        let (k, name) = match family {
            Family::Completion => ("ib_status", "ib_status_name"),
            Family::Async => ("ib_event", "ib_event_name"),
        };
        attrs.push((k, e.value.to_string().into()));
        attrs.push((name, e.name.as_str().into()));
        attrs.push(("ib_class", class.into()));
    }
    if let Some(hint) = points_at(class) {
        attrs.push(("points_at", hint.into()));
    }
    d.attrs = attrs.into_iter().collect();
    if entry.is_none() && !rest.starts_with("CQE with error") {
        // a completion or async wording without a status: an NCCL error, no link verdict
        d.severity = Some(Severity::Error);
        out.push(d);
        return true;
    }
    raise(d, class, entry.map_or(Severity::Error, |e| e.severity), out);
    true
}

/// Which family a record's wording is of, and where that wording starts.
fn family_of(body: &str) -> Option<(Family, usize)> {
    if let Some(p) = body
        .find("completion")
        .or_else(|| body.find("CQE with error"))
    {
        return Some((Family::Completion, p));
    }
    body.find("async")
        .or_else(|| body.find("GID table changed"))
        .or_else(|| body.find("unknown event type"))
        .map(|p| (Family::Async, p))
}

/// Where the error happened: the peer, the vendor's error code, the HCA and its port.
fn place_attrs<'a>(body: &'a str, rest: &'a str, attrs: &mut Vec<(&str, Cow<'a, str>)>) {
    if let Some(v) = rest
        .find("from peer ")
        .and_then(|_| detail(rest, "from peer ", &[' ']))
    {
        attrs.push(("peer", v.split('<').next().unwrap_or(v).into()));
    }
    if let Some(v) =
        detail(rest, "vendor err ", &[' ', ')']).or_else(|| detail(rest, "vendor_err=", &[' ']))
    {
        attrs.push(("vendor_err", v.into()));
    }
    if let Some(v) = detail(rest, "hca ", &[' ']) {
        attrs.push(("hca", v.into()));
    }
    if let Some(v) = device_port(body) {
        attrs.push(("ib_port", v.into()));
    }
}

/// The drafts of a status of class `class`: none for a success or a benign event, the NCCL
/// error alone as a warning for a follow-on, the link event alone for a recovery, else the NCCL
/// error and the link event derived from it.
fn raise(mut d: Draft, class: &str, severity: Severity, out: &mut Vec<Draft>) {
    match class {
        "success" | "benign" => return,
        "follow_on" => {
            d.severity = Some(Severity::Warning);
            d.attrs.insert("follow_on", "true".into());
            out.push(d);
            return;
        }
        _ => {}
    }
    let mut link = Draft::new("ib_link");
    link.attrs = d.attrs.clone();
    link.severity = Some(severity);
    if class == "recovery" {
        link.attrs.insert("recovery", "true".into());
        out.push(link);
        return;
    }
    d.severity = Some(severity.max(Severity::Warning));
    link.derived = true;
    out.push(d);
    out.push(link);
}

/// What a class of verbs error points at, for the evidence.
fn points_at(class: &str) -> Option<&'static str> {
    Some(match class {
        "gdr_path" => "the RDMA path to GPU memory: GPUDirect RDMA, PCIe ACS or the IOMMU",
        "link_or_peer" => "the link or the peer: cable, transceiver, switch port or the peer host",
        "link" => "the port's link: cable, transceiver or switch port",
        "device" => "the local HCA or its firmware",
        "fabric" => "a subnet change: subnet manager, LID/P_Key or GID (RoCE address) table",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<VerbsEntry> {
        #[derive(Deserialize)]
        struct F {
            ib_verbs: Vec<VerbsEntry>,
        }
        toml::from_str::<F>(BUILTIN_VERBS).unwrap().ib_verbs
    }

    fn kinds(body: &str) -> Vec<(String, Option<String>)> {
        let rec = Record {
            full: body,
            body,
            preceding: &[],
            following: &[],
            rank: None,
        };
        let mut out = Vec::new();
        ib_drafts(&rec, &table(), &mut out);
        out.into_iter()
            .map(|d| {
                (
                    d.kind.to_string(),
                    d.attrs.get("ib_class").map(str::to_string),
                )
            })
            .collect()
    }

    #[test]
    fn every_wording_decodes() {
        let k = kinds("NET/IB : Got completion from peer 10.0.0.2<1> with error 4, opcode 1, len 2, vendor err 81 (Send)");
        assert_eq!(k[1], ("ib_link".into(), Some("gdr_path".into())));
        let k = kinds("NET/IB: Got completion from peer 10.0.0.2<1> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0");
        assert_eq!(k[1].1.as_deref(), Some("link_or_peer"));
        let k = kinds("NET/IB : Got completion from peer x with error 5, opcode 1");
        assert_eq!(k.len(), 1);
        let k = kinds("NET/IB : Got async event : local catastrophic error");
        assert_eq!(k[1].1.as_deref(), Some("device"));
        let k = kinds("NET/IB : mlx5_32:1 Got async error event: port active");
        assert_eq!(k, vec![("ib_link".into(), Some("recovery".into()))]);
        let k = kinds("NET/IB : mlx5_0:1 Got non-fatal async event: port error(10)");
        assert_eq!(k[1].1.as_deref(), Some("link"));
        let k = kinds("NET/IB : mlx5_0:1 async fatal event on QP (0x1) qpn=1 handle=2 send_cq=3 recv_cq=4 state=5 sq_psn=6 rq_psn=7: local work queue catastrophic error");
        assert_eq!(k[1].1.as_deref(), Some("transport"));
        assert!(
            kinds("NET/IB : mlx5_0:1 Got non-fatal async event: communication established(4)")
                .is_empty()
        );
        let k = kinds("NET/IB : mlx5_0:1 GID table changed");
        assert_eq!(k[1].1.as_deref(), Some("fabric"));
    }
}
