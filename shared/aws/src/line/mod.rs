//! The line: queue positions (`counts`), whether a section has a waitlist (`flags`), joining and
//! leaving it (`waitlist`), reading it (`reads`) and serving it (`serve`).

pub(crate) mod counts;
pub(crate) mod flags;
pub(crate) mod reads;
pub(crate) mod serve;
pub(crate) mod waitlist;
