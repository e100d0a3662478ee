//! Hosts and ranks named by launcher wrappers reach the events: one two-node job's logs as pdsh,
//! mpirun, kubectl --prefix and a job runner's `[stderr]` wrapper print them.

use faultline::scan::scan_buffer;
use faultline::Knowledge;

fn first_event(text: &str) -> (Option<String>, Option<i64>, String) {
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let out = scan_buffer(text.as_bytes(), &k.recognizers, false, 1000);
    let e = out.events.first().expect("an event");
    (
        e.host.as_deref().map(String::from),
        e.draft.rank,
        e.draft.kind.to_string(),
    )
}

#[test]
fn pdsh_names_the_host() {
    let log =
        "node07: [ 7386.259769] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n\
               node08: [ 7390.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\n";
    let (host, _, kind) = first_event(log);
    assert_eq!((host.as_deref(), kind.as_str()), (Some("node07"), "xid"));
}

#[test]
fn mpirun_names_the_rank() {
    let log = "2019-06-02T16:13:44.884Z: [1,12]<stdout>:gpu-a:815:864 [0] transport/net_ib.cu:80 NCCL WARN NET/IB : Got async event : local catastrophic error\n";
    let (host, rank, _) = first_event(log);
    assert_eq!((host.as_deref(), rank), (Some("gpu-a"), Some(12)));
}

#[test]
fn kubectl_prefix_keeps_the_rank_after_it() {
    let log = "[pod/trainer-1/pytorch] [rank9]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 56.00 MiB.\n";
    let (_, rank, kind) = first_event(log);
    assert_eq!((rank, kind.as_str()), (Some(9), "cuda_oom"));
}

#[test]
fn job_runner_stderr_names_the_node_and_joins_hard_wraps() {
    let log = "job.cn-d004 [stderr] [rank14]:[E909 09:55:29.307629539 ProcessGroupNCCL.cpp:607] [Rank 14] Watchdog caught collective operation timeout: \n\
               WorkNCCL(SeqNum=2070, OpType=REDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 milliseconds before timing out.\n\
               job.cn-d004 [stderr] [rank12]:[E909 09:55:29.308889145 ProcessGroupNCCL.cpp:607] [Rank 12] Watchdog caught collective operation timeout: \n\
               WorkNCCL(SeqNum=2070, OpType=REDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600036 milliseconds before timing out.\n";
    let (host, rank, kind) = first_event(log);
    assert_eq!(
        (host.as_deref(), rank, kind.as_str()),
        (Some("cn-d004"), Some(14), "nccl_timeout")
    );
}

/// One two-node job (node07 holds ranks 8-15, node08 ranks 0-7): rank 9 on node07 hits an illegal
/// memory access at 12:00:00; ten minutes later the watchdogs of both nodes time out. The
/// consequences are written first, so only the times can tell which fault came first.
fn two_node_job(wrap: impl Fn(&str, i64, &str) -> String) -> String {
    let timeout = |rank: i64| {
        format!(
            "[rank{rank}]:[E1201 12:10:00.000000000 ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 milliseconds before timing out."
        )
    };
    let fault = "[rank9]:[E1201 12:00:00.100000000 CUDAGuardImpl.h:119] CUDA error: an illegal memory access was encountered";
    [
        wrap("node08", 1, &timeout(1)),
        wrap("node07", 9, &timeout(9)),
        wrap("node07", 9, fault),
    ]
    .join("\n")
        + "\n"
}

/// The mpirun variant: `--tag-output` names only the rank, NCCL's own prefix names the host.
fn two_node_job_mpirun() -> String {
    let line = |rank: i64, host: &str, t: &str, msg: &str| {
        format!("[1,{rank}]<stderr>:[2026-12-01 {t}] {host}:815:864 [1] {msg}")
    };
    [
        line(1, "node08", "12:10:00", "misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer node07<51159>"),
        line(9, "node07", "12:00:00", "transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : local catastrophic error"),
    ]
    .join("\n")
        + "\n"
}

fn analyze_one(name: &str, text: &str) -> faultline::Analysis {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    let mut opts = faultline::Options {
        paths: vec![dir.path().display().to_string()],
        ..faultline::Options::default()
    };
    opts.time.year = Some(2026);
    opts.time.tz_offset = Some(0);
    opts.time.now = 1_800_000_000;
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    faultline::analyze(&opts, &k)
}

/// The host, rank and kind of the top incident's first fault.
fn first_fault(a: &faultline::Analysis) -> (Option<String>, Option<i64>, String) {
    let inc = a.top().expect("an incident");
    let p = inc.primary.expect("a primary event");
    let e = &a.events[p];
    (
        e.host.as_deref().map(str::to_string),
        e.rank,
        e.kind.to_string(),
    )
}

#[test]
fn every_wrapper_of_a_two_node_job_finds_the_first_faults_host() {
    let cases: Vec<(&str, String)> = vec![
        ("pdsh.log", two_node_job(|h, _, l| format!("{h}: {l}"))),
        (
            "kubectl.log",
            two_node_job(|h, _, l| format!("[pod/{h}/pytorch] {l}")),
        ),
        (
            "runner.log",
            two_node_job(|h, _, l| format!("train.{h} [stderr] {l}")),
        ),
        ("mpirun.log", two_node_job_mpirun()),
    ];
    for (name, text) in cases {
        let a = analyze_one(name, &text);
        let (host, rank, kind) = first_fault(&a);
        assert_eq!(
            (host.as_deref(), rank),
            (Some("node07"), Some(9)),
            "{name}: first fault {kind} on {host:?} rank {rank:?}\n{text}"
        );
    }
}
