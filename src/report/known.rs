//! The known issues as every report format shows them: one sentence per match (what it is,
//! how sure, the version read and where, the fix or workaround, the source), written through
//! the format's own escaping.

use super::json::KnownIssueJson;

/// One match as a sentence.
pub fn describe(k: &KnownIssueJson) -> String {
    let how = match k.status {
        "confirmed" => "matches",
        "probable" => "probably matches",
        _ => "breaks the version rule",
    };
    let fix = k
        .fixed_in
        .as_deref()
        .map(|f| format!("; fixed in {f}"))
        .unwrap_or_default();
    let workaround = k
        .workaround
        .as_deref()
        .map(|w| format!("; workaround: {w}"))
        .unwrap_or_default();
    let at = k
        .version_source
        .as_deref()
        .map(|s| format!(" (read at {s})"))
        .unwrap_or_default();
    format!(
        "{how} known issue {} of the {} (affected: {}){fix}: {}. Version: {}{at}{workaround}. Source: {}",
        k.id, k.component, k.affected, k.summary, k.version, k.source
    )
}

/// Plain text: one indented line per match, escaped by `esc`.
pub fn text(list: &[KnownIssueJson], indent: &str, esc: &dyn Fn(&str) -> String) -> String {
    list.iter()
        .map(|k| format!("{indent}known issue: {}\n", esc(&describe(k))))
        .collect()
}

/// Markdown: a heading and one item per match.
pub fn markdown(list: &[KnownIssueJson], heading: &str, esc: &dyn Fn(&str) -> String) -> String {
    if list.is_empty() {
        return String::new();
    }
    let items: String = list
        .iter()
        .map(|k| format!("- {}\n", esc(&describe(k))))
        .collect();
    format!("{heading} Known issues\n\n{items}\n")
}

/// HTML: a heading and a list.
pub fn html(list: &[KnownIssueJson], heading: &str, esc: &dyn Fn(&str) -> String) -> String {
    if list.is_empty() {
        return String::new();
    }
    let items: String = list
        .iter()
        .map(|k| format!("<li>{}</li>\n", esc(&describe(k))))
        .collect();
    format!("<{heading}>Known issues</{heading}>\n<ul class=\"known\">\n{items}</ul>\n")
}
