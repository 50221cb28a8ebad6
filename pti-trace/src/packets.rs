//! A Perfetto trace file read packet by packet, in bounded memory: the file is a `Trace`
//! message, each packet one `Trace.packet` field (tag 0x0A, a varint length, the bytes), so a
//! packet is read, decoded and dropped before the next. A last packet cut short (a killed run)
//! ends the file; any other byte where a field should start is an error.
//!
//! Before, `export` and `merge` read the whole file and decoded every packet first: about 32
//! bytes of memory per byte of trace (issue 36, finding 3).
//!
//! May touch: the file it reads.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use perfetto_protos::trace_packet::TracePacket;
use protobuf::Message as _;

/// The largest packet accepted (pti-trace's are a few kilobytes; a crafted length must not make
/// the reader allocate gigabytes).
const MAX_PACKET: usize = 64 << 20;

/// The packets of one trace file, in file order.
pub(crate) struct Packets<R> {
    reader: R,
    /// Offset of the next packet, for messages.
    at: u64,
    buffer: Vec<u8>,
    done: bool,
}

/// The packets of the trace file `path`.
pub(crate) fn open(path: &Path) -> Result<Packets<BufReader<File>>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Packets {
        reader: BufReader::with_capacity(1 << 20, file),
        at: 0,
        buffer: Vec::new(),
        done: false,
    })
}

impl<R: BufRead> Packets<R> {
    /// One byte, or `None` at the end of the file.
    fn byte(&mut self) -> Result<Option<u8>, String> {
        let mut b = [0u8];
        match self.reader.read(&mut b) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(b[0])),
            Err(e) => Err(format!("byte {}: {e}", self.at)),
        }
    }

    /// The next packet: `Ok(None)` at the end (or at a last packet cut short).
    fn next_packet(&mut self) -> Result<Option<TracePacket>, String> {
        let start = self.at;
        let Some(tag) = self.byte()? else {
            return Ok(None);
        };
        if tag != 0x0A {
            return Err(format!("byte {start}: not a Trace.packet field"));
        }
        let (mut len, mut shift, mut read) = (0usize, 0u32, 1u64);
        loop {
            let Some(b) = self.byte()? else {
                return Ok(None);
            };
            read += 1;
            if shift > 63 {
                return Err(format!("byte {start}: a packet length longer than 64 bits"));
            }
            len |= usize::from(b & 0x7F).checked_shl(shift).unwrap_or(0);
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        if len > MAX_PACKET {
            return Err(format!(
                "byte {start}: a packet of {len} bytes (more than the {MAX_PACKET} accepted)"
            ));
        }
        self.buffer.resize(len, 0);
        match self.reader.read_exact(&mut self.buffer) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(format!("byte {start}: {e}")),
        }
        self.at = start + read + len as u64;
        TracePacket::parse_from_bytes(&self.buffer)
            .map(Some)
            .map_err(|e| format!("byte {start}: {e}"))
    }
}

impl<R: BufRead> Iterator for Packets<R> {
    type Item = Result<TracePacket, String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let next = self.next_packet().transpose();
        if !matches!(next, Some(Ok(_))) {
            self.done = true;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packets(bytes: &[u8]) -> Vec<Result<TracePacket, String>> {
        Packets {
            reader: std::io::Cursor::new(bytes.to_vec()),
            at: 0,
            buffer: Vec::new(),
            done: false,
        }
        .collect()
    }

    #[test]
    fn whole_packets_then_a_cut_one_ends() {
        let mut p = TracePacket::new();
        p.set_timestamp(7);
        let body = p.write_to_bytes().unwrap();
        let mut bytes = vec![0x0A, body.len() as u8];
        bytes.extend(&body);
        bytes.extend([0x0A, body.len() as u8]);
        bytes.extend(&body);
        let read = packets(&bytes);
        assert_eq!(read.len(), 2);
        assert_eq!(read[1].as_ref().unwrap().timestamp(), 7);
        // Cut inside the second packet: the first is read, then the end.
        assert_eq!(packets(&bytes[..bytes.len() - 1]).len(), 1);
        // Not a packet field: an error, then nothing.
        let read = packets(&[0x12, 0]);
        assert_eq!(read.len(), 1);
        assert!(read[0].is_err());
        // A huge length is refused, not allocated.
        let read = packets(&[0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]);
        assert!(read[0].as_ref().is_err_and(|e| e.contains("accepted")));
    }
}
