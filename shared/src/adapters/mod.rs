//! Adapters: the only code that knows a concrete backend. Each backend implements every port and
//! is compiled only with its Cargo feature (`embedded`, `aws`), so a build for one backend pulls
//! none of the other's libraries; `faults` wraps either for the fault tests.

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "embedded")]
pub mod embedded;
#[cfg(feature = "faults")]
pub mod faults;
