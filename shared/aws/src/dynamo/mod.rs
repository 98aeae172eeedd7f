//! The DynamoDB plumbing every subject writes through: attribute codecs and the transaction
//! helper (`item`), which errors a worker retries (`error`), and every key value and shard count
//! in one place (`keys`).

pub(crate) mod error;
pub(crate) mod item;
pub(crate) mod keys;
