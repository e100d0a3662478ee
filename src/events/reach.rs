//! Anchors against regex alternatives: a recognizer's regex runs only on a record that holds one
//! of its anchors, so an alternative whose mandatory literal text holds none of them fires only
//! when the line happens to carry an anchor elsewhere. [`unreached`] lists such alternatives
//! for the self-test.

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most branches followed per regex; past it a part counts as no literal.
const MAX_BRANCHES: usize = 256;

/// One way through a regex: its runs of mandatory literal text, lower-cased (runs split where
/// anything but a literal stands).
type Branch = Vec<String>;

fn lit(s: String) -> Vec<Branch> {
    vec![vec![s]]
}

fn gap() -> Vec<Branch> {
    vec![vec![String::new(), String::new()]]
}

fn join(a: &[Branch], b: &[Branch]) -> Vec<Branch> {
    if a.len() * b.len() > MAX_BRANCHES {
        return gap();
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            let mut r = x.clone();
            let last = r.pop().unwrap_or_default();
            r.push(last + &y[0]);
            r.extend(y[1..].iter().cloned());
            out.push(r);
        }
    }
    out
}

/// A character as case folding sees it (`ſ` is `s`, the Kelvin sign is `k`).
fn fold(c: char) -> char {
    match c {
        '\u{17F}' => 's',
        '\u{212A}' => 'k',
        _ => c.to_lowercase().next().unwrap_or(c),
    }
}

/// A class of one character in its cases (`(?i)s` is `[Ssſ]`) is that character.
fn class_char(c: &Class) -> Option<char> {
    match c {
        Class::Unicode(u) => {
            let chars: Vec<char> = u
                .ranges()
                .iter()
                .flat_map(|r| (r.start()..=r.end()).take(4))
                .collect();
            let first = fold(*chars.first()?);
            (chars.len() <= 4 && chars.iter().all(|&c| fold(c) == first)).then_some(first)
        }
        Class::Bytes(_) => None,
    }
}

fn branches(h: &Hir) -> Vec<Branch> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => lit(String::new()),
        HirKind::Literal(l) => lit(String::from_utf8_lossy(&l.0).to_lowercase()),
        HirKind::Class(c) => match class_char(c) {
            Some(ch) => lit(ch.to_string()),
            None => gap(),
        },
        HirKind::Capture(c) => branches(&c.sub),
        // an optional part is two ways through (`exceeded (?:virtual )?memory limit`)
        HirKind::Repetition(r) if r.min == 0 && r.max == Some(1) => {
            let mut out = lit(String::new());
            out.extend(branches(&r.sub));
            out
        }
        HirKind::Repetition(r) if r.min == 0 => gap(),
        HirKind::Repetition(r) => join(&join(&gap(), &branches(&r.sub)), &gap()),
        HirKind::Concat(items) => items
            .iter()
            .fold(lit(String::new()), |acc, it| join(&acc, &branches(it))),
        HirKind::Alternation(alts) => {
            let mut out = Vec::new();
            for a in alts {
                out.extend(branches(a));
                if out.len() > MAX_BRANCHES {
                    return gap();
                }
            }
            out
        }
    }
}

/// The alternatives of `regex` (as their literal runs joined by `…`) whose literal text holds
/// none of `anchors`; alternatives without literal text are not judged.
pub fn unreached(regex: &str, anchors: &[String]) -> Vec<String> {
    let Ok(hir) = regex_syntax::parse(regex) else {
        return Vec::new();
    };
    let anchors: Vec<String> = anchors.iter().map(|a| a.to_lowercase()).collect();
    let mut out: Vec<String> = Vec::new();
    for b in branches(&hir) {
        let runs: Vec<&String> = b.iter().filter(|r| !r.trim().is_empty()).collect();
        if runs.is_empty() {
            continue;
        }
        if runs
            .iter()
            .any(|r| anchors.iter().any(|a| r.contains(a.as_str())))
        {
            continue;
        }
        let text = runs
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join("…");
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alternative_without_an_anchor_is_flagged() {
        let a = vec!["out of memory".to_string()];
        assert_eq!(
            unreached("CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED", &a),
            vec!["cublas_status_alloc_failed".to_string()]
        );
        assert!(unreached("(?i:OUT of MEMORY)(?: while \\d+)?", &a).is_empty());
        assert!(unreached("\\d+ \\w+", &a).is_empty());
        let m = vec![
            "exceeded memory limit".to_string(),
            "exceeded virtual memory limit".to_string(),
        ];
        assert!(unreached("Job \\d+ exceeded (?:virtual )?memory limit", &m).is_empty());
        let c = vec!["CUBLAS_STATUS_".to_string()];
        assert!(unreached("(?i:CUBLAS_STATUS_ALLOC_FAILED)", &c).is_empty());
    }
}
