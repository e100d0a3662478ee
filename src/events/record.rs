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
    /// Layer override.
    pub layer: Option<Layer>,
    /// Severity override.
    pub severity: Option<Severity>,
    /// A host or a time named inside the record (rare: one box for both, one word in every
    /// draft; see [`Draft::set_host`], [`Draft::set_stamp`]).
    pub told: Option<Box<Told>>,
    /// Details.
    pub attrs: crate::model::Attrs,
    /// Derived from another event of the same line.
    pub derived: bool,
    /// The recognizer that made it and what its definition says of its drafts: one value per
    /// recognizer for the whole run (8 bytes in every draft, not 56).
    pub origin: &'static Origin,
}

/// What a record says of itself over its line prefix: a host, a time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Told {
    /// Host named inside the record.
    pub host: Option<Box<str>>,
    /// Time named inside the record.
    pub stamp: Option<LineStamp>,
}

/// Where a draft comes from: its recognizer and what the recognizer's definition says of the
/// drafts it makes (see [`Origin::of`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Origin {
    /// Recognizer id.
    pub recognizer: &'static str,
    /// Captures to merge into an earlier event of this kind.
    pub attach_to: Option<&'static str>,
    /// Catalog table of the code (see [`super::RecognizerDef::code_table`]).
    pub code_table: Option<&'static str>,
    /// Seen by the BMC (see [`super::RecognizerDef::bmc`]).
    pub bmc: bool,
    /// Heads a kernel report (see [`super::RecognizerDef::report`]).
    pub report: bool,
}

/// The origin of a draft no recognizer has named yet.
static NO_ORIGIN: Origin = Origin {
    recognizer: "",
    attach_to: None,
    code_table: None,
    bmc: false,
    report: false,
};

impl Default for &'static Origin {
    fn default() -> Self {
        &NO_ORIGIN
    }
}

impl Origin {
    /// The one copy of `o` for the whole run (made once per recognizer when the knowledge is
    /// loaded; never from the text of an input).
    pub fn of(o: Origin) -> &'static Origin {
        use std::collections::HashSet;
        use std::sync::Mutex;
        static ALL: Mutex<Option<HashSet<&'static Origin>>> = Mutex::new(None);
        let mut all = ALL.lock().unwrap_or_else(|e| e.into_inner());
        let all = all.get_or_insert_with(HashSet::new);
        if let Some(s) = all.get(&o) {
            return s;
        }
        let s: &'static Origin = Box::leak(Box::new(o));
        all.insert(s);
        s
    }
}

impl Draft {
    /// Recognizer id.
    pub fn recognizer(&self) -> &'static str {
        self.origin.recognizer
    }

    /// Captures to merge into an earlier event of this kind.
    pub fn attach_to(&self) -> Option<&'static str> {
        self.origin.attach_to
    }

    /// Catalog table of the code.
    pub fn code_table(&self) -> Option<&'static str> {
        self.origin.code_table
    }

    /// Seen by the BMC.
    pub fn bmc(&self) -> bool {
        self.origin.bmc
    }

    /// Heads a kernel report.
    pub fn report(&self) -> bool {
        self.origin.report
    }
}

impl Draft {
    /// A draft of `kind` (a name of the knowledge data: it is interned).
    pub fn new(kind: &str) -> Draft {
        Draft {
            kind: super::intern(kind),
            ..Draft::default()
        }
    }

    /// The host named inside the record, if any.
    pub fn host(&self) -> Option<&str> {
        self.told.as_ref()?.host.as_deref()
    }

    /// Names the host inside the record (over the line prefix's).
    pub fn set_host(&mut self, host: &str) {
        self.told.get_or_insert_with(Default::default).host = Some(host.into());
    }

    /// The time named inside the record, if any.
    pub fn stamp(&self) -> Option<&LineStamp> {
        self.told.as_ref()?.stamp.as_ref()
    }

    /// Names the time inside the record (over the line prefix's).
    pub fn set_stamp(&mut self, stamp: LineStamp) {
        self.told.get_or_insert_with(Default::default).stamp = Some(stamp);
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
