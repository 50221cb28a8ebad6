//! The vocabulary shared by the callback and view APIs: API groups, callback domains, call sites
//! and API IDs.
//!
//! Every enum here is `#[repr(u32)]` with the values of the C enums in `pti_callback.h` and
//! `pti_view.h`, so a value can cross the C boundary unchanged. Conversions from raw numbers go
//! through `from_raw`, which rejects unknown values instead of producing an invalid enum.

/// An API ID: one function of one API group, stable for the life of the project (see [`crate::ids`]).
pub type ApiId = u32;

/// The API groups whose calls libpti traces. The view API's hybrid groups (4, 5) and
/// `PTI_API_GROUP_ALL` only label records; no call is ever dispatched under them.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ApiGroup {
    /// Level Zero (`PTI_API_GROUP_LEVELZERO`), a driver API.
    LevelZero = 1,
    /// OpenCL (`PTI_API_GROUP_OPENCL`), a driver API.
    OpenCl = 2,
    /// SYCL, seen as Unified Runtime calls (`PTI_API_GROUP_SYCL`), a runtime API.
    Sycl = 3,
}

impl ApiGroup {
    /// Every traced group, in numeric order.
    pub const ALL: [ApiGroup; 3] = [ApiGroup::LevelZero, ApiGroup::OpenCl, ApiGroup::Sycl];

    /// The group with C value `raw`, or `None` for any value that names no traced group.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(ApiGroup::LevelZero),
            2 => Some(ApiGroup::OpenCl),
            3 => Some(ApiGroup::Sycl),
            _ => None,
        }
    }

    /// The callback domain under which calls of this group are delivered.
    pub const fn domain(self) -> Domain {
        match self {
            ApiGroup::LevelZero | ApiGroup::OpenCl => Domain::DriverApi,
            ApiGroup::Sycl => Domain::RuntimeApi,
        }
    }

    /// Zero-based position in [`ApiGroup::ALL`], for per-group tables.
    pub const fn index(self) -> usize {
        self as usize - 1
    }
}

/// Callback domains (`pti_callback_domain`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// Level Zero and OpenCL calls.
    DriverApi = 1,
    /// SYCL runtime (Unified Runtime) calls.
    RuntimeApi = 2,
    /// Events inside libpti that lose or corrupt data or stop collection.
    CriticalEvent = 3,
    /// Device operations appended to a command list or queue, and found completed
    /// ([`crate::callback::GpuOperations`]). An engine domain outside the proposal's C enum
    /// (`from_raw` never returns it); Intel's `GPU_OPERATION_*` callback domains rest on it.
    GpuOperations = 0x100,
    /// Kernel objects created and destroyed ([`crate::callback::KernelObject`]). An engine
    /// domain outside the proposal's C enum; Intel's `KERNEL_CREATED`/`DESTROYED` rest on it.
    KernelObjects = 0x101,
}

impl Domain {
    /// The domain with C value `raw`; `None` for `PTI_DOMAIN_INVALID` and unknown values.
    pub const fn from_raw(raw: u32) -> Option<Self> {
        match raw {
            1 => Some(Domain::DriverApi),
            2 => Some(Domain::RuntimeApi),
            3 => Some(Domain::CriticalEvent),
            _ => None,
        }
    }

    /// The API groups whose calls this domain covers (none for critical events).
    pub const fn groups(self) -> &'static [ApiGroup] {
        match self {
            Domain::DriverApi => &[ApiGroup::LevelZero, ApiGroup::OpenCl],
            Domain::RuntimeApi => &[ApiGroup::Sycl],
            Domain::CriticalEvent | Domain::GpuOperations | Domain::KernelObjects => &[],
        }
    }

    /// For a domain that is one on/off flag per subscriber rather than per-function enables,
    /// its bit in the subscriber's flags.
    pub(crate) const fn flag(self) -> Option<u32> {
        match self {
            Domain::DriverApi | Domain::RuntimeApi => None,
            Domain::CriticalEvent => Some(1),
            Domain::GpuOperations => Some(2),
            Domain::KernelObjects => Some(4),
        }
    }
}

/// Classes of API functions, for coarse filtering of API records (`pti_api_class`; ALL and
/// RESERVED are not classes but selectors, handled by the view API).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ApiClass {
    /// Calls that submit memory or kernel work to a device.
    GpuOperationCore = 1,
    /// Calls in which the host waits for the device.
    HostOperationSynchronization = 2,
}

impl ApiClass {
    /// Both classes.
    pub const ALL: [ApiClass; 2] = [
        ApiClass::GpuOperationCore,
        ApiClass::HostOperationSynchronization,
    ];
}

/// Where in a traced call a callback is made (`pti_callback_site`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Site {
    /// Before the traced function runs.
    Enter = 0,
    /// After the traced function returned.
    Exit = 1,
}

impl From<ApiGroup> for pti_abi::pti_api_group_id {
    fn from(group: ApiGroup) -> Self {
        use pti_abi::pti_api_group_id::*;
        match group {
            ApiGroup::LevelZero => PTI_API_GROUP_LEVELZERO,
            ApiGroup::OpenCl => PTI_API_GROUP_OPENCL,
            ApiGroup::Sycl => PTI_API_GROUP_SYCL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_values_round_trip_and_unknown_values_are_rejected() {
        for g in ApiGroup::ALL {
            assert_eq!(ApiGroup::from_raw(g as u32), Some(g));
            assert_eq!(ApiGroup::ALL[g.index()], g);
        }
        for raw in [0, 4, 5, 0x7fff_ffff, u32::MAX] {
            assert_eq!(ApiGroup::from_raw(raw), None);
        }
        assert_eq!(Domain::from_raw(0), None);
        assert_eq!(Domain::from_raw(4), None);
        assert_eq!(Domain::from_raw(3), Some(Domain::CriticalEvent));
    }

    #[test]
    fn domains_cover_each_group_exactly_once() {
        for g in ApiGroup::ALL {
            let owners: Vec<_> = [Domain::DriverApi, Domain::RuntimeApi, Domain::CriticalEvent]
                .into_iter()
                .filter(|d| d.groups().contains(&g))
                .collect();
            assert_eq!(owners, vec![g.domain()]);
        }
    }
}
