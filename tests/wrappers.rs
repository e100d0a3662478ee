//! Hosts and ranks named by launcher wrappers reach the events: one two-node job's logs as pdsh,
//! mpirun, kubectl --prefix and a job runner's `[stderr]` wrapper print them.

use faultline::scan::scan_buffer;
use faultline::Knowledge;

fn first_event(text: &str) -> (Option<String>, Option<i64>, String) {
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let out = scan_buffer(text.as_bytes(), &k.recognizers, false, 1000);
    let e = out.events.first().expect("an event");
    (e.host.clone(), e.draft.rank, e.draft.kind.clone())
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
