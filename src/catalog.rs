//! The knowledge catalog: Xid, SXid and DCGM codes and event kinds, loaded from TOML embedded at
//! build time (`data/catalog.toml`) and optionally overlaid by user files.

use crate::model::{Layer, Severity};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The catalog as shipped.
pub const BUILTIN_CATALOG: &str = include_str!("../data/catalog.toml");

/// Provenance of the catalog data.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    /// Where the facts come from.
    pub source: String,
    /// Edition of the source.
    pub edition: String,
}

/// One Xid code.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct XidEntry {
    /// Numeric code.
    pub code: i64,
    /// Short upper-snake name.
    pub mnemonic: String,
    /// One-line meaning for timelines.
    pub title: String,
    /// What happened and its usual causes.
    pub meaning: String,
    /// Layer the code points at on its own.
    pub layer: Layer,
    /// Severity on its own.
    pub severity: Severity,
    /// NVIDIA's immediate resolution bucket.
    pub immediate: String,
    /// NVIDIA's investigatory resolution bucket.
    pub investigatory: String,
    /// Causes in the legacy Xid table.
    pub legacy_causes: Vec<String>,
    /// Usually a consequence of another fault.
    pub sympathetic: bool,
    /// Keeps an incident open longer.
    pub sticky: bool,
    /// Who acts when this is the root cause.
    pub responsibility: String,
    /// How other tools treat it.
    pub other_tools: String,
    /// Steps to take.
    pub actions: Vec<String>,
}

/// A family of SXid codes that share a meaning.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SxidEntry {
    /// Codes in the family.
    pub codes: Vec<i64>,
    /// NVSwitch error name.
    pub name: String,
    /// One-line meaning.
    pub title: String,
    /// Impact and recovery.
    pub meaning: String,
    /// fatal | potentially_fatal | non_fatal.
    pub fatality: String,
    /// Layer.
    pub layer: Layer,
    /// Severity.
    pub severity: Severity,
    /// Steps to take.
    pub actions: Vec<String>,
    /// How other tools treat it.
    pub other_tools: String,
    /// Why the code is safe to ignore, when NVIDIA's catalog says it is: such an event never
    /// decides an incident's layer on its own.
    #[serde(default)]
    pub benign: Option<String>,
}

/// A DCGM failure code as reported by `dcgmi diag`.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct DcgmEntry {
    /// `DCGM_FR_*` name.
    pub code: String,
    /// Event kind it maps to.
    pub kind: String,
    /// Layer.
    pub layer: Layer,
    /// Severity.
    pub severity: Severity,
    /// Action from NVIDIA's mapping.
    pub action: String,
    /// One-line meaning.
    pub title: String,
    /// The message formats DCGM prints for this code (`dcgm_errors.h` `*_MSG`, every wording
    /// known), `%` specifiers as in the source: a diag result matching one takes this entry.
    #[serde(default)]
    pub messages: Vec<String>,
    /// Further kinds a matching result also raises (a row-remap message that says the memory
    /// errors were uncorrectable is an `ecc_dbe` too), when its text holds [`Self::also_when`].
    #[serde(default)]
    pub also: Vec<String>,
    /// Words a result must hold for [`Self::also`] (any text when empty).
    #[serde(default)]
    pub also_when: Option<String>,
}

/// An event kind.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct KindEntry {
    /// Kind name.
    pub kind: String,
    /// One-line meaning.
    pub title: String,
    /// Longer meaning.
    pub meaning: String,
    /// Layer the kind points at on its own.
    pub layer: Layer,
    /// Default severity.
    pub severity: Severity,
    /// Who acts.
    pub responsibility: String,
    /// How far an event of this kind alone names a cause, when no rule does (0.5 when absent;
    /// lower for the generic kinds that keep what is not understood).
    #[serde(default)]
    pub confidence: Option<f64>,
    /// Steps to take.
    pub actions: Vec<String>,
}

/// What is normal for a GPU model: its NVLinks (see the `[[product]]` table).
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProductEntry {
    /// Words that must each begin a word of the product name (lower case; `-`, `_` are blanks).
    #[serde(rename = "match")]
    pub words: Vec<String>,
    /// NVLinks up on a healthy part (0: no NVLink).
    pub nvlinks: u32,
    /// Links may be inactive by design (bridged PCIe cards).
    #[serde(default)]
    pub links_optional: bool,
    /// Why, for the notes of discounted states.
    pub note: String,
}

impl ProductEntry {
    /// True when every word of the entry begins a word of `name`.
    pub fn fits(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase().replace(['-', '_', '/'], " ");
        let tokens: Vec<&str> = lower.split_whitespace().collect();
        self.words
            .iter()
            .all(|w| tokens.iter().any(|t| t.starts_with(w.as_str())))
    }

    /// True when an inactive link of this product is a fault (all its links must be up).
    pub fn links_required(&self) -> bool {
        self.nvlinks > 0 && !self.links_optional
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CatalogFile {
    #[serde(default)]
    meta: Option<Meta>,
    #[serde(default)]
    xid: Vec<XidEntry>,
    #[serde(default)]
    sxid: Vec<SxidEntry>,
    #[serde(default)]
    dcgm: Vec<DcgmEntry>,
    #[serde(default)]
    kind: Vec<KindEntry>,
    #[serde(default)]
    range: Vec<RangeEntry>,
    #[serde(default)]
    layer: Vec<LayerEntry>,
    #[serde(default)]
    product: Vec<ProductEntry>,
}

/// What is known about a range of codes of one family (for codes the tables do not hold).
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct RangeEntry {
    /// `xid` or `sxid`.
    pub family: String,
    /// First code.
    pub from: i64,
    /// Last code.
    pub to: i64,
    /// What codes of the range are.
    pub note: String,
}

/// A root-cause layer, as `faultline explain layer NAME` tells it.
#[derive(Clone, Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayerEntry {
    /// The contract's name.
    pub name: Layer,
    /// Title.
    pub title: String,
    /// What belongs to it.
    pub meaning: String,
    /// Who usually acts.
    pub who_acts: String,
}

/// The merged catalog.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// Provenance.
    pub meta: Meta,
    /// Xid entries by code.
    pub xid: BTreeMap<i64, XidEntry>,
    /// SXid entries by code (families expanded).
    pub sxid: BTreeMap<i64, SxidEntry>,
    /// DCGM entries by code name.
    pub dcgm: BTreeMap<String, DcgmEntry>,
    /// Kinds by name.
    pub kind: BTreeMap<String, KindEntry>,
    /// Code ranges.
    pub ranges: Vec<RangeEntry>,
    /// Layers.
    pub layers: BTreeMap<Layer, LayerEntry>,
    /// GPU models and their NVLinks, in match order.
    pub products: Vec<ProductEntry>,
}

impl Catalog {
    /// The built-in catalog (a copy of [`Catalog::builtin_ref`], for a caller that changes it).
    pub fn builtin() -> Catalog {
        Catalog::builtin_ref().clone()
    }

    /// The built-in catalog, deserialized once per process (one catalog per analysis or bundle).
    pub fn builtin_ref() -> &'static Catalog {
        static BUILTIN: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(|| {
            let mut c = Catalog::default();
            c.merge(crate::embedded::load(
                crate::embedded::CATALOG,
                "data/catalog.toml",
            ));
            c
        })
    }

    /// Adds or replaces entries from a TOML text with the same schema.
    pub fn overlay(&mut self, text: &str) -> Result<(), toml::de::Error> {
        self.merge(toml::from_str(text)?);
        Ok(())
    }

    /// Adds or replaces the entries of one file.
    fn merge(&mut self, f: CatalogFile) {
        if let Some(m) = f.meta {
            self.meta = m;
        }
        for x in f.xid {
            self.xid.insert(x.code, x);
        }
        for s in f.sxid {
            for &c in &s.codes {
                self.sxid.insert(c, s.clone());
            }
        }
        for d in f.dcgm {
            self.dcgm.insert(d.code.clone(), d);
        }
        for k in f.kind {
            self.kind.insert(k.kind.clone(), k);
        }
        self.ranges.extend(f.range);
        for l in f.layer {
            self.layers.insert(l.name, l);
        }
        // a user's entries are tried before the built-in ones
        let mut products = f.product;
        products.append(&mut self.products);
        self.products = products;
    }

    /// Layer and severity for an event of `kind` with an optional code.
    pub fn classify(&self, kind: &str, code: Option<i64>) -> (Layer, Severity) {
        match (kind, code) {
            ("xid", Some(c)) => {
                if let Some(x) = self.xid.get(&c) {
                    return (x.layer, x.severity);
                }
                (Layer::Unknown, Severity::Error)
            }
            ("sxid", Some(c)) => {
                if let Some(x) = self.sxid.get(&c) {
                    return (x.layer, x.severity);
                }
                (Layer::Interconnect, Severity::Error)
            }
            _ => self
                .kind
                .get(kind)
                .map_or((Layer::Unknown, Severity::Warning), |k| {
                    (k.layer, k.severity)
                }),
        }
    }

    /// A short meaning for timelines.
    pub fn title(&self, kind: &str, code: Option<i64>) -> String {
        match (kind, code) {
            ("xid", Some(c)) => self
                .xid
                .get(&c)
                .map_or_else(|| format!("Xid {c}"), |x| x.title.clone()),
            ("sxid", Some(c)) => self
                .sxid
                .get(&c)
                .map_or_else(|| format!("SXid {c}"), |x| x.title.clone()),
            _ => self
                .kind
                .get(kind)
                .map_or_else(|| kind.to_string(), |k| k.title.clone()),
        }
    }

    /// True for codes that are normally consequences of another fault.
    pub fn is_sympathetic(&self, kind: &str, code: Option<i64>) -> bool {
        kind == "xid"
            && code
                .and_then(|c| self.xid.get(&c))
                .is_some_and(|x| x.sympathetic)
    }

    /// Why an event is safe to ignore (an SXid, or the NVLink event derived from it, whose
    /// catalog entry says so), if it is.
    pub fn benign(&self, kind: &str, code: Option<i64>, from_switch: bool) -> Option<&str> {
        let sxid = kind == "sxid" || (kind == "nvlink_error" && from_switch);
        code.filter(|_| sxid)
            .and_then(|c| self.sxid.get(&c))
            .and_then(|x| x.benign.as_deref())
    }

    /// The entry of the GPU model named `name` (the first that fits).
    pub fn product(&self, name: &str) -> Option<&ProductEntry> {
        self.products.iter().find(|p| p.fits(name))
    }

    /// True for codes that keep an incident open longer.
    pub fn is_sticky(&self, kind: &str, code: Option<i64>) -> bool {
        kind == "xid"
            && code
                .and_then(|c| self.xid.get(&c))
                .is_some_and(|x| x.sticky)
    }
}
