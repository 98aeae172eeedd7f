//! The HTTP API from the outside: its contract line by line, its OpenAPI document, the bounds on
//! requests, the seat map's snapshots, and what operators see in its metrics.

mod contract;
mod limits;
mod observability;
mod openapi;
mod seat_map_cache;
