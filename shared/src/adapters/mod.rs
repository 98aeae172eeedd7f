//! Adapters: the only code that knows a concrete backend. Each submodule implements every port.

pub mod aws;
pub mod embedded;
pub mod faults;
