//! Reports: the v1 JSON document of the contract, a terminal text report and a Markdown
//! post-mortem, all built from one [`json::Report`] value so that they agree.

pub mod json;
pub mod markdown;
pub mod text;

/// Formats a UTC microsecond time as `2026-03-14T02:13:07.412000Z`.
pub fn iso_us(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us).map_or_else(
        || us.to_string(),
        |d| d.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
    )
}

/// Formats a UTC microsecond time for people: `2026-03-14 02:13:07`.
pub fn short_us(us: i64) -> String {
    chrono::DateTime::from_timestamp_micros(us).map_or_else(
        || us.to_string(),
        |d| d.format("%Y-%m-%d %H:%M:%S").to_string(),
    )
}
