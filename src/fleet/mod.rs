//! Fleet scans: many bundles (bug reports, archives, folders per host) analyzed in parallel,
//! one `faultline/scan/v1` line per bundle and a `faultline/fleet/v1` summary, with a
//! deterministic split over workers (`--shard K/N`) and `merge` of their outputs.
//!
//! One module per job: [`discovery`] groups files into bundles, [`shard`] splits them,
//! [`scan`] analyzes them with [`crate::analyze`], [`bundle`] writes a bundle's line,
//! [`summary`] folds lines into the fleet summary, [`merge`] reads shard outputs back,
//! [`progress`] draws on stderr and [`text`] renders for terminals.

pub mod bundle;
pub mod discovery;
pub mod merge;
pub mod openmetrics;
pub mod progress;
pub mod scan;
pub mod shard;
pub mod summary;
pub mod text;

#[cfg(test)]
mod tests;

pub use bundle::BundleLine;
pub use discovery::{discover, Bundle, BundleKind};
pub use merge::{merge, MergeResult};
pub use scan::{scan, ScanOptions, ScanResult};
pub use shard::Shard;
pub use summary::{fold, FleetSummary};
