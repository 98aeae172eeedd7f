//! Seats: reading them for a claim (`seat_reads`), choosing blocks (`blocks`), the claim's
//! conditional write (`claim`), the per-buyer seat count (`seat_counts`), settling a hold
//! (`settle`), the seat items (`seat_items`) and the inventory port over them (`inventory`).

pub(crate) mod blocks;
pub(crate) mod claim;
pub(crate) mod inventory;
pub(crate) mod seat_counts;
pub(crate) mod seat_items;
pub(crate) mod seat_reads;
pub(crate) mod settle;
