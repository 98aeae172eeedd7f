//! The ports: one small trait per capability seatclaim needs from a backend.
//!
//! Each backend crate (`seatclaim-embedded`, `seatclaim-aws`) implements all of them and returns
//! them bundled as a [`Backend`] from its [`Driver`], the one trait the composition calls; the
//! generic contract suite in `tests/` holds every implementation to the same semantics. Nothing
//! outside the backend crates sees a SQLite or AWS type; everything speaks the domain's types and
//! [`BackendError`].

mod admissions;
mod backend;
mod catalog;
mod clock;
mod driver;
mod error;
mod event_publisher;
mod intent_queue;
mod inventory;
mod jobs;
mod outbox;

pub use admissions::{Admission, Admissions, SectionKnown};
pub use backend::Backend;
pub use catalog::{
    Catalog, CodeStanding, CodesCreation, EventCreation, EventInfo, EventTallies, Opening,
};
pub use clock::{Clock, SystemClock};
pub use driver::{BackgroundTask, Driver, Opened};
pub use error::{BackendError, ErrorKind};
pub use event_publisher::EventPublisher;
pub use intent_queue::{
    DeadLetter, DeadLetterHandle, Delivery, IntentQueue, Message, QueueDepth, Receipt, Redelivery,
};
pub use inventory::{ClaimOutcome, Claims, Inventory, Settled};
pub use jobs::Jobs;
pub use outbox::{Outbox, OutboxEntry, OutboxId};
