//! The bundle file: a tar archive (ustar headers, written with the `tar` crate) compressed with
//! zstd as it is written, member after member, straight into the output file (or stdout):
//! nothing is staged on disk.

use std::io::Write;

/// A `.tar.zst` being written.
pub struct Writer<W: Write> {
    tar: tar::Builder<zstd::stream::write::Encoder<'static, W>>,
    mtime: u64,
}

impl<W: Write> Writer<W> {
    /// A bundle written to `out`; every member gets `mtime` (the capture time).
    pub fn new(out: W, mtime: i64) -> std::io::Result<Writer<W>> {
        let mut enc = zstd::stream::write::Encoder::new(out, 6)?;
        // the worker threads of zstd are not needed: a capture is a few MB
        enc.include_checksum(true)?;
        let mut tar = tar::Builder::new(enc);
        tar.mode(tar::HeaderMode::Deterministic);
        Ok(Writer {
            tar,
            mtime: mtime.max(0) as u64,
        })
    }

    /// Appends one member.
    pub fn add(&mut self, name: &str, data: &[u8]) -> std::io::Result<()> {
        let mut h = tar::Header::new_ustar();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(self.mtime);
        h.set_entry_type(tar::EntryType::Regular);
        self.tar.append_data(&mut h, name, data)
    }

    /// Ends the archive and the zstd frame; returns the output.
    pub fn finish(self) -> std::io::Result<W> {
        let enc = self.tar.into_inner()?;
        enc.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn members_read_back_in_order() {
        let mut w = Writer::new(Vec::new(), 1_773_454_387).unwrap();
        w.add("manifest.json", b"{}\n").unwrap();
        w.add(
            "var/log/dpkg.log",
            b"2026-03-14 02:13:07 status installed x 1\n",
        )
        .unwrap();
        let bytes = w.finish().unwrap();
        let dec = zstd::stream::read::Decoder::new(&bytes[..]).unwrap();
        let mut a = tar::Archive::new(dec);
        let mut names = Vec::new();
        for e in a.entries().unwrap() {
            let mut e = e.unwrap();
            let mut s = String::new();
            e.read_to_string(&mut s).unwrap();
            names.push((e.path().unwrap().display().to_string(), s.len()));
            assert_eq!(e.header().mtime().unwrap(), 1_773_454_387);
        }
        assert_eq!(
            names,
            vec![("manifest.json".into(), 3), ("var/log/dpkg.log".into(), 41)]
        );
    }
}
