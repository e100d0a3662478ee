//! Core value types shared by every pipeline stage: layers, severities, time stamps and events.

use serde::{Deserialize, Serialize};
use std::sync::Arc;
mod attrs;
mod body;

pub use attrs::Attrs;
pub use body::Body;

/// The root-cause layers of the public contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// GPU off the bus, PCIe link/AER, power delivery, board faults.
    Hardware,
    /// Thermal or power slowdown/shutdown.
    ThermalPower,
    /// ECC, row remapping, retired pages.
    GpuMemory,
    /// NVLink, NVSwitch, fabric manager.
    Interconnect,
    /// Driver/library mismatch, GSP/firmware, driver bugs.
    DriverStack,
    /// User-code faults: CUDA OOM, illegal address, host OOM of the job.
    Application,
    /// InfiniBand/RoCE/Ethernet, NCCL transport, storage.
    NetworkStorage,
    /// Preemption, eviction, scheduler kills, maintenance.
    Platform,
    /// Only consequences were seen.
    Unknown,
    /// Nothing is wrong.
    None,
}

impl Layer {
    /// The contract's spelling of the layer.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Hardware => "hardware",
            Layer::ThermalPower => "thermal_power",
            Layer::GpuMemory => "gpu_memory",
            Layer::Interconnect => "interconnect",
            Layer::DriverStack => "driver_stack",
            Layer::Application => "application",
            Layer::NetworkStorage => "network_storage",
            Layer::Platform => "platform",
            Layer::Unknown => "unknown",
            Layer::None => "none",
        }
    }

    /// Every layer, in the contract's order.
    pub const ALL: [Layer; 10] = [
        Layer::Hardware,
        Layer::ThermalPower,
        Layer::GpuMemory,
        Layer::Interconnect,
        Layer::DriverStack,
        Layer::Application,
        Layer::NetworkStorage,
        Layer::Platform,
        Layer::Unknown,
        Layer::None,
    ];

    /// Parses a layer name as a user types it: any case, `-`, space or `/` for `_`
    /// (`HARDWARE`, `thermal-power`, `Thermal/Power`).
    pub fn parse_loose(s: &str) -> Option<Layer> {
        let norm: String = s
            .trim()
            .chars()
            .map(|c| match c {
                '-' | ' ' | '/' => '_',
                c => c.to_ascii_lowercase(),
            })
            .collect();
        Layer::parse(&norm)
    }

    /// Parses a layer name as written in the contract.
    pub fn parse(s: &str) -> Option<Layer> {
        Some(match s {
            "hardware" => Layer::Hardware,
            "thermal_power" => Layer::ThermalPower,
            "gpu_memory" => Layer::GpuMemory,
            "interconnect" => Layer::Interconnect,
            "driver_stack" => Layer::DriverStack,
            "application" => Layer::Application,
            "network_storage" => Layer::NetworkStorage,
            "platform" => Layer::Platform,
            "unknown" => Layer::Unknown,
            "none" => Layer::None,
            _ => return None,
        })
    }
}

/// How bad one event is on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Context only (driver loads, checkpoints).
    Info,
    /// Degradation or a precursor.
    Warning,
    /// A failure of one job or process.
    Error,
    /// A failure of a GPU, link or node.
    Critical,
}

impl Severity {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }
}

/// How much an event's time can be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeQuality {
    /// The line carries a wall time with its zone.
    Exact,
    /// Uptime converted with a boot-time anchor found in the inputs.
    Aligned,
    /// No zone, no year, or borrowed from a neighbouring line.
    Estimated,
    /// No time at all.
    None,
}

impl TimeQuality {
    /// The contract's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeQuality::Exact => "exact",
            TimeQuality::Aligned => "aligned",
            TimeQuality::Estimated => "estimated",
            TimeQuality::None => "none",
        }
    }
}

/// A wall-clock reading as printed in a line, before year and zone are settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WallStamp {
    /// Seconds since the Unix epoch of the printed fields read as UTC (year 2000 when the year is missing).
    pub naive_secs: i64,
    /// Microseconds within the second.
    pub micros: u32,
    /// UTC offset in seconds when the line carries a zone.
    pub offset: Option<i32>,
    /// False when the line carries no year (RFC3164 syslog, journal short).
    pub has_year: bool,
}

/// The time fields a format parser took from one line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LineStamp {
    /// The wall-clock part, when printed.
    pub wall: Option<WallStamp>,
    /// Kernel uptime (printk clock) in microseconds, when printed.
    pub mono_us: Option<u64>,
    /// A time of day printed without any date (`[15:58:29]`, `15:58:29,123 INFO`), in
    /// microseconds since midnight. With no `wall`, the timeline dates it from the file's
    /// context; with a `wall`, that wall time was dated from the context (an estimate).
    pub tod_us: Option<u64>,
}

/// Microseconds in a day.
pub const DAY_US: u64 = 86_400_000_000;

impl LineStamp {
    /// True when neither a wall time, an uptime nor a time of day was found.
    pub fn is_empty(&self) -> bool {
        self.wall.is_none() && self.mono_us.is_none() && self.tod_us.is_none()
    }

    /// A time of day alone (see [`LineStamp::tod_us`]).
    pub fn time_of_day(tod_us: u64) -> LineStamp {
        LineStamp {
            wall: None,
            mono_us: None,
            tod_us: Some(tod_us),
        }
    }

    /// Only a time of day: no date, no uptime.
    pub fn only_time_of_day(&self) -> bool {
        self.wall.is_none() && self.mono_us.is_none() && self.tod_us.is_some()
    }
}

/// Where an event came from: the input path and the 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SourceRef {
    /// Input path as given, or `archive!member`: one text shared by the events of an input.
    #[serde(serialize_with = "serialize_shared")]
    pub path: Arc<str>,
    /// 1-based line in the (decompressed) input.
    pub line: u64,
}

/// One recognized event, as it leaves the scanner (times not yet aligned).
#[derive(Clone, Debug)]
pub struct RawEvent {
    /// Index of the input in the analysis.
    pub input: usize,
    /// 1-based line of the record's first line.
    pub line: u64,
    /// Event kind (contract list, extendable): a name of the knowledge data or a literal,
    /// interned (see [`crate::events::intern`]).
    pub kind: &'static str,
    /// Xid/SXid code and the like.
    pub code: Option<i64>,
    /// Normalized PCI bus id, or an index/UUID: one text shared by the events of a GPU.
    pub gpu: Option<Arc<str>>,
    /// Job rank, when the line tells it.
    pub rank: Option<i64>,
    /// Host named by the line itself: one text shared by the events of a host.
    pub host: Option<Arc<str>>,
    /// Layer this event points at on its own.
    pub layer: Layer,
    /// Severity on its own.
    pub severity: Severity,
    /// The verbatim record (lossy UTF-8; several lines joined by `\n`): one text shared by the
    /// events of one record (an Xid and the kinds derived from it).
    pub message: Arc<str>,
    /// The message part after the container prefix, used for matching duplicates (see
    /// [`RawEvent::body`]).
    pub body: Body,
    /// Time fields from the line (or borrowed from a neighbour when `borrowed_time`).
    pub stamp: LineStamp,
    /// The stamp was taken from a neighbouring line.
    pub borrowed_time: bool,
    /// Boot segment within the input (increments when uptime goes backwards).
    pub boot: u32,
    /// The recognizer that produced the event (interned, like the kind).
    pub recognizer: &'static str,
    /// Structured details (pid, process, versions, peers, ...).
    pub attrs: Attrs,
    /// Seen by the server's management controller (BMC clock).
    pub bmc: bool,
    /// Further occurrences past the events cap that this event stands for (counted, not kept).
    pub suppressed: u64,
}

impl RawEvent {
    /// The message part after the container prefix.
    pub fn body(&self) -> &str {
        self.body.text(&self.message)
    }
}

/// A shared text serialized as the text.
fn serialize_shared<S: serde::Serializer>(s: &Arc<str>, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s)
}
