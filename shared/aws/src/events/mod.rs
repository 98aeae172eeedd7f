//! The catalog: events and their seat maps (`catalog`), the process's cache of their terms
//! (`event_cache`), and what each section can ever serve (`capacity`).

pub(crate) mod capacity;
pub(crate) mod catalog;
pub(crate) mod event_cache;
