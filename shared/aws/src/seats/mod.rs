//! Seats: reading them for a claim (`seat_reads`), choosing blocks (`blocks`), the per-buyer
//! seat count (`seat_counts`), the seat items (`seat_items`) and the inventory port
//! (`inventory`), whose claims and settlements the core's optimistic step decides (`commit/`).

pub(crate) mod blocks;
pub(crate) mod inventory;
pub(crate) mod seat_counts;
pub(crate) mod seat_items;
pub(crate) mod seat_reads;
