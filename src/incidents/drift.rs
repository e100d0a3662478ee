//! Version drift before an incident: the host loaded another driver version, or its NVIDIA/CUDA
//! packages changed (apt, dpkg, dnf/yum, nvidia-installer), before the first fault. The driver
//! stack then becomes the incident's alternative, or — when the incident is a driver/library
//! mismatch and no driver load followed the upgrade — the summary names the upgrade that was not
//! followed by a reload of the kernel module.

use super::{Alternative, Incident};
use crate::model::Layer;
use crate::rules::DriftParams;
use crate::timeline::Event;

/// A duration for a sentence: `40 s`, `21 min`, `2.5 h`, `3 days`.
pub fn ago(us: i64) -> String {
    let s = us.max(0) / 1_000_000;
    if s < 120 {
        format!("{s} s")
    } else if s < 90 * 60 {
        format!("{} min", (s + 30) / 60)
    } else if s < 48 * 3600 {
        format!("{:.1} h", s as f64 / 3600.0)
    } else {
        format!("{} days", (s + 43_200) / 86_400)
    }
}

/// What one package event says changed.
struct Change<'a> {
    index: usize,
    event: &'a Event,
    driver: bool,
    name: String,
    from: Option<&'a str>,
    to: Option<&'a str>,
}

impl Change<'_> {
    fn versions(&self) -> String {
        match (self.from, self.to) {
            (Some(f), Some(t)) => format!(" from {f} to {t}"),
            (None, Some(t)) => format!(" to {t}"),
            (Some(f), None) => format!(" (was {f})"),
            (None, None) => String::new(),
        }
    }

    fn cite(&self) -> String {
        format!("{}:{}", self.event.source.path, self.event.source.line)
    }
}

/// The package event `e` as a change of the driver or of CUDA, per the drift parameters.
fn change<'a>(index: usize, e: &'a Event, p: &DriftParams) -> Option<Change<'a>> {
    if e.kind != "package_change" {
        return None;
    }
    let installer = e.attrs.get("driver_version");
    let name = match (e.attrs.get("package"), installer) {
        (Some(n), _) => n.to_string(),
        (None, Some(_)) => "the NVIDIA driver (.run installer)".to_string(),
        (None, None) => return None,
    };
    let has = |list: &[String]| list.iter().any(|s| name.contains(s.as_str()));
    let driver = installer.is_some() || has(&p.driver_packages);
    if !driver && !has(&p.cuda_packages) {
        return None;
    }
    Some(Change {
        index,
        event: e,
        driver,
        name,
        from: e.attrs.get("from_version"),
        to: e.attrs.get("to_version").or(installer),
    })
}

/// Adds what changed in the driver stack before each incident's first fault: a different driver
/// version loaded, or NVIDIA/CUDA packages changed within the drift window.
pub fn add_driver_drift(incidents: &mut [Incident], events: &[Event], p: &DriftParams) {
    for inc in incidents.iter_mut() {
        let Some(pi) = inc.primary else { continue };
        let pe = &events[pi];
        let (Some(host), Some(start)) = (pe.host.as_ref(), pe.time_us) else {
            continue;
        };
        // (confidence as an alternative, sentence, evidence line)
        let mut notes: Vec<(f64, String, usize)> = Vec::new();
        if let Some(n) = load_drift(events, host, start) {
            notes.push(n);
        }
        notes.extend(package_drift(inc, events, (host, start), p));
        for (conf, text, line) in notes {
            add_note(inc, (conf, text, line));
        }
    }
}

/// The latest driver package change on `host` within the window before `start`, else the latest
/// CUDA one, as a note: said as an upgrade without a module reload when the incident holds a
/// driver/library mismatch and no driver load followed the change.
fn package_drift(
    inc: &Incident,
    events: &[Event],
    (host, start): (&std::sync::Arc<str>, i64),
    p: &DriftParams,
) -> Option<(f64, String, usize)> {
    let on_host = |e: &&Event| e.host.as_ref() == Some(host);
    let changes: Vec<Change> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| on_host(e))
        .filter(|(_, e)| {
            e.time_us
                .is_some_and(|t| t <= start && start - t <= p.window_s * 1_000_000)
        })
        .filter_map(|(i, e)| change(i, e, p))
        .collect();
    // the latest driver change, else the latest CUDA change
    let c = changes
        .iter()
        .filter(|c| c.driver)
        .max_by_key(|c| (c.event.time_us, c.from.is_some()))
        .or_else(|| changes.iter().max_by_key(|c| c.event.time_us))?;
    let t = c.event.time_us.unwrap_or(start);
    let reloaded = events
        .iter()
        .filter(on_host)
        .any(|e| e.kind == "driver_load" && e.time_us.is_some_and(|l| l > t && l <= start));
    let mismatch = inc
        .events
        .iter()
        .any(|&i| events[i].kind == "driver_mismatch" && events[i].host.as_ref() == Some(host));
    let when = ago(start - t);
    let text = if c.driver && mismatch && !reloaded {
        format!(
            "the driver was upgraded {when} before the first fault without reloading the kernel module ({}{} on {host}, {})",
            c.name,
            c.versions(),
            c.cite()
        )
    } else {
        let what = if c.driver { "driver" } else { "CUDA" };
        format!(
            "the {what} packages on {host} changed {when} before the first fault ({}{}, {})",
            c.name,
            c.versions(),
            c.cite()
        )
    };
    Some((0.35, text, c.index))
}

/// Adds a drift note to the incident: to its summary and evidence when its layer is the driver
/// stack, else to its driver-stack alternative (made when it has none).
fn add_note(inc: &mut Incident, (conf, text, line): (f64, String, usize)) {
    if inc.layer == Layer::DriverStack {
        inc.summary.push_str(&format!("; {text}"));
        if !inc.evidence.contains(&line) {
            inc.evidence.push(line);
        }
    } else if let Some(a) = inc
        .alternatives
        .iter_mut()
        .find(|a| a.layer == Layer::DriverStack)
    {
        if !a.summary.contains(&text) {
            a.summary.push_str(&format!("; {text}"));
        }
    } else {
        inc.alternatives.push(Alternative {
            layer: Layer::DriverStack,
            confidence: conf,
            summary: text,
        });
    }
}

/// The last change of the loaded driver version on `host` before `start`: the confidence it
/// gets as an alternative, a sentence, and the load that changed it.
fn load_drift(events: &[Event], host: &str, start: i64) -> Option<(f64, String, usize)> {
    let mut loads: Vec<(usize, &Event)> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| {
            e.kind == "driver_load"
                && e.host.as_deref() == Some(host)
                && e.time_us.is_some_and(|t| t <= start)
        })
        .collect();
    loads.sort_by_key(|(_, e)| e.time_us);
    let w = loads
        .windows(2)
        .rev()
        .find(|w| w[0].1.attrs.get("driver_version") != w[1].1.attrs.get("driver_version"))?;
    let version = |e: &Event| {
        e.attrs
            .get("driver_version")
            .map(str::to_string)
            .unwrap_or_default()
    };
    let (i, now) = w[1];
    let text = format!(
        "the driver on {host} changed from {} to {} {} before the first fault ({}:{})",
        version(w[0].1),
        version(now),
        ago(start - now.time_us.unwrap_or(start)),
        now.source.path,
        now.source.line
    );
    Some((0.3, text, i))
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(ago(40_000_000), "40 s");
        assert_eq!(ago(20 * 60 * 1_000_000 + 44_000_000), "21 min");
        assert_eq!(ago(2 * 3600 * 1_000_000 + 1800 * 1_000_000), "2.5 h");
        assert_eq!(ago(3 * 86_400 * 1_000_000), "3 days");
        assert_eq!(ago(-5), "0 s");
    }
}
