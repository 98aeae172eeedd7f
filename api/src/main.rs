//! `seatclaim-api`: the admission and status API; locally it also runs the worker in-process
//! (the process itself is the library's [`seatclaim_api::run`]).

use seatclaim_runtime::cli::AsOpened;

/// mimalloc, not glibc's malloc: under load the API allocates and frees per request on every
/// worker thread, and glibc's malloc and free took a fifth of its CPU (tests/bench, the profile).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    seatclaim_runtime::pages::use_small_pages();
    seatclaim_api::run::<AsOpened>()
}
