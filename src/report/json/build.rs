//! Building the report value from an analysis: events, inputs, incidents, the verdict and the
//! job, with their members named by event id.

use super::*;
use crate::words::counted;

/// The JSON form of an event, copied ([`event_json_taking`] on a copy).
pub(super) fn event_json_of(e: &Event, catalog: &Catalog) -> EventJson {
    event_json(e, catalog)
}

fn event_json(e: &Event, catalog: &Catalog) -> EventJson {
    event_json_taking(&mut e.clone(), catalog)
}

/// The JSON form of an event whose own texts (message, details, other places) are moved out of
/// it (left empty): the report of a whole analysis holds them once, not a copy beside the
/// timeline's. The texts it shares with other events (host, path, kind, GPU) are copied.
pub(super) fn event_json_taking(e: &mut Event, catalog: &Catalog) -> EventJson {
    let tod = e
        .time_of_day_us()
        .map(time_of_day_parts)
        .map_or((None, None), |(t, d)| (Some(t), d));
    EventJson {
        id: e.id_text(),
        time: e.time_us.map(iso_us),
        time_quality: e.quality.as_str(),
        host: e.host.as_deref().map(str::to_string),
        source: SourceJson {
            path: e.source.path.to_string(),
            line: e.source.line,
        },
        title: catalog.title(e.kind, e.code),
        kind: e.kind.to_string(),
        code: e.code,
        gpu: e.gpu.as_deref().map(str::to_string),
        gpu_uuid: e.gpu_uuid().map(str::to_string),
        rank: e.rank,
        layer: e.layer.as_str(),
        severity: e.severity.as_str(),
        message: take_shared(&mut e.message),
        uptime_s: e.uptime_us.map(|u| u as f64 / 1e6),
        time_of_day: tod.0,
        day_in_file: tod.1,
        details: std::mem::take(&mut e.attrs),
        also_seen: e
            .rare
            .as_mut()
            .map(|r| std::mem::take(&mut r.also_seen))
            .unwrap_or_default()
            .into_iter()
            .map(|s| SourceJson {
                path: s.path.to_string(),
                line: s.line,
            })
            .collect(),
        suppressed: e.suppressed,
    }
}

/// The text of a shared message, the event's hold on it given up (the report holds the text).
fn take_shared(m: &mut std::sync::Arc<str>) -> String {
    static EMPTY: std::sync::LazyLock<std::sync::Arc<str>> =
        std::sync::LazyLock::new(|| std::sync::Arc::from(""));
    std::mem::replace(m, EMPTY.clone()).to_string()
}

/// Builds the report value.
pub fn build(a: &Analysis, catalog: &Catalog) -> Report {
    let mut r = build_rest(a);
    r.events = a.events.iter().map(|e| event_json(e, catalog)).collect();
    r
}

/// Builds the report value, moving the events' own texts (message, details, other places) into
/// it instead of copying them: afterwards `a.events` keeps their times, codes, shared texts,
/// places and counts. For a caller done with the timeline once the report is built.
pub fn build_taking(a: &mut Analysis, catalog: &Catalog) -> Report {
    let mut r = build_rest(a);
    r.events = a
        .events
        .iter_mut()
        .map(|e| event_json_taking(e, catalog))
        .collect();
    r
}

/// The report without its event list.
pub(super) fn build_rest(a: &Analysis) -> Report {
    let inputs = inputs_json(a);
    let incidents: Vec<IncidentJson> = a
        .incidents
        .iter()
        .enumerate()
        .map(|(at, i)| IncidentJson {
            known_issues: super::known::of_incident(a, at),
            ..incident_json(a, i)
        })
        .collect();
    // the GPU of each incident's primary fault
    let suspects: Vec<(Option<String>, String)> = a
        .incidents
        .iter()
        .filter_map(|inc| {
            let e = &a.events[inc.primary?];
            let g = e.gpu.as_deref()?;
            Some((e.host.as_deref().map(str::to_string), g.to_string()))
        })
        .collect();
    let job = a.job.as_ref().map(|j| job_json(a, j));
    let hosts = hosts(a);
    let gpus = gpus(a, &suspects);
    let mut notes: Vec<String> = a.warnings.clone();
    notes.extend(a.notes.iter().cloned());
    let accounting = accounting(a, &inputs);
    Report {
        schema: "faultline/report/v1",
        tool: Tool {
            name: "faultline",
            version: env!("CARGO_PKG_VERSION"),
        },
        inputs,
        events: Vec::new(),
        incidents,
        verdict: verdict_json(a),
        hosts,
        gpus,
        job,
        notes,
        known_issues: super::known::unattached(a),
        accounting,
    }
}

/// The inputs with their occurrences (all, and those past the cap).
fn inputs_json(a: &Analysis) -> Vec<InputJson> {
    let mut per_input = vec![(0u64, 0u64); a.inputs.len()];
    for e in &a.events {
        if let Some(c) = per_input.get_mut(e.input) {
            c.0 += e.weight();
            c.1 += e.suppressed;
        }
    }
    a.inputs
        .iter()
        .map(|r| InputJson {
            path: r.path.clone(),
            format: r.format.as_str(),
            host: r.host.clone(),
            bytes: r.bytes,
            lines: r.lines,
            lines_recognized: r.lines_recognized,
            events: per_input.get(r.index).map_or(0, |c| c.0),
            events_suppressed: per_input.get(r.index).map_or(0, |c| c.1),
            lines_unrecognized: r.lines.saturating_sub(r.lines_recognized),
            warnings: r.warnings.clone(),
        })
        .collect()
}

/// One incident, its members and evidence named by their event ids.
fn incident_json(a: &Analysis, inc: &crate::incidents::Incident) -> IncidentJson {
    let mut times: Vec<i64> = inc
        .events
        .iter()
        .filter_map(|&i| a.events[i].time_us)
        .collect();
    if let Some(s) = &inc.slowdown {
        times.extend(s.start_us.into_iter().chain(s.end_us));
    }
    IncidentJson {
        id: inc.id.clone(),
        start: times.iter().min().copied().map(iso_us),
        end: times.iter().max().copied().map(iso_us),
        kind: if inc.slowdown.is_some() {
            "slowdown"
        } else if inc.hang.is_some() {
            "hang"
        } else {
            "failure"
        },
        hosts: inc.hosts.clone(),
        gpus: inc.gpus.clone(),
        ranks: inc.ranks.clone(),
        root_cause: RootCauseJson {
            layer: inc.layer.as_str(),
            confidence: inc.confidence,
            summary: inc.summary.clone(),
            evidence: inc
                .evidence
                .iter()
                .map(|&i| a.events[i].id_text())
                .collect(),
            responsibility: inc.responsibility.clone(),
            rule: inc.rule.clone(),
        },
        alternatives: inc
            .alternatives
            .iter()
            .map(|x| AlternativeJson {
                layer: x.layer.as_str(),
                confidence: x.confidence,
                summary: x.summary.clone(),
            })
            .collect(),
        actions: inc.actions.clone(),
        events: inc
            .events
            .iter()
            .map(|&i| EventId(a.events[i].id))
            .collect(),
        consequences: inc.consequences.clone(),
        counts: inc.counts.clone(),
        missing_data: inc.missing.clone(),
        slowdown: inc.slowdown.as_ref().map(slowdown_json),
        hang: inc.hang.as_ref().map(|h| super::HangJson {
            waiting_for: h.waiting_for.clone(),
            evidence: h.evidence.clone(),
        }),
        known_issues: Vec::new(),
    }
}

/// The verdict: the top incident's layer and summary, else what was read without a finding:
/// `unknown` when error lines no recognizer read remain (leads), `none` otherwise.
fn verdict_json(a: &Analysis) -> VerdictJson {
    if let Some(t) = a.top() {
        return VerdictJson {
            root_cause_layer: t.layer.as_str(),
            summary: t.summary.clone(),
            leads: Vec::new(),
            leads_total: None,
        };
    }
    let read: u64 = a.inputs.iter().map(|i| i.lines).sum();
    let leads = a.leads.as_ref().filter(|l| l.total > 0);
    let list = leads.map_or_else(Vec::new, |l| {
        l.list
            .iter()
            .map(|x| super::LeadJson {
                source: format!("{}:{}", x.path, x.line),
                line: x.text.clone(),
            })
            .collect()
    });
    let (layer, summary) = if read == 0 {
        ("none", "no data: no input line could be read".to_string())
    } else if let Some(l) = leads.filter(|l| l.decisive()) {
        ("unknown", lead_summary(l, read, a.inputs.len()))
    } else {
        let mut s = format!(
            "no finding: {} in {} read, no GPU, driver, host or job fault recognized",
            counted(read, "line"),
            counted(a.inputs.len() as u64, "input")
        );
        if let Some(l) = leads {
            let n = counted(l.total, "error line");
            s.push_str(&match &l.health {
                Some(h) => format!("; the run ended normally ({}:{}), {n} no recognizer read listed as leads", h.path, h.line),
                None => format!("; {n} no recognizer read, in inputs that name no GPU, driver or job, listed as leads"),
            });
        }
        ("none", s)
    };
    VerdictJson {
        root_cause_layer: layer,
        summary,
        leads_total: leads.map(|l| l.total),
        leads: list,
    }
}

/// The summary of a verdict that leads made `unknown`.
fn lead_summary(l: &crate::leads::Leads, read: u64, inputs: usize) -> String {
    let first = &l.list[0];
    format!(
        "no fault recognized in {} of {}, but {} no recognizer could read remain as leads, the first at {}:{}; the run is not shown healthy",
        counted(read, "line"),
        counted(inputs as u64, "input"),
        counted(l.total, "error line"),
        first.path,
        first.line,
    )
}

/// The job: its ranks, and the last checkpoint named by its event id.
fn job_json(a: &Analysis, j: &crate::job::JobInfo) -> JobJson {
    JobJson {
        world_size: j.world_size,
        ranks: j
            .ranks
            .iter()
            .map(|r| RankJson {
                rank: r.rank,
                host: r.host.clone(),
                pid: r.pid,
                gpu: r.gpu.clone(),
            })
            .collect(),
        missing_ranks: j.missing_ranks.clone(),
        silent_ranks: j.silent_ranks.clone(),
        straggler: j.straggler,
        skew_s: j.skew_s.clone(),
        work_lost_s: j.work_lost_s,
        last_checkpoint: j.last_checkpoint.map(|i| a.events[i].id_text()),
    }
}
