//! # ze-sim: a simulated Level Zero driver — a TEST DOUBLE, not a driver
//!
//! libpti's Level Zero tests run the real Level Zero loader and its tracing layer; no GPU driver
//! exists on the test machines, so this library stands in for one. The loader loads it through
//! `ZE_ENABLE_ALT_DRIVERS=/abs/path/libze_sim.so`. It must behave as Intel's GPU driver does on
//! a GPU, never more kindly: a profiler that is right on it should be right on the hardware.
//! Each behaviour below names the driver code or specification text it follows (read in
//! intel/compute-runtime, the Level Zero specification and loader, 2026-11); the modules say more.
//!
//! - **Asynchronous devices** (`engine`): commands run on engine threads after the call that
//!   submits them returned, `ZE_SIM_LATENCY_NS` later at the earliest (plus up to
//!   `ZE_SIM_JITTER_NS`); an event's status and timestamps change when its command completes
//!   (`NOT_READY` before). Lists and queues in order or not (out-of-order lists run their
//!   commands in a random order between barriers); a compute engine and a copy engine per device
//!   (queue-group ordinals 0 and 1, as on PVC; a copy engine runs no kernel).
//! - **Events** (`event`): regular events; counter-based pools (`pNext`) and events
//!   (`zeEventCounterBasedCreate`, `zexCounterBasedEventCreate2`), re-armed by each append that
//!   signals them; the driver's implicit counter-based mode of regular events on in-order
//!   immediate lists; timestamps of counter-based events written after their completion, and
//!   `zeEventQueryKernelTimestamp` polling for them (`NOT_READY` after a timeout);
//!   `KERNEL_MAPPED_TIMESTAMP` pools; device-side resets; copies of kernel timestamps
//!   (`zeCommandListAppendQueryKernelTimestamps`, waiting implicitly on counter-based events
//!   only).
//! - **Devices** (`device`): a root device with `ZE_SIM_TILES` tiles exposed as
//!   `ZE_FLAT_DEVICE_HIERARCHY` says; a second driver with an NPU (this library copied to
//!   `libze_sim_npu.so`); `zeInit`'s flags and `zeInitDrivers`' driver types honoured by each
//!   driver (compute-runtime's `L0::init` and `initDrivers`).
//! - **Graphs** (`graph`): capture and replay, through the `…Ext` functions and the older
//!   `…Exp` ones; **mutable command lists** and **list clones** (`mutable`).
//! - Kernels (`memory`): `vadd`, `scale`, `spin` (a module's binary is ignored); memory of every
//!   kind is host memory.
//! - Timestamps in ticks of the driver's own timer (`clock`): 19.2 MHz, a global timer of 48
//!   valid bits, kernel timestamps of 32, and a start far from the host clock whose low 32 bits
//!   wrap half a second after the driver starts (`ZE_SIM_WRAP_US` sets when), so that a
//!   profiler's conversion and its wrap-around handling are truly exercised;
//!   `zeDeviceGetGlobalTimestamps` pairs (host CLOCK_MONOTONIC_RAW, device ticks).
//!
//! For the tests it writes the ground truth and a report at exit (`report`): `ZE_SIM_TRUTH`,
//! `ZE_SIM_REPORT`. Settings are in `config` (`ZE_SIM_SEED` replays a run's randomness).
//!
//! Functions newer than the loader the tests run (API 1.4) and Intel's `zex*` extensions are in
//! no DDI table the loader knows: the driver serves them through
//! `zeDriverGetExtensionFunctionAddress` (`modern`), as a real driver does for an old loader.
//!
//! For Intel's Unified Runtime Level Zero adapters (SYCL over Level Zero, `tests/sycl.rs`) it
//! also answers the device's memory, module, cache, image, external-memory and peer properties,
//! module and kernel properties, a kernel's indirect access and cache configuration, making
//! memory resident, and `zeMemFreeExt` (`adapters`).
//!
//! Not modelled (answered as a real driver answers for a feature it lacks: none to list, zero
//! capabilities, or `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`): images and samplers, peer access,
//! IPC of memory and of counter-based events, physical and virtual memory, vector widths,
//! caches, module builds, graph forks and joins, per-tile timestamp packets beyond the reduced
//! result, and `ZE_SIM_MINIMAL`'s entry points (`config`).

mod adapters;
mod api;
mod clock;
mod config;
mod device;
mod engine;
mod event;
mod exec;
mod graph;
mod list;
mod memory;
mod modern;
mod mutable;
mod objects;
mod report;
pub mod tables;
