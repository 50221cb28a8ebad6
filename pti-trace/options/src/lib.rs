//! The values pti-trace's command line and its collector's environment share, parsed and checked
//! in one place, so that the two never disagree about what a value means (issue 36: the
//! collector took `PTI_TRACE_TOGGLE_SIGNAL=11`, which pti-trace refuses, and `-b ''` meant "no
//! backend" to one and "every backend" to the other).
//!
//! - [`toggle_signal`]: the signal that pauses and resumes collection, by name or number; only
//!   signals nobody else needs (not the ones the kernel sends for a fault, which would loop for
//!   ever in a crashing program; not the ones pti-trace passes on untouched; not KILL or STOP).
//! - [`backends`], [`views`]: comma lists of known items; absent means all of them; a list that
//!   names nothing (`''`, `,,,`) is an error, not a silent choice.
//! - [`size`]: a size in bytes, with an optional K, M or G (powers of 1024), for `--max-size`.
//! - [`format`]: the timeline's format, `perfetto` or `json`.
//! - [`milliseconds`]: a number of milliseconds (`--flush-interval`, and the collector's
//!   `PTI_TRACE_FLUSH_MS`, `PTI_TRACE_DELAY_MS`, `PTI_TRACE_DURATION_MS`).
//!
//! What this crate may touch: nothing but its arguments.

/// The backends pti-trace can trace.
pub const BACKENDS: [&str; 3] = ["opencl", "level-zero", "sycl"];

/// What pti-trace can record.
pub const VIEWS: [&str; 4] = ["api", "device", "memory", "annotations"];

/// Signals that may toggle, by name (with or without `SIG`), besides real-time ones.
const SIGNALS: [(&str, i32); 7] = [
    ("URG", libc::SIGURG),
    ("USR1", libc::SIGUSR1),
    ("USR2", libc::SIGUSR2),
    ("HUP", libc::SIGHUP),
    ("ALRM", libc::SIGALRM),
    ("WINCH", libc::SIGWINCH),
    ("PROF", libc::SIGPROF),
];

/// The signal number `text` names (`USR2`, `SIGUSR2`, `12`, `RTMIN+3`, `35`): one of the
/// [`SIGNALS`] or a real-time signal. Everything else is refused: the fault signals (SEGV, BUS,
/// FPE, ILL, TRAP, SYS, ABRT), which a handler that returns would receive again for ever;
/// INT, QUIT, TERM, CHLD and the others pti-trace passes to the program untouched; KILL and STOP,
/// which cannot be handled.
pub fn toggle_signal(text: &str) -> Result<i32, String> {
    let bare = text.trim();
    let bare = bare.strip_prefix("SIG").unwrap_or(bare);
    if let Some((_, n)) = SIGNALS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(bare))
    {
        return Ok(*n);
    }
    if let Some(offset) = bare
        .strip_prefix("RTMIN+")
        .and_then(|n| n.parse::<i32>().ok())
        && (0..=libc::SIGRTMAX() - libc::SIGRTMIN()).contains(&offset)
    {
        return Ok(libc::SIGRTMIN() + offset);
    }
    match bare.parse::<i32>() {
        Ok(n)
            if SIGNALS.iter().any(|(_, s)| *s == n)
                || (libc::SIGRTMIN()..=libc::SIGRTMAX()).contains(&n) =>
        {
            Ok(n)
        }
        _ => Err(format!(
            "{text:?} is not one of WINCH, URG, USR1, USR2, HUP, ALRM, PROF, RTMIN+N or a \
             real-time signal number"
        )),
    }
}

/// The backends a `-b` list (`PTI_TRACE_BACKENDS`) names; all of them when absent.
pub fn backends(value: Option<&str>) -> Result<Vec<&'static str>, String> {
    list(value, &BACKENDS, "backend")
}

/// The views a `-v` list (`PTI_TRACE_VIEWS`) names; all of them when absent.
pub fn views(value: Option<&str>) -> Result<Vec<&'static str>, String> {
    list(value, &VIEWS, "view")
}

fn list(
    value: Option<&str>,
    known: &[&'static str],
    what: &str,
) -> Result<Vec<&'static str>, String> {
    let Some(value) = value else {
        return Ok(known.to_vec());
    };
    let items: Vec<&'static str> = value
        .split(',')
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(|v| {
            known
                .iter()
                .find(|k| **k == v)
                .copied()
                .ok_or_else(|| format!("unknown {what} {v:?} (known: {})", known.join(", ")))
        })
        .collect::<Result<_, _>>()?;
    if items.is_empty() {
        return Err(format!(
            "{value:?} names no {what} (known: {}; leave the option out for all of them)",
            known.join(", ")
        ));
    }
    Ok(items)
}

/// A size in bytes: digits with an optional `K`, `M` or `G` (powers of 1024; `B` and `iB`
/// suffixes accepted: `500M`, `2GiB`, `4096`). Zero and overflowing sizes are refused.
pub fn size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&t[..i], &t[i..]),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("{text:?} is not a size (digits, then K, M or G)")),
    };
    match digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
    {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("{text:?} is not a size (digits, then K, M or G)")),
    }
}

/// The timeline formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Native Perfetto protobuf, streamed as records arrive (`perfetto`).
    Perfetto,
    /// Chrome trace-event JSON, written at exit (`json`).
    Json,
}

/// The timeline's format `text` names: `perfetto` or `json`.
pub fn format(text: &str) -> Result<Format, String> {
    match text.trim() {
        "perfetto" => Ok(Format::Perfetto),
        "json" => Ok(Format::Json),
        _ => Err(format!("{text:?} is not perfetto or json")),
    }
}

/// A number of milliseconds (digits only).
pub fn milliseconds(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<u64>()
        .map_err(|_| format!("{text:?} is not a number of milliseconds"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toggle_signals_are_the_harmless_ones() {
        assert_eq!(toggle_signal("WINCH"), Ok(libc::SIGWINCH));
        assert_eq!(toggle_signal("SIGusr2"), Ok(libc::SIGUSR2));
        assert_eq!(toggle_signal("28"), Ok(libc::SIGWINCH));
        assert_eq!(toggle_signal("RTMIN+1"), Ok(libc::SIGRTMIN() + 1));
        for bad in [
            "11", "SEGV", "7", "8", "4", "5", "6", "31", "2", "15", "9", "19", "0", "65", "x", "",
        ] {
            assert!(toggle_signal(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn formats_and_milliseconds() {
        assert_eq!(format("json"), Ok(Format::Json));
        assert!(format("JSON").is_err() && format("proto").is_err());
        assert_eq!(milliseconds("250"), Ok(250));
        assert!(milliseconds("1.5").is_err() && milliseconds("-1").is_err());
    }

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("500M"), Ok(500 << 20));
        assert_eq!(size("2GiB"), Ok(2 << 30));
        assert_eq!(size("1k"), Ok(1024));
        for bad in ["", "0", "M", "12T", "-1", "99999999999G"] {
            assert!(size(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn lists_name_something_or_are_left_out() {
        assert_eq!(backends(None).unwrap(), BACKENDS);
        assert_eq!(backends(Some("sycl, opencl")).unwrap(), ["sycl", "opencl"]);
        assert!(backends(Some("")).is_err());
        assert!(views(Some(",,,")).is_err());
        assert!(views(Some("api,gpu")).is_err());
    }
}
