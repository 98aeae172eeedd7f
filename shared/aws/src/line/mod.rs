//! The line: queue positions (`counts`), whether a section has a waitlist (`flags`), joining,
//! leaving and closing it (`waitlist`) and reading it (`reads`); serving it is the core's
//! optimistic step (`commit/`).

pub(crate) mod counts;
pub(crate) mod flags;
pub(crate) mod reads;
pub(crate) mod waitlist;
