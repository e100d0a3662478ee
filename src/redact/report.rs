//! The redaction pass over a v1 report: every string from the inputs is replaced in place
//! before any renderer sees the report. Host fields are redacted as hosts, serials as serials,
//! free texts (lines, paths, titles, summaries, warnings, actions) with every class; what is
//! the report's own vocabulary (ids, kinds, layers, severities, times, counts, PCI bus ids,
//! Xid codes, driver versions) is kept so that the report stays useful.

use super::Redactor;
use crate::model::Attrs;
use crate::report::json::{
    EventJson, GpuJson, HostJson, IncidentJson, InputJson, JobJson, Report, SourceJson,
};

/// Detail names whose values are host names, and user names.
const HOST_DETAILS: &[&str] = &["host", "peer", "server", "node", "remote", "hostname"];
const USER_DETAILS: &[&str] = &["user", "username", "owner"];

impl Redactor {
    /// Redacts a whole report in place.
    pub fn report(&self, r: &mut Report) {
        r.events.iter_mut().for_each(|e| self.event(e));
        self.report_but_events(r);
    }

    /// Redacts a report but its event list (redacted one by one as they are written).
    pub fn report_but_events(&self, r: &mut Report) {
        r.inputs.iter_mut().for_each(|i| self.input(i));
        r.incidents.iter_mut().for_each(|i| self.incident(i));
        self.put(&mut r.verdict.summary);
        r.hosts.iter_mut().for_each(|h| self.host_json(h));
        r.gpus.iter_mut().for_each(|g| self.gpu(g));
        if let Some(j) = &mut r.job {
            self.job(j);
        }
        self.all(&mut r.notes);
        let a = &mut r.accounting;
        self.all(&mut a.skipped);
        self.all(&mut a.not_understood_examples);
        self.put(&mut a.summary);
    }

    /// A text in place.
    pub fn put(&self, s: &mut String) {
        let t = self.text(s);
        if t != *s {
            *s = t;
        }
    }

    /// Each text of a list in place.
    pub fn all(&self, v: &mut [String]) {
        v.iter_mut().for_each(|s| self.put(s));
    }

    /// An optional text in place.
    pub fn opt(&self, s: &mut Option<String>) {
        if let Some(s) = s {
            self.put(s);
        }
    }

    /// An optional host field in place.
    pub fn opt_host(&self, h: &mut Option<String>) {
        if let Some(h) = h {
            *h = self.host(h);
        }
    }

    /// Each host of a list in place.
    pub fn hosts(&self, v: &mut [String]) {
        v.iter_mut().for_each(|h| *h = self.host(h));
    }

    fn input(&self, i: &mut InputJson) {
        self.put(&mut i.path);
        self.opt_host(&mut i.host);
        self.all(&mut i.warnings);
    }

    fn source(&self, s: &mut SourceJson) {
        self.put(&mut s.path);
    }

    /// Redacts one event's JSON form in place.
    pub fn event(&self, e: &mut EventJson) {
        self.opt_host(&mut e.host);
        self.source(&mut e.source);
        self.opt(&mut e.gpu);
        self.opt(&mut e.gpu_uuid);
        self.put(&mut e.title);
        self.put(&mut e.message);
        self.details(&mut e.details);
        e.also_seen.iter_mut().for_each(|s| self.source(s));
    }

    /// Detail values: texts, and hosts or users as whole values where the name says so.
    pub fn details(&self, d: &mut Attrs) {
        d.map_values(|k, v| {
            if HOST_DETAILS.contains(&k) {
                self.host(v)
            } else if USER_DETAILS.contains(&k) {
                self.user(v)
            } else {
                let mut v = v.to_string();
                self.put(&mut v);
                v
            }
        });
    }

    fn incident(&self, i: &mut IncidentJson) {
        self.hosts(&mut i.hosts);
        self.all(&mut i.gpus);
        self.put(&mut i.root_cause.summary);
        i.alternatives
            .iter_mut()
            .for_each(|a| self.put(&mut a.summary));
        self.all(&mut i.actions);
        self.all(&mut i.missing_data);
        if let Some(s) = &mut i.slowdown {
            self.put(&mut s.series);
        }
    }

    fn host_json(&self, h: &mut HostJson) {
        h.host = self.host(&h.host);
        self.opt(&mut h.kernel);
        h.boots.iter_mut().for_each(|b| self.source(&mut b.source));
        self.all(&mut h.coverage_gaps);
    }

    fn gpu(&self, g: &mut GpuJson) {
        self.opt_host(&mut g.host);
        self.opt(&mut g.uuid);
        if let Some(s) = &mut g.serial {
            *s = self.serial(s);
        }
        self.opt(&mut g.name);
        for v in g.state.values_mut() {
            self.put(v);
        }
    }

    fn job(&self, j: &mut JobJson) {
        for r in &mut j.ranks {
            self.opt_host(&mut r.host);
        }
        j.skew_s = std::mem::take(&mut j.skew_s)
            .into_iter()
            .map(|(h, s)| (self.host(&h), s))
            .collect();
        self.opt(&mut j.last_checkpoint);
    }
}
