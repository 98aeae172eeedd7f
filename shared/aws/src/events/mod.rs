//! The catalog: events and their seat maps (`catalog`), their access codes (`codes`), the process's cache of their terms
//! (`event_cache`), and what each section can ever serve (`capacity`).

pub(crate) mod capacity;
pub(crate) mod catalog;
pub(crate) mod codes;
pub(crate) mod event_cache;
pub(crate) mod tallies;
