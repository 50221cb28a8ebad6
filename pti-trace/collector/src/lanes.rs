//! Lanes: where a slice goes when slices of one queue (or of overlapped tasks) overlap, since a
//! Perfetto track's slices must nest. A slice goes on the first lane where it overlaps nothing,
//! whatever order the slices arrive in.
//!
//! Records do not arrive in time order (a queue's records come as their commands are found
//! complete, across threads and flushes): placing by "the lane is free after its latest end"
//! pushed every record that arrived after a later one onto an extra lane (issue 36, finding 15:
//! PyOpenCL 7,654 of 11,440 slices moved, 17 truly overlapping). Each lane keeps its most recent
//! slices ([`REMEMBERED`], so memory stays bounded over a long run) and the end of the ones it
//! forgot: a slice that starts before that end is not placed on that lane (it cannot be checked),
//! which moves a slice only when it arrives very late.
//!
//! May touch: nothing but its own state.

use std::collections::VecDeque;

/// Slices each lane remembers.
const REMEMBERED: usize = 256;

/// One lane: its recent slices (in start order; they do not overlap, so also in end order) and
/// the latest end of the slices it forgot.
#[derive(Default)]
struct Lane {
    recent: VecDeque<(u64, u64)>,
    forgotten_until: u64,
}

impl Lane {
    /// Whether `[start, end)` overlaps no slice of the lane (a zero-length slice at another's
    /// start or end overlaps it not).
    fn fits(&self, start: u64, end: u64) -> bool {
        if start < self.forgotten_until {
            return false;
        }
        // The first remembered slice that ends after `start`: it must start at or after `end`.
        let i = self.recent.partition_point(|&(_, e)| e <= start);
        self.recent
            .get(i)
            .is_none_or(|&(s, _)| s >= end && (s > start || end > start))
    }

    fn place(&mut self, start: u64, end: u64) {
        let i = self.recent.partition_point(|&(s, _)| s < start);
        self.recent.insert(i, (start, end));
        if self.recent.len() > REMEMBERED
            && let Some((_, end)) = self.recent.pop_front()
        {
            self.forgotten_until = self.forgotten_until.max(end);
        }
    }
}

/// The lanes of one queue (or of the overlapped tasks of a process).
#[derive(Default)]
pub(crate) struct Lanes {
    lanes: Vec<Lane>,
}

impl Lanes {
    /// The first lane where `[start, end)` overlaps nothing (a new one if none), now holding it.
    pub(crate) fn place(&mut self, start: u64, end: u64) -> usize {
        let end = end.max(start);
        let lane = match self.lanes.iter().position(|l| l.fits(start, end)) {
            Some(l) => l,
            None => {
                self.lanes.push(Lane::default());
                self.lanes.len() - 1
            }
        };
        self.lanes[lane].place(start, end);
        lane
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_that_arrives_late_goes_where_it_overlaps_nothing() {
        let mut l = Lanes::default();
        assert_eq!(l.place(10, 20), 0);
        assert_eq!(l.place(30, 40), 0);
        // Earlier than the last one placed, overlapping nothing: the same lane.
        assert_eq!(l.place(20, 30), 0);
        assert_eq!(l.place(0, 5), 0);
        // Truly overlapping: the next lane.
        assert_eq!(l.place(15, 35), 1);
        assert_eq!(l.place(12, 18), 2);
        assert_eq!(l.place(36, 50), 1);
    }

    #[test]
    fn zero_length_slices_and_forgotten_ones() {
        let mut l = Lanes::default();
        assert_eq!(l.place(10, 20), 0);
        assert_eq!(l.place(20, 20), 0);
        assert_eq!(l.place(15, 15), 1);
        let mut many = Lanes::default();
        for i in 0..1000u64 {
            assert_eq!(many.place(100 + i * 10, 105 + i * 10), 0);
        }
        // Before everything the lane still remembers: not checkable there, so lane 1.
        assert_eq!(many.place(0, 1), 1);
        assert_eq!(many.place(10_200, 10_205), 0);
    }
}
