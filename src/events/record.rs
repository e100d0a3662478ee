//! What recognizers work on and give: the candidate record and the event draft.

use crate::model::{Layer, LineStamp, Severity};

/// An event before the timeline stage fills in input, line and time.
#[derive(Clone, Debug, Default)]
pub struct Draft {
    /// Kind (a name of the knowledge data, see [`super::intern`]).
    pub kind: &'static str,
    /// Code.
    pub code: Option<i64>,
    /// GPU id: one text shared by the events of a GPU once located (see the scan).
    pub gpu: Option<std::sync::Arc<str>>,
    /// Rank.
    pub rank: Option<i64>,
    /// Host named inside the record.
    pub host: Option<String>,
    /// Layer override.
    pub layer: Option<Layer>,
    /// Severity override.
    pub severity: Option<Severity>,
    /// Time named inside the record (rare: boxed).
    pub stamp: Option<Box<LineStamp>>,
    /// Details.
    pub attrs: crate::model::Attrs,
    /// Derived from another event of the same line.
    pub derived: bool,
    /// Captures to merge into an earlier event of this kind.
    pub attach_to: Option<&'static str>,
    /// Recognizer id.
    pub recognizer: &'static str,
    /// Seen by the BMC (see [`RecognizerDef::bmc`]).
    pub bmc: bool,
    /// Catalog table of the code (see [`RecognizerDef::code_table`]).
    pub code_table: Option<&'static str>,
    /// Heads a kernel report (see [`RecognizerDef::report`]).
    pub report: bool,
}

impl Draft {
    /// A draft of `kind` (a name of the knowledge data: it is interned).
    pub fn new(kind: &str) -> Draft {
        Draft {
            kind: super::intern(kind),
            ..Draft::default()
        }
    }
}

/// A candidate record handed to recognizers.
#[derive(Debug)]
pub struct Record<'a> {
    /// The whole record with its prefix (anchors are looked for here).
    pub full: &'a str,
    /// Message text after the line prefix, continuation lines joined with `\n`, rsyslog escapes undone.
    pub body: &'a str,
    /// Up to 8 raw lines before the record, oldest first.
    pub preceding: &'a [String],
    /// Up to 8 raw lines after the record.
    pub following: &'a [String],
    /// Rank named by a launcher prefix.
    pub rank: Option<i64>,
}
