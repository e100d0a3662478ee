//! Sentences that read naturally whichever parts are unknown: a rule's summary template loses
//! the phrase of a part no line named (` on {host}`, ` (GPU {gpu})`) instead of showing a
//! placeholder, and the sentences built in code name a host, a rank or a code only when known.

/// ` on gpu-node-03`, or nothing when the host is unknown.
pub fn on_host(host: Option<&str>) -> String {
    host.map(|h| format!(" on {h}")).unwrap_or_default()
}

/// Phrases of a template around a part, in the order they are tried, and what each becomes
/// when the part is unknown (`None`: the phrase is left out).
const HOST_PHRASES: &[(&str, &str)] = &[
    (" on {host}", ""),
    (" reported by {host}", " reported"),
    (" by {host}", ""),
    (" of {host}", ""),
    ("{host}", "a node"),
];

const GPU_PHRASES: &[(&str, &str)] = &[
    (" (GPU {gpu})", ""),
    (" on GPU {gpu}", ""),
    ("GPU {gpu}", "a GPU"),
    ("{gpu}", "a GPU"),
];

const CODE_PHRASES: &[(&str, &str)] = &[("Xid {code}", "an Xid"), (" {code}", ""), ("{code}", "")];

const RANK_PHRASES: &[(&str, &str)] = &[(" (rank {rank})", ""), ("rank {rank}", "a rank")];

/// `template` with the phrases of the unknown parts rewritten (see the tables above); a
/// template that started with a capital letter still does.
pub fn elide(
    template: &str,
    host: bool,
    gpu: bool,
    code: bool,
    rank: bool,
) -> std::borrow::Cow<'_, str> {
    let tables = [
        (host, HOST_PHRASES),
        (gpu, GPU_PHRASES),
        (code, CODE_PHRASES),
        (rank, RANK_PHRASES),
    ];
    if tables
        .iter()
        .all(|(known, t)| *known || !template.contains(t[t.len() - 1].0))
    {
        return std::borrow::Cow::Borrowed(template);
    }
    let mut s = template.to_string();
    for (known, table) in tables {
        if known {
            continue;
        }
        for (phrase, with) in table {
            s = s.replace(phrase, with);
        }
    }
    if template.starts_with(|c: char| c.is_uppercase() || c == '{') {
        s = capitalize(&s);
    }
    std::borrow::Cow::Owned(s)
}

/// `s` with its first letter upper case.
fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_lowercase() => f.to_uppercase().chain(c).collect(),
        _ => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::elide;

    #[test]
    fn unknown_parts_leave_their_phrase_out() {
        let t = "GPU {gpu} on {host} fell off the bus";
        assert_eq!(elide(t, true, true, true, true), t);
        assert_eq!(
            elide(t, false, true, true, true),
            "GPU {gpu} fell off the bus"
        );
        assert_eq!(
            elide(t, true, false, true, true),
            "A GPU on {host} fell off the bus"
        );
        assert_eq!(elide(t, false, false, true, true), "A GPU fell off the bus");
        assert_eq!(
            elide(
                "Power supply fault reported by the BMC of {host} ({count} events)",
                false,
                true,
                true,
                true
            ),
            "Power supply fault reported by the BMC ({count} events)"
        );
        assert_eq!(
            elide("Kubernetes marked {host} NotReady", false, true, true, true),
            "Kubernetes marked a node NotReady"
        );
        assert_eq!(
            elide(
                "the job slowed while {title} was reported on {host} (GPU {gpu})",
                false,
                false,
                true,
                true
            ),
            "the job slowed while {title} was reported"
        );
        assert_eq!(
            elide(
                "NVSwitch error {code} on {host} ({title})",
                true,
                true,
                false,
                true
            ),
            "NVSwitch error on {host} ({title})"
        );
        assert_eq!(
            elide(
                "Uncorrectable ECC error reported to the job{rank_text} on {host}",
                false,
                true,
                true,
                false
            ),
            "Uncorrectable ECC error reported to the job{rank_text}"
        );
    }
}
