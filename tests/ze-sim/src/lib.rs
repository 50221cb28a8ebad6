//! # ze-sim: a simulated Level Zero driver — a TEST DOUBLE, not a driver
//!
//! libpti's Level Zero tests run the real Level Zero loader and its tracing layer; no GPU driver
//! exists on the test machines, so this library stands in for one. The loader loads it through
//! `ZE_ENABLE_ALT_DRIVERS=/abs/path/libze_sim.so`. It offers one device, the CPU itself (of type
//! `ZE_DEVICE_TYPE_CPU`, or `ZE_DEVICE_TYPE_GPU` with `ZE_SIM_DEVICE_TYPE=gpu`):
//!
//! - command lists (regular and immediate) and queues that really execute, on the calling
//!   thread: memory copies and fills, and the kernels this fixture defines (`vadd`, `scale`,
//!   `spin`; a module's binary is ignored); prefetches and memory advice (no effect on a CPU),
//!   and launches of several kernels indirectly (which signal their event and run nothing);
//! - event pools and events, with kernel timestamps in ticks of the fixture's own timer
//!   ([`clock`]): 19.2 MHz, a global timer of 48 valid bits, kernel timestamps of only 32 valid
//!   bits, and a start far from the host clock whose low 32 bits wrap half a second after the
//!   driver starts (`ZE_SIM_WRAP_US` sets when), so that a profiler's conversion and
//!   its wrap-around handling are truly exercised;
//! - `zeDeviceGetGlobalTimestamps` pairs (host CLOCK_MONOTONIC_RAW, device ticks), as the
//!   specification defines them.
//!
//! For the tests it also writes, when asked through the environment:
//! - `ZE_SIM_TRUTH=<file>`: one line per executed command with the host times (CLOCK_MONOTONIC_RAW
//!   ns) at which it really started and ended, the ground truth for converted timestamps, and
//!   the host times of the driver's start and of the kernel timestamps' wrap;
//! - `ZE_SIM_REPORT=<file>`: at exit, how many objects of each kind are still alive (leaks), and
//!   how many commands ran while an event they wait for had not signalled (`stuck`: a real
//!   device would have waited for ever).
//!
//! Functions newer than the loader the tests run (API 1.4), and Intel's
//! `zexCounterBasedEventCreate2`, are in no DDI table the loader knows: the fixture serves them
//! through `zeDriverGetExtensionFunctionAddress` (`modern`), as a real driver does for an old
//! loader (any other name: NULL and `ZE_RESULT_ERROR_INVALID_ARGUMENT`):
//! - counter-based events (`zeEventCounterBasedCreate`, `zexCounterBasedEventCreate2`): of no
//!   pool, re-armed by each command that signals them (the latest one defines their state and
//!   timestamps), with kernel timestamps only if created with a timestamp flag, never reset or
//!   signalled by the host (`ZE_RESULT_ERROR_INVALID_ARGUMENT`), counted with the events;
//! - host functions (`zeCommandListAppendHostFunction`), run when their command executes;
//! - the `…WithParameters` (and `…WithArguments`) appends, as their plain forms;
//! - regular lists run on an immediate list (`zeCommandListImmediateAppendCommandListsExp`,
//!   `…WithParameters`), as a queue runs them, the signal event spanning the whole run;
//! - `zeCommandListHostSynchronize`;
//! - the other newer functions Intel's Unified Runtime adapters call (`adapters`):
//!   `zeDeviceGetRootDevice` (a root device), `zeDeviceSynchronize`, `zeCommandListIsImmediate`,
//!   `zeDriverGetDefaultContext` (none: NULL), and, unsupported, the ones below.
//!
//! For Intel's Unified Runtime Level Zero adapters (SYCL over Level Zero, `tests/sycl.rs`) it
//! also answers the device's memory (one 4 GiB memory; host, device and shared allocations with
//! read-write, atomic and concurrent access), module (SPIR-V 1.2), cache, image, external-memory
//! and peer properties, module and kernel properties (each kernel's argument count), a kernel's
//! indirect access and cache configuration, making memory resident, and `zeMemFreeExt`.
//!
//! Not modelled (answered as a real driver answers for a feature it lacks: none to list, zero
//! capabilities, or `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`): images and samplers (zero image
//! capabilities; `zeImageViewCreateExt`), sub-devices (none), peer access (none), IPC of memory
//! and of counter-based events, physical and virtual memory (`zePhysicalMemGetProperties`),
//! vector widths (`zeDeviceGetVectorWidthPropertiesExt`), caches (none listed), module builds (a
//! module's binary is not read, and every module holds the three kernels; no build log), and
//! concurrency (see below).
//!
//! `ZE_SIM_MINIMAL` (read once; comma-separated; an unknown word is reported on stderr and
//! ignored) makes a deliberately minimal driver, for a profiler's fallbacks: each feature it
//! names answers `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`, out-parameters untouched:
//! `query-status` (`zeEventQueryStatus`), `global-timestamps` (`zeDeviceGetGlobalTimestamps`),
//! `kernel-timestamps` (`zeEventQueryKernelTimestamp`; pools and events asking for timestamps
//! are still created, the flag ignored).
//!
//! Execution is synchronous: a command has completed when the call that submits it returns, and
//! wait lists are checked rather than waited on.
//! Whatever a test needs that this fixture lacks returns `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`.

mod adapters;
mod api;
mod clock;
mod exec;
mod modern;
mod objects;
pub mod tables;
