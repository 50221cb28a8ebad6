//! The timeline as a native Perfetto trace (`.pftrace`), streamed: each batch of records is
//! appended to the file as `TracePacket`s when libpti hands it over, and the file is flushed at
//! the end of each batch, so what was flushed survives a crash, a kill or `_exit`. Memory used
//! here grows with the number of distinct names, threads and queue lanes, not with the run.
//!
//! The file is a `Trace` message written incrementally: each packet is one `Trace.packet` field
//! (tag 0x0A, length, bytes), so any prefix of whole packets is a valid trace. One packet
//! sequence (`trusted_packet_sequence_id` 1): the first packet clears the incremental state, and
//! event names are interned (`InternedData.event_names`) in the packet that first uses them.
//!
//! Tracks: the process; one per host thread (its API calls, nested as they ran); per device, one
//! per Level Zero engine that ran its work, and under those (or under the device, on OpenCL) one
//! per queue lane (work that overlaps on a queue goes to further lanes, as a track's slices must
//! nest). Each device operation is joined by a flow to a zero-length "submit" slice on the
//! submitting thread at the operation's append time, inside the call that appended it: both
//! ends are written together (flows are always paired), and the arrow runs forward in time even
//! when the command ran inside a blocking call. Critical events and changes of capture are
//! instants on the process track. The program's ITT annotations go on a track per thread under
//! the thread's per domain ("ITT app (thread N)"), overlapped tasks and oneCCL's communication on
//! lanes of their own under the process.
//!
//! It touches only its file; the collector calls it under its store's lock.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::path::{Path, PathBuf};

use perfetto_protos::counter_descriptor::CounterDescriptor;
use perfetto_protos::counter_descriptor::counter_descriptor::Unit;
use perfetto_protos::debug_annotation::DebugAnnotation;
use perfetto_protos::interned_data::InternedData;
use perfetto_protos::process_descriptor::ProcessDescriptor;
use perfetto_protos::thread_descriptor::ThreadDescriptor;
use perfetto_protos::trace_packet::TracePacket;
use perfetto_protos::trace_packet::trace_packet::SequenceFlags;
use perfetto_protos::track_descriptor::TrackDescriptor;
use perfetto_protos::track_event::EventName;
use perfetto_protos::track_event::TrackEvent;
use perfetto_protos::track_event::track_event::Type;
use protobuf::Message as _;

use crate::collect::{Annotation, ApiCall, Communication, DeviceOp, Memory};
use crate::names::Names;
use crate::queues::Engine;
use crate::timeline::{Written, api_name, category, op_category, op_name};

/// The `correlation_id` argument of a slice.
fn correlation_id(id: u32) -> DebugAnnotation {
    let mut annotation = DebugAnnotation::new();
    annotation.set_name("correlation_id".to_string());
    annotation.set_uint_value(u64::from(id));
    annotation
}

/// The name of the clock anchor (see [`Stream::anchor`]).
pub(crate) const ANCHOR: &str = "pti-trace clock anchor";

fn annotation_u64(name: &str, value: u64) -> DebugAnnotation {
    let mut annotation = DebugAnnotation::new();
    annotation.set_name(name.to_string());
    annotation.set_uint_value(value);
    annotation
}

fn annotation_text(name: &str, value: &str) -> DebugAnnotation {
    let mut annotation = DebugAnnotation::new();
    annotation.set_name(name.to_string());
    annotation.set_string_value(value.to_string());
    annotation
}

/// How many recent API calls are remembered for the flows of device work (bounded memory:
/// device work is recorded soon after the call that submitted it).
const RECENT_CALLS: usize = 4096;

/// The one packet sequence of the file.
const SEQUENCE: u32 = 1;

/// Which tracks exist, by what they stand for.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Track {
    Process,
    Thread(u32),
    /// A device (its handle): the parent of its engines' or queues' tracks.
    Device(u64),
    /// A Level Zero engine of a device (command-queue group ordinal, index): the parent of the
    /// tracks of the queues that ran on it.
    Engine(u64, Engine),
    /// A queue (its handle) and a lane of it.
    Lane(u64, u32),
    /// The counter of USM memory the SYCL runtime holds allocated.
    UsmBytes,
    /// The counter of device commands whose records wait for their completion.
    Pending,
    /// A thread's ITT annotations of one domain (one event name, for legacy events), nested as
    /// they ran: a thread, and the number of the domain in `annotation_tracks`.
    Annotations(u32, u32),
    /// A lane of the process's overlapped ITT tasks.
    Overlapped(u32),
    /// A lane of the process's communication operations.
    Communication(u32),
}

/// The `lanes` keys of the overlapped tasks and of communication (never a queue handle).
const OVERLAPPED_LANES: u64 = u64::MAX;
const COMMUNICATION_LANES: u64 = u64::MAX - 1;

/// An open trace file and what has been declared in it.
pub(crate) struct Stream {
    out: BufWriter<File>,
    path: PathBuf,
    pid: u32,
    process_name: String,
    /// Track UUIDs, assigned in order from a base derived from the process ID.
    tracks: HashMap<Track, u64>,
    next_uuid: u64,
    /// Interned event names.
    names: HashMap<String, u64>,
    /// For each queue (and the overlapped tasks, communication), its lanes.
    lanes: HashMap<u64, crate::lanes::Lanes>,
    /// The latest API calls (correlation ID → thread, start, end), oldest first in `recent_order`:
    /// a device operation's flow starts inside its call when the call is among them.
    recent: HashMap<u32, (u32, u64, u64)>,
    recent_order: std::collections::VecDeque<u32>,
    /// Live USM allocations (address → bytes) and their total, for the counter.
    usm_live: HashMap<u64, u64>,
    usm_bytes: i64,
    /// Each queue's device and engine, from its work's records (a barrier's device is the one
    /// `queues` learnt at its call; an OpenCL queue has no engine).
    queue_place: HashMap<u64, (u64, Option<Engine>)>,
    /// Device work whose call has not been seen yet (libpti's buffers are per thread: a
    /// harvest's device record can arrive before its call's record), written when the call
    /// comes, or at the end; at most [`RECENT_CALLS`] operations wait.
    waiting: HashMap<u32, Vec<DeviceOp>>,
    waiting_count: usize,
    /// The annotation tracks' domains (or event names), numbered per thread.
    annotation_tracks: HashMap<(u32, String), u32>,
    /// Whether API calls are recorded (else device work waits for no call).
    calls_recorded: bool,
    /// Names of the packet being built that must be interned with it.
    new_names: Vec<EventName>,
    first: bool,
    written: Written,
    /// The first write error, after which nothing more is written.
    failed: Option<std::io::Error>,
    /// Bytes written so far.
    bytes: u64,
}

impl crate::output::Output for Stream {
    /// Appends the batch to the file and flushes it: a batch reaches the file whole.
    fn batch(&mut self, batch: &crate::output::Batch<'_>, names: &Names) {
        for call in batch.apis {
            self.api(call, names);
        }
        for op in batch.device {
            self.device(op, names);
        }
        for m in batch.memory {
            self.memory(m);
        }
        for a in batch.annotations {
            self.annotation(a);
        }
        for op in batch.communication {
            self.communication(op);
        }
        self.flush();
    }
}

impl Stream {
    /// Streams into `file`, created at `path` (`pti_files::create`).
    pub(crate) fn create(
        file: File,
        path: &Path,
        pid: u32,
        process_name: &str,
        calls_recorded: bool,
    ) -> std::io::Result<Stream> {
        let mut stream = Stream {
            out: BufWriter::with_capacity(1 << 16, file),
            path: path.to_path_buf(),
            pid,
            process_name: process_name.to_string(),
            tracks: HashMap::new(),
            next_uuid: (u64::from(pid) << 32) | 1,
            names: HashMap::new(),
            lanes: HashMap::new(),
            recent: HashMap::new(),
            recent_order: std::collections::VecDeque::new(),
            queue_place: HashMap::new(),
            usm_live: HashMap::new(),
            usm_bytes: 0,
            waiting: HashMap::new(),
            waiting_count: 0,
            annotation_tracks: HashMap::new(),
            calls_recorded,
            new_names: Vec::new(),
            first: true,
            written: Written::default(),
            failed: None,
            bytes: 0,
        };
        stream.track(Track::Process, &Names::default());
        stream.anchor();
        Ok(stream)
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one packet as a `Trace.packet` field.
    fn emit(&mut self, mut packet: TracePacket) {
        if self.failed.is_some() {
            return;
        }
        packet.set_trusted_packet_sequence_id(SEQUENCE);
        if self.first {
            packet.set_sequence_flags(SequenceFlags::SEQ_INCREMENTAL_STATE_CLEARED as u32);
            self.first = false;
        } else if packet.has_track_event() {
            packet.set_sequence_flags(SequenceFlags::SEQ_NEEDS_INCREMENTAL_STATE as u32);
        }
        if !self.new_names.is_empty() {
            let mut interned = InternedData::new();
            interned.event_names = core::mem::take(&mut self.new_names);
            packet.interned_data = Some(interned).into();
        }
        // A `Trace.packet` field: its tag (field 1, length-delimited), then length and bytes.
        let result = packet
            .write_length_delimited_to_bytes()
            .map_err(std::io::Error::other)
            .and_then(|field| {
                self.out.write_all(&[0x0A])?;
                self.out.write_all(&field)?;
                self.bytes += 1 + field.len() as u64;
                Ok(())
            });
        if let Err(e) = result {
            self.failed = Some(e);
        }
    }

    /// The UUID of `track`, declaring it first if it is new (`names` names devices and queues).
    fn track(&mut self, track: Track, names: &Names) -> u64 {
        if let Some(uuid) = self.tracks.get(&track) {
            return *uuid;
        }
        let uuid = self.next_uuid;
        self.next_uuid += 1;
        self.tracks.insert(track, uuid);
        let mut descriptor = TrackDescriptor::new();
        descriptor.set_uuid(uuid);
        let pid = self.pid as i32;
        match track {
            Track::Process => {
                let mut process = ProcessDescriptor::new();
                process.set_pid(pid);
                process.set_process_name(self.process_name.clone());
                descriptor.process = Some(process).into();
            }
            Track::Thread(tid) => {
                descriptor.set_parent_uuid(self.tracks[&Track::Process]);
                let mut thread = ThreadDescriptor::new();
                thread.set_pid(pid);
                thread.set_tid(tid as i32);
                thread.set_thread_name(if tid == self.pid {
                    format!("main thread {tid}")
                } else {
                    format!("thread {tid}")
                });
                descriptor.thread = Some(thread).into();
            }
            Track::UsmBytes => {
                descriptor.set_parent_uuid(self.tracks[&Track::Process]);
                descriptor.set_name("USM memory allocated by the SYCL runtime".to_string());
                let mut counter = CounterDescriptor::new();
                counter.set_unit(Unit::UNIT_SIZE_BYTES);
                descriptor.counter = Some(counter).into();
            }
            Track::Pending => {
                descriptor.set_parent_uuid(self.tracks[&Track::Process]);
                descriptor.set_name(
                    "device commands pending (sampled at each periodic flush)".to_string(),
                );
                let mut counter = CounterDescriptor::new();
                counter.set_unit(Unit::UNIT_COUNT);
                descriptor.counter = Some(counter).into();
            }
            Track::Annotations(tid, number) => {
                descriptor.set_parent_uuid(self.track(Track::Thread(tid), names));
                let group = (self.annotation_tracks.iter())
                    .find(|(key, n)| key.0 == tid && **n == number)
                    .map_or(String::new(), |(key, _)| key.1.clone());
                descriptor.set_name(format!("ITT {group} (thread {tid})"));
            }
            Track::Overlapped(lane) => {
                descriptor.set_parent_uuid(self.tracks[&Track::Process]);
                descriptor.set_name(format!("ITT overlapped tasks (lane {lane})"));
            }
            Track::Communication(lane) => {
                descriptor.set_parent_uuid(self.tracks[&Track::Process]);
                descriptor.set_name(if lane == 0 {
                    "communication (oneCCL)".to_string()
                } else {
                    format!("communication (oneCCL, overlapping {lane})")
                });
            }
            Track::Device(device) => {
                descriptor.set_parent_uuid(self.tracks[&Track::Process]);
                descriptor.set_name(names.device(device));
            }
            Track::Engine(device, (ordinal, index)) => {
                descriptor.set_parent_uuid(self.track(Track::Device(device), names));
                descriptor.set_name(format!("engine: group {ordinal}, index {index}"));
            }
            Track::Lane(queue, lane) => {
                // Under its engine's or device's track (under the process only when no record
                // or call told the queue's device).
                let parent = match self.queue_place.get(&queue).copied() {
                    Some((device, Some(engine))) => {
                        self.track(Track::Engine(device, engine), names)
                    }
                    Some((device, None)) => self.track(Track::Device(device), names),
                    None => self.tracks[&Track::Process],
                };
                descriptor.set_parent_uuid(parent);
                let label = names.queue_label(queue);
                descriptor.set_name(if lane == 0 {
                    label
                } else {
                    format!("{label} (overlapping work {lane})")
                });
            }
        }
        let mut packet = TracePacket::new();
        packet.set_track_descriptor(descriptor);
        self.emit(packet);
        uuid
    }

    /// The interned ID of `name`, queued for interning in the next packet if it is new.
    fn name(&mut self, name: &str) -> u64 {
        if let Some(iid) = self.names.get(name) {
            return *iid;
        }
        let iid = self.names.len() as u64 + 1;
        self.names.insert(name.to_string(), iid);
        let mut entry = EventName::new();
        entry.set_iid(iid);
        entry.set_name(name.to_string());
        self.new_names.push(entry);
        iid
    }

    /// One track event.
    fn event(&mut self, ts: u64, track: u64, kind: Type, build: impl FnOnce(&mut TrackEvent)) {
        let mut event = TrackEvent::new();
        event.set_type(kind);
        event.set_track_uuid(track);
        build(&mut event);
        let mut packet = TracePacket::new();
        packet.set_timestamp(ts);
        packet.set_track_event(event);
        self.emit(packet);
    }

    /// A slice from `start` to `end` named `name` in `category` on `track`, with its
    /// correlation ID.
    fn slice(
        &mut self,
        track: u64,
        (name, category): (&str, &str),
        start: u64,
        end: u64,
        correlation: u32,
    ) -> u64 {
        let iid = self.name(name);
        let annotation = correlation_id(correlation);
        self.event(start, track, Type::TYPE_SLICE_BEGIN, |e| {
            e.set_name_iid(iid);
            e.categories.push(category.to_string());
            e.debug_annotations.push(annotation);
        });
        self.event(end.max(start), track, Type::TYPE_SLICE_END, |_| {});
        self.written.events += 1;
        iid
    }

    /// An API call on its thread's track.
    pub(crate) fn api(&mut self, call: &ApiCall, names: &Names) {
        let track = self.track(Track::Thread(call.thread), names);
        let name = api_name(call);
        let label = (name.as_str(), category(call.group));
        self.slice(track, label, call.start, call.end, call.correlation);
        if self.recent_order.len() == RECENT_CALLS
            && let Some(old) = self.recent_order.pop_front()
        {
            self.recent.remove(&old);
        }
        if self
            .recent
            .insert(call.correlation, (call.thread, call.start, call.end))
            .is_none()
        {
            self.recent_order.push_back(call.correlation);
        }
        if let Some(ops) = self.waiting.remove(&call.correlation) {
            self.waiting_count -= ops.len();
            for op in &ops {
                self.device_now(op, names);
            }
        }
    }

    /// A device operation: written now if its call was seen (or calls are not recorded, or too
    /// many wait), else when its call comes.
    pub(crate) fn device(&mut self, op: &DeviceOp, names: &Names) {
        if self.calls_recorded
            && !self.recent.contains_key(&op.correlation)
            && self.waiting_count < RECENT_CALLS
        {
            self.waiting
                .entry(op.correlation)
                .or_default()
                .push(op.clone());
            self.waiting_count += 1;
        } else {
            self.device_now(op, names);
        }
    }

    /// A device operation on its queue's first free lane, with its flow from the submitting
    /// thread.
    fn device_now(&mut self, op: &DeviceOp, names: &Names) {
        if op.device != 0 {
            let place = self
                .queue_place
                .entry(op.queue)
                .or_insert((op.device, op.engine));
            place.1 = place.1.or(op.engine);
        }
        let lane = self
            .lanes
            .entry(op.queue)
            .or_default()
            .place(op.start, op.end);
        let track = self.track(Track::Lane(op.queue, lane as u32), names);
        let flow = (u64::from(self.pid) << 32) | self.written.flows as u64;
        self.written.flows += 1;
        // The arrow's tail: an instant on the submitting thread when the command was appended,
        // inside the call that appended it when that call is known (a barrier's record has no
        // append time: its device start stands in).
        let (thread, at) = match self.recent.get(&op.correlation) {
            Some(&(thread, start, end)) => (thread, op.append.clamp(start, end.max(start))),
            None => (op.thread, op.append),
        };
        let at = at.min(op.start);
        let thread = self.track(Track::Thread(thread), names);
        let submit = self.name("submit");
        self.event(at, thread, Type::TYPE_INSTANT, |e| {
            e.set_name_iid(submit);
            e.flow_ids.push(flow);
        });
        self.written.events += 1;
        let name = op_name(op);
        let iid = self.name(&name);
        let annotation = correlation_id(op.correlation);
        self.event(op.start, track, Type::TYPE_SLICE_BEGIN, |e| {
            e.set_name_iid(iid);
            e.categories.push(op_category(op).to_string());
            e.terminating_flow_ids.push(flow);
            e.debug_annotations.push(annotation);
        });
        self.event(op.end.max(op.start), track, Type::TYPE_SLICE_END, |_| {});
        self.written.events += 1;
    }

    /// A USM allocation or release: the counter's new value (a release subtracts what its
    /// allocation added, when that was recorded).
    pub(crate) fn memory(&mut self, m: &Memory) {
        if m.allocation {
            self.usm_live.insert(m.address, m.bytes);
            self.usm_bytes += m.bytes as i64;
        } else {
            let bytes = self.usm_live.remove(&m.address).unwrap_or(m.bytes);
            self.usm_bytes -= bytes as i64;
        }
        let track = self.track(Track::UsmBytes, &Names::default());
        let value = self.usm_bytes;
        self.event(m.at, track, Type::TYPE_COUNTER, |e| {
            e.set_counter_value(value)
        });
    }

    /// How many device commands wait for their completion at `ts` (sampled by the periodic
    /// flush).
    pub(crate) fn pending(&mut self, ts: u64, commands: u64) {
        let track = self.track(Track::Pending, &Names::default());
        self.event(ts, track, Type::TYPE_COUNTER, |e| {
            e.set_counter_value(commands as i64)
        });
    }

    /// A critical event: an instant on the process track.
    pub(crate) fn critical(&mut self, ts: u64, text: &str) {
        let track = self.tracks[&Track::Process];
        let iid = self.name(&format!("critical event: {text}"));
        self.event(ts, track, Type::TYPE_INSTANT, |e| e.set_name_iid(iid));
        self.written.events += 1;
    }

    /// The first of `key`'s lanes where `[start, end)` overlaps nothing, now holding it.
    fn lane(&mut self, key: u64, start: u64, end: u64) -> u32 {
        self.lanes.entry(key).or_default().place(start, end) as u32
    }

    /// An ITT annotation: a slice (an instant for a marker) on its thread's track of its domain
    /// (of its name, for a legacy event), or on a lane of the overlapped tasks. A domain's tasks
    /// nest on their thread (a task ends the innermost open task of its domain) where tasks of
    /// two domains may not, nor events of two names.
    pub(crate) fn annotation(&mut self, a: &Annotation) {
        let names = Names::default();
        let track = if a.overlaps() {
            let lane = self.lane(OVERLAPPED_LANES, a.start, a.end);
            self.track(Track::Overlapped(lane), &names)
        } else {
            let next = self.annotation_tracks.len() as u32;
            let number = *self
                .annotation_tracks
                .entry((a.thread, a.track_group()))
                .or_insert(next);
            self.track(Track::Annotations(a.thread, number), &names)
        };
        let label = a.label();
        if a.is_marker() {
            let iid = self.name(&label);
            self.event(a.start, track, Type::TYPE_INSTANT, |e| {
                e.set_name_iid(iid);
                e.categories.push("annotation".to_string());
            });
            self.written.events += 1;
        } else {
            self.slice(track, (&label, "annotation"), a.start, a.end, 0);
        }
    }

    /// A communication operation on a lane of the process's communication track.
    pub(crate) fn communication(&mut self, op: &Communication) {
        let lane = self.lane(COMMUNICATION_LANES, op.start, op.end);
        let track = self.track(Track::Communication(lane), &Names::default());
        let name = op.label();
        self.slice(track, (&name, "communication"), op.start, op.end, 0);
    }

    /// The clock anchor `pti-trace merge` aligns traces of several hosts by: an instant on the
    /// process track, "pti-trace clock anchor", at libpti's time, with the wall-clock time read
    /// beside it (`realtime_ns`), the host (`host`) and the MPI rank (`rank`, when there is one).
    fn anchor(&mut self) {
        let at = libpti::view::timestamp();
        let wall = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let track = self.tracks[&Track::Process];
        let iid = self.name(ANCHOR);
        let mut args = vec![
            annotation_u64("realtime_ns", wall),
            annotation_text("host", &crate::options::host_name()),
        ];
        if let Some(rank) = crate::options::mpi_rank() {
            args.push(annotation_u64("rank", u64::from(rank)));
        }
        self.event(at, track, Type::TYPE_INSTANT, |e| {
            e.set_name_iid(iid);
            e.debug_annotations = args;
        });
    }

    /// A change of capture (collection paused or resumed, and why): an instant on the process
    /// track, named as pti-trace says it.
    pub(crate) fn capture(&mut self, ts: u64, text: &str) {
        let track = self.tracks[&Track::Process];
        let iid = self.name(text);
        self.event(ts, track, Type::TYPE_INSTANT, |e| e.set_name_iid(iid));
        self.written.events += 1;
    }

    /// Pushes what was written to the file (the end of a batch): from here it survives a crash.
    /// Bytes written to the file so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    pub(crate) fn flush(&mut self) {
        if self.failed.is_none()
            && let Err(e) = self.out.flush()
        {
            self.failed = Some(e);
        }
    }

    /// Writes the device work still waiting for its call (its flow starts at its append time),
    /// flushes; what was written, or the first error.
    pub(crate) fn finish(&mut self, names: &Names) -> std::io::Result<Written> {
        let mut waiting: Vec<DeviceOp> = self.waiting.drain().flat_map(|(_, ops)| ops).collect();
        waiting.sort_by_key(|op| op.start);
        self.waiting_count = 0;
        for op in &waiting {
            self.device_now(op, names);
        }
        self.flush();
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(self.written),
        }
    }
}
