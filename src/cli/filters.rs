//! The filter flags of `analyze` and `timeline`: time window, hosts, GPUs, kinds, layers.

use clap::Args;
use faultline::model::Layer;
use faultline::timeline::filter::{EventFilter, TimeBound};
use faultline::timeline::Zone;

#[derive(Args, Default)]
pub(super) struct FilterArgs {
    /// Keep events at or after TIME: `2024-05-01 12:00`, `2024-05-01T12:00:00Z`, `@EPOCH`, or a
    /// span back from the last event of the logs (`-2h`, `-30m`, `-1h30m`) or on from the first
    /// (`+10m`). Times without a zone are read in --tz (UTC when not given).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    since: Option<String>,
    /// Keep events at or before TIME (same forms as --since).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    until: Option<String>,
    /// Keep events of these hosts (full or short names; repeatable or comma list).
    #[arg(long, value_name = "HOST", value_delimiter = ',')]
    host: Vec<String>,
    /// Keep events of these GPUs: PCI bus id (`0000:3b:00.0`, `3b:00.0`), index or UUID
    /// (repeatable or comma list).
    #[arg(long, value_name = "GPU", value_delimiter = ',')]
    gpu: Vec<String>,
    /// Keep events of these kinds (`xid`, `hung_task`; `faultline explain kind` lists them;
    /// repeatable or comma list).
    #[arg(long, value_name = "KIND", value_delimiter = ',')]
    kind: Vec<String>,
    /// Keep events whose own layer is one of these (hardware, thermal_power, gpu_memory,
    /// interconnect, driver_stack, application, network_storage, platform, unknown, none;
    /// any case; repeatable or comma list).
    #[arg(long, value_name = "LAYER", value_delimiter = ',')]
    layer: Vec<String>,
}

/// The layer names, for messages.
pub(super) fn layer_names() -> String {
    Layer::ALL.map(|l| l.as_str()).join(", ")
}

impl FilterArgs {
    /// The filter the flags describe; a message for the first value that cannot be read.
    pub(super) fn build(&self, zone: Option<&Zone>) -> Result<EventFilter, String> {
        let bound = |flag: &str, v: &Option<String>| {
            v.as_deref()
                .map(|s| TimeBound::parse(s, zone).map_err(|e| format!("--{flag}: {e}")))
                .transpose()
        };
        let mut layers = Vec::new();
        for l in &self.layer {
            let x = Layer::parse_loose(l).ok_or_else(|| {
                format!("--layer: unknown layer `{l}` (one of: {})", layer_names())
            })?;
            layers.push(x);
        }
        let list = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        };
        Ok(EventFilter {
            since: bound("since", &self.since)?,
            until: bound("until", &self.until)?,
            hosts: list(&self.host),
            gpus: list(&self.gpu),
            kinds: list(&self.kind),
            layers,
        })
    }
}
