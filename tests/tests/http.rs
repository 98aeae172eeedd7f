//! The HTTP API from the outside: its contract line by line, its OpenAPI document, the bounds on
//! requests (and each buyer's share of the long polls), the seat map's snapshots and read budget, and what
//! operators see in its metrics.

mod contract;
mod limits;
mod long_poll_share;
mod observability;
mod openapi;
mod read_budget;
mod seat_map_cache;
