//! The OTF2 C library (Debian's `libopen-trace-format2-10`, OTF2 3.0.x), loaded with `dlopen` the
//! first time `export --otf2` needs it, and a small safe face over the functions `otf2` calls:
//! an archive opened for writing, its event writers, and its global definitions.
//!
//! Only the functions used are declared, each with its C signature from OTF2 3.0's headers
//! (`/usr/include/otf2/*.h`; `OTF2_GlobalDefWriter_WriteClockProperties` and
//! `OTF2_GlobalDefWriter_WriteLocationGroup` took their last argument in 3.0, so an archive whose
//! library reports another major version is refused). The library is never unloaded.
//!
//! May touch: the archive's directory (through libotf2) and the process's dynamic loader.

#![allow(non_snake_case)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::OnceLock;

/// Where the library is looked for: Debian's runtime package's soname, upstream's soname, then
/// the development links.
const SONAMES: &[&str] = &[
    "libopen-trace-format2.so.10",
    "libotf2.so.10",
    "libopen-trace-format2.so",
    "libotf2.so",
];

/// The Debian package that installs it.
pub(crate) const PACKAGE: &str = "libopen-trace-format2-10";

// OTF2's types (OTF2_GeneralDefinitions.h, OTF2_Definitions.h, OTF2_ErrorCodes.h).
type ErrorCode = c_int;
type FileMode = u8;
type FileSubstrate = u8;
type Compression = u8;
type FileType = u8;
type FlushType = u8;
pub(crate) type TimeStamp = u64;
pub(crate) type StringRef = u32;
pub(crate) type RegionRef = u32;
pub(crate) type LocationRef = u64;
pub(crate) type LocationGroupRef = u32;
pub(crate) type SystemTreeNodeRef = u32;
pub(crate) type RegionRole = u8;
pub(crate) type Paradigm = u8;
pub(crate) type ParadigmClass = u8;
pub(crate) type LocationType = u8;
pub(crate) type LocationGroupType = u8;
type RegionFlag = u32;

const SUCCESS: ErrorCode = 0;
const FILEMODE_WRITE: FileMode = 0;
const SUBSTRATE_POSIX: FileSubstrate = 1;
const COMPRESSION_NONE: Compression = 1;
const FLUSH: FlushType = 1;
const REGION_FLAG_NONE: RegionFlag = 0;
/// `OTF2_CHUNK_SIZE_EVENTS_DEFAULT`, `OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT`.
const CHUNK_EVENTS: u64 = 1024 * 1024;
const CHUNK_DEFINITIONS: u64 = 4 * 1024 * 1024;
pub(crate) const UNDEFINED_STRING: StringRef = u32::MAX;
pub(crate) const UNDEFINED_SYSTEM_TREE_NODE: SystemTreeNodeRef = u32::MAX;
pub(crate) const UNDEFINED_LOCATION_GROUP: LocationGroupRef = u32::MAX;
pub(crate) const UNDEFINED_TIMESTAMP: TimeStamp = u64::MAX;

pub(crate) const PARADIGM_USER: Paradigm = 1;
pub(crate) const PARADIGM_OPENCL: Paradigm = 19;
pub(crate) const PARADIGM_CLASS_ACCELERATOR: ParadigmClass = 3;

pub(crate) const ROLE_FUNCTION: RegionRole = 1;
pub(crate) const ROLE_CODE: RegionRole = 4;
pub(crate) const ROLE_BARRIER: RegionRole = 15;
pub(crate) const ROLE_DATA_TRANSFER: RegionRole = 30;
pub(crate) const ROLE_ARTIFICIAL: RegionRole = 31;

pub(crate) const LOCATION_CPU_THREAD: LocationType = 1;
pub(crate) const LOCATION_ACCELERATOR_STREAM: LocationType = 2;
pub(crate) const LOCATION_GROUP_PROCESS: LocationGroupType = 1;

/// Opaque handles.
#[repr(C)]
struct RawArchive {
    _opaque: [u8; 0],
}
#[repr(C)]
struct RawEvtWriter {
    _opaque: [u8; 0],
}
#[repr(C)]
struct RawDefWriter {
    _opaque: [u8; 0],
}
#[repr(C)]
struct RawGlobalDefWriter {
    _opaque: [u8; 0],
}
#[repr(C)]
struct RawAttributeList {
    _opaque: [u8; 0],
}

/// `OTF2_FlushCallbacks` (OTF2_Callbacks.h).
#[repr(C)]
struct FlushCallbacks {
    otf2_pre_flush: Option<
        unsafe extern "C" fn(*mut c_void, FileType, LocationRef, *mut c_void, bool) -> FlushType,
    >,
    otf2_post_flush: Option<unsafe extern "C" fn(*mut c_void, FileType, LocationRef) -> TimeStamp>,
}

/// Every buffer OTF2 fills is written to its file (pre-flush callback).
unsafe extern "C" fn always_flush(
    _user: *mut c_void,
    _file: FileType,
    _location: LocationRef,
    _caller: *mut c_void,
    _final: bool,
) -> FlushType {
    FLUSH
}

/// The flush callbacks, for the archive's whole life (OTF2 keeps the pointer). No post-flush
/// callback: OTF2 then writes no BufferFlush record (OTF2_Callbacks.h).
static FLUSH_CALLBACKS: FlushCallbacks = FlushCallbacks {
    otf2_pre_flush: Some(always_flush),
    otf2_post_flush: None,
};

/// Declares the library's functions: a table of function pointers, filled by `dlsym`.
macro_rules! functions {
    ($(fn $name:ident($($arg:ty),* $(,)?) -> $ret:ty;)*) => {
        /// libotf2's functions that pti-trace calls.
        struct Library {
            $($name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl Library {
            /// Looks every function up in the library `handle`.
            fn resolve(handle: *mut c_void, soname: &str) -> Result<Library, String> {
                Ok(Library {
                    $($name: {
                        let symbol = concat!(stringify!($name), "\0");
                        // SAFETY: `handle` is a live handle from `dlopen` and `symbol` a
                        // NUL-terminated name.
                        let address = unsafe { libc::dlsym(handle, symbol.as_ptr().cast()) };
                        if address.is_null() {
                            return Err(format!(
                                "{soname} has no {} (export --otf2 needs OTF2 3.0: Debian's {PACKAGE})",
                                stringify!($name)
                            ));
                        }
                        // SAFETY: `address` is libotf2's function of that name, whose C
                        // signature (OTF2 3.0's headers) is the one declared here; a function
                        // pointer and a data pointer have one size on the platforms this builds
                        // for.
                        unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(
                                address,
                            )
                        }
                    },)*
                })
            }
        }
    };
}

functions! {
    fn OTF2_Archive_Open(*const c_char, *const c_char, FileMode, u64, u64, FileSubstrate, Compression) -> *mut RawArchive;
    fn OTF2_Archive_Close(*mut RawArchive) -> ErrorCode;
    fn OTF2_Archive_GetVersion(*mut RawArchive, *mut u8, *mut u8, *mut u8) -> ErrorCode;
    fn OTF2_Archive_SetFlushCallbacks(*mut RawArchive, *const FlushCallbacks, *mut c_void) -> ErrorCode;
    fn OTF2_Archive_SetSerialCollectiveCallbacks(*mut RawArchive) -> ErrorCode;
    fn OTF2_Archive_SetCreator(*mut RawArchive, *const c_char) -> ErrorCode;
    fn OTF2_Archive_SetDescription(*mut RawArchive, *const c_char) -> ErrorCode;
    fn OTF2_Archive_OpenEvtFiles(*mut RawArchive) -> ErrorCode;
    fn OTF2_Archive_CloseEvtFiles(*mut RawArchive) -> ErrorCode;
    fn OTF2_Archive_GetEvtWriter(*mut RawArchive, LocationRef) -> *mut RawEvtWriter;
    fn OTF2_Archive_CloseEvtWriter(*mut RawArchive, *mut RawEvtWriter) -> ErrorCode;
    fn OTF2_Archive_OpenDefFiles(*mut RawArchive) -> ErrorCode;
    fn OTF2_Archive_CloseDefFiles(*mut RawArchive) -> ErrorCode;
    fn OTF2_Archive_GetDefWriter(*mut RawArchive, LocationRef) -> *mut RawDefWriter;
    fn OTF2_Archive_CloseDefWriter(*mut RawArchive, *mut RawDefWriter) -> ErrorCode;
    fn OTF2_Archive_GetGlobalDefWriter(*mut RawArchive) -> *mut RawGlobalDefWriter;
    fn OTF2_EvtWriter_Enter(*mut RawEvtWriter, *mut RawAttributeList, TimeStamp, RegionRef) -> ErrorCode;
    fn OTF2_EvtWriter_Leave(*mut RawEvtWriter, *mut RawAttributeList, TimeStamp, RegionRef) -> ErrorCode;
    fn OTF2_GlobalDefWriter_WriteClockProperties(*mut RawGlobalDefWriter, u64, u64, u64, u64) -> ErrorCode;
    fn OTF2_GlobalDefWriter_WriteString(*mut RawGlobalDefWriter, StringRef, *const c_char) -> ErrorCode;
    fn OTF2_GlobalDefWriter_WriteParadigm(*mut RawGlobalDefWriter, Paradigm, StringRef, ParadigmClass) -> ErrorCode;
    fn OTF2_GlobalDefWriter_WriteSystemTreeNode(*mut RawGlobalDefWriter, SystemTreeNodeRef, StringRef, StringRef, SystemTreeNodeRef) -> ErrorCode;
    fn OTF2_GlobalDefWriter_WriteLocationGroup(*mut RawGlobalDefWriter, LocationGroupRef, StringRef, LocationGroupType, SystemTreeNodeRef, LocationGroupRef) -> ErrorCode;
    fn OTF2_GlobalDefWriter_WriteLocation(*mut RawGlobalDefWriter, LocationRef, StringRef, LocationType, u64, LocationGroupRef) -> ErrorCode;
    fn OTF2_GlobalDefWriter_WriteRegion(*mut RawGlobalDefWriter, RegionRef, StringRef, StringRef, StringRef, RegionRole, Paradigm, RegionFlag, StringRef, u32, u32) -> ErrorCode;
    fn OTF2_Error_GetName(ErrorCode) -> *const c_char;
}

/// The library, loaded once: the first of [`SONAMES`] that `dlopen` finds.
fn library() -> Result<&'static Library, String> {
    static LOADED: OnceLock<Result<Library, String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            let mut why = String::new();
            for soname in SONAMES {
                let name = CString::new(*soname).unwrap_or_default();
                // SAFETY: `name` is NUL-terminated; loading libotf2 runs only its (and its
                // dependencies': libstdc++) initialisers, which set up nothing of pti-trace's.
                let handle =
                    unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                if handle.is_null() {
                    // SAFETY: dlerror's message (or null) is read before any other dl* call.
                    let error = unsafe { libc::dlerror() };
                    if why.is_empty() && !error.is_null() {
                        // SAFETY: a non-null dlerror result is a NUL-terminated string.
                        why = unsafe { CStr::from_ptr(error) }
                            .to_string_lossy()
                            .into_owned();
                    }
                    continue;
                }
                return Library::resolve(handle, soname);
            }
            Err(format!(
                "export --otf2 needs the OTF2 library ({}), which is not installed: install \
                 Debian's {PACKAGE} package (`cargo xtask setup` does) ({why})",
                SONAMES[0]
            ))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Loads the library: Ok if `export --otf2` can write, else why not.
pub(crate) fn available() -> Result<(), String> {
    library().map(drop)
}

/// A C string of `text` (a NUL inside is cut there: names come from traces).
fn c_string(text: &str) -> CString {
    let bytes = text.as_bytes();
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end]).unwrap_or_default()
}

/// `code` as Ok, or an error naming the call and OTF2's name for the code.
fn check(lib: &Library, what: &str, code: ErrorCode) -> Result<(), String> {
    if code == SUCCESS {
        return Ok(());
    }
    // SAFETY: OTF2_Error_GetName returns a static NUL-terminated string for any code.
    let name = unsafe { CStr::from_ptr((lib.OTF2_Error_GetName)(code)) };
    Err(format!("OTF2: {what} failed: {}", name.to_string_lossy()))
}

/// An OTF2 archive open for writing: its events first (one location at a time), then its
/// definitions ([`Archive::definitions`]), then [`Archive::close`].
pub(crate) struct Archive {
    lib: &'static Library,
    raw: *mut RawArchive,
}

impl Archive {
    /// Creates the archive `name` in the directory `dir` (`dir/name.otf2`, `dir/name.def`,
    /// `dir/name/`), its event files open.
    pub(crate) fn create(dir: &Path, name: &str, creator: &str) -> Result<Archive, String> {
        let lib = library()?;
        let path = CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| format!("{}: a NUL byte in the path", dir.display()))?;
        let name = c_string(name);
        // SAFETY: both strings are NUL-terminated and live across the call (OTF2 copies them);
        // the other arguments are OTF2's constants and its default chunk sizes.
        let raw = unsafe {
            (lib.OTF2_Archive_Open)(
                path.as_ptr(),
                name.as_ptr(),
                FILEMODE_WRITE,
                CHUNK_EVENTS,
                CHUNK_DEFINITIONS,
                SUBSTRATE_POSIX,
                COMPRESSION_NONE,
            )
        };
        if raw.is_null() {
            return Err(format!(
                "OTF2 could not create an archive in {}",
                dir.display()
            ));
        }
        // From here on, dropping `archive` closes it.
        let archive = Archive { lib, raw };
        let (mut major, mut minor, mut bugfix) = (0u8, 0u8, 0u8);
        // SAFETY: `raw` is an open archive; the three pointers are to live u8s.
        let code =
            unsafe { (lib.OTF2_Archive_GetVersion)(raw, &mut major, &mut minor, &mut bugfix) };
        check(lib, "OTF2_Archive_GetVersion", code)?;
        if major != 3 {
            return Err(format!(
                "the OTF2 library is version {major}.{minor}.{bugfix}; export --otf2 is written \
                 for OTF2 3.x (Debian's {PACKAGE})"
            ));
        }
        let creator = c_string(creator);
        // SAFETY: `raw` is an open archive; FLUSH_CALLBACKS is static, as OTF2 keeps the
        // pointer; the creator string lives across the call (OTF2 copies it).
        unsafe {
            check(
                lib,
                "OTF2_Archive_SetFlushCallbacks",
                (lib.OTF2_Archive_SetFlushCallbacks)(raw, &FLUSH_CALLBACKS, std::ptr::null_mut()),
            )?;
            check(
                lib,
                "OTF2_Archive_SetSerialCollectiveCallbacks",
                (lib.OTF2_Archive_SetSerialCollectiveCallbacks)(raw),
            )?;
            check(
                lib,
                "OTF2_Archive_SetCreator",
                (lib.OTF2_Archive_SetCreator)(raw, creator.as_ptr()),
            )?;
            check(
                lib,
                "OTF2_Archive_OpenEvtFiles",
                (lib.OTF2_Archive_OpenEvtFiles)(raw),
            )?;
        }
        Ok(archive)
    }

    /// Sets the archive's description.
    pub(crate) fn describe(&mut self, text: &str) -> Result<(), String> {
        let text = c_string(text);
        // SAFETY: `raw` is an open archive; the string lives across the call (OTF2 copies it).
        let code = unsafe { (self.lib.OTF2_Archive_SetDescription)(self.raw, text.as_ptr()) };
        check(self.lib, "OTF2_Archive_SetDescription", code)
    }

    /// The event writer of `location` (each location's events are written once, in time
    /// order, and the writer closed).
    pub(crate) fn events(&mut self, location: LocationRef) -> Result<Events<'_>, String> {
        // SAFETY: `raw` is an open archive whose event files are open.
        let raw = unsafe { (self.lib.OTF2_Archive_GetEvtWriter)(self.raw, location) };
        if raw.is_null() {
            return Err(format!("OTF2: no event writer for location {location}"));
        }
        Ok(Events { archive: self, raw })
    }

    /// Closes the event files, writes an (empty) local definition file per location, and
    /// hands the global definitions' writer to `write`.
    pub(crate) fn definitions(
        &mut self,
        locations: impl IntoIterator<Item = LocationRef>,
        write: impl FnOnce(&mut Definitions<'_>) -> Result<(), String>,
    ) -> Result<(), String> {
        let lib = self.lib;
        // SAFETY: `raw` is an open archive whose event writers are all closed.
        unsafe {
            check(
                lib,
                "OTF2_Archive_CloseEvtFiles",
                (lib.OTF2_Archive_CloseEvtFiles)(self.raw),
            )?;
            check(
                lib,
                "OTF2_Archive_OpenDefFiles",
                (lib.OTF2_Archive_OpenDefFiles)(self.raw),
            )?;
        }
        for location in locations {
            // SAFETY: `raw` is an open archive whose definition files are open.
            let writer = unsafe { (lib.OTF2_Archive_GetDefWriter)(self.raw, location) };
            if writer.is_null() {
                return Err(format!(
                    "OTF2: no definition writer for location {location}"
                ));
            }
            // SAFETY: `writer` was just handed out by this archive and is closed once.
            let code = unsafe { (lib.OTF2_Archive_CloseDefWriter)(self.raw, writer) };
            check(lib, "OTF2_Archive_CloseDefWriter", code)?;
        }
        // SAFETY: `raw` is an open archive whose definition files are open.
        let code = unsafe { (lib.OTF2_Archive_CloseDefFiles)(self.raw) };
        check(lib, "OTF2_Archive_CloseDefFiles", code)?;
        // SAFETY: `raw` is an open archive in writing mode.
        let raw = unsafe { (lib.OTF2_Archive_GetGlobalDefWriter)(self.raw) };
        if raw.is_null() {
            return Err("OTF2: no global definition writer".into());
        }
        write(&mut Definitions { lib, raw })
    }

    /// Closes the archive: its files are complete.
    pub(crate) fn close(mut self) -> Result<(), String> {
        let raw = std::mem::replace(&mut self.raw, std::ptr::null_mut());
        // SAFETY: `raw` is an open archive, closed once (Drop sees null).
        let code = unsafe { (self.lib.OTF2_Archive_Close)(raw) };
        check(self.lib, "OTF2_Archive_Close", code)
    }
}

impl Drop for Archive {
    fn drop(&mut self) {
        if !self.raw.is_null() {
            // SAFETY: `raw` is an open archive not yet closed (an error left it): closing
            // releases its writers.
            unsafe { (self.lib.OTF2_Archive_Close)(self.raw) };
        }
    }
}

/// One location's event writer.
pub(crate) struct Events<'a> {
    archive: &'a mut Archive,
    raw: *mut RawEvtWriter,
}

impl Events<'_> {
    /// An Enter of `region` at `time`.
    pub(crate) fn enter(&mut self, time: TimeStamp, region: RegionRef) -> Result<(), String> {
        let lib = self.archive.lib;
        // SAFETY: `raw` is an open event writer of the archive; no attribute list.
        let code =
            unsafe { (lib.OTF2_EvtWriter_Enter)(self.raw, std::ptr::null_mut(), time, region) };
        check(lib, "OTF2_EvtWriter_Enter", code)
    }

    /// A Leave of `region` at `time`.
    pub(crate) fn leave(&mut self, time: TimeStamp, region: RegionRef) -> Result<(), String> {
        let lib = self.archive.lib;
        // SAFETY: `raw` is an open event writer of the archive; no attribute list.
        let code =
            unsafe { (lib.OTF2_EvtWriter_Leave)(self.raw, std::ptr::null_mut(), time, region) };
        check(lib, "OTF2_EvtWriter_Leave", code)
    }

    /// Closes the writer (its buffer is written to the location's event file).
    pub(crate) fn close(self) -> Result<(), String> {
        let lib = self.archive.lib;
        // SAFETY: `raw` was handed out by this open archive and is closed once (`self` is
        // consumed).
        let code = unsafe { (lib.OTF2_Archive_CloseEvtWriter)(self.archive.raw, self.raw) };
        check(lib, "OTF2_Archive_CloseEvtWriter", code)
    }
}

/// The global definitions' writer.
pub(crate) struct Definitions<'a> {
    lib: &'a Library,
    raw: *mut RawGlobalDefWriter,
}

impl Definitions<'_> {
    /// The timer: resolution (ticks per second), the first time, the length, and the wall-clock
    /// time (ns since the Unix epoch) of the first, or [`UNDEFINED_TIMESTAMP`].
    pub(crate) fn clock(
        &mut self,
        resolution: u64,
        offset: u64,
        length: u64,
        realtime: u64,
    ) -> Result<(), String> {
        // SAFETY: `raw` is the archive's global definition writer; plain integers.
        let code = unsafe {
            (self.lib.OTF2_GlobalDefWriter_WriteClockProperties)(
                self.raw, resolution, offset, length, realtime,
            )
        };
        check(self.lib, "OTF2_GlobalDefWriter_WriteClockProperties", code)
    }

    pub(crate) fn string(&mut self, id: StringRef, text: &str) -> Result<(), String> {
        let text = c_string(text);
        // SAFETY: `raw` is the archive's global definition writer; the string lives across the
        // call (OTF2 copies it).
        let code =
            unsafe { (self.lib.OTF2_GlobalDefWriter_WriteString)(self.raw, id, text.as_ptr()) };
        check(self.lib, "OTF2_GlobalDefWriter_WriteString", code)
    }

    pub(crate) fn paradigm(
        &mut self,
        paradigm: Paradigm,
        name: StringRef,
        class: ParadigmClass,
    ) -> Result<(), String> {
        // SAFETY: `raw` is the archive's global definition writer; plain integers.
        let code = unsafe {
            (self.lib.OTF2_GlobalDefWriter_WriteParadigm)(self.raw, paradigm, name, class)
        };
        check(self.lib, "OTF2_GlobalDefWriter_WriteParadigm", code)
    }

    pub(crate) fn system_tree_node(
        &mut self,
        id: SystemTreeNodeRef,
        name: StringRef,
        class: StringRef,
        parent: SystemTreeNodeRef,
    ) -> Result<(), String> {
        // SAFETY: `raw` is the archive's global definition writer; plain integers.
        let code = unsafe {
            (self.lib.OTF2_GlobalDefWriter_WriteSystemTreeNode)(self.raw, id, name, class, parent)
        };
        check(self.lib, "OTF2_GlobalDefWriter_WriteSystemTreeNode", code)
    }

    pub(crate) fn location_group(
        &mut self,
        id: LocationGroupRef,
        name: StringRef,
        kind: LocationGroupType,
        node: SystemTreeNodeRef,
    ) -> Result<(), String> {
        // SAFETY: `raw` is the archive's global definition writer; plain integers.
        let code = unsafe {
            (self.lib.OTF2_GlobalDefWriter_WriteLocationGroup)(
                self.raw,
                id,
                name,
                kind,
                node,
                UNDEFINED_LOCATION_GROUP,
            )
        };
        check(self.lib, "OTF2_GlobalDefWriter_WriteLocationGroup", code)
    }

    pub(crate) fn location(
        &mut self,
        id: LocationRef,
        name: StringRef,
        kind: LocationType,
        events: u64,
        group: LocationGroupRef,
    ) -> Result<(), String> {
        // SAFETY: `raw` is the archive's global definition writer; plain integers.
        let code = unsafe {
            (self.lib.OTF2_GlobalDefWriter_WriteLocation)(self.raw, id, name, kind, events, group)
        };
        check(self.lib, "OTF2_GlobalDefWriter_WriteLocation", code)
    }

    /// A region: its name (also its canonical name), description, role and paradigm.
    pub(crate) fn region(
        &mut self,
        id: RegionRef,
        name: StringRef,
        description: StringRef,
        role: RegionRole,
        paradigm: Paradigm,
    ) -> Result<(), String> {
        // SAFETY: `raw` is the archive's global definition writer; plain integers.
        let code = unsafe {
            (self.lib.OTF2_GlobalDefWriter_WriteRegion)(
                self.raw,
                id,
                name,
                name,
                description,
                role,
                paradigm,
                REGION_FLAG_NONE,
                UNDEFINED_STRING,
                0,
                0,
            )
        };
        check(self.lib, "OTF2_GlobalDefWriter_WriteRegion", code)
    }
}
