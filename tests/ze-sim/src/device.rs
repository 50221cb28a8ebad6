//! The driver and its devices, as Intel's driver exposes them.
//!
//! One library plays one of two drivers, decided by its own file name: `libze_sim.so` is the GPU
//! driver (a root device, of type CPU unless `ZE_SIM_DEVICE_TYPE=gpu`, with `ZE_SIM_TILES`
//! tiles), and a copy of it named `libze_sim_npu.so` is a second driver with one device of type
//! VPU (an NPU), as Intel's NPU driver is a driver of its own. Each driver honours `zeInit`'s
//! flags as compute-runtime's `L0::init` does: a GPU driver asked for other types only answers
//! `ZE_RESULT_ERROR_UNINITIALIZED` (the loader then drops it), and so does the NPU driver for
//! flags without `ZE_INIT_FLAG_VPU_ONLY`.
//!
//! Tiles follow `ZE_FLAT_DEVICE_HIERARCHY` (compute-runtime's `setDeviceHierarchyMode`,
//! `Device::getSubDevices`, `Device::getRootDevice`): FLAT lists the tiles, which have neither
//! sub-devices nor a root device; COMPOSITE lists the root device, whose sub-devices are the
//! tiles; COMBINED lists the tiles, whose root device is the unlisted root. Work on a root device
//! with tiles runs on both (implicit scaling), and its kernel timestamps are already reduced to
//! one start and end, as `zeEventQueryKernelTimestamp` reduces them (`calculateProfilingData`).
//!
//! Each device has the command-queue groups of a PVC device (compute-runtime's
//! `getGpgpuEngineInstances`): ordinal 0 computes and copies, ordinal 1 is the main copy engine,
//! which runs no kernel. An engine is a thread of its own ([`crate::engine`]).

use std::sync::OnceLock;

use pti_sys::level_zero::*;

use crate::config::{Hierarchy, config};
use crate::engine::Engine;

/// What a device is.
pub(crate) struct Device {
    pub(crate) kind: ze_device_type_t,
    /// Its place in [`devices`].
    pub(crate) index: usize,
    /// A tile's root device.
    pub(crate) root: Option<usize>,
    /// A root device's tiles.
    pub(crate) tiles: Vec<usize>,
    /// Its engines, by queue-group ordinal.
    pub(crate) engines: Vec<Engine>,
}

impl Device {
    /// The engine of queue-group `ordinal` (the first for an ordinal the device lacks, as a
    /// test double trusts its caller).
    pub(crate) fn engine(&self, ordinal: u32) -> &Engine {
        self.engines
            .get(ordinal as usize)
            .unwrap_or(&self.engines[0])
    }

    pub(crate) fn handle(&self) -> ze_device_handle_t {
        (self as *const Device).cast_mut().cast()
    }

    /// Whether the device is a tile of another.
    pub(crate) fn is_tile(&self) -> bool {
        self.root.is_some()
    }
}

/// Which driver this library plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Gpu,
    Npu,
}

/// This library's role, from the file it was loaded from.
pub(crate) fn role() -> Role {
    static ROLE: OnceLock<Role> = OnceLock::new();
    *ROLE.get_or_init(|| {
        // SAFETY: all-zero bytes are a valid Dl_info (pointers and NULL).
        let mut info: libc::Dl_info = unsafe { core::mem::zeroed() };
        // SAFETY: the address of a function of this library, and a writable Dl_info.
        let found = unsafe { libc::dladdr(role as *const core::ffi::c_void, &mut info) } != 0;
        let npu = found
            && !info.dli_fname.is_null()
            // SAFETY: dladdr gives the library's NUL-terminated path.
            && unsafe { core::ffi::CStr::from_ptr(info.dli_fname) }
                .to_bytes()
                .ends_with(b"_npu.so");
        if npu { Role::Npu } else { Role::Gpu }
    })
}

fn build() -> Vec<Device> {
    if role() == Role::Npu {
        return vec![Device {
            kind: ZE_DEVICE_TYPE_VPU,
            index: 0,
            root: None,
            tiles: Vec::new(),
            engines: vec![Engine::new("npu0.compute", false)],
        }];
    }
    let c = config();
    let kind = if c.gpu {
        ZE_DEVICE_TYPE_GPU
    } else {
        ZE_DEVICE_TYPE_CPU
    };
    let engines = |name: &str| {
        vec![
            Engine::new(&format!("{name}.compute"), false),
            Engine::new(&format!("{name}.copy"), true),
        ]
    };
    let tiles = if c.tiles > 1 { c.tiles as usize } else { 0 };
    let mut all = vec![Device {
        kind,
        index: 0,
        root: None,
        tiles: (1..=tiles).collect(),
        engines: engines("dev0"),
    }];
    for t in 1..=tiles {
        all.push(Device {
            kind,
            index: t,
            root: Some(0),
            tiles: Vec::new(),
            engines: engines(&format!("dev0.tile{}", t - 1)),
        });
    }
    all
}

/// Every device of this driver: the root device first, then its tiles.
pub(crate) fn devices() -> &'static [Device] {
    static DEVICES: OnceLock<Vec<Device>> = OnceLock::new();
    DEVICES.get_or_init(|| {
        // Every host time an engine takes must come after the timer's origin (`clock::ticks_at`
        // saturates before it): a program reaches the devices through zeInit, which starts the
        // timer, but the driver's own tests create lists directly.
        crate::clock::start();
        build()
    })
}

/// The device behind `handle` (the root device for a handle of another driver, as a test
/// double trusts its caller).
pub(crate) fn device(handle: ze_device_handle_t) -> &'static Device {
    devices()
        .iter()
        .find(|d| d.handle() == handle)
        .unwrap_or(&devices()[0])
}

/// The devices `zeDeviceGet` lists.
pub(crate) fn listed() -> Vec<ze_device_handle_t> {
    let all = devices();
    let root = &all[0];
    if root.tiles.is_empty() || config().hierarchy == Hierarchy::Composite {
        vec![root.handle()]
    } else {
        root.tiles.iter().map(|&t| all[t].handle()).collect()
    }
}

/// `zeDeviceGetSubDevices`' answer for `d`.
pub(crate) fn sub_devices(d: &Device) -> Vec<ze_device_handle_t> {
    if config().hierarchy == Hierarchy::Composite {
        d.tiles.iter().map(|&t| devices()[t].handle()).collect()
    } else {
        Vec::new()
    }
}

/// `zeDeviceGetRootDevice`'s answer for `d` (NULL: none).
pub(crate) fn root_device(d: &Device) -> ze_device_handle_t {
    match (config().hierarchy, d.root) {
        (Hierarchy::Flat, _) | (_, None) => core::ptr::null_mut(),
        (_, Some(root)) => devices()[root].handle(),
    }
}

/// The one driver: the address of this static is its handle.
static DRIVER: u8 = 0;

pub(crate) fn driver_handle() -> ze_driver_handle_t {
    (&raw const DRIVER).cast_mut().cast()
}

/// The answer of this driver's `zeInitDrivers` to the driver types `flags` asks for
/// (compute-runtime's `L0::initDrivers` answers only a request that names the GPU type; the NPU
/// driver, only one that names the NPU type).
pub(crate) fn init_drivers(flags: ze_init_driver_type_flags_t) -> ze_result_t {
    let wanted = match role() {
        Role::Gpu => ZE_INIT_DRIVER_TYPE_FLAG_GPU,
        Role::Npu => ZE_INIT_DRIVER_TYPE_FLAG_NPU,
    };
    if flags & wanted == 0 {
        return ZE_RESULT_ERROR_UNINITIALIZED;
    }
    ZE_RESULT_SUCCESS
}

/// The answer of this driver's `zeInit` to `flags` (compute-runtime's `L0::init`).
pub(crate) fn init(flags: ze_init_flags_t) -> ze_result_t {
    let wanted = match role() {
        Role::Gpu => ZE_INIT_FLAG_GPU_ONLY,
        Role::Npu => ZE_INIT_FLAG_VPU_ONLY,
    };
    if flags != 0 && flags & wanted == 0 {
        return ZE_RESULT_ERROR_UNINITIALIZED;
    }
    ZE_RESULT_SUCCESS
}

/// The queue groups of a device: (flags, queues). A tile and a root device have the same; the
/// NPU computes only.
pub(crate) fn queue_groups(d: &Device) -> Vec<(ze_command_queue_group_property_flags_t, u32)> {
    if d.kind == ZE_DEVICE_TYPE_VPU {
        return vec![(ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE, 1)];
    }
    vec![
        (
            ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE
                | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
            4,
        ),
        (ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY, 1),
    ]
}
