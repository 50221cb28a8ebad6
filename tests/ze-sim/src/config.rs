//! The simulated driver's settings, read once from the environment, and its one source of
//! randomness (seeded, so that a failing run can be replayed with the same `ZE_SIM_SEED`).
//!
//! | variable | default | what it sets |
//! | --- | --- | --- |
//! | `ZE_SIM_DEVICE_TYPE` | `cpu` | `gpu` presents the root device as a GPU |
//! | `ZE_SIM_LATENCY_NS` | 20000 | time from a submission to the earliest start of its first command |
//! | `ZE_SIM_JITTER_NS` | 0 | random extra delay before each command, up to this |
//! | `ZE_SIM_SEED` | 1 | seed of the jitter and of out-of-order execution |
//! | `ZE_SIM_TILES` | 1 | sub-devices (tiles) of the root device |
//! | `ZE_FLAT_DEVICE_HIERARCHY` | `COMPOSITE` | `FLAT`, `COMPOSITE` or `COMBINED`, as Intel's driver reads it |
//! | `ZE_SIM_TS_LAG_NS` | 2000 | how long after a counter-based event completes its timestamps are written |
//! | `ZE_SIM_TS_TIMEOUT_MS` | 5000 | how long `zeEventQueryKernelTimestamp` polls for them before `NOT_READY` |
//! | `ZE_SIM_IMPLICIT_CB` | 1 | `0` turns off the implicit counter-based mode (as on platforms with DC flush) |
//! | `ZE_SIM_STUCK_MS` | 10000 | a command waiting this long for an event is reported on stderr |
//! | `ZE_SIM_MINIMAL` | | entry points a deliberately minimal driver lacks (see [`Minimal`]) |
//! | `ZE_SIM_TRUTH_EVENTS` | 0 | `1` also logs the commands that only signal or wait (`SIGNAL`, `WAIT`) in the ground truth |
//!
//! The file names of `ZE_SIM_TRUTH` and `ZE_SIM_REPORT` are read where they are written.

use std::sync::{Mutex, OnceLock};

/// How the device's tiles are exposed (`ZE_FLAT_DEVICE_HIERARCHY`, compute-runtime's
/// `setDeviceHierarchyMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hierarchy {
    /// `zeDeviceGet` lists the tiles; they have no sub-devices and no root device.
    Flat,
    /// `zeDeviceGet` lists the root device; its tiles are its sub-devices.
    Composite,
    /// `zeDeviceGet` lists the tiles; `zeDeviceGetRootDevice` gives the root device, which
    /// `zeDeviceGet` does not list.
    Combined,
}

/// The entry points `ZE_SIM_MINIMAL` (a comma-separated list) says the driver lacks: each answers
/// `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE` and leaves its out-parameters untouched.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Minimal {
    /// `query-status`: `zeEventQueryStatus`.
    pub(crate) query_status: bool,
    /// `global-timestamps`: `zeDeviceGetGlobalTimestamps`.
    pub(crate) global_timestamps: bool,
    /// `kernel-timestamps`: `zeEventQueryKernelTimestamp` (pools and events asking for
    /// timestamps are still created, the flag ignored).
    pub(crate) kernel_timestamps: bool,
    /// `counter-based-create2`: Intel's `zexCounterBasedEventCreate2` is not served (an older
    /// driver: UR v2 then makes its counter-based events from pools with the counter-based
    /// descriptor).
    pub(crate) counter_based_create2: bool,
}

impl Minimal {
    /// Parses `ZE_SIM_MINIMAL`'s value; also returns the words it does not know.
    pub(crate) fn parse(list: &str) -> (Self, Vec<&str>) {
        let mut m = Minimal::default();
        let mut unknown = Vec::new();
        for word in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word {
                "query-status" => m.query_status = true,
                "global-timestamps" => m.global_timestamps = true,
                "kernel-timestamps" => m.kernel_timestamps = true,
                "counter-based-create2" => m.counter_based_create2 = true,
                other => unknown.push(other),
            }
        }
        (m, unknown)
    }
}

/// Every setting, read once.
#[derive(Debug)]
pub(crate) struct Config {
    pub(crate) gpu: bool,
    pub(crate) latency_ns: u64,
    pub(crate) jitter_ns: u64,
    pub(crate) seed: u64,
    pub(crate) tiles: u32,
    pub(crate) hierarchy: Hierarchy,
    pub(crate) ts_lag_ns: u64,
    pub(crate) ts_timeout_ns: u64,
    pub(crate) implicit_cb: bool,
    pub(crate) stuck_ns: u64,
    pub(crate) minimal: Minimal,
    pub(crate) truth_events: bool,
}

fn number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v.trim().parse().unwrap_or_else(|_| {
            eprintln!("ze-sim: {name}={v:?} is not a number; {default} is used");
            default
        }),
        Err(_) => default,
    }
}

fn read() -> Config {
    let hierarchy = match std::env::var("ZE_FLAT_DEVICE_HIERARCHY").as_deref() {
        Ok("FLAT") => Hierarchy::Flat,
        Ok("COMBINED") => Hierarchy::Combined,
        Ok("COMPOSITE") | Err(_) => Hierarchy::Composite,
        Ok(other) => {
            eprintln!("ze-sim: ZE_FLAT_DEVICE_HIERARCHY={other:?} unknown; COMPOSITE is used");
            Hierarchy::Composite
        }
    };
    let list = std::env::var("ZE_SIM_MINIMAL").unwrap_or_default();
    let (minimal, unknown) = Minimal::parse(&list);
    for word in unknown {
        eprintln!("ze-sim: ZE_SIM_MINIMAL: unknown feature {word:?}, ignored");
    }
    Config {
        gpu: std::env::var("ZE_SIM_DEVICE_TYPE").as_deref() == Ok("gpu"),
        latency_ns: number("ZE_SIM_LATENCY_NS", 20_000),
        jitter_ns: number("ZE_SIM_JITTER_NS", 0),
        seed: number("ZE_SIM_SEED", 1),
        tiles: number("ZE_SIM_TILES", 1).clamp(1, 8) as u32,
        hierarchy,
        ts_lag_ns: number("ZE_SIM_TS_LAG_NS", 2_000),
        ts_timeout_ns: number("ZE_SIM_TS_TIMEOUT_MS", 5_000).saturating_mul(1_000_000),
        implicit_cb: number("ZE_SIM_IMPLICIT_CB", 1) != 0,
        stuck_ns: number("ZE_SIM_STUCK_MS", 10_000).saturating_mul(1_000_000),
        minimal,
        truth_events: number("ZE_SIM_TRUTH_EVENTS", 0) != 0,
    }
}

/// The settings.
pub(crate) fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(read)
}

/// The minimal configuration.
pub(crate) fn minimal() -> &'static Minimal {
    &config().minimal
}

/// A small deterministic generator (SplitMix64), seeded by `ZE_SIM_SEED`.
static RNG: Mutex<Option<u64>> = Mutex::new(None);

/// A random number below `bound` (0 when `bound` is 0).
pub(crate) fn random_below(bound: u64) -> u64 {
    if bound == 0 {
        return 0;
    }
    let mut state = RNG.lock().unwrap();
    let s = state.get_or_insert(config().seed);
    *s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % bound
}

/// The random delay before one command: up to `ZE_SIM_JITTER_NS`.
pub(crate) fn jitter() -> u64 {
    random_below(config().jitter_ns.saturating_add(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_features_are_parsed_and_unknown_words_returned() {
        let (m, unknown) = Minimal::parse("query-status, kernel-timestamps,,bogus");
        assert!(m.query_status && m.kernel_timestamps && !m.global_timestamps);
        assert_eq!(unknown, ["bogus"]);
        assert_eq!(Minimal::parse("").0, Minimal::default());
    }

    #[test]
    fn random_numbers_stay_below_their_bound() {
        for bound in [1, 2, 7, 1000] {
            for _ in 0..100 {
                assert!(random_below(bound) < bound);
            }
        }
        assert_eq!(random_below(0), 0);
    }
}
