//! The C names both faces export, and which face a call to one of them was written for.
//!
//! `libpti.so` exports the proposal's API under its C names; `libpti_view.so.1` exports Intel
//! PTI 1.2's under the same names, fourteen of them with other behaviour or other arguments
//! (`ptiCallbackSubscribe`'s callback takes 7 arguments, `ptiCallbackEnableDomain` takes two
//! phase flags, `ptiViewSetCallbacks` sets Intel's clock, `ptiViewGetApiIdName` and
//! `ptiViewEnableDriverApi` take Intel's Level Zero numbers...). The dynamic linker binds a tool's
//! plain reference to the first library of the process that defines the name. When `libpti.so`
//! is preloaded (pti-trace does), that is `libpti.so` even for a tool built against Intel's
//! headers and linked to `libpti_view.so.1`.
//!
//! So those fourteen names of `libpti.so` are trampolines ([`pass_caller!`], naked functions that
//! add the caller's return address as one more argument) into the dispatchers here, which ask
//! which object the call came from: an object that links `libpti_view.so.1` (its `DT_NEEDED`)
//! was built for Intel's PTI and gets the Intel face (`crate::intel`); any other caller (a tool
//! linked to `libpti.so`, one that looks names up with `dlsym`, libpti itself) gets libpti's own
//! function. The answer is kept per return address: a tool calls from few sites.
//!
//! What this module may touch: the dynamic linker's list of loaded objects (read only), and the
//! functions of both faces it dispatches to.

use core::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;

use crate::pti::pti_result;
use crate::raw::{
    RawApiGroup, RawDomain, RawIntelDomain, RawMemoryType, RawOverheadKind, RawResult, RawViewKind,
};
use crate::version::pti_version;
use crate::view::{pti_fptr_buffer_completed, pti_fptr_buffer_requested, pti_fptr_get_timestamp};
use crate::{callback, intel, pti, version, view};

/// The body of a trampoline: moves the caller's return address into integer argument `$index`
/// (0-based; the function's own arguments come before it) and jumps to `$dispatch`, which
/// returns straight to the caller. Only integer and pointer arguments, at most 5 of them.
macro_rules! pass_caller {
    ($index:tt, $dispatch:path) => {
        $crate::caller::pass_caller!(@arch $index, $dispatch)
    };
    (@arch 0, $d:path) => { $crate::caller::pass_caller!(@asm "rdi", "x0", $d) };
    (@arch 1, $d:path) => { $crate::caller::pass_caller!(@asm "rsi", "x1", $d) };
    (@arch 2, $d:path) => { $crate::caller::pass_caller!(@asm "rdx", "x2", $d) };
    (@arch 3, $d:path) => { $crate::caller::pass_caller!(@asm "rcx", "x3", $d) };
    (@arch 4, $d:path) => { $crate::caller::pass_caller!(@asm "r8", "x4", $d) };
    (@asm $x86:literal, $arm:literal, $d:path) => {{
        // At entry the return address is at the top of the stack (x86-64) or in the link
        // register (AArch64); nothing was pushed, so the jump keeps the caller's frame as it is.
        #[cfg(target_arch = "x86_64")]
        core::arch::naked_asm!(concat!("mov ", $x86, ", [rsp]"), "jmp {d}", d = sym $d);
        #[cfg(target_arch = "aarch64")]
        core::arch::naked_asm!(concat!("mov ", $arm, ", x30"), "b {d}", d = sym $d);
    }};
}
pub(crate) use pass_caller;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("crate::caller's trampolines are written for x86-64 and AArch64 only");

/// Return addresses already classified (true: the caller links `libpti_view.so.1`).
static KNOWN: Mutex<Vec<(usize, bool)>> = Mutex::new(Vec::new());

/// How many return addresses [`KNOWN`] keeps; beyond, callers are classified on every call.
const KNOWN_MAX: usize = 256;

/// Whether the object holding `return_address` was built for Intel's PTI.
pub(crate) fn from_intel_tool(return_address: usize) -> bool {
    let mut known = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, intel)) = known.iter().find(|(a, _)| *a == return_address) {
        return *intel;
    }
    let intel = object_needs(return_address, b"libpti_view.so");
    if known.len() < KNOWN_MAX {
        known.push((return_address, intel));
    }
    intel
}

/// One entry of an ELF dynamic section.
#[repr(C)]
struct Dyn {
    tag: i64,
    value: u64,
}

const DT_NULL: i64 = 0;
const DT_NEEDED: i64 = 1;
const DT_STRTAB: i64 = 5;

/// What [`object_needs`] asks of each loaded object.
struct Search {
    address: usize,
    prefix: &'static [u8],
    found: bool,
}

/// Whether the loaded object that contains `address` names a library starting with `prefix`
/// among its `DT_NEEDED` entries. False when no object contains it.
fn object_needs(address: usize, prefix: &'static [u8]) -> bool {
    let mut search = Search {
        address,
        prefix,
        found: false,
    };
    // SAFETY: the callback matches dl_iterate_phdr's contract and only reads what the dynamic
    // linker hands it; `search` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut search).cast()) };
    search.found
}

/// dl_iterate_phdr's callback: returns 1 (stop) at the object that contains the address.
unsafe extern "C" fn visit(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid info for the call, and `data` is the Search
    // object_needs passed.
    let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
    let base = info.dlpi_addr as usize;
    // SAFETY: dlpi_phdr points to dlpi_phnum program headers of a loaded object.
    let headers = unsafe { core::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) };
    let contains = headers.iter().any(|h| {
        let start = base.wrapping_add(h.p_vaddr as usize);
        h.p_type == libc::PT_LOAD && (start..start + h.p_memsz as usize).contains(&search.address)
    });
    if !contains {
        return 0;
    }
    if let Some(dynamic) = headers.iter().find(|h| h.p_type == libc::PT_DYNAMIC) {
        let at = base.wrapping_add(dynamic.p_vaddr as usize) as *const Dyn;
        // SAFETY: the PT_DYNAMIC segment of a loaded object, mapped and ended by DT_NULL.
        search.found = unsafe { needs(at, base, search.prefix) };
    }
    1
}

/// Whether the dynamic section at `dynamic` (of an object loaded at `base`) has a DT_NEEDED
/// entry starting with `prefix`.
///
/// # Safety
/// `dynamic` must point to a loaded object's dynamic section, ended by DT_NULL.
unsafe fn needs(dynamic: *const Dyn, base: usize, prefix: &[u8]) -> bool {
    let mut strtab = 0usize;
    let mut needed = Vec::new();
    let mut at = dynamic;
    loop {
        // SAFETY: entries up to DT_NULL are part of the section (the caller's contract).
        let entry = unsafe { &*at };
        match entry.tag {
            DT_NULL => break,
            DT_NEEDED => needed.push(entry.value as usize),
            DT_STRTAB => strtab = entry.value as usize,
            _ => {}
        }
        // SAFETY: not past DT_NULL, see above.
        at = unsafe { at.add(1) };
    }
    if strtab == 0 {
        return false;
    }
    // glibc relocates DT_STRTAB in place when it loads an object; an unrelocated value is an
    // offset from the load address.
    if strtab < base {
        strtab += base;
    }
    needed.iter().any(|offset| {
        // SAFETY: DT_NEEDED values are offsets of NUL-terminated names in the string table.
        let name = unsafe { CStr::from_ptr((strtab + offset) as *const c_char) };
        name.to_bytes().starts_with(prefix)
    })
}

// The dispatchers: libpti's function, or Intel's for a caller built for Intel's PTI. Each takes
// the exported function's arguments, then the return address; arguments that differ between
// the faces arrive as machine words (the low 32 bits of a 32-bit argument are its value).

pub(crate) extern "C" fn version_string(caller: usize) -> *const c_char {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiVersionString(),
        false => version::own_ptiVersionString(),
    }
}

pub(crate) extern "C" fn version(caller: usize) -> pti_version {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiVersion(),
        false => version::own_ptiVersion(),
    }
}

pub(crate) extern "C" fn result_type_to_string(value: RawResult, caller: usize) -> *const c_char {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiResultTypeToString(value),
        false => pti::own_ptiResultTypeToString(value),
    }
}

pub(crate) extern "C" fn view_set_callbacks(
    requested: pti_fptr_buffer_requested,
    completed: pti_fptr_buffer_completed,
    caller: usize,
) -> pti_result {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiViewSetCallbacks(requested, completed),
        false => view::own_ptiViewSetCallbacks(requested, completed),
    }
}

pub(crate) extern "C" fn view_enable(kind: RawViewKind, caller: usize) -> pti_result {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiViewEnable(kind),
        false => view::own_ptiViewEnable(kind),
    }
}

pub(crate) extern "C" fn view_get_api_id_name(
    group: RawApiGroup,
    id: u32,
    name: *mut *const c_char,
    caller: usize,
) -> pti_result {
    // SAFETY: the tool's arguments, passed on unchanged: both functions have the caller's
    // contract of `ptiViewGetApiIdName`.
    unsafe {
        match from_intel_tool(caller) {
            true => intel::view::libpti_intel_ptiViewGetApiIdName(group, id, name),
            false => view::own_ptiViewGetApiIdName(group, id, name),
        }
    }
}

pub(crate) extern "C" fn view_enable_driver_api(
    enable: u32,
    group: RawApiGroup,
    id: u32,
    caller: usize,
) -> pti_result {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiViewEnableDriverApi(enable, group, id),
        false => view::own_ptiViewEnableDriverApi(enable, group, id),
    }
}

pub(crate) extern "C" fn view_overhead_kind_to_string(
    kind: RawOverheadKind,
    caller: usize,
) -> *const c_char {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiViewOverheadKindToString(kind),
        false => view::own_ptiViewOverheadKindToString(kind),
    }
}

pub(crate) extern "C" fn view_memory_type_to_string(
    kind: RawMemoryType,
    caller: usize,
) -> *const c_char {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiViewMemoryTypeToString(kind),
        false => view::own_ptiViewMemoryTypeToString(kind),
    }
}

pub(crate) extern "C" fn view_get_timestamp(caller: usize) -> u64 {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiViewGetTimestamp(),
        false => view::own_ptiViewGetTimestamp(),
    }
}

pub(crate) extern "C" fn view_set_timestamp_callback(
    callback: pti_fptr_get_timestamp,
    caller: usize,
) -> pti_result {
    match from_intel_tool(caller) {
        true => intel::view::libpti_intel_ptiViewSetTimestampCallback(callback),
        false => view::own_ptiViewSetTimestampCallback(callback),
    }
}

pub(crate) unsafe extern "C" fn callback_subscribe(
    subscriber: usize,
    callback: usize,
    user_data: *mut c_void,
    caller: usize,
) -> pti_result {
    // SAFETY: the exported function's contract: `callback` is NULL or a function of the face
    // the caller was built for, which is the face chosen; an address and an Option of a
    // function pointer have the same size, NULL being None.
    unsafe {
        match from_intel_tool(caller) {
            true => intel::callback::libpti_intel_ptiCallbackSubscribe(
                subscriber as *mut _,
                core::mem::transmute::<usize, intel::callback::pti_intel_callback_function>(
                    callback,
                ),
                user_data,
            ),
            false => callback::own_ptiCallbackSubscribe(
                subscriber as *mut _,
                core::mem::transmute::<usize, callback::pti_callback_function>(callback),
                user_data,
            ),
        }
    }
}

pub(crate) extern "C" fn callback_unsubscribe(subscriber: usize, caller: usize) -> pti_result {
    match from_intel_tool(caller) {
        true => intel::callback::libpti_intel_ptiCallbackUnsubscribe(subscriber as *mut _),
        false => callback::own_ptiCallbackUnsubscribe(subscriber as *mut _),
    }
}

/// libpti's `(enable, subscriber, domain)` or Intel's `(subscriber, domain, enter_cb, exit_cb)`.
pub(crate) extern "C" fn callback_enable_domain(
    a0: usize,
    a1: usize,
    a2: usize,
    a3: usize,
    caller: usize,
) -> pti_result {
    match from_intel_tool(caller) {
        true => intel::callback::libpti_intel_ptiCallbackEnableDomain(
            a0 as *mut _,
            RawIntelDomain(a1 as u32),
            a2 as u32,
            a3 as u32,
        ),
        false => {
            callback::own_ptiCallbackEnableDomain(a0 as u32, a1 as *mut _, RawDomain(a2 as u32))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two machine words, returned in two registers by the C ABI of both architectures.
    #[repr(C)]
    struct Pair {
        argument: usize,
        caller: usize,
    }

    /// What a trampoline hands its dispatcher: the argument, then the caller's return address.
    extern "C" fn echo(argument: usize, caller: usize) -> Pair {
        Pair { argument, caller }
    }

    #[unsafe(naked)]
    extern "C" fn trampoline(_argument: usize) -> Pair {
        pass_caller!(1, echo)
    }

    /// A function of this test binary, its address a code address of an object that does not
    /// link `libpti_view.so.1` (and does link libc).
    fn here() -> usize {
        here as *const () as usize
    }

    #[test]
    fn a_trampoline_passes_the_arguments_and_the_callers_return_address() {
        let Pair { argument, caller } = std::hint::black_box(trampoline)(7);
        assert_eq!(argument, 7);
        // The return address is in this test's own code: an address of the test binary.
        assert!(object_needs(caller, b"libc.so"), "{caller:#x}");
        assert!(!from_intel_tool(caller));
    }

    #[test]
    fn an_object_is_asked_for_its_own_needed_libraries() {
        assert!(object_needs(here(), b"libc.so"));
        assert!(!object_needs(here(), b"libpti_view.so"));
        // An address of no loaded object is of no object that needs anything.
        assert!(!object_needs(8, b"libc.so"));
    }

    #[test]
    fn the_answers_are_kept_for_at_most_known_max_callers() {
        for offset in 0..(KNOWN_MAX + 44) {
            assert!(!from_intel_tool(here() + offset));
        }
        let known = KNOWN.lock().unwrap();
        assert!(known.len() <= KNOWN_MAX, "{}", known.len());
        assert!(known.iter().all(|(_, intel)| !intel));
    }
}
