//! The timeline: Chrome's trace-event JSON (the "JSON object format"), which Perfetto and
//! chrome://tracing load.
//!
//! One process (this one), with tracks:
//! - one per host thread (tid = the thread's ID): its API calls, nested as they ran;
//! - one per device queue (or command list), named for it and its device ("queue 2 on device 0",
//!   with the Level Zero engine where known): its kernels, copies, fills, barriers and markers; work that overlaps on a queue goes to extra lanes of that queue, since a
//!   track's slices must nest;
//! - one per submitting thread ("work submitted by thread N"): the same device work again, so
//!   each thread's device work can be read beside its calls;
//! - the program's ITT annotations on a track per thread and domain ("ITT app (thread N)"),
//!   nested as they ran (markers as instants), overlapped tasks on lanes of their own, and
//!   oneCCL's communication on lanes of its own.
//!
//! A flow arrow joins each device operation to the API call that submitted it (the call of its
//! correlation ID on its thread, a driver call where there is one). Times are microseconds with
//! nanosecond decimals; every slice carries its correlation ID in `args`.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::collect::{ApiCall, Collected, DeviceKind, DeviceOp};

/// First track ID of the queue lanes, and of the submitting threads' tracks (above any thread ID
/// Linux hands out, which stays below 2^22).
const QUEUE_TRACKS: u64 = 1 << 30;
const SUBMITTER_TRACKS: u64 = 1 << 29;
/// Lanes per queue, per submitting thread.
const QUEUE_LANES: u64 = 256;
const SUBMITTER_LANES: u64 = 64;
/// Track IDs of the overlapped ITT tasks' lanes and of the communication lanes (below the
/// submitting threads' tracks, above any thread ID).
const OVERLAPPED_TRACKS: u64 = 1 << 28;
const NESTED_TRACKS: u64 = (1 << 28) + (1 << 21);
const COMMUNICATION_TRACKS: u64 = (1 << 28) + (1 << 20);
/// Lanes of each.
const ANNOTATION_LANES: u64 = 64;

/// A JSON string literal.
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Nanoseconds as trace-event microseconds.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// The group of an API call, as a category.
pub(crate) fn category(group: u32) -> &'static str {
    match group {
        1 => "Level Zero",
        2 => "OpenCL",
        3 => "SYCL runtime",
        _ => "API",
    }
}

/// The name of an API call.
pub(crate) fn api_name(call: &ApiCall) -> String {
    function_name(call.group, call.id)
}

/// The name of function `id` of API group `group` (both as records give them).
pub(crate) fn function_name(group_id: u32, id: u32) -> String {
    use crate::abi::pti_api_group_id::*;
    let group = match group_id {
        1 => Some(PTI_API_GROUP_LEVELZERO),
        2 => Some(PTI_API_GROUP_OPENCL),
        3 => Some(PTI_API_GROUP_SYCL),
        _ => None,
    };
    group
        .and_then(|g| crate::api_name(g, id))
        .map_or_else(|| format!("API {id} of group {group_id}"), str::to_string)
}

/// The name of a device operation in the timeline and the summary.
/// Borrowed but for copies: it is asked for every operation recorded.
pub(crate) fn op_name(op: &DeviceOp) -> std::borrow::Cow<'_, str> {
    match &op.kind {
        DeviceKind::Kernel => op.name.as_str().into(),
        DeviceKind::Copy(kind) => format!("copy {kind}").into(),
        DeviceKind::Fill => "fill".into(),
        DeviceKind::Barrier => "barrier".into(),
        DeviceKind::Marker => "marker".into(),
    }
}

pub(crate) fn op_category(op: &DeviceOp) -> &'static str {
    match op.kind {
        DeviceKind::Kernel => "kernel",
        DeviceKind::Copy(_) => "memcpy",
        DeviceKind::Fill => "memfill",
        DeviceKind::Barrier => "barrier",
        DeviceKind::Marker => "marker",
    }
}

/// Places slices that may overlap onto lanes where they do not: returns each slice's lane.
fn lanes(spans: &[(u64, u64)], most: u64) -> Vec<u64> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| spans[i]);
    let mut ends: Vec<u64> = Vec::new();
    let mut lane = vec![0; spans.len()];
    for i in order {
        let (start, end) = spans[i];
        let free = ends.iter().position(|e| *e <= start);
        let l = match free {
            Some(l) => l,
            None if (ends.len() as u64) < most => {
                ends.push(0);
                ends.len() - 1
            }
            None => ends.len() - 1,
        };
        ends[l] = ends[l].max(end);
        lane[i] = l as u64;
    }
    lane
}

/// The program's ITT annotations and oneCCL's communication, as events of `pid`.
fn annotations(
    c: &Collected,
    pid: u32,
    events: &mut Vec<String>,
    meta: &dyn Fn(u64, &str, String) -> String,
) {
    let slice = |tid: u64, start: u64, end: u64, name: &str, cat: &str| {
        format!(
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":{}}}",
            us(start),
            us(end.saturating_sub(start)),
            quoted(name),
            quoted(cat)
        )
    };
    let overlapped: Vec<usize> = (0..c.annotations.len())
        .filter(|&i| c.annotations[i].overlaps())
        .collect();
    let spans: Vec<(u64, u64)> = (overlapped.iter())
        .map(|&i| (c.annotations[i].start, c.annotations[i].end))
        .collect();
    let lane = lanes(&spans, ANNOTATION_LANES);
    for l in 0..lane.iter().max().map_or(0, |m| m + 1) {
        let tid = OVERLAPPED_TRACKS + l;
        events.push(meta(
            tid,
            "thread_name",
            quoted(&format!("ITT overlapped tasks (lane {l})")),
        ));
        events.push(meta(tid, "thread_sort_index", tid.to_string()));
    }
    for (k, &i) in overlapped.iter().enumerate() {
        let a = &c.annotations[i];
        events.push(slice(
            OVERLAPPED_TRACKS + lane[k],
            a.start,
            a.end,
            &a.label(),
            "annotation",
        ));
    }
    // Per thread and domain (event name, for legacy events) a track: a domain's ranges nest on
    // their thread, two domains' may not.
    let mut nested: HashMap<(u32, String), u64> = HashMap::new();
    for a in c.annotations.iter().filter(|a| !a.overlaps()) {
        let group = a.track_group();
        let next = NESTED_TRACKS + nested.len() as u64;
        let tid = match nested.get(&(a.thread, group.clone())) {
            Some(tid) => *tid,
            None => {
                let name = format!("ITT {group} (thread {})", a.thread);
                events.push(meta(next, "thread_name", quoted(&name)));
                events.push(meta(next, "thread_sort_index", next.to_string()));
                nested.insert((a.thread, group), next);
                next
            }
        };
        events.push(if a.is_marker() {
            format!(
                "{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"name\":{},\"cat\":\"annotation\"}}",
                us(a.start),
                quoted(&a.label())
            )
        } else {
            slice(tid, a.start, a.end, &a.label(), "annotation")
        });
    }
    let spans: Vec<(u64, u64)> = c
        .communication
        .iter()
        .map(|op| (op.start, op.end))
        .collect();
    let lane = lanes(&spans, ANNOTATION_LANES);
    for l in 0..lane.iter().max().map_or(0, |m| m + 1) {
        let tid = COMMUNICATION_TRACKS + l;
        events.push(meta(
            tid,
            "thread_name",
            quoted(&format!("communication (oneCCL, lane {l})")),
        ));
        events.push(meta(tid, "thread_sort_index", tid.to_string()));
    }
    for (op, l) in c.communication.iter().zip(lane) {
        let name = op.label();
        events.push(slice(
            COMMUNICATION_TRACKS + l,
            op.start,
            op.end,
            &name,
            "communication",
        ));
    }
}

/// The API call that submitted `op`, among the calls of its correlation ID on its thread: for a
/// barrier, a call of the function that enqueued it; otherwise a driver call that started before
/// the work was appended (the latest such), else any of them.
fn submitter<'a>(
    by_correlation: &HashMap<(u32, u32), Vec<&'a ApiCall>>,
    op: &DeviceOp,
) -> Option<&'a ApiCall> {
    let calls = by_correlation.get(&(op.correlation, op.thread))?;
    let latest = |it: &mut dyn Iterator<Item = &&'a ApiCall>| it.max_by_key(|a| a.start).copied();
    if let Some((group, id)) = op.api
        && let Some(call) = latest(&mut calls.iter().filter(|a| (a.group, a.id) == (group, id)))
    {
        return Some(call);
    }
    latest(
        &mut calls
            .iter()
            .filter(|a| a.group != 3)
            .filter(|a| op.append == 0 || a.start <= op.append),
    )
    .or_else(|| latest(&mut calls.iter()))
}

/// What a timeline holds (JSON or Perfetto), for the collector's last line.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Written {
    pub(crate) events: usize,
    pub(crate) flows: usize,
}

/// Writes the timeline of `c` to `out`.
pub(crate) fn write(
    out: &mut impl std::io::Write,
    c: &Collected,
    process: &str,
) -> std::io::Result<Written> {
    let pid = std::process::id();
    let mut events: Vec<String> = Vec::new();
    let meta = |tid: u64, key: &str, value: String| {
        format!(
            "{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"name\":{},\"args\":{{\"{}\":{value}}}}}",
            quoted(key),
            if key.ends_with("sort_index") {
                "sort_index"
            } else {
                "name"
            }
        )
    };
    events.push(format!(
        "{{\"ph\":\"M\",\"pid\":{pid},\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
        quoted(&format!("{process} (pid {pid})"))
    ));

    let threads = host_threads(c, pid, &mut events, &meta);
    annotations(c, pid, &mut events, &meta);
    let queue_track = queue_tracks(c, &mut events, &meta);
    let submitter_track = submitter_tracks(c, &threads, &mut events, &meta);
    let flows = device_work(c, pid, (&queue_track, &submitter_track), &mut events);

    writeln!(out, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
    for (i, e) in events.iter().enumerate() {
        let sep = if i + 1 == events.len() { "" } else { "," };
        writeln!(out, "{e}{sep}")?;
    }
    writeln!(out, "]}}")?;
    Ok(Written {
        events: events.len(),
        flows,
    })
}

/// The host threads' tracks and their API calls; the threads, sorted.
fn host_threads(
    c: &Collected,
    pid: u32,
    events: &mut Vec<String>,
    meta: &dyn Fn(u64, &str, String) -> String,
) -> Vec<u32> {
    let mut threads: Vec<u32> = c
        .apis
        .iter()
        .map(|a| a.thread)
        .chain(c.device.iter().map(|d| d.thread))
        .chain(c.annotations.iter().map(|a| a.thread))
        .collect();
    threads.sort_unstable();
    threads.dedup();
    for &t in &threads {
        let name = if t == pid {
            format!("main thread {t}")
        } else {
            format!("thread {t}")
        };
        events.push(meta(u64::from(t), "thread_name", quoted(&name)));
        events.push(meta(u64::from(t), "thread_sort_index", t.to_string()));
    }
    for call in &c.apis {
        let mut args = format!(
            "\"correlation_id\":{},\"api_id\":{},\"return_code\":{}",
            call.correlation, call.id, call.status as i32
        );
        if let Some(ext) = c.externals.get(&call.correlation) {
            // As strings: JSON readers keep numbers as doubles, exact only below 2^53.
            let ids: Vec<String> = ext.iter().map(|id| format!("\"{id}\"")).collect();
            let _ = write!(args, ",\"external_ids\":[{}]", ids.join(","));
        }
        events.push(format!(
            "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"dur\":{},\"name\":{},\"cat\":{},\"args\":{{{args}}}}}",
            call.thread,
            us(call.start),
            us(call.end.saturating_sub(call.start)),
            quoted(&api_name(call)),
            quoted(category(call.group)),
        ));
    }

    threads
}

/// The device work's tracks: per queue (in order of first appearance), in lanes; the track of
/// each device operation.
fn queue_tracks(
    c: &Collected,
    events: &mut Vec<String>,
    meta: &dyn Fn(u64, &str, String) -> String,
) -> Vec<u64> {
    let mut queues: Vec<(u64, u64, Option<crate::queues::Engine>)> = Vec::new();
    for op in &c.device {
        match queues.iter_mut().find(|q| q.0 == op.queue) {
            Some(q) => q.2 = q.2.or(op.engine),
            None => queues.push((op.queue, op.device, op.engine)),
        }
    }
    let mut queue_track = vec![0u64; c.device.len()];
    for (qi, &(queue, device, engine)) in queues.iter().enumerate() {
        let mut label = format!(
            "{} on {}",
            c.names.queue_label(queue),
            c.names.device(device)
        );
        if let Some((ordinal, index)) = engine {
            let _ = write!(label, ", engine group {ordinal} index {index}");
        }
        let members: Vec<usize> = (0..c.device.len())
            .filter(|&i| c.device[i].queue == queue)
            .collect();
        let spans: Vec<(u64, u64)> = members
            .iter()
            .map(|&i| (c.device[i].start, c.device[i].end))
            .collect();
        let lane = lanes(&spans, QUEUE_LANES);
        let used = lane.iter().max().map_or(1, |m| m + 1);
        for l in 0..used {
            let tid = QUEUE_TRACKS + qi as u64 * QUEUE_LANES + l;
            let suffix = if l == 0 {
                String::new()
            } else {
                format!(" (overlap {l})")
            };
            events.push(meta(
                tid,
                "thread_name",
                quoted(&format!("{label}{suffix}")),
            ));
            events.push(meta(tid, "thread_sort_index", tid.to_string()));
        }
        for (k, &i) in members.iter().enumerate() {
            queue_track[i] = QUEUE_TRACKS + qi as u64 * QUEUE_LANES + lane[k];
        }
    }
    queue_track
}

/// The same work on its submitting thread's tracks; the track of each device operation there.
fn submitter_tracks(
    c: &Collected,
    threads: &[u32],
    events: &mut Vec<String>,
    meta: &dyn Fn(u64, &str, String) -> String,
) -> Vec<u64> {
    let mut submitter_track = vec![0u64; c.device.len()];
    for &t in threads {
        let members: Vec<usize> = (0..c.device.len())
            .filter(|&i| c.device[i].thread == t)
            .collect();
        if members.is_empty() {
            continue;
        }
        let spans: Vec<(u64, u64)> = members
            .iter()
            .map(|&i| (c.device[i].start, c.device[i].end))
            .collect();
        let lane = lanes(&spans, SUBMITTER_LANES);
        let used = lane.iter().max().map_or(1, |m| m + 1);
        let base = SUBMITTER_TRACKS + (u64::from(t) % (1 << 22)) * SUBMITTER_LANES;
        for l in 0..used {
            let suffix = if l == 0 {
                String::new()
            } else {
                format!(" (overlap {l})")
            };
            events.push(meta(
                base + l,
                "thread_name",
                quoted(&format!("device work submitted by thread {t}{suffix}")),
            ));
            events.push(meta(base + l, "thread_sort_index", (base + l).to_string()));
        }
        for (k, &i) in members.iter().enumerate() {
            submitter_track[i] = base + lane[k];
        }
    }

    submitter_track
}

/// Each device operation on its queue's track and its submitting thread's, and its flow arrow
/// from the API call that submitted it; the number of arrows.
fn device_work(
    c: &Collected,
    pid: u32,
    (queue_track, submitter_track): (&[u64], &[u64]),
    events: &mut Vec<String>,
) -> usize {
    // The API call of each correlation ID on each thread: the driver call where there is one.
    let mut by_correlation: HashMap<(u32, u32), Vec<&ApiCall>> = HashMap::new();
    for call in &c.apis {
        by_correlation
            .entry((call.correlation, call.thread))
            .or_default()
            .push(call);
    }
    let mut flows = 0;
    for (i, op) in c.device.iter().enumerate() {
        let submitter = submitter(&by_correlation, op);
        let flow_id = submitter.map(|_| flows + 1);
        // Queues and devices by the names the summary and the Perfetto timeline give them, not
        // by handles (addresses of the runtime's, which mean nothing to a reader).
        let mut args = format!(
            "\"correlation_id\":{},\"queue\":{},\"device\":{},\"thread\":{}",
            op.correlation,
            quoted(&c.names.queue_label(op.queue)),
            quoted(&c.names.device(op.device)),
            op.thread
        );
        if op.bytes != 0 {
            let _ = write!(args, ",\"bytes\":{}", op.bytes);
        }
        if op.sycl_queue != crate::abi::PTI_INVALID_QUEUE_ID {
            let _ = write!(args, ",\"sycl_queue_id\":{}", op.sycl_queue);
        }
        let name = quoted(&op_name(op));
        let cat = quoted(op_category(op));
        for tid in [queue_track[i], submitter_track[i]] {
            // The queue's slice names the flow arrow that ends on it.
            let flow = match flow_id {
                Some(id) if tid == queue_track[i] => format!(",\"flow_id\":{id}"),
                _ => String::new(),
            };
            events.push(format!(
                "{{\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"name\":{name},\"cat\":{cat},\"args\":{{{args}{flow}}}}}",
                us(op.start),
                us(op.end.saturating_sub(op.start)),
            ));
        }
        if let (Some(call), Some(id)) = (submitter, flow_id) {
            flows = id;
            // Each end sits inside its slice (a flow binds to the slice around its time), and the
            // arrow runs forward: its tail at the append inside the call, never after the work
            // started (a blocking read's call lasts past its copy: its middle came after the
            // copy's, and the arrow ran backwards).
            // (At most the call's middle: the call's end itself may read past the slice once
            // both are written as microseconds.)
            let to = op.start + (op.end.saturating_sub(op.start)) / 2;
            let middle = call.start + call.end.saturating_sub(call.start) / 2;
            let from = op
                .append
                .clamp(call.start, middle)
                .min(op.start)
                .max(call.start);
            events.push(format!(
                "{{\"ph\":\"s\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"id\":{id},\"name\":\"submission\",\"cat\":\"correlation\"}}",
                call.thread,
                us(from)
            ));
            events.push(format!(
                "{{\"ph\":\"f\",\"bp\":\"e\",\"pid\":{pid},\"tid\":{},\"ts\":{},\"id\":{id},\"name\":\"submission\",\"cat\":\"correlation\"}}",
                queue_track[i],
                us(to)
            ));
        }
    }

    flows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_slices_get_lanes_of_their_own() {
        assert_eq!(
            lanes(&[(0, 10), (10, 20), (5, 15), (30, 40)], 4),
            [0, 0, 1, 0]
        );
        // Beyond the last lane, the rest share it.
        assert_eq!(lanes(&[(0, 10), (1, 10), (2, 10)], 2), [0, 1, 1]);
    }

    #[test]
    fn strings_and_times_are_valid_json() {
        assert_eq!(quoted("a\"b\\c\nd\u{1}"), "\"a\\\"b\\\\c\\nd\\u0001\"");
        assert_eq!(us(1_234_567), "1234.567");
        assert_eq!(us(5), "0.005");
    }
}
