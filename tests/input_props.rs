//! Property tests: random inputs (fragments of real log lines, binary junk, long lines, broken
//! containers) never panic, and every line is counted once: lines = recognized + unrecognized.

use faultline::input::container::expand_bytes;
use faultline::input::Limits;
use proptest::prelude::*;

const PIECES: &[&str] = &[
    "[  100.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
    "                GPU has fallen off the bus.",
    "Jan  2 03:04:05 gpu-node-07 kernel: NVRM: Xid (PCI:0000:5e:00): 48, pid=2, DBE",
    "2026-01-02T03:04:05+00:00 host kernel: [  5.0] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028",
    "NCCL WARN Call to ibv_poll_cq failed",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "{\"MESSAGE\":\"NVRM: Xid 13\",\"__REALTIME_TIMESTAMP\":\"1700000000000000\"}",
    "-- Boot 0123456789abcdef --",
    "\x1b[31mERROR\x1b[0m something",
    "",
    "\r",
];

fn input_text() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        (0..PIECES.len()).prop_map(|i| PIECES[i].as_bytes().to_vec()),
        proptest::collection::vec(any::<u8>(), 0..64),
        (0usize..70_000).prop_map(|n| vec![b'x'; n]),
    ];
    proptest::collection::vec((piece, any::<bool>()), 0..40).prop_map(|v| {
        let mut out = Vec::new();
        for (p, nl) in v {
            out.extend_from_slice(&p);
            if nl {
                out.push(b'\n');
            }
        }
        out
    })
}

fn knowledge() -> &'static faultline::Knowledge {
    static K: std::sync::OnceLock<faultline::Knowledge> = std::sync::OnceLock::new();
    K.get_or_init(|| faultline::Knowledge::load(&[]).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_never_panic_and_every_line_is_counted_once(data in input_text(), wrap in 0u8..3) {
        let data = match wrap {
            1 => {
                use std::io::Write;
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(&data).unwrap();
                let mut z = e.finish().unwrap();
                let cut = z.len() * 3 / 4;
                z.truncate(cut.max(10));
                z
            }
            2 => zstd::encode_all(&data[..], 1).unwrap(),
            _ => data,
        };
        let limits = Limits::default();
        let inputs = expand_bytes("prop.log", data, &limits);
        let k = knowledge();
        let opts = faultline::Options::default();
        let a = faultline::analyze_inputs(inputs, Vec::new(), &opts, k);
        let rep = faultline::report::json::build(&a, &k.catalog);
        let v = serde_json::to_value(&rep).unwrap();
        for i in v["inputs"].as_array().unwrap() {
            let lines = i["lines"].as_u64().unwrap();
            let rec = i["lines_recognized"].as_u64().unwrap();
            let unrec = i["lines_unrecognized"].as_u64().unwrap();
            prop_assert_eq!(lines, rec + unrec, "{}", i);
        }
    }
}
