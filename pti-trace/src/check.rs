//! `pti-trace check`: why a run may show no GPU records, found before a run (issue 35).
//!
//! Each check looks at one link of the chain between a program and its device records, on this
//! machine, for the user who runs it: libpti and the collector found; the OpenCL loader and its
//! platforms; the Level Zero loader, its tracing layer and a driver with devices; the render
//! devices' permissions; the SYCL runtime; environment variables that switch tracing off. It
//! loads the runtimes into this process (`dlopen`) and asks them what a program would, so what
//! it reports is what a program run now would meet. It prints one line per finding and exits
//! with 1 where something would keep records away, 0 otherwise. It never changes the machine.

use std::ffi::{CStr, CString, c_void};
use std::path::Path;

/// What one check found.
#[derive(Debug, PartialEq)]
pub(crate) enum Finding {
    /// Works.
    Ok(String),
    /// Works, but the user should know (a limit, a setting that matters).
    Note(String),
    /// Keeps records away: what, and what to do.
    Problem(String),
}

/// Runs every check and prints what it found; returns whether nothing keeps records away.
pub(crate) fn run(libraries: Result<(std::path::PathBuf, std::path::PathBuf), String>) -> bool {
    let mut findings = Vec::new();
    findings.push((
        "libpti",
        match libraries {
            Ok((dir, lib)) => Finding::Ok(format!(
                "{} and libpti_trace_collector.so in {}",
                lib.file_name().unwrap_or_default().to_string_lossy(),
                dir.display()
            )),
            Err(e) => Finding::Problem(e),
        },
    ));
    findings.extend(environment().into_iter().map(|f| ("environment", f)));
    findings.extend(opencl().into_iter().map(|f| ("OpenCL", f)));
    findings.extend(level_zero().into_iter().map(|f| ("Level Zero", f)));
    findings.extend(render_devices().into_iter().map(|f| ("render devices", f)));
    findings.extend(sycl().into_iter().map(|f| ("SYCL", f)));
    let mut fine = true;
    for (area, finding) in &findings {
        let (tag, text) = match finding {
            Finding::Ok(t) => ("ok", t),
            Finding::Note(t) => ("note", t),
            Finding::Problem(t) => {
                fine = false;
                ("PROBLEM", t)
            }
        };
        println!("{area}: {tag}: {text}");
    }
    println!(
        "{}",
        if fine {
            "pti-trace check: nothing found that keeps records away (docs/pti-trace.md, \
             \"When a run shows no GPU records\")"
        } else {
            "pti-trace check: see the PROBLEM lines above (docs/pti-trace.md, \"When a run shows \
             no GPU records\")"
        }
    );
    fine
}

/// A library opened by its SONAME as a program would (never closed: runtimes dislike it).
fn open(name: &str) -> Option<*mut c_void> {
    let name = CString::new(name).ok()?;
    // SAFETY: a NUL-terminated name; the handle is kept for the process's life.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    (!handle.is_null()).then_some(handle)
}

/// The address of `symbol` in `handle`, or None.
fn symbol(handle: *mut c_void, symbol: &str) -> Option<*mut c_void> {
    let name = CString::new(symbol).ok()?;
    // SAFETY: a handle from dlopen and a NUL-terminated name.
    let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
    (!address.is_null()).then_some(address)
}

/// Variables that switch tracing off or send it elsewhere, as a run would inherit them.
fn environment() -> Vec<Finding> {
    environment_from(|name| std::env::var(name).ok())
}

fn environment_from(var: impl Fn(&str) -> Option<String>) -> Vec<Finding> {
    let mut out = Vec::new();
    if var("PTI_LEVEL_ZERO").as_deref() == Some("0") {
        out.push(Finding::Problem(
            "PTI_LEVEL_ZERO=0: libpti stays out of Level Zero (unset it)".into(),
        ));
    }
    if var("ZE_ENABLE_TRACING_LAYER").as_deref() == Some("0") {
        out.push(Finding::Problem(
            "ZE_ENABLE_TRACING_LAYER=0: the Level Zero loader will not load its tracing layer, \
             which libpti traces through (unset it; libpti sets it to 1)"
                .into(),
        ));
    }
    if let Some(subscribers) = var("XPTI_SUBSCRIBERS").filter(|s| !s.contains("libpti")) {
        out.push(Finding::Problem(format!(
            "XPTI_SUBSCRIBERS={subscribers}: the SYCL runtime loads that subscriber, not libpti \
             (libpti leaves another subscriber alone: no SYCL records; unset it)"
        )));
    }
    if var("PTI_TRACE_VIEWS").is_some_and(|v| !v.contains("device")) {
        out.push(Finding::Note(
            "PTI_TRACE_VIEWS does not name device: runs record no device work".into(),
        ));
    }
    if out.is_empty() {
        out.push(Finding::Ok(
            "no variable switches tracing off (PTI_LEVEL_ZERO, ZE_ENABLE_TRACING_LAYER, \
             XPTI_SUBSCRIBERS, PTI_TRACE_VIEWS)"
                .into(),
        ));
    }
    out
}

type ClGetPlatformIds = unsafe extern "C" fn(u32, *mut *mut c_void, *mut u32) -> i32;
type ClGetPlatformInfo =
    unsafe extern "C" fn(*mut c_void, u32, usize, *mut c_void, *mut usize) -> i32;
type ClGetDeviceIds =
    unsafe extern "C" fn(*mut c_void, u64, u32, *mut *mut c_void, *mut u32) -> i32;

const CL_PLATFORM_NAME: u32 = 0x0902;
const CL_DEVICE_TYPE_GPU: u64 = 1 << 2;
const CL_DEVICE_TYPE_ALL: u64 = 0xFFFF_FFFF;

/// The OpenCL loader and the platforms it lists.
fn opencl() -> Vec<Finding> {
    let Some(loader) = open("libOpenCL.so.1") else {
        return vec![Finding::Note(
            "no OpenCL loader (libOpenCL.so.1): OpenCL programs cannot run here".into(),
        )];
    };
    let (Some(ids), Some(info), Some(devices)) = (
        symbol(loader, "clGetPlatformIDs"),
        symbol(loader, "clGetPlatformInfo"),
        symbol(loader, "clGetDeviceIDs"),
    ) else {
        return vec![Finding::Problem(
            "libOpenCL.so.1 lacks clGetPlatformIDs: not an OpenCL loader".into(),
        )];
    };
    // SAFETY: the loader's exports have these C signatures (the OpenCL headers').
    let (ids, info, devices) = unsafe {
        (
            std::mem::transmute::<*mut c_void, ClGetPlatformIds>(ids),
            std::mem::transmute::<*mut c_void, ClGetPlatformInfo>(info),
            std::mem::transmute::<*mut c_void, ClGetDeviceIds>(devices),
        )
    };
    let mut platforms = [std::ptr::null_mut(); 16];
    let mut n = 0u32;
    // SAFETY: room for 16 handles and a count.
    let status = unsafe { ids(16, platforms.as_mut_ptr(), &mut n) };
    if status != 0 || n == 0 {
        return vec![Finding::Problem(format!(
            "the OpenCL loader lists no platform (clGetPlatformIDs: {status}): no runtime is \
             registered (/etc/OpenCL/vendors/*.icd, OCL_ICD_VENDORS, OCL_ICD_FILENAMES)"
        ))];
    }
    let mut out = Vec::new();
    let mut gpus = 0;
    for &platform in platforms.iter().take(n.min(16) as usize) {
        let mut name = [0u8; 256];
        // SAFETY: a platform handle the loader gave, and a buffer of its size.
        unsafe {
            info(
                platform,
                CL_PLATFORM_NAME,
                name.len(),
                name.as_mut_ptr().cast(),
                std::ptr::null_mut(),
            )
        };
        let name = CStr::from_bytes_until_nul(&name)
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        let count = |kind: u64| {
            let mut count = 0u32;
            // SAFETY: a count query.
            let status = unsafe { devices(platform, kind, 0, std::ptr::null_mut(), &mut count) };
            if status == 0 { count } else { 0 }
        };
        let (all, gpu) = (count(CL_DEVICE_TYPE_ALL), count(CL_DEVICE_TYPE_GPU));
        gpus += gpu;
        out.push(Finding::Ok(format!(
            "platform {name:?}: {all} device(s), {gpu} GPU(s)"
        )));
    }
    if gpus == 0 {
        out.push(Finding::Note(
            "no OpenCL GPU: OpenCL device records come from CPU devices only".into(),
        ));
    }
    out
}

type ZeInit = unsafe extern "C" fn(u32) -> i32;
type ZeDriverGet = unsafe extern "C" fn(*mut u32, *mut *mut c_void) -> i32;
type ZeDeviceGet = unsafe extern "C" fn(*mut c_void, *mut u32, *mut *mut c_void) -> i32;

/// The Level Zero loader, its tracing layer, and the drivers with devices.
fn level_zero() -> Vec<Finding> {
    let Some(loader) = open("libze_loader.so.1") else {
        return vec![Finding::Note(
            "no Level Zero loader (libze_loader.so.1): Level Zero programs cannot run here".into(),
        )];
    };
    let mut out = Vec::new();
    if open("libze_tracing_layer.so.1").is_none() {
        out.push(Finding::Problem(
            "the loader's tracing layer (libze_tracing_layer.so.1) is missing: libpti traces \
             Level Zero through it (install the loader's package whole)"
                .into(),
        ));
    }
    if symbol(loader, "zelEnableTracingLayer").is_some() {
        out.push(Finding::Ok(
            "the loader can load its tracing layer at run time (zelEnableTracingLayer): a tool \
             may enable libpti after the program's first zeInit"
                .into(),
        ));
    } else {
        out.push(Finding::Note(
            "the loader is older than 1.16 (no zelEnableTracingLayer): the tracing layer loads \
             only if ZE_ENABLE_TRACING_LAYER=1 is set before the program's first zeInit, which \
             pti-trace and libpti's constructor do; a program that initialised Level Zero \
             before libpti was loaded is not traced"
                .into(),
        ));
    }
    let (Some(init), Some(driver_get), Some(device_get)) = (
        symbol(loader, "zeInit"),
        symbol(loader, "zeDriverGet"),
        symbol(loader, "zeDeviceGet"),
    ) else {
        out.push(Finding::Problem(
            "libze_loader.so.1 lacks zeInit: not a Level Zero loader".into(),
        ));
        return out;
    };
    // SAFETY: the loader's exports have the Level Zero headers' signatures.
    let (init, driver_get, device_get) = unsafe {
        (
            std::mem::transmute::<*mut c_void, ZeInit>(init),
            std::mem::transmute::<*mut c_void, ZeDriverGet>(driver_get),
            std::mem::transmute::<*mut c_void, ZeDeviceGet>(device_get),
        )
    };
    // SAFETY: zeInit may be called at any time; 0 asks for every driver type.
    let status = unsafe { init(0) };
    let mut drivers = 0u32;
    // SAFETY: a count query.
    if status != 0 || unsafe { driver_get(&mut drivers, std::ptr::null_mut()) } != 0 || drivers == 0
    {
        out.push(Finding::Note(format!(
            "no Level Zero driver answers (zeInit: 0x{status:x}): no Intel GPU driver installed \
             (libze_intel_gpu.so.1), or the render devices cannot be opened (below)"
        )));
        return out;
    }
    let mut handles = vec![std::ptr::null_mut(); drivers as usize];
    // SAFETY: room for `drivers` handles.
    unsafe { driver_get(&mut drivers, handles.as_mut_ptr()) };
    let devices: u32 = handles
        .iter()
        .take(drivers as usize)
        .map(|&d| {
            let mut n = 0u32;
            // SAFETY: a driver handle the loader gave; a count query.
            let status = unsafe { device_get(d, &mut n, std::ptr::null_mut()) };
            if status == 0 { n } else { 0 }
        })
        .sum();
    out.push(Finding::Ok(format!(
        "{drivers} driver(s), {devices} device(s)"
    )));
    out
}

/// The render devices a GPU runtime opens, and whether this user may.
fn render_devices() -> Vec<Finding> {
    let Ok(entries) = std::fs::read_dir("/dev/dri") else {
        return vec![Finding::Note(
            "no /dev/dri: no GPU the kernel's DRM drivers expose (a container may need \
             --device /dev/dri)"
                .into(),
        )];
    };
    let mut out = Vec::new();
    let mut nodes: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("renderD"))
        })
        .collect();
    nodes.sort();
    for node in nodes {
        out.push(if accessible(&node) {
            Finding::Ok(format!("{} can be opened", node.display()))
        } else {
            Finding::Problem(format!(
                "{} cannot be opened for reading and writing by this user: GPU runtimes find no \
                 device (add the user to the device's group, often `render`: `ls -l {}`)",
                node.display(),
                node.display()
            ))
        });
    }
    if out.is_empty() {
        out.push(Finding::Note(
            "no render device in /dev/dri: no GPU for compute".into(),
        ));
    }
    out
}

fn accessible(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path.
    unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::W_OK) == 0 }
}

/// The SYCL runtime, and what it needs to be traced.
fn sycl() -> Vec<Finding> {
    let found = ["libsycl.so.8", "libsycl.so.7", "libsycl.so"]
        .iter()
        .any(|name| library_on_path(name));
    vec![if found {
        Finding::Note(
            "the SYCL runtime reads XPTI_SUBSCRIBERS when it loads: a program that loads it \
             before libpti (Python importing dpctl before libpti) is not traced for SYCL; under \
             pti-trace libpti is loaded first"
                .into(),
        )
    } else {
        Finding::Ok(
            "no SYCL runtime on the library path (SYCL programs ship their own: a program's \
             runtime is traced when libpti is loaded before it)"
                .into(),
        )
    }]
}

/// Whether the dynamic linker would find `name` (without loading it: a SYCL runtime's
/// constructors start threads).
fn library_on_path(name: &str) -> bool {
    let Ok(c) = CString::new(name) else {
        return false;
    };
    // SAFETY: RTLD_NOLOAD only asks whether it is loaded; then a lazy load, closed again.
    unsafe {
        let handle = libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if !handle.is_null() {
            return true;
        }
    }
    // The linker cache lists what the system library path holds.
    std::process::Command::new("ldconfig")
        .arg("-p")
        .output()
        .is_ok_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .any(|l| l.trim_start().starts_with(name))
        })
}

#[cfg(test)]
mod tests {
    use super::{Finding, environment_from};

    #[test]
    fn variables_that_switch_tracing_off_are_problems() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert!(matches!(
            environment_from(env(&[])).as_slice(),
            [Finding::Ok(_)]
        ));
        let found = environment_from(env(&[
            ("PTI_LEVEL_ZERO", "0"),
            ("ZE_ENABLE_TRACING_LAYER", "0"),
            ("XPTI_SUBSCRIBERS", "/opt/other/libsub.so"),
        ]));
        assert_eq!(
            found
                .iter()
                .filter(|f| matches!(f, Finding::Problem(_)))
                .count(),
            3,
            "{found:?}"
        );
        let ours = environment_from(env(&[("XPTI_SUBSCRIBERS", "/x/libpti.so.0")]));
        assert!(matches!(ours.as_slice(), [Finding::Ok(_)]), "{ours:?}");
    }
}
