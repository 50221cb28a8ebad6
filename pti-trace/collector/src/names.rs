//! Names as a person reads them, kept per process (in the collector's store, so a forked child
//! starts its own):
//! - kernels: C++ names demangled (SYCL kernels are named by their type, `_ZTSZ4mainEUlvE_`:
//!   shown as `main::{lambda()#1}`), unless `PTI_TRACE_RAW_NAMES=1` (`pti-trace --raw-names`);
//!   each distinct name is demangled once;
//! - devices and queues: numbered in the order they first appear ("device 0", "queue 3"), with
//!   the device's PCI address when a record gives one, never a bare handle.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Whether kernel names are kept as the runtime gave them.
fn raw() -> bool {
    static RAW: OnceLock<bool> = OnceLock::new();
    *RAW.get_or_init(|| std::env::var_os("PTI_TRACE_RAW_NAMES").is_some_and(|v| v == "1"))
}

/// `name` demangled, when it is a mangled C++ name that demangles.
fn demangled(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    let text = symbol
        .demangle(&cpp_demangle::DemangleOptions::default())
        .ok()?;
    // A SYCL kernel's name is its type's typeinfo name: the type is what names it.
    Some(
        text.strip_prefix("typeinfo name for ")
            .map_or(text.clone(), str::to_string),
    )
}

/// The names of one process.
#[derive(Default)]
pub(crate) struct Names {
    kernels: HashMap<String, String>,
    /// Device handle → (number, PCI address).
    devices: HashMap<u64, (usize, String)>,
    /// Queue handle → number.
    queues: HashMap<u64, usize>,
}

impl Names {
    /// A kernel's name for the timeline and the summary.
    pub(crate) fn kernel(&mut self, name: String) -> String {
        if raw() || !name.starts_with("_Z") {
            return name;
        }
        if let Some(shown) = self.kernels.get(&name) {
            return shown.clone();
        }
        let shown = demangled(&name).unwrap_or_else(|| name.clone());
        self.kernels.insert(name, shown.clone());
        shown
    }

    /// Notes a device (and its PCI address, if `pci` is not empty) as it appears. The null
    /// handle (a record that names no device: a barrier's) gets no number: numbers have no gaps.
    pub(crate) fn see_device(&mut self, handle: u64, pci: &str) {
        if handle == 0 {
            return;
        }
        let next = self.devices.len();
        let entry = self.devices.entry(handle).or_insert((next, String::new()));
        if entry.1.is_empty() && !pci.is_empty() {
            entry.1 = pci.to_string();
        }
    }

    /// "device N" (with "(PCI address)" when known); "device ?" for the null handle.
    pub(crate) fn device(&self, handle: u64) -> String {
        match self.devices.get(&handle) {
            Some((n, pci)) if !pci.is_empty() => format!("device {n} (PCI {pci})"),
            Some((n, _)) => format!("device {n}"),
            None => "device ?".to_string(),
        }
    }

    /// The queue's number, assigned at its first appearance.
    pub(crate) fn queue(&mut self, handle: u64) -> usize {
        let next = self.queues.len();
        *self.queues.entry(handle).or_insert(next)
    }

    /// "queue N" for a queue seen before ("queue ?" otherwise).
    pub(crate) fn queue_label(&self, handle: u64) -> String {
        self.queues
            .get(&handle)
            .map_or_else(|| "queue ?".to_string(), |n| format!("queue {n}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sycl_and_cpp_kernel_names_are_demangled() {
        assert_eq!(
            demangled("_ZTSZ4mainEUlvE_").as_deref(),
            Some("main::{lambda()#1}")
        );
        assert_eq!(
            demangled("_Z3addPfS_").as_deref(),
            Some("add(float*, float*)")
        );
        assert_eq!(demangled("vadd"), None);
        assert_eq!(Names::default().kernel("vadd".into()), "vadd");
    }

    #[test]
    fn devices_and_queues_are_numbered_as_they_appear() {
        let mut n = Names::default();
        n.see_device(0x50, "");
        n.see_device(0x40, "0000:3b:00.0");
        n.see_device(0x50, "0000:1a:00.0");
        assert_eq!(n.device(0x50), "device 0 (PCI 0000:1a:00.0)");
        assert_eq!(n.device(0x40), "device 1 (PCI 0000:3b:00.0)");
        assert_eq!(n.device(0), "device ?");
        assert_eq!((n.queue(0x9), n.queue(0x7), n.queue(0x9)), (0, 1, 0));
    }

    #[test]
    fn a_record_without_a_device_takes_no_number() {
        // Issue 36, finding 18: "device 0", "device 2" in a dpctl trace.
        let mut n = Names::default();
        n.see_device(0x50, "");
        n.see_device(0, "");
        n.see_device(0x40, "");
        assert_eq!(n.device(0x40), "device 1");
        assert_eq!(n.device(0), "device ?");
    }
}
