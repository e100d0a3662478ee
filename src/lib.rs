//! faultline: an offline forensics analyzer for GPU incidents.
//!
//! The pipeline, one module per stage: [`input`] (files, folders, archives) → [`formats`]
//! (detection and line prefixes) → [`scan`] + [`events`] (prefilter and recognizers) →
//! [`timeline`] (clock alignment, dedupe, order) → [`incidents`] + [`rules`] (grouping and root
//! cause) → [`report`] (text, JSON, Markdown).

pub mod alloc;
pub mod catalog;
pub mod collect;
mod embedded;
pub mod events;
pub mod explain;
pub mod fleet;
pub mod formats;
pub mod ids;
pub mod incidents;
pub mod input;
pub mod job;
pub mod known;
pub mod leads;
pub mod model;
pub mod pipeline;
pub mod read;
pub mod redact;
pub mod report;
pub mod rules;
pub mod scan;
pub mod throughput;
pub mod timeline;
pub mod words;

use catalog::Catalog;
use events::RecognizerSet;
use formats::Format;
use incidents::Incident;
use input::Limits;
use pipeline::InputResult;
use rayon::prelude::*;
use rules::RuleSet;
use timeline::{Event, TimeOptions};

/// Everything that shapes one analysis.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Paths (files, folders, archives, `-`; `PATH@HOST` forces a host).
    pub paths: Vec<String>,
    /// Extra rule/recognizer/catalog files (TOML), applied on top of the built-in data.
    pub rule_files: Vec<String>,
    /// Time options.
    pub time: TimeOptions,
    /// Input limits.
    pub limits: Limits,
    /// Scan chunks of one large input in parallel.
    pub parallel_chunks: bool,
    /// Time window and event filters, applied before incidents are formed.
    pub filter: timeline::filter::EventFilter,
    /// Glob patterns (`--exclude`) of files and archive members to skip.
    pub exclude: Vec<String>,
}

/// The knowledge an analysis runs with.
pub struct Knowledge {
    /// Recognizers.
    pub recognizers: RecognizerSet,
    /// Catalog: the built-in one, borrowed unless a user file changes it.
    pub catalog: std::borrow::Cow<'static, Catalog>,
    /// Rules.
    pub rules: RuleSet,
    /// Known issues (published bugs and version rules).
    pub known: known::KnownSet,
}

impl Knowledge {
    /// Built-in data plus user files. A user file may hold `[[recognizer]]`, `[[rule]]` or catalog
    /// tables (`[[xid]]`, `[[sxid]]`, `[[kind]]`, `[[dcgm]]`); each part goes where it belongs.
    pub fn load(user_files: &[String]) -> anyhow::Result<Knowledge> {
        let mut recog_extra = Vec::new();
        let mut rule_extra = Vec::new();
        let mut known_extra = Vec::new();
        let mut catalog = std::borrow::Cow::Borrowed(Catalog::builtin_ref());
        for text in user_files {
            let value: toml::Table = toml::from_str(text)?;
            let pick = |keys: &[&str]| -> anyhow::Result<Option<String>> {
                let mut t = toml::Table::new();
                for k in keys {
                    if let Some(v) = value.get(*k) {
                        t.insert(k.to_string(), v.clone());
                    }
                }
                Ok((!t.is_empty()).then(|| toml::to_string(&t)).transpose()?)
            };
            if let Some(s) = pick(&["recognizer", "xid_derived", "trace", "nvrm", "memo_detail"])? {
                recog_extra.push(s);
            }
            if let Some(s) = pick(&[
                "rule",
                "grouping",
                "consequences",
                "slowdown",
                "slowdown_cause",
                "drift",
            ])? {
                rule_extra.push(s);
            }
            if let Some(s) = pick(&["known_issue", "version_hint", "cuda_driver"])? {
                known_extra.push(s);
            }
            if let Some(s) = pick(&["xid", "sxid", "kind", "dcgm", "meta", "range", "layer"])? {
                catalog.to_mut().overlay(&s)?;
            }
            let known = [
                "recognizer",
                "xid_derived",
                "trace",
                "nvrm",
                "memo_detail",
                "rule",
                "grouping",
                "consequences",
                "slowdown",
                "slowdown_cause",
                "drift",
                "xid",
                "sxid",
                "kind",
                "dcgm",
                "meta",
                "range",
                "layer",
                "known_issue",
                "version_hint",
                "cuda_driver",
            ];
            if let Some(k) = value.keys().find(|k| !known.contains(&k.as_str())) {
                anyhow::bail!("unknown table `{k}` in a rules file");
            }
        }
        Ok(Knowledge {
            recognizers: RecognizerSet::load(&recog_extra)?,
            catalog,
            rules: RuleSet::load(&rule_extra)?,
            known: known::KnownSet::load(&known_extra)?,
        })
    }
}

/// The result of an analysis.
pub struct Analysis {
    /// Per-input results (events moved to the timeline).
    pub inputs: Vec<InputResult>,
    /// Warnings not tied to one input (discovery).
    pub warnings: Vec<String>,
    /// The timeline.
    pub events: Vec<Event>,
    /// Notes on clock alignment.
    pub notes: Vec<String>,
    /// Incidents.
    pub incidents: Vec<Incident>,
    /// The distributed job, when job logs were given.
    pub job: Option<job::JobInfo>,
    /// GPU identities (host, bus id) → (uuid, serial).
    pub identities: std::collections::BTreeMap<(String, String), (Option<String>, Option<String>)>,
    /// What the filters of [`Options::filter`] kept, when any was given.
    pub filter: Option<timeline::filter::FilterOutcome>,
    /// The known issues matched (each names the incident it joined, if any).
    pub known: Vec<known::KnownMatch>,
    /// The hosts whose versions a known issue's range holds, fired or not.
    pub known_affected: Vec<known::Affected>,
    /// Error lines no recognizer read, when no incident was found (see [`leads`]).
    pub leads: Option<leads::Leads>,
}

impl Analysis {
    /// The incident that decides the verdict.
    pub fn top(&self) -> Option<&Incident> {
        incidents::top(&self.incidents)
    }

    /// True when no input could be read at all.
    pub fn nothing_read(&self) -> bool {
        let all_failed = self
            .inputs
            .iter()
            .all(|i| i.bytes == 0 && !i.warnings.is_empty());
        all_failed && (!self.inputs.is_empty() || !self.warnings.is_empty())
    }
}

/// Runs the whole pipeline on the paths of `opts`: every input is opened and scanned while it
/// is read (members of archives and compressed files as streams, decoded in threads of their
/// own), within the caps and the global budget of `opts.limits`, applied in input order.
pub fn analyze(opts: &Options, k: &Knowledge) -> Analysis {
    let (found, warnings) = input::discover(&opts.paths);
    // one input is read on this thread: the pool (threads, a look at the cgroup's CPU quota)
    // starts only when something runs on it
    let workers = if found.len() > 1 {
        rayon::current_num_threads()
    } else {
        1
    };
    let mut inputs = input::run(&found, &opts.limits, &opts.exclude, workers, |inp| {
        process_one(0, inp, opts, k)
    });
    for (i, r) in inputs.iter_mut().enumerate() {
        r.index = i;
        for e in r.events.iter_mut().chain(r.attachments.iter_mut()) {
            e.input = i;
        }
    }
    let mut a = finish(inputs, warnings, opts, k);
    if a.incidents.is_empty() {
        a.leads = Some(find_leads(&a, &found, opts, k));
    }
    a
}

/// Reads the inputs again for leads (only when no incident was found: the scan stays as is).
fn find_leads(a: &Analysis, found: &[input::Found], opts: &Options, k: &Knowledge) -> leads::Leads {
    let mut lines: std::collections::HashMap<String, std::collections::HashSet<u64>> =
        Default::default();
    for e in &a.events {
        lines
            .entry(e.source.path.to_string())
            .or_default()
            .insert(e.source.line);
    }
    for r in &a.inputs {
        let set = lines.entry(r.path.clone()).or_default();
        set.extend(r.attachments.iter().map(|e| e.line));
    }
    let formats = a
        .inputs
        .iter()
        .map(|r| (r.path.clone(), r.format))
        .collect();
    leads::collect(
        found,
        &opts.limits,
        &opts.exclude,
        &k.recognizers,
        &lines,
        &formats,
        a.events
            .iter()
            .any(|e| e.severity >= model::Severity::Warning),
    )
}

/// One input through [`pipeline::process`] with the run's knowledge and options.
fn process_one(i: usize, inp: input::Input, opts: &Options, k: &Knowledge) -> InputResult {
    pipeline::process(
        i,
        inp,
        &k.recognizers,
        &k.catalog,
        opts.parallel_chunks,
        opts.limits.max_events_per_kind,
    )
}

/// Runs the pipeline from the opened inputs on (format detection, scanning, timeline, job,
/// incidents): the part of [`analyze`] after discovery, for inputs already in memory.
/// `warnings` are the discovery's (paths that could not be read at all); `opts.paths` is not used.
pub fn analyze_inputs(
    flat: Vec<input::Input>,
    warnings: Vec<String>,
    opts: &Options,
    k: &Knowledge,
) -> Analysis {
    let inputs: Vec<InputResult> = flat
        .into_par_iter()
        .enumerate()
        .map(|(i, inp)| process_one(i, inp, opts, k))
        .collect();
    finish(inputs, warnings, opts, k)
}

/// The part of the analysis after every input was scanned: timeline, job, incidents.
fn finish(
    mut inputs: Vec<InputResult>,
    warnings: Vec<String>,
    opts: &Options,
    k: &Knowledge,
) -> Analysis {
    let kernel_inputs = inputs.iter().any(|r| {
        matches!(
            r.format,
            Format::Dmesg
                | Format::Syslog
                | Format::Journal
                | Format::JournalJson
                | Format::BugReport
        )
    });
    let collected = collect::readback::apply(&mut inputs);
    let mut tl = timeline::build(&mut inputs, &opts.time);
    tl.notes.extend(collected);
    let filter = (!opts.filter.is_empty()).then(|| {
        let events = std::mem::take(&mut tl.events);
        let progress = std::mem::take(&mut tl.progress);
        let (events, progress, outcome) = timeline::filter::apply(&opts.filter, events, progress);
        (tl.events, tl.progress) = (events, progress);
        outcome
    });
    let slowdowns = slowdowns(&mut tl, k);
    let mut job = job::build(&inputs, &mut tl.events);
    let mut incidents = incidents::build(
        &tl.events,
        &k.rules,
        &k.catalog,
        kernel_inputs,
        job.as_ref(),
    );
    slow_incidents(slowdowns, &tl.events, &inputs, k, &mut incidents);
    hang_incidents(&tl.events, &mut incidents);
    incidents::add_driver_drift(&mut incidents, &tl.events, &k.rules.drift);
    incidents::add_nic_gpus(&mut incidents, &tl.events, &inputs);
    let known = known::apply(&tl.events, &inputs, &mut incidents, &k.known);
    let known_affected = known::affected(&tl.events, &inputs, &k.known);
    if let Some(j) = job.as_mut() {
        // work is lost when a job stops, not when it only slows down
        let fault = incidents::top(&incidents)
            .filter(|t| t.slowdown.is_none())
            .and_then(|t| t.primary.or(t.events.first().copied()))
            .and_then(|i| tl.events[i].time_us);
        if let Some(f) = fault {
            (j.last_checkpoint, j.work_lost_s) = job::work_lost(&tl.events, f);
        }
    }
    Analysis {
        inputs,
        warnings,
        events: tl.events,
        notes: tl.notes,
        incidents,
        job,
        identities: tl.identities,
        filter,
        known,
        known_affected,
        leads: None,
    }
}

/// The slowdowns of the trainers' throughput series, each put on the timeline as a
/// `throughput_drop` event.
fn slowdowns(tl: &mut timeline::Timeline, k: &Knowledge) -> Vec<throughput::Slowdown> {
    let series = throughput::series::build(&tl.progress, &tl.events);
    let slowdowns = throughput::detect(&series, &k.rules.slowdown);
    let stalls = throughput::hang::stall_events(&tl.progress, &tl.events);
    if !slowdowns.is_empty() || !stalls.is_empty() {
        let mut events = std::mem::take(&mut tl.events);
        events.extend(slowdowns.iter().map(throughput::drop_event));
        events.extend(stalls);
        tl.events = timeline::finish(events);
    }
    slowdowns
}

/// One `hang` incident per stalled progress that no failure covers.
fn hang_incidents(events: &[timeline::Event], incidents: &mut Vec<incidents::Incident>) {
    let hangs = throughput::hang::incidents(events, incidents);
    if !hangs.is_empty() {
        incidents.extend(hangs);
        incidents::renumber(incidents);
    }
}

/// One incident per slowdown (at its `throughput_drop` event) that no incident explains yet.
fn slow_incidents(
    slowdowns: Vec<throughput::Slowdown>,
    events: &[timeline::Event],
    inputs: &[InputResult],
    k: &Knowledge,
    incidents: &mut Vec<incidents::Incident>,
) {
    let placed: Vec<(throughput::Slowdown, usize)> = slowdowns
        .into_iter()
        .filter_map(|s| {
            let i = events.iter().position(|e| {
                e.kind == "throughput_drop"
                    && e.source == s.first
                    && e.attrs.get("series") == Some(&s.label)
            })?;
            Some((s, i))
        })
        .collect();
    let slow = throughput::attribution::incidents(
        &placed, events, inputs, &k.rules, &k.catalog, incidents,
    );
    if !slow.is_empty() {
        incidents.extend(slow);
        incidents::renumber(incidents);
    }
}
