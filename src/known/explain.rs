//! `faultline explain known-issues [COMPONENT] [VERSION]`: the known issues, all of them or those
//! of a component (`driver` also lists the GSP firmware's, whose range is the driver's) and, with
//! a version, those whose range holds it.

use super::version::Version;
use super::{Known, KnownSet, COMPONENTS};
use crate::words::counted;
use std::fmt::Write;

/// The entries a query selects.
pub fn select<'a>(set: &'a KnownSet, words: &[String]) -> Result<Vec<&'a Known>, String> {
    let mut component: Option<&str> = None;
    let mut version: Option<Version> = None;
    for w in words {
        let w = w.as_str();
        if COMPONENTS.contains(&w) {
            component = Some(w);
        } else if let Some(v) = Version::parse(w) {
            version = Some(v);
        } else {
            return Err(format!(
                "`{w}` is neither a component ({}) nor a version",
                COMPONENTS.join(", ")
            ));
        }
    }
    Ok(set
        .entries
        .iter()
        .filter(|k| component.is_none_or(|c| k.entry.component == c || k.version_of() == c))
        .filter(|k| version.as_ref().is_none_or(|v| k.range.contains(v)))
        .collect())
}

/// The selected entries as text.
pub fn text(set: &KnownSet, words: &[String]) -> Result<String, String> {
    let list = select(set, words)?;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}{}\n",
        counted(list.len() as u64, "known issue"),
        if words.is_empty() {
            String::new()
        } else {
            format!(" for {}", words.join(" "))
        }
    );
    for k in list {
        let e = &k.entry;
        let _ = writeln!(
            o,
            "{}  [{}]  affected: {} {}",
            e.id,
            e.component,
            k.version_of(),
            e.affected
        );
        let _ = writeln!(o, "  {}", e.summary);
        let _ = writeln!(o, "  {}", e.description);
        if let Some(f) = &e.fixed_in {
            let _ = writeln!(o, "  fixed in: {f}");
        }
        if let Some(w) = &e.workaround {
            let _ = writeln!(o, "  workaround: {w}");
        }
        let ident = if let Some(r) = &e.rule {
            format!("version rule `{r}` (checked on the versions alone)")
        } else if e.kinds.is_empty() {
            "versions only (advisory: the fleet summary flags affected nodes)".to_string()
        } else {
            format!(
                "{}{}",
                e.kinds.join("/"),
                e.pattern
                    .as_deref()
                    .map(|p| format!(" lines matching /{p}/"))
                    .unwrap_or_default()
            )
        };
        let _ = writeln!(o, "  identified by: {ident}");
        let _ = writeln!(o, "  source: {}\n", e.source);
    }
    Ok(o)
}

/// The selected entries as JSON.
pub fn json(set: &KnownSet, words: &[String]) -> Result<serde_json::Value, String> {
    let list = select(set, words)?;
    Ok(serde_json::Value::Array(
        list.iter()
            .map(|k| {
                let e = &k.entry;
                serde_json::json!({
                    "id": e.id, "component": e.component, "summary": e.summary,
                    "description": e.description, "affected": e.affected,
                    "version_of": k.version_of(), "fixed_in": e.fixed_in,
                    "workaround": e.workaround, "source": e.source,
                    "kinds": e.kinds, "pattern": e.pattern, "rule": e.rule,
                })
            })
            .collect(),
    ))
}
