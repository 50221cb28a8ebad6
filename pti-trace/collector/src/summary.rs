//! The summary table, printed on stderr at exit: per API function and per kind of device work
//! (each kernel, each copy direction, fills, barriers) the count, total, average, minimum and
//! maximum time and the share of its section's total; then each device's busy time, and what was
//! lost (dropped or pending records, critical events), loudly.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::collect::Collected;
use crate::timeline::{api_name, category, op_name};

/// Durations of one row.
#[derive(Default)]
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

fn section(out: &mut String, title: &str, rows: &BTreeMap<String, Row>) {
    let all: u64 = rows.values().map(|r| r.total).sum();
    let _ = writeln!(
        out,
        "{title:<48} {:>8} {:>12} {:>11} {:>11} {:>11} {:>6}",
        "count", "total ms", "avg us", "min us", "max us", "share"
    );
    let mut sorted: Vec<(&String, &Row)> = rows.iter().collect();
    sorted.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(b.0)));
    for (name, r) in sorted {
        let _ = writeln!(
            out,
            "  {name:<46} {:>8} {:>12.3} {:>11.3} {:>11.3} {:>11.3} {:>5.1}%",
            r.count,
            r.total as f64 / 1e6,
            r.total as f64 / r.count as f64 / 1e3,
            r.min as f64 / 1e3,
            r.max as f64 / 1e3,
            if all == 0 {
                0.0
            } else {
                100.0 * r.total as f64 / all as f64
            }
        );
    }
}

/// Time covered by the union of `spans`.
fn busy(mut spans: Vec<(u64, u64)>) -> u64 {
    spans.sort_unstable();
    let (mut total, mut end) = (0u64, 0u64);
    for (s, e) in spans {
        if s >= end {
            total += e.saturating_sub(s);
            end = e;
        } else if e > end {
            total += e - end;
            end = e;
        }
    }
    total
}

/// What libpti could not deliver, for the summary's last lines.
pub(crate) struct Losses {
    pub(crate) dropped: Vec<(String, u64)>,
    pub(crate) pending: u64,
    /// Critical events libpti counted (the collector receives those raised after it subscribed).
    pub(crate) criticals: u64,
}

/// The summary of `c`, for process `process`.
pub(crate) fn render(c: &Collected, process: &str, losses: &Losses) -> String {
    let mut out = String::new();
    let pid = std::process::id();
    let _ = writeln!(
        out,
        "pti-trace: summary of process {pid} ({process}): {} API calls, {} device operations",
        c.apis.len(),
        c.device.len()
    );
    let mut apis: BTreeMap<String, Row> = BTreeMap::new();
    for call in &c.apis {
        let name = format!("{} [{}]", api_name(call), category(call.group));
        apis.entry(name)
            .or_default()
            .add(call.end.saturating_sub(call.start));
    }
    if !apis.is_empty() {
        section(&mut out, "API calls", &apis);
    }
    let mut device: BTreeMap<String, Row> = BTreeMap::new();
    for op in &c.device {
        device
            .entry(op_name(op))
            .or_default()
            .add(op.end.saturating_sub(op.start));
    }
    if !device.is_empty() {
        section(
            &mut out,
            "Device work (kernels, copies, fills, barriers)",
            &device,
        );
        let mut devices: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
        for op in &c.device {
            devices
                .entry(op.device)
                .or_default()
                .push((op.start, op.end));
        }
        for (dev, spans) in devices {
            let first = spans.iter().map(|s| s.0).min().unwrap_or(0);
            let last = spans.iter().map(|s| s.1).max().unwrap_or(0);
            let span = last.saturating_sub(first);
            let b = busy(spans);
            let _ = writeln!(
                out,
                "device {dev:#x}: busy {:.3} ms of the {:.3} ms from its first command's start to its last one's end ({:.1}%)",
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
    if !c.memory.is_empty() {
        let (allocs, bytes) = c
            .memory
            .iter()
            .filter(|m| m.allocation)
            .fold((0, 0), |(n, b), m| (n + 1, b + m.bytes));
        let releases = c.memory.iter().filter(|m| !m.allocation).count();
        let _ = writeln!(
            out,
            "memory: {allocs} allocations ({bytes} bytes), {releases} releases by the SYCL runtime"
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
    if losses.pending > 0 {
        let _ = writeln!(
            out,
            "*** WARNING: {} device commands had not completed at exit: their records are missing ***",
            losses.pending
        );
    }
    let backwards = c.apis.iter().filter(|a| a.end < a.start).count()
        + c.device.iter().filter(|d| d.end < d.start).count();
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

    #[test]
    fn busy_time_counts_overlaps_once() {
        assert_eq!(busy(vec![(0, 10), (5, 15), (20, 30)]), 25);
        assert_eq!(busy(vec![(0, 10), (2, 3)]), 10);
        assert_eq!(busy(Vec::new()), 0);
    }

    #[test]
    fn rows_keep_count_total_min_max() {
        let mut r = Row::default();
        for ns in [5, 1, 9] {
            r.add(ns);
        }
        assert_eq!((r.count, r.total, r.min, r.max), (3, 15, 1, 9));
    }
}
