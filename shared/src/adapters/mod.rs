//! Adapters: the only code that knows a concrete backend. Each backend implements every port and
//! is compiled only with its Cargo feature (`embedded`, `aws`), so a build for one backend pulls
//! none of the other's libraries; `faults` wraps either for the fault tests, and `memory` keeps
//! every port in plain maps for the deterministic simulation.

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "embedded")]
pub mod embedded;
#[cfg(feature = "faults")]
pub mod faults;
#[cfg(feature = "memory")]
pub mod memory;
