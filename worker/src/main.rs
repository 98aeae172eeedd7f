//! `seatclaim-worker`: the claim worker as its own process, as it runs on ECS Fargate (the
//! process itself is the library's [`seatclaim_worker::run`]).

use seatclaim_runtime::cli::AsOpened;

/// mimalloc, as the API uses (see its `main`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    seatclaim_runtime::pages::use_small_pages();
    seatclaim_worker::run::<AsOpened>()
}
