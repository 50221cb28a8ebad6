//! The records of a Perfetto trace pti-trace wrote, decoded packet by packet in file order, for
//! `export` (rows of the database) and `merge` (the figures of its summary).
//!
//! What is kept between packets is bounded by the trace's names, tracks and open slices, not by
//! its length: the names each packet sequence interned (a merged trace has one sequence per
//! process), what each track is and whose, the slices begun and not yet ended (pti-trace writes
//! a slice's BEGIN and END together, so a track's END closes its latest BEGIN in file order),
//! and the submit points of flows not yet ended (each removed when its device slice uses it).
//!
//! May touch: nothing but its own state.

use std::collections::HashMap;

use perfetto_protos::trace_packet::TracePacket;
use perfetto_protos::track_event::track_event::Type;

/// One record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// A traced process (its trace's process track).
    Process { pid: i64, name: String },
    /// A host thread with API calls.
    Thread { pid: i64, tid: i64, name: String },
    /// An API call: `group` is its API (the slice's category).
    Api {
        pid: i64,
        tid: i64,
        name: String,
        group: String,
        correlation: Option<u64>,
        start: u64,
        end: u64,
    },
    /// Device work on a queue: `kind` is the slice's category (kernel, memcpy, ...).
    Device {
        pid: i64,
        device: String,
        queue: String,
        kind: String,
        name: String,
        correlation: Option<u64>,
        submit: Option<u64>,
        start: u64,
        end: u64,
    },
    /// A counter's value (USM bytes allocated).
    Counter {
        pid: i64,
        name: String,
        ts: u64,
        value: i64,
    },
    /// A critical event of libpti.
    Critical { pid: i64, ts: u64, message: String },
    /// An ITT range or marker, or a communication operation (`kind`).
    Annotation {
        pid: i64,
        track: String,
        kind: String,
        name: String,
        start: u64,
        end: u64,
    },
}

impl Item {
    /// The process the record is of.
    pub(crate) fn pid(&self) -> i64 {
        match self {
            Item::Process { pid, .. }
            | Item::Thread { pid, .. }
            | Item::Api { pid, .. }
            | Item::Device { pid, .. }
            | Item::Counter { pid, .. }
            | Item::Critical { pid, .. }
            | Item::Annotation { pid, .. } => *pid,
        }
    }
}

/// What a track of the trace is.
#[derive(Clone)]
enum Track {
    Process,
    Thread(i64),
    Device(String),
    /// A queue lane: its queue's name and its device's.
    Queue {
        queue: String,
        device: String,
    },
    Counter(String),
    /// ITT annotations or communication: the track's name.
    Annotation(String),
}

/// An open slice: its BEGIN's event.
struct Begin {
    ts: u64,
    name: String,
    category: String,
    correlation: Option<u64>,
    flow_in: Option<u64>,
}

/// The decoder's state between packets.
#[derive(Default)]
pub(crate) struct Decoder {
    pid: i64,
    tracks: HashMap<u64, Track>,
    track_pid: HashMap<u64, i64>,
    names: HashMap<(u32, u64), String>,
    submits: HashMap<u64, u64>,
    open: HashMap<u64, Vec<Begin>>,
}

impl Decoder {
    /// Decodes packet `p`, handing each record it completes to `sink`.
    pub(crate) fn feed(
        &mut self,
        p: &TracePacket,
        sink: &mut impl FnMut(Item) -> Result<(), String>,
    ) -> Result<(), String> {
        if let Some(interned) = p.interned_data.as_ref() {
            for n in &interned.event_names {
                self.names.insert(
                    (p.trusted_packet_sequence_id(), n.iid()),
                    n.name().to_string(),
                );
            }
        }
        if p.has_track_descriptor() {
            self.track(p, sink)?;
        }
        if p.has_track_event() {
            self.event(p, sink)?;
        }
        Ok(())
    }

    fn track(
        &mut self,
        p: &TracePacket,
        sink: &mut impl FnMut(Item) -> Result<(), String>,
    ) -> Result<(), String> {
        let d = p.track_descriptor();
        let owner = match (d.process.as_ref(), d.thread.as_ref()) {
            (Some(process), _) => i64::from(process.pid()),
            (None, Some(thread)) => i64::from(thread.pid()),
            _ => self
                .track_pid
                .get(&d.parent_uuid())
                .copied()
                .unwrap_or(self.pid),
        };
        self.track_pid.insert(d.uuid(), owner);
        let track = if let Some(process) = d.process.as_ref() {
            self.pid = i64::from(process.pid());
            sink(Item::Process {
                pid: self.pid,
                name: process.process_name().to_string(),
            })?;
            Track::Process
        } else if let Some(thread) = d.thread.as_ref() {
            sink(Item::Thread {
                pid: owner,
                tid: i64::from(thread.tid()),
                name: thread.thread_name().to_string(),
            })?;
            Track::Thread(i64::from(thread.tid()))
        } else if d.counter.is_some() {
            Track::Counter(d.name().to_string())
        } else if d.name().starts_with("ITT ") || d.name().starts_with("communication") {
            Track::Annotation(d.name().to_string())
        } else if d.name().starts_with("device") {
            Track::Device(d.name().to_string())
        } else {
            let device = match self.tracks.get(&d.parent_uuid()) {
                Some(Track::Device(name)) => name.clone(),
                _ => String::new(),
            };
            let queue = d
                .name()
                .split(" (overlapping")
                .next()
                .unwrap_or_default()
                .to_string();
            Track::Queue { queue, device }
        };
        self.tracks.insert(d.uuid(), track);
        Ok(())
    }

    fn event(
        &mut self,
        p: &TracePacket,
        sink: &mut impl FnMut(Item) -> Result<(), String>,
    ) -> Result<(), String> {
        let e = p.track_event();
        let ts = p.timestamp();
        for f in &e.flow_ids {
            self.submits.insert(*f, ts);
        }
        let track = self.tracks.get(&e.track_uuid()).cloned();
        let pid = self
            .track_pid
            .get(&e.track_uuid())
            .copied()
            .unwrap_or(self.pid);
        let name_of = |iid: u64| {
            self.names
                .get(&(p.trusted_packet_sequence_id(), iid))
                .cloned()
                .unwrap_or_default()
        };
        match e.type_() {
            Type::TYPE_SLICE_BEGIN => {
                let begin = Begin {
                    ts,
                    name: name_of(e.name_iid()),
                    category: e.categories.first().cloned().unwrap_or_default(),
                    correlation: e
                        .debug_annotations
                        .iter()
                        .find(|a| a.name() == "correlation_id")
                        .map(|a| a.uint_value()),
                    flow_in: e.terminating_flow_ids.first().copied(),
                };
                self.open.entry(e.track_uuid()).or_default().push(begin);
            }
            Type::TYPE_SLICE_END => {
                let Some(b) = self.open.get_mut(&e.track_uuid()).and_then(Vec::pop) else {
                    return Ok(());
                };
                let submit = b.flow_in.and_then(|f| self.submits.remove(&f));
                match track {
                    Some(Track::Thread(tid)) => sink(Item::Api {
                        pid,
                        tid,
                        name: b.name,
                        group: b.category,
                        correlation: b.correlation,
                        start: b.ts,
                        end: ts,
                    })?,
                    Some(Track::Queue { queue, device }) => sink(Item::Device {
                        pid,
                        device,
                        queue,
                        kind: b.category,
                        name: b.name,
                        correlation: b.correlation,
                        submit,
                        start: b.ts,
                        end: ts,
                    })?,
                    Some(Track::Annotation(track)) => sink(Item::Annotation {
                        pid,
                        track,
                        kind: b.category,
                        name: b.name,
                        start: b.ts,
                        end: ts,
                    })?,
                    _ => {}
                }
            }
            Type::TYPE_COUNTER => {
                if let Some(Track::Counter(name)) = track {
                    sink(Item::Counter {
                        pid,
                        name,
                        ts,
                        value: e.counter_value(),
                    })?;
                }
            }
            Type::TYPE_INSTANT => {
                let name = name_of(e.name_iid());
                match track {
                    Some(Track::Annotation(track)) => sink(Item::Annotation {
                        pid,
                        track,
                        kind: e.categories.first().cloned().unwrap_or_default(),
                        name,
                        start: ts,
                        end: ts,
                    })?,
                    Some(Track::Process) => {
                        if let Some(message) = name.strip_prefix("critical event: ") {
                            sink(Item::Critical {
                                pid,
                                ts,
                                message: message.to_string(),
                            })?;
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Decodes the trace file `path`, handing each record to `sink`, in bounded memory.
pub(crate) fn each(
    path: &std::path::Path,
    mut sink: impl FnMut(Item) -> Result<(), String>,
) -> Result<(), String> {
    let mut decoder = Decoder::default();
    for packet in crate::packets::open(path)? {
        let packet = packet.map_err(|e| format!("{}: {e}", path.display()))?;
        decoder.feed(&packet, &mut sink)?;
    }
    Ok(())
}
