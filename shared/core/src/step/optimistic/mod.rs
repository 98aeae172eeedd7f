//! The claim, settlement and hand-out algorithm for a store without interactive transactions
//! (DynamoDB), written once here: the step reads through the store's [`Commit`] port (reads that
//! may be stale), asks the domain, and hands the store one [`Plan`](super::Plan) per decision,
//! every write under the condition the domain names; the store runs it atomically and says which
//! condition failed, and the retry on a lost condition ("lost a seat, choose again", within a
//! bound) is decided here. The AWS backend ships it, and the simulation runs it on the memory
//! store with concurrent writers between each read and its commit.

mod claim;
mod codes;
mod end_wait;
mod lines;
mod serve;
mod settle;

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::domain::{BuyerId, EventId, Intent};
use crate::ports::BackendError;
use crate::step::{Commit, Decided};

pub use claim::claim_one;
pub use end_wait::end_wait;
pub use serve::serve_open_lines;
pub use settle::settle;

/// Claims each intent, in the intents' order. Intents are independent decisions (the conditions
/// settle any race between them), so the batch is claimed concurrently, its latency one
/// claim's, not ten; only one buyer's intents for one event go in turn, since under a seat limit
/// they move one count, where racing commits cancel each other.
pub async fn claim_each(
    store: &impl Commit,
    intents: &[Intent],
    now: Timestamp,
) -> Vec<Result<Decided, BackendError>> {
    // Ordered, so that a simulation's seed claims in the same order on every run.
    let mut turns: BTreeMap<(&EventId, &BuyerId), Vec<usize>> = BTreeMap::new();
    for (position, intent) in intents.iter().enumerate() {
        turns
            .entry((&intent.event_id, &intent.buyer_id))
            .or_default()
            .push(position);
    }
    let mut claimed: Vec<(usize, Result<Decided, BackendError>)> =
        futures_util::future::join_all(turns.into_values().map(|positions| async move {
            let mut claimed = Vec::with_capacity(positions.len());
            for position in positions {
                claimed.push((position, claim_one(store, &intents[position], now).await));
            }
            claimed
        }))
        .await
        .into_iter()
        .flatten()
        .collect();
    claimed.sort_by_key(|(position, _)| *position);
    claimed.into_iter().map(|(_, result)| result).collect()
}
