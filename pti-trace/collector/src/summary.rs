//! The summary table, printed on stderr at exit: per API function and per kind of device work
//! (each kernel, each copy direction, fills, barriers) the count, total, average, minimum and
//! maximum time and the share of its section's total; then each device's busy time, and what was
//! lost (dropped or pending records, critical events), loudly.
//!
//! It is tallied as records arrive ([`Tally`]), so its memory grows with the number of distinct
//! functions, kernels, devices and queues, not with the run.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::collect::{Annotation, ApiCall, Collected, Communication, DeviceOp, Memory};
use crate::timeline::{category, function_name, op_name};

/// How many disjoint busy intervals of a device are kept open for merging: device work arrives
/// nearly in order, so an interval this many places back is closed (its time counted for good).
/// Work that arrives later than that and overlaps closed time is counted twice.
const OPEN_INTERVALS: usize = 1024;

/// One device's first start, last end and busy time (the union of its work's spans).
#[derive(Default)]
struct Busy {
    first: Option<u64>,
    last: u64,
    closed: u64,
    /// Disjoint intervals, sorted, still open for merging.
    open: Vec<(u64, u64)>,
}

impl Busy {
    fn add(&mut self, start: u64, end: u64) {
        let end = end.max(start);
        self.first = Some(self.first.map_or(start, |f| f.min(start)));
        self.last = self.last.max(end);
        // Merge with every open interval it touches.
        let (mut s, mut e) = (start, end);
        self.open.retain(|&(a, b)| {
            if b < s || a > e {
                true
            } else {
                s = s.min(a);
                e = e.max(b);
                false
            }
        });
        let at = self.open.partition_point(|&(a, _)| a < s);
        self.open.insert(at, (s, e));
        if self.open.len() > OPEN_INTERVALS {
            let (a, b) = self.open.remove(0);
            self.closed += b - a;
        }
    }

    fn busy(&self) -> u64 {
        self.closed + self.open.iter().map(|(a, b)| b - a).sum::<u64>()
    }
}

/// The summary's figures, tallied as records arrive.
#[derive(Default)]
pub(crate) struct Tally {
    api_calls: u64,
    apis: HashMap<(u32, u32), Row>,
    device_ops: u64,
    device: BTreeMap<String, Row>,
    devices: BTreeMap<u64, Busy>,
    /// Each queue's device (barrier records name none: theirs is their queue's).
    queue_device: HashMap<u64, u64>,
    allocations: u64,
    allocated_bytes: u64,
    releases: u64,
    backwards: u64,
    /// Annotated ranges by "domain: name", and markers by the same label.
    annotations: BTreeMap<String, Row>,
    markers: BTreeMap<String, u64>,
    /// Communication by operation, with bytes sent and received.
    communication: BTreeMap<String, (Row, u64, u64)>,
}

impl crate::output::Output for Tally {
    fn batch(&mut self, batch: &crate::output::Batch<'_>, _: &crate::names::Names) {
        batch.apis.iter().for_each(|call| self.api(call));
        batch.device.iter().for_each(|op| self.device(op));
        batch.memory.iter().for_each(|m| self.memory(m));
        batch.annotations.iter().for_each(|a| self.annotation(a));
        batch
            .communication
            .iter()
            .for_each(|op| self.communication(op));
    }
}

impl Tally {
    /// Counts an API call.
    pub(crate) fn api(&mut self, call: &ApiCall) {
        self.api_calls += 1;
        self.backwards += u64::from(call.end < call.start);
        self.apis
            .entry((call.group, call.id))
            .or_default()
            .add(call.end.saturating_sub(call.start));
    }

    /// Counts a device operation.
    pub(crate) fn device(&mut self, op: &DeviceOp) {
        self.device_ops += 1;
        self.backwards += u64::from(op.end < op.start);
        let name = op_name(op);
        let ns = op.end.saturating_sub(op.start);
        // A name already in the table is not copied again.
        match self.device.get_mut(name.as_ref()) {
            Some(row) => row.add(ns),
            None => self.device.entry(name.into_owned()).or_default().add(ns),
        }
        let device = if op.device != 0 {
            self.queue_device.insert(op.queue, op.device);
            op.device
        } else {
            self.queue_device.get(&op.queue).copied().unwrap_or(0)
        };
        self.devices
            .entry(device)
            .or_default()
            .add(op.start, op.end);
    }

    /// Counts an annotation.
    pub(crate) fn annotation(&mut self, a: &Annotation) {
        if a.is_marker() {
            *self.markers.entry(a.label()).or_default() += 1;
            return;
        }
        self.backwards += u64::from(a.end < a.start);
        self.annotations
            .entry(a.label())
            .or_default()
            .add(a.end.saturating_sub(a.start));
    }

    /// Counts a communication operation.
    pub(crate) fn communication(&mut self, op: &Communication) {
        let entry = self.communication.entry(op.name.clone()).or_default();
        entry.0.add(op.end.saturating_sub(op.start));
        entry.1 += op.send;
        entry.2 += op.recv;
    }

    /// Counts a memory allocation or release.
    pub(crate) fn memory(&mut self, m: &Memory) {
        if m.allocation {
            self.allocations += 1;
            self.allocated_bytes += m.bytes;
        } else {
            self.releases += 1;
        }
    }
}

/// Durations of one row.
#[derive(Default, Clone)]
struct Row {
    count: u64,
    total: u64,
    min: u64,
    max: u64,
}

impl Row {
    fn add(&mut self, ns: u64) {
        self.min = if self.count == 0 {
            ns
        } else {
            self.min.min(ns)
        };
        self.max = self.max.max(ns);
        self.count += 1;
        self.total += ns;
    }
}

/// A duration with a unit that keeps it short: `850ns`, `12.40us`, `3.21ms`, `1.50s`.
fn duration(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0}ns")
    } else if ns < 1e6 {
        format!("{:.2}us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2}ms", ns / 1e6)
    } else {
        format!("{:.2}s", ns / 1e9)
    }
}

/// One table of the summary. The share column is each row's part of its group's time, the group
/// being the `[...]` at the end of a row's name where there is one (an API): calls of one API do
/// not nest, but a runtime call contains the driver calls it makes (SYCL's `urEventWait` and the
/// `clWaitForEvents` inside it), so one share over every API counted that time twice.
fn section(out: &mut String, title: &str, rows: &BTreeMap<String, Row>) {
    let group_of = |name: &str| -> String {
        match name.rfind(" [") {
            Some(at) if name.ends_with(']') => name[at..].to_string(),
            _ => String::new(),
        }
    };
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    for (name, r) in rows {
        *totals.entry(group_of(name)).or_default() += r.total;
    }
    let _ = writeln!(
        out,
        "{title:<48} {:>8} {:>10} {:>10} {:>10} {:>10} {:>6}",
        "count", "total", "avg", "min", "max", "share"
    );
    let mut sorted: Vec<(&String, &Row)> = rows.iter().collect();
    sorted.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(b.0)));
    for (name, r) in sorted {
        let all = totals[&group_of(name)];
        let name = printable(name);
        let _ = writeln!(
            out,
            "  {name:<46} {:>8} {:>10} {:>10} {:>10} {:>10} {:>5.1}%",
            r.count,
            duration(r.total as f64),
            duration(r.total as f64 / r.count as f64),
            duration(r.min as f64),
            duration(r.max as f64),
            if all == 0 {
                0.0
            } else {
                100.0 * r.total as f64 / all as f64
            }
        );
    }
}

/// What libpti could not deliver, for the summary's last lines.
pub(crate) struct Losses {
    pub(crate) dropped: Vec<(String, u64)>,
    pub(crate) pending: u64,
    /// Critical events libpti counted (the collector receives those raised after it subscribed).
    pub(crate) criticals: u64,
}

impl Losses {
    /// Whether nothing was lost.
    pub(crate) fn is_none(&self) -> bool {
        self.dropped.iter().all(|d| d.1 == 0) && self.pending == 0 && self.criticals == 0
    }
}

impl Tally {
    /// Whether no call or device work was counted.
    pub(crate) fn is_empty(&self) -> bool {
        self.api_calls == 0
            && self.device_ops == 0
            && self.allocations + self.releases == 0
            && self.annotations.is_empty()
            && self.markers.is_empty()
            && self.communication.is_empty()
    }
}

/// A CSV field: quoted when it holds a comma, a quote or a line break; one that a spreadsheet
/// would take for a formula (beginning with `=`, `+`, `-`, `@`, a tab or a carriage return: a
/// kernel or ITT name is the program's to choose) gets a leading `'`, as OWASP advises.
fn csv_field(text: &str) -> String {
    let text = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_string()
    };
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// `text` safe to print on a terminal: every control character (escape sequences, line breaks,
/// C1 controls; a kernel, ITT or program name is the program's to choose) written as `\u{..}`.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The summary's tables as CSV (`--csv`): one row per API function and per kind of device work,
/// times in nanoseconds.
pub(crate) fn csv(c: &Collected) -> String {
    let mut out = String::from("section,name,group,count,total_ns,avg_ns,min_ns,max_ns\n");
    let mut row = |section: &str, name: &str, group: &str, r: &Row| {
        let _ = writeln!(
            out,
            "{section},{},{},{},{},{},{},{}",
            csv_field(name),
            csv_field(group),
            r.count,
            r.total,
            r.total / r.count.max(1),
            r.min,
            r.max
        );
    };
    let mut apis: Vec<_> = c.tally.apis.iter().collect();
    apis.sort_by_key(|(key, _)| **key);
    for (&(group, id), r) in apis {
        row("api", &function_name(group, id), category(group), r);
    }
    for (name, r) in &c.tally.device {
        row("device", name, "", r);
    }
    for (name, r) in &c.tally.annotations {
        row("annotation", name, "ITT", r);
    }
    for (name, (r, _, _)) in &c.tally.communication {
        row("communication", name, "oneCCL", r);
    }
    out
}

/// The summary of `c`, for process `process`.
pub(crate) fn render(c: &Collected, process: &str, losses: &Losses) -> String {
    let t = &c.tally;
    let mut out = String::new();
    let pid = std::process::id();
    let _ = writeln!(
        out,
        "pti-trace: summary of process {pid} ({}): {} API calls, {} device operations",
        printable(process),
        t.api_calls,
        t.device_ops
    );
    let apis: BTreeMap<String, Row> = t
        .apis
        .iter()
        .map(|(&(group, id), row)| {
            let name = function_name(group, id);
            (format!("{name} [{}]", category(group)), row.clone())
        })
        .collect();
    if !apis.is_empty() {
        section(&mut out, "API calls", &apis);
    }
    if !t.device.is_empty() {
        section(
            &mut out,
            "Device work (kernels, copies, fills, barriers)",
            &t.device,
        );
        for (dev, busy) in &t.devices {
            let span = busy.last.saturating_sub(busy.first.unwrap_or(0));
            let b = busy.busy();
            let _ = writeln!(
                out,
                "{}: busy {:.3} ms of the {:.3} ms from its first command's start to its last one's end ({:.1}%)",
                printable(&c.names.device(*dev)),
                b as f64 / 1e6,
                span as f64 / 1e6,
                if span == 0 {
                    0.0
                } else {
                    100.0 * b as f64 / span as f64
                }
            );
        }
    }
    if t.api_calls > 0 && t.device_ops == 0 && c.filtered_kernels == 0 {
        let _ = writeln!(
            out,
            "no device work recorded: if the program submitted GPU work, `pti-trace check` says \
             what on this machine may keep its records away (docs/pti-trace.md, \"When a run \
             shows no GPU records\")"
        );
    }
    if !t.annotations.is_empty() {
        section(
            &mut out,
            "Annotations (ITT tasks, frames, events)",
            &t.annotations,
        );
    }
    if !t.markers.is_empty() {
        let marks: Vec<String> = t.markers.iter().map(|(m, n)| format!("{n} {m}")).collect();
        let _ = writeln!(out, "ITT markers: {}", marks.join(", "));
    }
    if !t.communication.is_empty() {
        let rows: BTreeMap<String, Row> = (t.communication.iter())
            .map(|(name, (row, _, _))| (name.clone(), row.clone()))
            .collect();
        section(
            &mut out,
            "Communication (oneCCL, from its ITT tasks)",
            &rows,
        );
        for (name, (row, send, recv)) in &t.communication {
            let _ = writeln!(
                out,
                "  {}: {} operations, {send} bytes sent, {recv} bytes received",
                printable(name),
                row.count
            );
        }
    }
    if t.allocations + t.releases > 0 {
        let _ = writeln!(
            out,
            "memory: {} allocations ({} bytes), {} releases by the SYCL runtime",
            t.allocations, t.allocated_bytes, t.releases
        );
    }
    let dropped: u64 = losses.dropped.iter().map(|d| d.1).sum();
    if dropped > 0 {
        let kinds: Vec<String> = losses
            .dropped
            .iter()
            .filter(|d| d.1 > 0)
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        let _ = writeln!(
            out,
            "*** WARNING: {dropped} RECORDS WERE DROPPED ({}): the timeline and this summary are incomplete ***",
            kinds.join(", ")
        );
    } else {
        let _ = writeln!(out, "records dropped: 0");
    }
    if !c.unrecorded.is_empty() {
        let functions: Vec<String> = (c.unrecorded.iter())
            .map(|(function, n)| format!("{n} of {function}"))
            .collect();
        let _ = writeln!(
            out,
            "commands with no record kind (counted, not on the timeline): {}",
            functions.join(", ")
        );
    }
    if c.timeline_left_out > 0 {
        let _ = writeln!(
            out,
            "pti-trace: the timeline reached --max-size ({} bytes): {} later records are in this \
             summary only",
            crate::OPTIONS.get().and_then(|o| o.max_size).unwrap_or(0),
            c.timeline_left_out
        );
    }
    if c.json_left_out > 0 {
        let _ = writeln!(
            out,
            "pti-trace: the JSON timeline keeps the first {} records; {} later ones are in this \
             summary only (-f perfetto streams a long run whole; PTI_TRACE_JSON_MAX_RECORDS \
             raises the bound)",
            crate::OPTIONS.get().map_or(0, |o| o.json_max_records),
            c.json_left_out
        );
    }
    if c.filtered_kernels > 0 {
        let _ = writeln!(
            out,
            "kernels left out by the kernel filters: {}",
            c.filtered_kernels
        );
    }
    if losses.pending > 0 {
        let _ = writeln!(
            out,
            "*** WARNING: {} device commands had not completed at exit: their records are missing ***",
            losses.pending
        );
    }
    let backwards = t.backwards;
    if backwards > 0 {
        let _ = writeln!(
            out,
            "*** WARNING: {backwards} records end before they start: their durations are shown as 0 ***"
        );
    }
    for critical in &c.criticals {
        let _ = writeln!(out, "*** libpti critical event: {critical}");
    }
    let unseen = losses.criticals.saturating_sub(c.criticals.len() as u64);
    if unseen > 0 {
        let _ = writeln!(
            out,
            "*** {unseen} more critical event(s) were raised where the collector could not hear them"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy(spans: &[(u64, u64)]) -> u64 {
        let mut b = Busy::default();
        for (s, e) in spans {
            b.add(*s, *e);
        }
        b.busy()
    }

    #[test]
    fn busy_time_counts_overlaps_once() {
        assert_eq!(busy(&[(0, 10), (5, 15), (20, 30)]), 25);
        assert_eq!(busy(&[(0, 10), (2, 3)]), 10);
        assert_eq!(busy(&[(20, 30), (0, 10), (5, 25)]), 30);
        assert_eq!(busy(&[]), 0);
    }

    #[test]
    fn busy_time_stays_bounded_and_exact_in_order() {
        let mut b = Busy::default();
        for i in 0..10_000u64 {
            b.add(i * 10, i * 10 + 5);
        }
        assert!(b.open.len() <= OPEN_INTERVALS);
        assert_eq!(b.busy(), 50_000);
    }

    #[test]
    fn durations_carry_their_unit() {
        assert_eq!(duration(850.0), "850ns");
        assert_eq!(duration(12_400.0), "12.40us");
        assert_eq!(duration(3_210_000.0), "3.21ms");
        assert_eq!(duration(1_500_000_000.0), "1.50s");
    }

    #[test]
    fn rows_keep_count_total_min_max() {
        let mut r = Row::default();
        for ns in [5, 1, 9] {
            r.add(ns);
        }
        assert_eq!((r.count, r.total, r.min, r.max), (3, 15, 1, 9));
    }

    #[test]
    fn names_are_printable_and_csv_cells_no_formulas() {
        assert_eq!(printable("vadd"), "vadd");
        assert_eq!(printable("a\x1b[2Jb\nc"), "a\\u{1b}[2Jb\\u{a}c");
        assert_eq!(printable("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(csv_field("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv_field("-2+3,x"), "\"'-2+3,x\"");
        assert_eq!(csv_field("vadd"), "vadd");
    }

    #[test]
    fn shares_are_of_each_api_s_own_time() {
        // Issue 36, finding 17: a SYCL wait holds the OpenCL wait it makes; one share over both
        // APIs gave each 34.5% of time that was spent once.
        let mut rows = BTreeMap::new();
        for (name, ns) in [
            ("urEventWait [SYCL]", 345),
            ("urEnqueueKernelLaunch [SYCL]", 655),
            ("clWaitForEvents [OpenCL]", 345),
            ("clEnqueueNDRangeKernel [OpenCL]", 155),
        ] {
            let mut r = Row::default();
            r.add(ns);
            rows.insert(name.to_string(), r);
        }
        let mut out = String::new();
        section(&mut out, "API calls", &rows);
        let share = |name: &str| -> f64 {
            let line = out.lines().find(|l| l.contains(name)).unwrap();
            line.split_whitespace()
                .last()
                .unwrap()
                .trim_end_matches('%')
                .parse()
                .unwrap()
        };
        assert_eq!(share("urEventWait"), 34.5);
        assert_eq!(share("clWaitForEvents"), 69.0);
        assert_eq!(share("urEnqueueKernelLaunch") + share("urEventWait"), 100.0);
    }
}
