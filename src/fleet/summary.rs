//! The fleet summary (`faultline/fleet/v1`), folded from bundle lines alone, so that `merge`
//! of shard outputs gives the same line as one unsharded scan. Everything is sorted and the
//! result does not depend on the order of the lines.

use super::bundle::{boot_clusters, parse_iso_s, BundleLine};
use crate::model::Layer;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The `schema` of the summary line.
pub const FLEET_SCHEMA: &str = "faultline/fleet/v1";

/// How many codes the summary ranks.
pub const TOP_CODES: usize = 20;

/// The layers whose incidents are charged to a node: the machine, its GPUs, links, driver
/// stack and network, not the job (application), the scheduler (platform) or unknown causes.
pub const NODE_LAYERS: [Layer; 6] = [
    Layer::Hardware,
    Layer::ThermalPower,
    Layer::GpuMemory,
    Layer::Interconnect,
    Layer::DriverStack,
    Layer::NetworkStorage,
];

/// Tool identity.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ToolId {
    /// `faultline`.
    pub name: String,
    /// Crate version.
    pub version: String,
}

/// Bundles whose verdict names one layer.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct LayerCount {
    /// Layer (`none` for clean bundles).
    pub layer: String,
    /// Bundles with that verdict.
    pub bundles: u64,
    /// Distinct hosts of those bundles.
    pub hosts: u64,
}

/// One event code across the fleet.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct CodeCount {
    /// `kind` or `kind:code`.
    pub code: String,
    /// Events.
    pub events: u64,
    /// Bundles with at least one.
    pub bundles: u64,
    /// Distinct hosts of those bundles.
    pub hosts: u64,
}

/// A GPU that failed on two or more occasions (bundles or boots): an RMA candidate.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GpuOffender {
    /// Board serials (one, unless the logs disagree).
    pub serials: Vec<String>,
    /// UUIDs.
    pub uuids: Vec<String>,
    /// Hosts it was seen in.
    pub hosts: Vec<String>,
    /// Bus ids it was seen at.
    pub bus_ids: Vec<String>,
    /// Bundles where it failed.
    pub bundles: Vec<String>,
    /// Distinct boots with failures, plus bundles with failures at an unknown boot.
    pub occasions: u64,
    /// Failure events.
    pub failures: u64,
    /// Its events of severity warning or worse by code.
    pub codes: BTreeMap<String, u64>,
}

/// A node that failed on two or more occasions.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct NodeOffender {
    /// Host.
    pub host: String,
    /// Bundles that are about it or charge it with an incident.
    pub bundles: Vec<String>,
    /// Of those, bundles charging it with a node-layer incident.
    pub failing: u64,
    /// Distinct boots with node-layer incidents, plus failing bundles at an unknown boot.
    pub occasions: u64,
    /// Node-layer incidents by layer.
    pub layers: BTreeMap<String, u64>,
    /// GPUs of this host with failures.
    pub gpus: u64,
}

/// One driver version in the fleet.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct DriverStat {
    /// Version string.
    pub version: String,
    /// Bundles that run it.
    pub bundles: u64,
    /// Of those, bundles whose verdict names a fault.
    pub failing: u64,
    /// Distinct hosts.
    pub hosts: u64,
    /// failing / bundles, to three decimals.
    pub fault_rate: f64,
    /// Bundles with an incident of each layer.
    pub layers: BTreeMap<String, u64>,
    /// Faults cluster here: at least two failing bundles and a fault rate at least twice that
    /// of the bundles on other drivers.
    pub cluster: bool,
    /// Layers whose incidents cluster here by the same test.
    pub layer_clusters: Vec<String>,
}

/// One known issue across the fleet.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct KnownCount {
    /// Entry id.
    pub id: String,
    /// Bundles where it matched.
    pub matched: u64,
    /// Bundles whose versions it affects (fired or not).
    pub affected: u64,
    /// Hosts whose versions it affects and where it did not fire: the nodes to upgrade before
    /// it does (at most 20, sorted).
    pub exposed_hosts: Vec<String>,
}

/// The `faultline/fleet/v1` line.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct FleetSummary {
    /// `faultline/fleet/v1`.
    pub schema: String,
    /// Tool.
    pub tool: ToolId,
    /// `K/N` on the output of one shard (absent on a whole scan and on `merge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Bundles.
    pub bundles: u64,
    /// Bundles whose verdict names a fault.
    pub failing: u64,
    /// Bundles read with no finding.
    pub clean: u64,
    /// Bundles where nothing could be read.
    pub unreadable: u64,
    /// Bundles with at least one warning.
    pub with_warnings: u64,
    /// Lines for a bundle already seen (merge of overlapping files); the last one counts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub duplicates: u64,
    /// Distinct hosts.
    pub hosts: u64,
    /// Inputs read.
    pub inputs: u64,
    /// Bytes analyzed (after decompression).
    pub bytes: u64,
    /// Bytes on disk.
    pub disk_bytes: u64,
    /// Bundles by verdict layer, most frequent first.
    pub layers: Vec<LayerCount>,
    /// The most frequent codes, by bundles then events.
    pub codes: Vec<CodeCount>,
    /// GPUs with failures.
    pub failing_gpus: u64,
    /// Repeat-offender GPUs (RMA candidates), worst first.
    pub gpus: Vec<GpuOffender>,
    /// Repeat-offender nodes, worst first.
    pub nodes: Vec<NodeOffender>,
    /// Driver versions, most bundles first.
    pub drivers: Vec<DriverStat>,
    /// Bundles that name no driver version.
    pub drivers_unknown: u64,
    /// Known issues matched or whose versions some bundle runs, most matched first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_issues: Vec<KnownCount>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn rate(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        (n as f64 / d as f64 * 1000.0).round() / 1000.0
    }
}

/// Keeps one line per bundle (the last given), sorted by bundle; returns them and the number
/// of lines dropped.
fn dedupe(lines: &[BundleLine]) -> (Vec<&BundleLine>, u64) {
    let mut by_name: BTreeMap<&str, &BundleLine> = BTreeMap::new();
    for l in lines {
        by_name.insert(l.bundle.as_str(), l);
    }
    let dropped = (lines.len() - by_name.len()) as u64;
    (by_name.into_values().collect(), dropped)
}

fn node_layer(layer: &str) -> bool {
    Layer::parse(layer).is_some_and(|l| NODE_LAYERS.contains(&l))
}

/// A tiny union-find over identity strings, for GPUs known by serial in one bundle and by UUID
/// in another.
struct Ids {
    parent: BTreeMap<String, String>,
}

impl Ids {
    fn find(&mut self, x: &str) -> String {
        let p = self
            .parent
            .entry(x.to_string())
            .or_insert_with(|| x.to_string())
            .clone();
        if p == x {
            return p;
        }
        let root = self.find(&p);
        self.parent.insert(x.to_string(), root.clone());
        root
    }

    fn union(&mut self, a: &str, b: &str) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // the smaller name is the root: the result does not depend on the order of calls
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent.insert(hi, lo);
        }
    }
}

fn gpu_ids(host: Option<&str>, g: &super::bundle::GpuLine) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    ids.extend(g.serial.iter().map(|s| format!("serial:{s}")));
    ids.extend(g.uuid.iter().map(|u| format!("uuid:{u}")));
    if ids.is_empty() {
        let h = g.host.as_deref().or(host).unwrap_or("");
        ids.push(format!("slot:{h}/{}", g.bus_id));
    }
    ids
}

#[derive(Default)]
struct GpuAcc {
    serials: BTreeSet<String>,
    uuids: BTreeSet<String>,
    hosts: BTreeSet<String>,
    bus_ids: BTreeSet<String>,
    bundles: BTreeSet<String>,
    with_boot: BTreeSet<String>,
    boots: Vec<i64>,
    failures: u64,
    codes: BTreeMap<String, u64>,
}

fn gpus(lines: &[&BundleLine]) -> (u64, Vec<GpuOffender>, BTreeMap<String, BTreeSet<String>>) {
    let mut ids = Ids {
        parent: BTreeMap::new(),
    };
    let failing = || {
        lines.iter().flat_map(|l| {
            l.gpus
                .iter()
                .filter(|g| g.failures > 0)
                .map(move |g| (*l, g))
        })
    };
    for (l, g) in failing() {
        let v = gpu_ids(l.host.as_deref(), g);
        for x in &v[1..] {
            ids.union(&v[0], x);
        }
    }
    let mut acc: BTreeMap<String, GpuAcc> = BTreeMap::new();
    let mut per_host: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (l, g) in failing() {
        let root = ids.find(&gpu_ids(l.host.as_deref(), g)[0]);
        let a = acc.entry(root.clone()).or_default();
        a.serials.extend(g.serial.clone());
        a.uuids.extend(g.uuid.clone());
        let host = g.host.clone().or_else(|| l.host.clone());
        if let Some(h) = &host {
            a.hosts.insert(h.clone());
            per_host.entry(h.clone()).or_default().insert(root);
        }
        a.bus_ids.insert(g.bus_id.clone());
        a.bundles.insert(l.bundle.clone());
        let boots: Vec<i64> = g.boots.iter().filter_map(|b| parse_iso_s(b)).collect();
        if !boots.is_empty() {
            a.with_boot.insert(l.bundle.clone());
        }
        a.boots.extend(boots);
        a.failures += g.failures;
        for (k, n) in &g.codes {
            *a.codes.entry(k.clone()).or_default() += n;
        }
    }
    let total = acc.len() as u64;
    let mut offenders: Vec<GpuOffender> = acc
        .into_values()
        .map(|a| {
            let unknown_boot = a.bundles.difference(&a.with_boot).count() as u64;
            GpuOffender {
                occasions: boot_clusters(&a.boots).len() as u64 + unknown_boot,
                serials: a.serials.into_iter().collect(),
                uuids: a.uuids.into_iter().collect(),
                hosts: a.hosts.into_iter().collect(),
                bus_ids: a.bus_ids.into_iter().collect(),
                bundles: a.bundles.into_iter().collect(),
                failures: a.failures,
                codes: a.codes,
            }
        })
        .filter(|g| g.occasions >= 2)
        .collect();
    offenders.sort_by(|a, b| {
        (b.occasions, b.failures)
            .cmp(&(a.occasions, a.failures))
            .then_with(|| (&a.serials, &a.uuids, &a.hosts).cmp(&(&b.serials, &b.uuids, &b.hosts)))
    });
    (total, offenders, per_host)
}

#[derive(Default)]
struct NodeAcc {
    bundles: BTreeSet<String>,
    failing: BTreeSet<String>,
    with_boot: BTreeSet<String>,
    boots: Vec<i64>,
    layers: BTreeMap<String, u64>,
}

fn nodes(
    lines: &[&BundleLine],
    gpus_per_host: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<NodeOffender> {
    let mut acc: BTreeMap<String, NodeAcc> = BTreeMap::new();
    for l in lines {
        if let Some(h) = &l.host {
            acc.entry(h.clone())
                .or_default()
                .bundles
                .insert(l.bundle.clone());
        }
        for inc in l.incidents.iter().filter(|i| node_layer(&i.layer)) {
            let Some(h) = inc.host.as_ref().or(l.host.as_ref()) else {
                continue;
            };
            let a = acc.entry(h.clone()).or_default();
            a.bundles.insert(l.bundle.clone());
            a.failing.insert(l.bundle.clone());
            *a.layers.entry(inc.layer.clone()).or_default() += 1;
            if let Some(t) = inc.boot.as_deref().and_then(parse_iso_s) {
                a.boots.push(t);
                a.with_boot.insert(l.bundle.clone());
            }
        }
    }
    let mut out: Vec<NodeOffender> = acc
        .into_iter()
        .map(|(host, a)| NodeOffender {
            occasions: boot_clusters(&a.boots).len() as u64
                + a.failing.difference(&a.with_boot).count() as u64,
            gpus: gpus_per_host.get(&host).map_or(0, |s| s.len() as u64),
            bundles: a.bundles.into_iter().collect(),
            failing: a.failing.len() as u64,
            layers: a.layers,
            host,
        })
        .filter(|n| n.occasions >= 2)
        .collect();
    out.sort_by(|a, b| {
        (b.occasions, b.failing)
            .cmp(&(a.occasions, a.failing))
            .then_with(|| a.host.cmp(&b.host))
    });
    out
}

fn drivers(lines: &[&BundleLine]) -> (Vec<DriverStat>, u64) {
    let with_driver: Vec<&&BundleLine> = lines.iter().filter(|l| !l.drivers.is_empty()).collect();
    let layers_of = |l: &BundleLine| -> BTreeSet<String> {
        l.incidents
            .iter()
            .map(|i| i.layer.clone())
            .filter(|x| x != "none")
            .collect()
    };
    let versions: BTreeSet<&str> = with_driver
        .iter()
        .flat_map(|l| l.drivers.iter().map(String::as_str))
        .collect();
    let mut out = Vec::new();
    for v in versions {
        let (on, off): (Vec<&&BundleLine>, Vec<&&BundleLine>) = with_driver
            .iter()
            .partition(|l| l.drivers.iter().any(|d| d == v));
        let count = |set: &[&&BundleLine], f: &dyn Fn(&BundleLine) -> bool| {
            set.iter().filter(|l| f(l)).count() as u64
        };
        let clusters = |f: &dyn Fn(&BundleLine) -> bool| {
            let (n_on, n_off) = (count(&on, f), count(&off, f));
            n_on >= 2
                && !off.is_empty()
                && rate(n_on, on.len() as u64) >= 2.0 * rate(n_off, off.len() as u64)
        };
        let mut layers: BTreeMap<String, u64> = BTreeMap::new();
        for l in &on {
            for x in layers_of(l) {
                *layers.entry(x).or_default() += 1;
            }
        }
        let layer_clusters = layers
            .keys()
            .filter(|x| clusters(&|l: &BundleLine| layers_of(l).contains(*x)))
            .cloned()
            .collect();
        let failing = count(&on, &|l: &BundleLine| l.failing());
        let hosts: BTreeSet<&str> = on.iter().filter_map(|l| l.host.as_deref()).collect();
        out.push(DriverStat {
            version: v.to_string(),
            bundles: on.len() as u64,
            failing,
            hosts: hosts.len() as u64,
            fault_rate: rate(failing, on.len() as u64),
            layers,
            cluster: clusters(&|l: &BundleLine| l.failing()),
            layer_clusters,
        });
    }
    out.sort_by(|a, b| {
        b.bundles
            .cmp(&a.bundles)
            .then_with(|| a.version.cmp(&b.version))
    });
    let unknown = (lines.len() - with_driver.len()) as u64;
    (out, unknown)
}

fn layers(lines: &[&BundleLine]) -> Vec<LayerCount> {
    let mut m: BTreeMap<&str, (u64, BTreeSet<&str>)> = BTreeMap::new();
    for l in lines.iter().filter(|l| !l.unreadable) {
        let e = m.entry(l.verdict.root_cause_layer.as_str()).or_default();
        e.0 += 1;
        e.1.extend(l.host.as_deref());
    }
    let mut out: Vec<LayerCount> = m
        .into_iter()
        .map(|(layer, (n, hosts))| LayerCount {
            layer: layer.to_string(),
            bundles: n,
            hosts: hosts.len() as u64,
        })
        .collect();
    out.sort_by(|a, b| {
        b.bundles
            .cmp(&a.bundles)
            .then_with(|| a.layer.cmp(&b.layer))
    });
    out
}

fn codes(lines: &[&BundleLine]) -> Vec<CodeCount> {
    let mut m: BTreeMap<&str, (u64, u64, BTreeSet<&str>)> = BTreeMap::new();
    for l in lines {
        for (k, n) in &l.counts {
            let e = m.entry(k.as_str()).or_default();
            e.0 += n;
            e.1 += 1;
            e.2.extend(l.host.as_deref());
        }
    }
    let mut out: Vec<CodeCount> = m
        .into_iter()
        .map(|(code, (events, bundles, hosts))| CodeCount {
            code: code.to_string(),
            events,
            bundles,
            hosts: hosts.len() as u64,
        })
        .collect();
    out.sort_by(|a, b| {
        (b.bundles, b.events)
            .cmp(&(a.bundles, a.events))
            .then_with(|| a.code.cmp(&b.code))
    });
    out.truncate(TOP_CODES);
    out
}

/// Folds bundle lines (in any order, duplicates allowed) into the fleet summary.
pub fn fold(lines: &[BundleLine]) -> FleetSummary {
    let (lines, duplicates) = dedupe(lines);
    let (failing_gpus, gpu_offenders, per_host) = gpus(&lines);
    let (drivers, drivers_unknown) = drivers(&lines);
    let hosts: BTreeSet<&str> = lines.iter().filter_map(|l| l.host.as_deref()).collect();
    let failing = lines.iter().filter(|l| l.failing()).count() as u64;
    let unreadable = lines.iter().filter(|l| l.unreadable).count() as u64;
    FleetSummary {
        schema: FLEET_SCHEMA.into(),
        tool: ToolId {
            name: "faultline".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        shard: None,
        bundles: lines.len() as u64,
        failing,
        clean: lines.len() as u64 - failing - unreadable,
        unreadable,
        with_warnings: lines.iter().filter(|l| !l.warnings.is_empty()).count() as u64,
        duplicates,
        hosts: hosts.len() as u64,
        inputs: lines.iter().map(|l| l.inputs as u64).sum(),
        bytes: lines.iter().map(|l| l.bytes).sum(),
        disk_bytes: lines.iter().map(|l| l.disk_bytes).sum(),
        layers: layers(&lines),
        codes: codes(&lines),
        failing_gpus,
        gpus: gpu_offenders,
        nodes: nodes(&lines, &per_host),
        drivers,
        drivers_unknown,
        known_issues: known_counts(&lines),
    }
}

/// Bundles per matched known issue, and the hosts its versions expose where it did not fire.
fn known_counts(lines: &[&BundleLine]) -> Vec<KnownCount> {
    let mut map: BTreeMap<String, (u64, u64, BTreeSet<String>)> = BTreeMap::new();
    for l in lines {
        for id in &l.known_issues {
            map.entry(id.clone()).or_default().0 += 1;
        }
        for a in &l.affected_by {
            let id = a.split(':').next().unwrap_or(a).to_string();
            let e = map.entry(id.clone()).or_default();
            e.1 += 1;
            if !l.known_issues.contains(&id) {
                e.2.insert(l.host.clone().unwrap_or_else(|| l.bundle.clone()));
            }
        }
    }
    let mut out: Vec<KnownCount> = map
        .into_iter()
        .map(|(id, (matched, affected, hosts))| KnownCount {
            id,
            matched,
            affected,
            exposed_hosts: hosts.into_iter().take(20).collect(),
        })
        .collect();
    out.sort_by(|a, b| {
        b.matched
            .cmp(&a.matched)
            .then(b.affected.cmp(&a.affected))
            .then(a.id.cmp(&b.id))
    });
    out
}
