//! Reservation events on their way out: the outbox records of every transition (`records`),
//! the shard leases that share the relay (`leases`), rejections' cheaper path (`rejections`) and
//! the EventBridge publisher (`event_bus`).

pub(crate) mod event_bus;
pub(crate) mod leases;
pub(crate) mod records;
pub(crate) mod rejections;
