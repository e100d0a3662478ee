//! The known issues' own test: every entry's samples must match and its near misses must not,
//! each sample line first run through the built-in recognizers (the events a run would give);
//! every version hint's samples must be dated by it and its rejects not.

use super::facts::{Fact, HostFacts};
use super::matcher::{affects, judge_line, Line};
use super::version::Version;
use super::{Known, KnownSet, Sample};
use crate::events::RecognizerSet;

/// The facts a sample gives.
fn facts_of(s: &Sample) -> HostFacts {
    let mut hf = HostFacts::default();
    for (k, v) in &s.versions {
        if let Some(version) = Version::parse(v) {
            let f = Fact {
                text: v.clone(),
                version,
                event: None,
                origin: "sample".into(),
            };
            hf.versions.insert(k.clone(), f);
        }
    }
    hf.products.extend(s.product.iter().cloned());
    hf
}

/// Whether entry `k` matches sample `s`.
fn matches(k: &Known, set: &KnownSet, rs: &RecognizerSet, s: &Sample) -> Result<bool, String> {
    let hf = facts_of(s);
    if k.entry.rule.is_some() {
        return Ok(super::rules::broken(k, set, &hf).is_some());
    }
    if k.entry.kinds.is_empty() {
        return Ok(affects(k, &hf).is_some());
    }
    let drafts = rs.probe(&s.line);
    if drafts.is_empty() {
        return Err(format!("no recognizer reads {:?}", s.line));
    }
    Ok(drafts.iter().any(|d| {
        let l = Line {
            kind: d.kind,
            code: d.code,
            message: &s.line,
            attrs: d.attrs.iter().collect(),
        };
        judge_line(k, set, &l, &hf).is_some()
    }))
}

/// One message per failure of the built-in and the given known issues.
pub fn self_test(set: &KnownSet, rs: &RecognizerSet) -> Vec<String> {
    let mut out = Vec::new();
    for k in &set.entries {
        let e = &k.entry;
        if e.samples.is_empty() || e.near_misses.is_empty() {
            out.push(format!("{}: needs a sample and a near miss", e.id));
        }
        if !e.source.contains("https://") || e.description.trim().is_empty() {
            out.push(format!(
                "{}: needs a description and a public source URL",
                e.id
            ));
        }
        for (list, want) in [(&e.samples, true), (&e.near_misses, false)] {
            for s in list {
                match matches(k, set, rs, s) {
                    Ok(got) if got == want => {}
                    Ok(_) => out.push(format!(
                        "{}: {} {:?} {:?}",
                        e.id,
                        if want {
                            "missed sample"
                        } else {
                            "matched near miss"
                        },
                        s.line,
                        s.versions
                    )),
                    Err(m) => out.push(format!("{}: {m}", e.id)),
                }
            }
        }
    }
    for h in &set.hints {
        for (list, want) in [(&h.hint.samples, true), (&h.hint.rejects, false)] {
            for s in list {
                if h.pattern.is_match(s.as_bytes()) != want {
                    out.push(format!("hint {}: {s:?}", h.hint.id));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_known_issues_test_themselves() {
        let set = KnownSet::load(&[]).unwrap();
        let rs = RecognizerSet::load(&[]).unwrap();
        let failures = self_test(&set, &rs);
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(set.entries.len() >= 40, "{} entries", set.entries.len());
        for c in super::super::COMPONENTS {
            assert!(
                set.entries.iter().any(|k| k.entry.component == c),
                "no entry for {c}"
            );
        }
    }

    #[test]
    fn user_entries_replace_and_add() {
        let user = r#"
[[known_issue]]
id = "site-bad-batch"
component = "driver"
summary = "our batch"
description = "a site entry"
affected = "=550.54.15"
source = "https://example.invalid/ticket/1"
samples = [{ line = "", versions = { driver = "550.54.15" } }]
near_misses = [{ line = "", versions = { driver = "550.54.14" } }]
"#;
        let set = KnownSet::load(&[user.to_string()]).unwrap();
        assert!(set.entries.iter().any(|k| k.entry.id == "site-bad-batch"));
        let bad = "[[known_issue]]\nid = \"x\"\ncomponent = \"gpu\"\nsummary = \"\"\ndescription = \"\"\naffected = \"*\"\nsource = \"\"\n";
        assert!(KnownSet::load(&[bad.to_string()]).is_err());
    }
}
