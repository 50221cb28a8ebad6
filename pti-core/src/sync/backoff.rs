//! Waiting for another thread, politely: spin briefly, then yield, then sleep in short steps.
//! Used by the writers (the writer lock, unsubscribe's wait for running callbacks), never on the
//! call path.

use std::time::Duration;

/// The state of one wait.
#[derive(Default)]
pub(crate) struct Backoff {
    rounds: u32,
}

impl Backoff {
    /// Waits a little longer than the previous time, up to short sleeps.
    pub(crate) fn snooze(&mut self) {
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds < 64 {
            core::hint::spin_loop();
        } else if self.rounds < 128 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(20));
        }
    }
}
