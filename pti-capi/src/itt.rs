//! libpti as an ITT collector: the interface that the static part of Intel's ITT API (linked
//! into every ITT client: the PyPI `ittapi` package, oneCCL, PyTorch) loads when
//! `INTEL_LIBITTNOTIFY64` names a library. No header: the static part finds
//! [`__itt_api_init`] with `dlsym` and hands it its table of function pointers, which this
//! module fills with its own functions (the names it implements) or the static part's null
//! functions (the rest). Each static part in the process (one per library that links it) calls
//! it once with its own table.
//!
//! What the functions do is `pti_core::annotation`'s: this module only reads ITT's C structures
//! (domains and string handles, whether the static part or this module made them, are read by
//! their published layout, never owned) and catches panics (`Entry::Itt`). The layouts are those
//! of ittnotify 3.x (`ittnotify.h`, `ittnotify_config.h`), unchanged from 2019 to 3.28 in the
//! fields read here.
//!
//! Bound: domain and string-handle creation, tasks (nested and overlapped), markers, metadata
//! (unsigned numbers, for oneCCL's sizes), frames, legacy events, pause and resume (libpti's
//! pause, `ptiViewPause`). Bound to functions that do nothing: detach, thread naming, ID
//! creation and destruction. Not bound (ITT's null functions): counters, histograms, regions,
//! sync objects and the rest.

use core::ffi::{CStr, c_char, c_int, c_void};

use pti_core::annotation;
use pti_core::boundary::{self, Entry};
use pti_core::session;

/// `__itt_domain`.
#[repr(C)]
pub struct IttDomain {
    /// Non-zero: calls on the domain reach the collector.
    flags: c_int,
    name_a: *const c_char,
    name_w: *const c_void,
    extra1: c_int,
    extra2: *mut c_void,
    next: *mut IttDomain,
}

/// `__itt_string_handle`.
#[repr(C)]
pub struct IttStringHandle {
    str_a: *const c_char,
    str_w: *const c_void,
    extra1: c_int,
    extra2: *mut c_void,
    next: *mut IttStringHandle,
}

/// `__itt_id`, passed by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct IttId {
    d1: u64,
    d2: u64,
    d3: u64,
}

impl IttId {
    fn whole(self) -> annotation::TaskId {
        [self.d1, self.d2, self.d3]
    }
}

/// `__itt_api_info`: one entry of the static part's table.
#[repr(C)]
pub struct IttApiInfo {
    name: *const c_char,
    func_ptr: *mut *mut c_void,
    init_func: *mut c_void,
    null_func: *mut c_void,
    group: c_int,
}

/// The start of `__itt_global`, up to the table (the fields after it differ between versions).
#[repr(C)]
pub struct IttGlobal {
    magic: [u8; 8],
    version_major: u64,
    version_minor: u64,
    version_build: u64,
    api_initialized: i64,
    mutex_initialized: i64,
    atomic_counter: i64,
    mutex: libc::pthread_mutex_t,
    lib: *mut c_void,
    error_handler: *mut c_void,
    dll_path_ptr: *mut *const c_char,
    api_list_ptr: *mut IttApiInfo,
}

const _: () = {
    assert!(core::mem::size_of::<IttDomain>() == 48);
    assert!(core::mem::size_of::<IttStringHandle>() == 40);
    assert!(core::mem::size_of::<IttApiInfo>() == 40);
    assert!(core::mem::offset_of!(IttGlobal, api_list_ptr) == 120);
};

/// What the static part's global starts with.
const MAGIC: [u8; 8] = [0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30];

/// Called by ITT's static part once it loaded libpti as its collector: fills its table. A NULL
/// or unrecognised `global` (not ittnotify 3.x) is left alone.
///
/// # Safety
/// `global` must be NULL or the static part's `__itt_global`, whose table ends with a NULL name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __itt_api_init(global: *mut IttGlobal, groups: c_int) {
    let _ = boundary::catch(Entry::Itt, || {
        // SAFETY: the caller's contract; the magic is checked before anything else is read.
        unsafe {
            if global.is_null() || (*global).magic != MAGIC || (*global).version_major != 3 {
                return;
            }
            if hand_to_first_copy(global, groups) {
                return;
            }
            let mut entry = (*global).api_list_ptr;
            while !entry.is_null() && !(*entry).name.is_null() {
                let name = CStr::from_ptr((*entry).name);
                let ours = implementation(name.to_bytes()).unwrap_or((*entry).null_func);
                if !(*entry).func_ptr.is_null() {
                    *(*entry).func_ptr = ours;
                }
                entry = entry.add(1);
            }
        }
    });
}

/// When the process loaded another libpti first (the one the tools use), lets that copy fill the
/// table: the annotations must reach its views. Returns whether it did.
///
/// # Safety
/// `global` is the static part's `__itt_global`, checked.
unsafe fn hand_to_first_copy(global: *mut IttGlobal, groups: c_int) -> bool {
    type Init = unsafe extern "C" fn(*mut IttGlobal, c_int);
    let own = __itt_api_init as Init;
    let Some(first) = annotation::first_libpti_elsewhere(own as *const c_void) else {
        return false;
    };
    let Ok(path) = std::ffi::CString::new(first) else {
        return false;
    };
    // SAFETY: a handle to an object already mapped (RTLD_NOLOAD loads nothing), kept open (the
    // table will point into it), and its `__itt_api_init`, which has this signature.
    unsafe {
        let handle = libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if handle.is_null() {
            return false;
        }
        let theirs = libc::dlsym(handle, c"__itt_api_init".as_ptr());
        if theirs.is_null() || theirs == own as *mut c_void {
            return false;
        }
        core::mem::transmute::<*mut c_void, Init>(theirs)(global, groups);
    }
    true
}

/// libpti's function for the ITT function `name`, if it has one.
fn implementation(name: &[u8]) -> Option<*mut c_void> {
    let f: *mut c_void = match name {
        b"__itt_domain_create" => domain_create as *mut c_void,
        b"__itt_string_handle_create" => string_handle_create as *mut c_void,
        b"__itt_task_begin" => task_begin as *mut c_void,
        b"__itt_task_end" => task_end as *mut c_void,
        b"__itt_task_begin_overlapped" => task_begin_overlapped as *mut c_void,
        b"__itt_task_end_overlapped" => task_end_overlapped as *mut c_void,
        b"__itt_marker" => marker as *mut c_void,
        b"__itt_metadata_add" => metadata_add as *mut c_void,
        b"__itt_frame_begin_v3" => frame_begin as *mut c_void,
        b"__itt_frame_end_v3" => frame_end as *mut c_void,
        b"__itt_event_create" => event_create as *mut c_void,
        b"__itt_event_start" => event_start as *mut c_void,
        b"__itt_event_end" => event_end as *mut c_void,
        b"__itt_pause" => pause as *mut c_void,
        b"__itt_resume" => resume as *mut c_void,
        b"__itt_detach" => detach as *mut c_void,
        b"__itt_thread_set_name" => thread_set_name as *mut c_void,
        b"__itt_id_create" | b"__itt_id_destroy" => id_lifetime as *mut c_void,
        _ => return None,
    };
    Some(f)
}

/// Runs an ITT function's body, unless a panic switched ITT off on this thread; a panic yields
/// `fallback` (see `pti_core::boundary`).
fn itt<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    if boundary::is_off(Entry::Itt) {
        return fallback;
    }
    boundary::catch(Entry::Itt, body).unwrap_or(fallback)
}

/// The name a domain carries (None for NULL, a muted domain or a nameless one).
///
/// # Safety
/// `domain` is NULL or points to an `__itt_domain` (the static part's or this module's).
unsafe fn domain_name(domain: *const IttDomain) -> Option<&'static CStr> {
    // SAFETY: the caller's contract; the name is a NUL-terminated string or NULL.
    unsafe {
        let d = domain.as_ref()?;
        if d.flags == 0 || d.name_a.is_null() {
            return None;
        }
        Some(annotation::name_at(d.name_a))
    }
}

/// The string of a string handle (None for NULL).
///
/// # Safety
/// `handle` is NULL or points to an `__itt_string_handle`.
unsafe fn handle_text(handle: *const IttStringHandle) -> Option<&'static CStr> {
    // SAFETY: the caller's contract.
    unsafe {
        let h = handle.as_ref()?;
        (!h.str_a.is_null()).then(|| annotation::name_at(h.str_a))
    }
}

/// The domain and name of a range or marker beginning now, if it may be of use (a tool enabled
/// the annotation or communication view) and its domain is live; a missing name is empty.
///
/// # Safety
/// As for [`domain_name`] and [`handle_text`].
unsafe fn beginning(
    domain: *const IttDomain,
    name: *const IttStringHandle,
) -> Option<(&'static CStr, &'static CStr)> {
    if !annotation::wanted() {
        return None;
    }
    // SAFETY: the caller's contract.
    let domain = unsafe { domain_name(domain) }?;
    // SAFETY: the caller's contract.
    Some((domain, unsafe { handle_text(name) }.unwrap_or(c"")))
}

/// The kinds of objects this module makes, for `annotation::made` (which keeps one per name,
/// never freed: the program keeps the pointers for as long as it runs; ittapi asks for a string
/// handle at each task, so that is a lookup).
const DOMAIN: u8 = 0;
const STRING_HANDLE: u8 = 1;

/// `__itt_domain_create`.
unsafe extern "C" fn domain_create(name: *const c_char) -> *mut IttDomain {
    itt(core::ptr::null_mut(), || {
        if name.is_null() {
            return core::ptr::null_mut();
        }
        // SAFETY: ITT's contract: a NUL-terminated name.
        let name = annotation::name(unsafe { CStr::from_ptr(name) });
        annotation::made(DOMAIN, name, || {
            Box::into_raw(Box::new(IttDomain {
                flags: 1,
                name_a: name.as_ptr(),
                name_w: core::ptr::null(),
                extra1: 0,
                extra2: core::ptr::null_mut(),
                next: core::ptr::null_mut(),
            })) as usize
        }) as *mut IttDomain
    })
}

/// `__itt_string_handle_create`.
unsafe extern "C" fn string_handle_create(name: *const c_char) -> *mut IttStringHandle {
    itt(core::ptr::null_mut(), || {
        if name.is_null() {
            return core::ptr::null_mut();
        }
        // SAFETY: ITT's contract: a NUL-terminated name.
        let name = annotation::name(unsafe { CStr::from_ptr(name) });
        annotation::made(STRING_HANDLE, name, || {
            Box::into_raw(Box::new(IttStringHandle {
                str_a: name.as_ptr(),
                str_w: core::ptr::null(),
                extra1: 0,
                extra2: core::ptr::null_mut(),
                next: core::ptr::null_mut(),
            })) as usize
        }) as *mut IttStringHandle
    })
}

/// `__itt_task_begin`.
unsafe extern "C" fn task_begin(
    domain: *const IttDomain,
    id: IttId,
    parent: IttId,
    name: *const IttStringHandle,
) {
    itt((), || {
        // SAFETY: ITT's contract: the program's domain and string handle.
        if let Some((domain, name)) = unsafe { beginning(domain, name) } {
            annotation::task_begin(domain, name, id.d1, parent.d1);
        }
    })
}

/// `__itt_task_end`.
unsafe extern "C" fn task_end(domain: *const IttDomain) {
    itt((), || {
        if !annotation::any_open() {
            return;
        }
        // SAFETY: ITT's contract.
        if let Some(domain) = unsafe { domain_name(domain) } {
            annotation::task_end(domain);
        }
    })
}

/// `__itt_task_begin_overlapped`.
unsafe extern "C" fn task_begin_overlapped(
    domain: *const IttDomain,
    id: IttId,
    parent: IttId,
    name: *const IttStringHandle,
) {
    itt((), || {
        // SAFETY: ITT's contract: the program's domain and string handle.
        if let Some((domain, name)) = unsafe { beginning(domain, name) } {
            annotation::overlapped_begin(domain, name, id.whole(), parent.d1);
        }
    })
}

/// `__itt_task_end_overlapped`.
unsafe extern "C" fn task_end_overlapped(domain: *const IttDomain, id: IttId) {
    itt((), || {
        // SAFETY: ITT's contract.
        if let Some(domain) = unsafe { domain_name(domain) } {
            annotation::overlapped_end(domain, id.whole());
        }
    })
}

/// `__itt_marker`.
unsafe extern "C" fn marker(
    domain: *const IttDomain,
    id: IttId,
    name: *const IttStringHandle,
    _scope: c_int,
) {
    itt((), || {
        // SAFETY: ITT's contract: the program's domain and string handle.
        if let Some((domain, name)) = unsafe { beginning(domain, name) } {
            annotation::marker(domain, name, id.d1);
        }
    })
}

/// `__itt_metadata_u64` and the other integer types of `__itt_metadata_type` (1 to 6).
const METADATA_INTEGERS: core::ops::RangeInclusive<c_int> = 1..=6;

/// `__itt_metadata_add`: the first value of an integer metadata item (see
/// `pti_core::annotation::metadata_u64` for the keys kept).
unsafe extern "C" fn metadata_add(
    domain: *const IttDomain,
    _id: IttId,
    key: *const IttStringHandle,
    kind: c_int,
    count: usize,
    data: *const c_void,
) {
    itt((), || {
        if count == 0
            || data.is_null()
            || !METADATA_INTEGERS.contains(&kind)
            || !annotation::any_open()
        {
            return;
        }
        // SAFETY: ITT's contract: `data` holds `count` values of `kind` (read: the first, at its
        // own width and sign: u64, s64, u32, s32, u16, s16; a signed one sign-extended).
        let value = unsafe {
            match kind {
                1 | 2 => data.cast::<u64>().read_unaligned(),
                3 => u64::from(data.cast::<u32>().read_unaligned()),
                4 => i64::from(data.cast::<i32>().read_unaligned()) as u64,
                5 => u64::from(data.cast::<u16>().read_unaligned()),
                _ => i64::from(data.cast::<i16>().read_unaligned()) as u64,
            }
        };
        // SAFETY: ITT's contract.
        let (Some(domain), Some(key)) =
            (unsafe { domain_name(domain) }, unsafe { handle_text(key) })
        else {
            return;
        };
        annotation::metadata_u64(domain, key, value);
    })
}

/// `__itt_frame_begin_v3`.
unsafe extern "C" fn frame_begin(domain: *const IttDomain, id: *const IttId) {
    itt((), || {
        if !annotation::wanted() {
            return;
        }
        // SAFETY: ITT's contract: the ID may be NULL.
        let id = unsafe { id.as_ref() }.map_or(0, |id| id.d1);
        // SAFETY: ITT's contract.
        if let Some(domain) = unsafe { domain_name(domain) } {
            annotation::frame_begin(domain, id);
        }
    })
}

/// `__itt_frame_end_v3`.
unsafe extern "C" fn frame_end(domain: *const IttDomain, _id: *const IttId) {
    itt((), || {
        if !annotation::any_open() {
            return;
        }
        // SAFETY: ITT's contract.
        if let Some(domain) = unsafe { domain_name(domain) } {
            annotation::frame_end(domain);
        }
    })
}

/// `__itt_event_create`: the name is `namelen` bytes (ittapi and oneCCL also end it with a NUL).
unsafe extern "C" fn event_create(name: *const c_char, namelen: c_int) -> c_int {
    itt(0, || {
        let Ok(len) = usize::try_from(namelen) else {
            return 0;
        };
        if name.is_null() {
            return 0;
        }
        // SAFETY: ITT's contract: `namelen` readable bytes.
        let bytes = unsafe { core::slice::from_raw_parts(name.cast::<u8>(), len) };
        let bytes = bytes.split(|b| *b == 0).next().unwrap_or_default();
        let Ok(owned) = std::ffi::CString::new(bytes) else {
            return 0;
        };
        annotation::event_create(annotation::name(&owned))
    })
}

/// `__itt_event_start`.
extern "C" fn event_start(event: c_int) -> c_int {
    itt(-1, || annotation::event_start(event))
}

/// `__itt_event_end`.
extern "C" fn event_end(event: c_int) -> c_int {
    itt(-1, || annotation::event_end(event))
}

/// `__itt_pause`: libpti's pause (`ptiViewPause`).
extern "C" fn pause() {
    itt((), || {
        session::set_paused(true);
    })
}

/// `__itt_resume`: libpti's resume (`ptiViewResume`).
extern "C" fn resume() {
    itt((), || {
        session::set_paused(false);
    })
}

/// `__itt_detach`: accepted, and ignored (libpti stays; `__itt_pause` stops collection).
extern "C" fn detach() {}

/// `__itt_thread_set_name`: accepted, and ignored (records name threads by ID).
extern "C" fn thread_set_name(_name: *const c_char) {}

/// `__itt_id_create` and `__itt_id_destroy`: accepted, and ignored (task IDs are kept with the
/// tasks).
extern "C" fn id_lifetime(_domain: *const IttDomain, _id: IttId) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// An entry of a made-up static part's table.
    fn entry(name: &'static CStr, slot: &mut *mut c_void, null: *mut c_void) -> IttApiInfo {
        IttApiInfo {
            name: name.as_ptr(),
            func_ptr: slot,
            init_func: core::ptr::null_mut(),
            null_func: null,
            group: 0,
        }
    }

    /// A static part's global at its table (ittnotify 3.x when `magic` is ITT's).
    fn global(magic: [u8; 8], table: *mut IttApiInfo) -> IttGlobal {
        // SAFETY: all-zero bytes are a valid global (plain numbers, NULL pointers, an unused
        // mutex).
        let mut g: IttGlobal = unsafe { core::mem::zeroed() };
        g.magic = magic;
        g.version_major = 3;
        g.api_list_ptr = table;
        g
    }

    #[test]
    fn the_table_gets_ours_where_we_have_one_and_its_null_function_elsewhere() {
        let null = 0x1234 as *mut c_void;
        let (mut task, mut counter, mut pause_slot) = (
            core::ptr::null_mut(),
            core::ptr::null_mut(),
            core::ptr::null_mut(),
        );
        let mut table = [
            entry(c"__itt_task_begin", &mut task, null),
            entry(c"__itt_counter_create", &mut counter, null),
            entry(c"__itt_pause", &mut pause_slot, null),
            IttApiInfo {
                name: core::ptr::null(),
                func_ptr: core::ptr::null_mut(),
                init_func: core::ptr::null_mut(),
                null_func: core::ptr::null_mut(),
                group: 0,
            },
        ];
        let mut g = global(MAGIC, table.as_mut_ptr());
        // SAFETY: a global of ITT's layout whose table ends with a NULL name.
        unsafe { __itt_api_init(&mut g, 0) };
        assert_eq!(task, task_begin as *mut c_void);
        assert_eq!(
            counter, null,
            "a function libpti does not bind keeps ITT's null function"
        );
        assert_eq!(pause_slot, pause as *mut c_void);
    }

    #[test]
    fn a_global_of_another_layout_is_left_alone() {
        let mut slot = core::ptr::null_mut();
        let mut table = [entry(c"__itt_task_begin", &mut slot, core::ptr::null_mut())];
        let mut foreign = global(*b"NOTITT!!", table.as_mut_ptr());
        let mut old = global(MAGIC, table.as_mut_ptr());
        old.version_major = 2;
        // SAFETY: NULL, and globals whose magic or version is checked before anything else.
        unsafe {
            __itt_api_init(core::ptr::null_mut(), 0);
            __itt_api_init(&mut foreign, 0);
            __itt_api_init(&mut old, 0);
        }
        assert!(slot.is_null());
    }

    #[test]
    fn domains_and_string_handles_are_made_once_per_name_and_read_back() {
        // SAFETY: NUL-terminated names, and the objects this module made.
        unsafe {
            let d = domain_create(c"test::itt domain".as_ptr());
            assert_eq!(d, domain_create(c"test::itt domain".as_ptr()));
            assert_eq!(domain_name(d), Some(c"test::itt domain"));
            let h = string_handle_create(c"test::itt task".as_ptr());
            assert_eq!(h, string_handle_create(c"test::itt task".as_ptr()));
            assert_eq!(handle_text(h), Some(c"test::itt task"));
            assert!(domain_create(core::ptr::null()).is_null());
            assert!(string_handle_create(core::ptr::null()).is_null());
            assert_eq!(domain_name(core::ptr::null()), None);
            assert_eq!(handle_text(core::ptr::null()), None);
            // A muted domain (ITT clears its flags) names nothing.
            (*d).flags = 0;
            assert_eq!(domain_name(d), None);
            (*d).flags = 1;
        }
    }

    #[test]
    fn legacy_events_take_their_name_by_length() {
        // SAFETY: a name readable for `namelen` bytes.
        unsafe {
            let a = event_create(c"test::ev-long".as_ptr(), 8);
            let b = event_create(c"test::ev".as_ptr(), 8);
            assert!(a >= 1);
            assert_eq!(a, b, "the first 8 bytes of a longer name are that name");
            // A length past the NUL: the name ends at the NUL.
            assert_eq!(event_create(c"test::ev".as_ptr(), 9), a);
            assert_ne!(event_create(c"test::ev-long".as_ptr(), 13), a);
            assert_eq!(event_create(core::ptr::null(), 3), 0);
            assert_eq!(event_create(c"x".as_ptr(), -1), 0);
        }
    }
}
