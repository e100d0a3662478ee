//! The NVRM data as written in `data/nvrm.toml`: status codes, families, classes, init stages
//! and reasons.

use crate::model::{Layer, Severity};
use serde::Deserialize;
use std::collections::BTreeMap;

/// One NV_STATUS code.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusDef {
    /// `NV_ERR_GPU_IS_LOST`.
    pub name: String,
    /// Its value.
    pub code: i64,
    /// What it means, in a few words.
    pub meaning: String,
    /// The layer it points at when it is all a line says.
    #[serde(default)]
    pub layer: Option<Layer>,
    /// The reason it gives to an initialization failure.
    #[serde(default)]
    pub reason: Option<String>,
    /// It says the GPU is gone: the line is a GPU-lost event.
    #[serde(default)]
    pub gone: bool,
}

/// A family of NVRM messages (by function name, source file, message words).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FamilyDef {
    /// Stable id.
    pub id: String,
    /// What the family covers.
    #[serde(default)]
    pub title: String,
    /// A topic family: a message with one of its words belongs to it whatever function prints it.
    #[serde(default)]
    pub topic: bool,
    /// Kind of the family's error lines that no class explains (none: the generic kind).
    #[serde(default)]
    pub kind: Option<String>,
    /// Their severity.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// The reason the family's lines give to an initialization failure read around them.
    #[serde(default)]
    pub reason: Option<String>,
    /// Function name prefixes (leading underscores and case ignored; the longest prefix wins).
    #[serde(default)]
    pub functions: Vec<String>,
    /// Source files (path substrings): the file an assertion names, and the vocabulary rows.
    #[serde(default)]
    pub files: Vec<String>,
    /// Message words.
    #[serde(default)]
    pub words: Vec<String>,
}

/// A class of NVRM lines: the first class that fits a line decides what it is.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassDef {
    /// Stable id.
    pub id: String,
    /// Only lines of this family.
    #[serde(default)]
    pub family: Option<String>,
    /// Function name prefixes (any).
    #[serde(default)]
    pub functions: Vec<String>,
    /// Message words (any).
    #[serde(default)]
    pub words: Vec<String>,
    /// Message beginnings (any).
    #[serde(default)]
    pub starts: Vec<String>,
    /// Words that veto the class.
    #[serde(default)]
    pub not_words: Vec<String>,
    /// NV_STATUS names (any) the line must carry.
    #[serde(default)]
    pub statuses: Vec<String>,
    /// The line must carry a status marked `gone` (the GPU is lost).
    #[serde(default)]
    pub gone: bool,
    /// The kind of event.
    #[serde(default)]
    pub kind: Option<String>,
    /// Not an event: why.
    #[serde(default)]
    pub benign: Option<String>,
    /// Severity of the event.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// Layer of the event.
    #[serde(default)]
    pub layer: Option<Layer>,
    /// The reason this line gives to an initialization failure (its own, when it is one).
    #[serde(default)]
    pub reason: Option<String>,
    /// The line closes an initialization failure (`RmInitAdapter failed!`): its reason is read
    /// from the lines around it.
    #[serde(default)]
    pub terminal: bool,
    /// Details added to the event.
    #[serde(default)]
    pub attrs: BTreeMap<String, String>,
}

/// One stage of `RmInitAdapter failed! (0xSTAGE:0xSTATUS:LINE)`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageDef {
    /// Stage value.
    pub code: i64,
    /// Its name.
    pub name: String,
    /// The reason it gives.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A reason of an initialization failure.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonDef {
    /// Stable id (the `reason` detail).
    pub id: String,
    /// Its group (the `cause` detail): `hardware`, `firmware`, `driver` or `platform`.
    pub cause: String,
    /// What it means.
    pub meaning: String,
}

/// The NVRM knowledge as written (`data/nvrm.toml`, or a `[nvrm]` table of a user file).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvrmFile {
    /// Words that make a line without a function name an error report.
    #[serde(default)]
    pub error_words: Vec<String>,
    /// Reasons of initialization failures.
    #[serde(default)]
    pub reasons: Vec<ReasonDef>,
    /// NV_STATUS codes.
    #[serde(default)]
    pub status: Vec<StatusDef>,
    /// Families.
    #[serde(default)]
    pub family: Vec<FamilyDef>,
    /// Classes, tried in order.
    #[serde(default)]
    pub class: Vec<ClassDef>,
    /// Init stages.
    #[serde(default)]
    pub init_stage: Vec<StageDef>,
}

impl NvrmFile {
    /// Lays a user file over this one: families and statuses with an existing id or name replace
    /// theirs, new ones are added; user classes with an existing id replace theirs, new ones are
    /// tried before the built-in ones; error words are added.
    pub fn overlay(&mut self, user: NvrmFile) {
        self.error_words.extend(user.error_words);
        for r in user.reasons {
            match self.reasons.iter_mut().find(|x| x.id == r.id) {
                Some(slot) => *slot = r,
                None => self.reasons.push(r),
            }
        }
        for s in user.status {
            match self.status.iter_mut().find(|x| x.name == s.name) {
                Some(slot) => *slot = s,
                None => self.status.push(s),
            }
        }
        for f in user.family {
            match self.family.iter_mut().find(|x| x.id == f.id) {
                Some(slot) => *slot = f,
                None => self.family.push(f),
            }
        }
        let mut front = Vec::new();
        for c in user.class {
            match self.class.iter_mut().find(|x| x.id == c.id) {
                Some(slot) => *slot = c,
                None => front.push(c),
            }
        }
        front.append(&mut self.class);
        self.class = front;
        for s in user.init_stage {
            match self.init_stage.iter_mut().find(|x| x.code == s.code) {
                Some(slot) => *slot = s,
                None => self.init_stage.push(s),
            }
        }
    }
}
