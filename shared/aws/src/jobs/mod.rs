//! Jobs: admission, where a job item is its idempotency key's record (`admissions`), and the
//! job item itself, read and written by every transition (`records`).

pub(crate) mod admissions;
pub(crate) mod records;
