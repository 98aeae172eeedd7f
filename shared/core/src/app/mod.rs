//! The application layer: each use case once, as a function over the ports. The API's handlers,
//! the worker's loops and `seatclaimctl` are thin callers of these; the domain decides, these
//! orchestrate the ports in the order the invariants need, and the adapters execute.

mod admit;
mod audit;
pub mod backoff;
mod batch;
pub mod dead_letters;
mod decide;
mod give_up;
mod holds;
pub mod jobs;
pub mod payments;
mod relay;
mod retention;

pub use admit::admit;
pub use audit::{AuditReport, audit_event};
pub use batch::{BatchOutcome, Limits};
pub use decide::{claim, decide_batch};
pub use holds::{settle, sweep_once};
pub use relay::{RELAY_PAGE, relay_once};
pub use retention::purge_once;
