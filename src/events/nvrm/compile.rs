//! Compiling `data/nvrm.toml`: families and classes with their words in one lexicon, checked
//! (every class names a known family and a kind or `benign`, every reason named is defined), and
//! the lookup tables of statuses, stages and function prefixes.

use super::lexicon::Lexicon;
use super::{ClassDef, FamilyDef, Nvrm, NvrmError, NvrmFile, ReasonDef, StatusDef};
use crate::events::Needles;
use std::collections::HashMap;

/// A function name as prefixes compare it: leading underscores dropped, lower case.
pub(super) fn norm_function(f: &str) -> String {
    f.trim_start_matches('_').to_ascii_lowercase()
}

/// A family with its words as lexicon ids.
pub(super) struct Family {
    pub(super) def: FamilyDef,
    pub(super) words: Vec<u32>,
}

/// A class with its function prefixes and starts normalized and its words as lexicon ids.
pub(super) struct Class {
    pub(super) def: ClassDef,
    pub(super) prefixes: Vec<String>,
    pub(super) words: Vec<u32>,
    pub(super) starts: Vec<String>,
    pub(super) not_words: Vec<u32>,
}

impl Nvrm {
    /// Compiles the data.
    pub fn compile(file: NvrmFile) -> Result<Nvrm, NvrmError> {
        let mut lexicon = Lexicon::default();
        let (families, prefixes) = families(file.family, &mut lexicon);
        let classes = file
            .class
            .into_iter()
            .map(|def| class(def, &families, &mut lexicon))
            .collect::<Result<Vec<_>, _>>()?;
        let reasons: HashMap<String, ReasonDef> = file
            .reasons
            .into_iter()
            .map(|r| (r.id.clone(), r))
            .collect();
        let named = classes
            .iter()
            .filter_map(|c| c.def.reason.as_ref())
            .chain(families.iter().filter_map(|f| f.def.reason.as_ref()))
            .chain(file.status.iter().filter_map(|s| s.reason.as_ref()))
            .chain(file.init_stage.iter().filter_map(|s| s.reason.as_ref()));
        if let Some(r) = named.into_iter().find(|r| !reasons.contains_key(*r)) {
            return Err(NvrmError::Reason(r.clone()));
        }
        let (by_name, by_code) = status_index(&file.status);
        let terminal_words = terminal_words(&classes);
        let error_words = lexicon.ids(&file.error_words);
        lexicon.build();
        Ok(Nvrm {
            lexicon,
            error_words,
            families,
            prefixes,
            classes,
            statuses: file.status,
            by_name,
            by_code,
            stages: file.init_stage.into_iter().map(|s| (s.code, s)).collect(),
            reasons,
            terminal_words,
        })
    }
}

/// The families, and their function prefixes (a prefix goes to the first family listing it).
fn families(defs: Vec<FamilyDef>, lexicon: &mut Lexicon) -> (Vec<Family>, HashMap<String, usize>) {
    let mut prefixes = HashMap::new();
    let families = defs
        .into_iter()
        .enumerate()
        .map(|(i, def)| {
            for p in def.functions.iter().map(|p| norm_function(p)) {
                if !p.is_empty() {
                    prefixes.entry(p).or_insert(i);
                }
            }
            Family {
                words: lexicon.ids(&def.words),
                def,
            }
        })
        .collect();
    (families, prefixes)
}

/// One class, checked: a known family, a kind or `benign` (not both), and something to match.
fn class(def: ClassDef, families: &[Family], lexicon: &mut Lexicon) -> Result<Class, NvrmError> {
    if let Some(f) = &def.family {
        if !families.iter().any(|x| &x.def.id == f) {
            return Err(NvrmError::Class(def.id, format!("unknown family {f}")));
        }
    }
    if def.kind.is_none() == def.benign.is_none() {
        return Err(NvrmError::Class(
            def.id,
            "needs either a kind or benign".into(),
        ));
    }
    if def.functions.is_empty()
        && def.words.is_empty()
        && def.starts.is_empty()
        && def.statuses.is_empty()
        && !def.gone
    {
        return Err(NvrmError::Class(
            def.id,
            "needs functions, words, starts, statuses or gone".into(),
        ));
    }
    Ok(Class {
        prefixes: def.functions.iter().map(|p| norm_function(p)).collect(),
        words: lexicon.ids(&def.words),
        starts: def.starts.iter().map(|s| s.to_ascii_lowercase()).collect(),
        not_words: lexicon.ids(&def.not_words),
        def,
    })
}

/// Statuses by name, and by code (the first one of a code).
fn status_index(statuses: &[StatusDef]) -> (HashMap<String, usize>, HashMap<i64, usize>) {
    let mut by_name = HashMap::new();
    let mut by_code = HashMap::new();
    for (i, s) in statuses.iter().enumerate() {
        by_name.insert(s.name.clone(), i);
        by_code.entry(s.code).or_insert(i);
    }
    (by_name, by_code)
}

/// The words of the terminal classes, lower-cased.
fn terminal_words(classes: &[Class]) -> Needles {
    Needles::new(
        classes
            .iter()
            .filter(|c| c.def.terminal)
            .flat_map(|c| c.def.words.iter())
            .filter(|w| !w.is_empty())
            .map(|w| w.to_ascii_lowercase()),
    )
    .warming()
}
