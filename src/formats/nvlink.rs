//! `nvidia-smi nvlink -s` (link states and speeds) and `nvidia-smi nvlink -e` (error counters):
//! a `GPU N: <product> (UUID: ...)` header, then one `Link L: ...` line per link (or per link and
//! counter). The grammar is written with nom; what the links say is judged against what is
//! normal for the product (the catalog's `[[product]]` table): inactive links on an SXM part whose
//! links must all be up are an NVLink fault, on a bridged PCIe card or a GPU without NVLink they
//! are by design and kept as info with the reason.

use crate::catalog::Catalog;
use crate::model::Severity;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_till, take_until};
use nom::character::complete::{char, digit1, space0, space1};
use nom::combinator::{map, map_res};
use nom::number::complete::double;
use nom::sequence::{delimited, preceded, terminated, tuple};
use nom::IResult;
use std::collections::BTreeMap;

/// What one line of a link table is.
#[derive(Clone, Debug, PartialEq)]
pub enum Line<'a> {
    /// `GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-...)`.
    Gpu {
        /// Index.
        index: u32,
        /// Product name.
        product: &'a str,
        /// UUID as printed (may be elided).
        uuid: Option<&'a str>,
    },
    /// `Link 0: 25.781 GB/s`.
    Speed {
        /// Link.
        link: u32,
        /// GB/s.
        gbps: f64,
    },
    /// `Link 3: <inactive>` / `Link 3: Inactive`.
    Inactive {
        /// Link.
        link: u32,
    },
    /// `Link 0: Replay Errors: 0` (and `Recovery`, `CRC`, `Rx0 CRC` ... counters).
    Counter {
        /// Link.
        link: u32,
        /// Counter name.
        name: &'a str,
        /// Value.
        value: u64,
    },
}

fn number(i: &str) -> IResult<&str, u32> {
    map_res(digit1, str::parse)(i)
}

fn gpu_header(i: &str) -> IResult<&str, Line<'_>> {
    let (i, (index, product)) = tuple((
        preceded(tag("GPU "), number),
        preceded(tag(": "), take_until(" (UUID")),
    ))(i)?;
    let (i, uuid) = delimited(tag(" (UUID: "), take_till(|c| c == ')'), char(')'))(i)?;
    Ok((
        i,
        Line::Gpu {
            index,
            product: product.trim(),
            uuid: Some(uuid.trim()).filter(|u| u.starts_with("GPU-")),
        },
    ))
}

fn link_state(i: &str) -> IResult<&str, Line<'_>> {
    let (i, link) = delimited(tuple((space0, tag("Link "))), number, tag(":"))(i)?;
    let (i, _) = space1(i)?;
    alt((
        map(alt((tag("<inactive>"), tag("Inactive"))), move |_| {
            Line::Inactive { link }
        }),
        map(terminated(double, tuple((space0, tag("GB/s")))), move |g| {
            Line::Speed { link, gbps: g }
        }),
        map(
            tuple((
                take_till(|c| c == ':'),
                preceded(tuple((char(':'), space0)), map_res(digit1, str::parse)),
            )),
            move |(name, value): (&str, u64)| Line::Counter {
                link,
                name: name.trim(),
                value,
            },
        ),
    ))(i)
}

/// Reads one line of a link table.
pub fn line(text: &str) -> Option<Line<'_>> {
    let t = text.trim_end_matches('\r');
    let r: IResult<&str, Line<'_>> = alt((gpu_header, link_state))(t.trim_start());
    r.ok()
        .filter(|(rest_of, _)| rest_of.trim().is_empty() || matches!(rest_of.trim(), "..."))
        .map(|(_, l)| l)
}

/// True when the text is an `nvidia-smi nvlink` table: a GPU header and link lines making up
/// most of its lines (a command line or an elision mark may be among them).
pub fn looks_like(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(16 * 1024)]);
    let (mut gpus, mut links, mut total) = (0, 0, 0);
    for l in text.lines().take(400).filter(|l| !l.trim().is_empty()) {
        total += 1;
        match line(l) {
            Some(Line::Gpu { .. }) => gpus += 1,
            Some(_) => links += 1,
            None => {}
        }
    }
    gpus >= 1 && links >= 1 && (gpus + links) * 3 >= total * 2
}

/// The link table of one GPU.
#[derive(Clone, Debug, Default)]
pub struct GpuLinks {
    /// 0-based line of its header.
    pub line: usize,
    /// Index.
    pub index: u32,
    /// Product name.
    pub product: String,
    /// UUID.
    pub uuid: Option<String>,
    /// Links up, with their speed.
    pub up: BTreeMap<u32, f64>,
    /// Links inactive, with their line.
    pub inactive: BTreeMap<u32, usize>,
    /// Non-zero error counters: (line, link, name, value).
    pub errors: Vec<(usize, u32, String, u64)>,
}

/// Reads a link table.
pub fn parse(text: &str) -> (Vec<GpuLinks>, u64) {
    let mut gpus: Vec<GpuLinks> = Vec::new();
    let mut recognized = 0;
    for (i, l) in text.lines().enumerate() {
        let Some(parsed) = line(l) else { continue };
        recognized += 1;
        if let Line::Gpu {
            index,
            product,
            uuid,
        } = parsed
        {
            gpus.push(GpuLinks {
                line: i,
                index,
                product: product.to_string(),
                uuid: uuid.map(str::to_string),
                ..GpuLinks::default()
            });
            continue;
        }
        let Some(g) = gpus.last_mut() else { continue };
        match parsed {
            Line::Speed { link, gbps } => {
                g.up.insert(link, gbps);
            }
            Line::Inactive { link } => {
                g.inactive.insert(link, i);
            }
            Line::Counter { link, name, value } if value > 0 => {
                g.errors.push((i, link, name.to_string(), value));
            }
            _ => {}
        }
    }
    (gpus, recognized)
}

/// An event a link table gives, with its 0-based line.
#[derive(Clone, Debug)]
pub struct LinkEvent {
    /// 0-based line.
    pub line: usize,
    /// Severity (info: a state normal for the product, kept with the reason).
    pub severity: Severity,
    /// GPU index.
    pub gpu: String,
    /// Details (`reason`, `product`, `normal`).
    pub attrs: BTreeMap<String, String>,
}

/// The `nvlink_error` events of one GPU's table, judged against its product.
pub fn judge(g: &GpuLinks, catalog: &Catalog) -> Vec<LinkEvent> {
    let mut out = Vec::new();
    let mut attrs = BTreeMap::new();
    attrs.insert("product".to_string(), g.product.clone());
    if let Some(u) = &g.uuid {
        attrs.insert("uuid".to_string(), u.clone());
    }
    if let Some(&first) = g.inactive.values().next() {
        let links: Vec<String> = g.inactive.keys().map(u32::to_string).collect();
        let what = format!("link {} inactive, {} up", links.join(", "), g.up.len());
        let product = catalog.product(&g.product);
        let (severity, reason) = match product {
            Some(p) if p.links_required() => (
                Severity::Error,
                format!("{what}: {} ({}) must have every link up", g.product, p.note),
            ),
            Some(p) => (
                Severity::Info,
                format!("{what}: by design on {} ({})", g.product, p.note),
            ),
            None if g.up.is_empty() => (
                Severity::Info,
                format!(
                    "{what}: no link of {} is up, as on a GPU without NVLink or without a bridge",
                    g.product
                ),
            ),
            None => (
                Severity::Warning,
                format!(
                    "{what}: {} is not in the product table, so whether its links are optional is not known",
                    g.product
                ),
            ),
        };
        let mut a = attrs.clone();
        a.insert("reason".to_string(), reason);
        a.insert("inactive_links".to_string(), links.join(","));
        if severity == Severity::Info {
            a.insert("normal".to_string(), "true".to_string());
        }
        out.push(LinkEvent {
            line: first,
            severity,
            gpu: g.index.to_string(),
            attrs: a,
        });
    }
    for (line, link, name, value) in &g.errors {
        let mut a = attrs.clone();
        a.insert(
            "reason".to_string(),
            format!("link {link}: {name}: {value}"),
        );
        out.push(LinkEvent {
            line: *line,
            severity: Severity::Warning,
            gpu: g.index.to_string(),
            attrs: a,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SXM: &str = "nvidia-smi nvlink -s\n....\nGPU 3: Tesla V100-SXM2-32GB (UUID: ...)\n         Link 0: 25.781 GB/s\n         Link 1: 25.781 GB/s\n         Link 3: <inactive>\n         Link 5: <inactive>\n";

    #[test]
    fn lines_parse() {
        assert_eq!(
            line("GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-1a2b)"),
            Some(Line::Gpu {
                index: 3,
                product: "Tesla V100-SXM2-32GB",
                uuid: Some("GPU-1a2b")
            })
        );
        assert_eq!(
            line("\t Link 3: <inactive>"),
            Some(Line::Inactive { link: 3 })
        );
        assert_eq!(line("  Link 4: Inactive"), Some(Line::Inactive { link: 4 }));
        assert_eq!(
            line(" Link 0: 26.562 GB/s"),
            Some(Line::Speed {
                link: 0,
                gbps: 26.562
            })
        );
        assert_eq!(
            line("\t Link 2: Replay Errors: 4"),
            Some(Line::Counter {
                link: 2,
                name: "Replay Errors",
                value: 4
            })
        );
        assert_eq!(line("GPU 0: NVIDIA A10G (UUID: GPU-1)  extra words"), None);
        assert!(looks_like(SXM.as_bytes()));
        assert!(!looks_like(
            b"GPU 0: Tesla T4 (UUID: GPU-1)\nGPU 1: Tesla T4 (UUID: GPU-2)\n"
        ));
    }

    #[test]
    fn inactive_links_are_a_fault_only_where_the_product_needs_them() {
        let c = Catalog::builtin();
        let (g, n) = parse(SXM);
        assert_eq!(n, 5);
        let ev = judge(&g[0], &c);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].severity, Severity::Error);
        assert_eq!(ev[0].line, 5);
        let pcie = SXM.replace("Tesla V100-SXM2-32GB", "NVIDIA H100 PCIe");
        let ev = judge(&parse(&pcie).0[0], &c);
        assert_eq!(ev[0].severity, Severity::Info);
        assert!(ev[0].attrs["reason"].contains("by design"));
        let odd = SXM.replace("Tesla V100-SXM2-32GB", "Frobnitz 9000");
        assert_eq!(judge(&parse(&odd).0[0], &c)[0].severity, Severity::Warning);
    }
}
