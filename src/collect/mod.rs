//! `faultline collect`: the capture analysis needs, taken on a GPU node in seconds, as one
//! `.tar.zst` that `analyze` and `scan` read as a bundle. The items are data ([`items`]); each
//! runs its sources in order ([`exec`] for commands, [`files`] for files) within its timeout and
//! size cap and the run's total budget, several items at a time; [`manifest`] records what each
//! gave and why one is missing; [`tarzst`] streams the members into the output; with a
//! redaction key every member is redacted before it is written ([`redact`]).

pub mod exec;
pub mod files;
pub mod items;
pub mod manifest;
pub mod readback;
mod redact;
mod run;
mod sources;
pub mod tarzst;

pub use items::OptIn;
pub use run::{collect, host_name, Options, Summary};

/// Reads a span such as `90s`, `30m`, `2h`, `1d` (a bare number is seconds) as seconds.
pub fn parse_span(s: &str) -> Option<u64> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let n: u64 = t[..split].parse().ok()?;
    let unit = match t[split..].trim() {
        "" | "s" | "sec" | "secs" => 1,
        "m" | "min" | "mins" => 60,
        "h" | "hour" | "hours" => 3600,
        "d" | "day" | "days" => 86_400,
        "w" | "week" | "weeks" => 604_800,
        _ => return None,
    };
    n.checked_mul(unit).filter(|&v| v > 0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn spans() {
        assert_eq!(super::parse_span("90"), Some(90));
        assert_eq!(super::parse_span("30m"), Some(1800));
        assert_eq!(super::parse_span("2h"), Some(7200));
        assert_eq!(super::parse_span("1d"), Some(86_400));
        assert_eq!(super::parse_span("0h"), None);
        assert_eq!(super::parse_span("2x"), None);
        assert_eq!(super::parse_span("h"), None);
    }
}
