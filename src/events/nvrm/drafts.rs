//! The drafts of an NVRM record: the line's kind with its parts as details, and for an
//! initialization failure the reason the lines around it give (same GPU, same boot).

use super::line::{is_boundary, message_of, probe_failure};
use super::{Nvrm, NvrmLine, Outcome, Verdict};
use crate::events::{Draft, Record};

/// What a context line says about an initialization failure on `gpu`: (terminal, reason).
fn context_reason<'k>(
    k: &'k Nvrm,
    raw: &str,
    gpu: Option<&str>,
) -> Option<(bool, Option<&'k str>)> {
    let msg = message_of(raw);
    if probe_failure(msg).is_some() {
        return Some((true, None));
    }
    let line = k.parse(msg)?;
    if let (Some(a), Some(b)) = (gpu, line.gpu.as_deref()) {
        if a != b {
            return None;
        }
    }
    let by_status = || {
        line.statuses
            .iter()
            .filter_map(|s| k.status(s))
            .find_map(|s| s.reason.as_deref())
    };
    match k.classify(&line) {
        // a closing line gives the reason its own status or stage say (for the next closing line
        // of the same failure: `rm_init_adapter failed` after `RmInitAdapter failed!`)
        Outcome::Event(v) if v.terminal => Some((
            true,
            by_status().or_else(|| {
                line.init_stage
                    .and_then(|(st, _, _)| k.stages.get(&st))
                    .and_then(|s| s.reason.as_deref())
            }),
        )),
        Outcome::Event(v) => Some((false, v.reason.or_else(by_status))),
        _ => Some((false, None)),
    }
}

/// The reason of an initialization failure from the lines around it: the earliest reason-giving
/// line of the same failure before it (a closing line of an earlier failure, a driver load or a
/// boot ends the search), else the first after it.
fn reason_around<'k>(k: &'k Nvrm, rec: &Record<'_>, gpu: Option<&str>) -> Option<&'k str> {
    let mut found = None;
    let mut block = None;
    let mut passed = false;
    for raw in rec.preceding.iter().rev() {
        if is_boundary(message_of(raw)) {
            break;
        }
        match context_reason(k, raw, gpu) {
            Some((true, _)) if passed => break,
            Some((true, r)) => {
                block = block.or(r);
            }
            Some((false, r)) => {
                passed = true;
                if r.is_some() {
                    found = r;
                }
            }
            None => {}
        }
    }
    if found.is_some() {
        return found;
    }
    if block.is_some() {
        return block;
    }
    for raw in rec.following {
        if is_boundary(message_of(raw)) {
            break;
        }
        match context_reason(k, raw, gpu) {
            Some((true, _)) => break,
            Some((false, Some(r))) => return Some(r),
            _ => {}
        }
    }
    None
}

/// Drafts for one record (the `nvrm` parser).
pub fn nvrm_drafts(k: &Nvrm, rec: &Record<'_>, out: &mut Vec<Draft>) {
    if let Some((gpu, err)) = probe_failure(rec.body) {
        let mut d = Draft::new("gpu_init_failure");
        d.gpu = gpu.map(Into::into);
        d.attrs.insert("error", err);
        d.attrs.insert("family", "init".into());
        d.attrs.insert("class", "probe-failed".into());
        if let Some(r) = reason_around(k, rec, d.gpu.as_deref()) {
            set_reason(k, &mut d, r);
        }
        out.push(d);
        return;
    }
    let Some(line) = k.parse(rec.body) else {
        return;
    };
    let Outcome::Event(v) = k.classify(&line) else {
        return;
    };
    let mut d = Draft::new(v.kind);
    d.gpu = line.gpu.as_deref().map(Into::into);
    d.severity = v.severity;
    d.layer = v.layer;
    line_attrs(k, &line, &v, &mut d);
    if v.kind == "gpu_init_failure" {
        if let Some(r) = init_reason(k, rec, &line, &v) {
            set_reason(k, &mut d, r);
        }
    } else if let Some(r) = v.reason.filter(|_| v.own_reason) {
        set_reason(k, &mut d, r);
    }
    out.push(d);
}

/// The parts of the line and what its class says, as details of its draft.
fn line_attrs(k: &Nvrm, line: &NvrmLine, v: &Verdict, d: &mut Draft) {
    let mut attr = |key: &str, val: String| {
        d.attrs.insert(key, val);
    };
    if let Some(f) = &line.function {
        attr("function", f.clone());
    }
    if let Some(n) = line.gpu_instance {
        attr("gpu_instance", n.to_string());
    }
    if let Some(f) = v.family {
        attr("family", f.to_string());
    }
    attr("class", v.class.to_string());
    if !line.statuses.is_empty() {
        attr("status", line.statuses.join(","));
        if let Some(s) = k.status(&line.statuses[0]) {
            attr("status_meaning", s.meaning.clone());
        }
    }
    if let Some(c) = &line.status_code {
        attr("status_code", c.clone());
    }
    if let Some(f) = &line.assert_file {
        attr("assert_file", f.clone());
    }
    if let Some((stage, _, ln)) = line.init_stage {
        let name = k
            .stages
            .get(&stage)
            .map_or_else(|| format!("0x{stage:x}"), |s| s.name.clone());
        attr("init_stage", name);
        attr("init_line", ln.to_string());
    }
    if let Some(a) = v.attrs {
        for (key, val) in a {
            attr(key, val.clone());
        }
    }
    if v.is_generic() {
        // what was not understood, verbatim (the event's message is the whole line)
        attr("text", line.message.clone());
    }
}

/// The reason of an initialization failure: the line's own (a probe step that says why), else
/// the lines around it, else its status and stage, else its family's.
fn init_reason<'k>(
    k: &'k Nvrm,
    rec: &Record<'_>,
    line: &NvrmLine,
    v: &Verdict<'k>,
) -> Option<&'k str> {
    v.reason
        .filter(|_| v.own_reason)
        .or_else(|| reason_around(k, rec, line.gpu.as_deref()))
        .or_else(|| {
            line.statuses
                .iter()
                .filter_map(|s| k.status(s))
                .find_map(|s| s.reason.as_deref())
        })
        .or_else(|| {
            line.init_stage
                .and_then(|(st, _, _)| k.stages.get(&st))
                .and_then(|s| s.reason.as_deref())
        })
        .or(v.reason)
}

/// The `reason` detail and the `cause` group the judge reads.
fn set_reason(k: &Nvrm, d: &mut Draft, reason: &str) {
    d.attrs.insert("reason", reason.to_string());
    if let Some(r) = k.reason(reason).filter(|_| d.kind == "gpu_init_failure") {
        d.attrs.insert("cause", r.cause.clone());
    }
}
