//! Outbox shard leases: a relay publishes a shard's entries only while it holds the shard's
//! lease, a conditional write on the shard's lease item (`job_id` = `lease#<shard>`, in the
//! outbox table) naming the relay (one per store) as owner. Relays side by side therefore
//! publish different shards, and an entry is published twice only when a relay died between
//! publishing and marking: its leases lapse after [`LEASE_MS`] and another relay takes the shard
//! over. A relay whose publishing failed takes its own shards again at once.

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, n, s};
use seatclaim_core::ports::BackendError;

/// How long a lease lasts unless released: the delay before a dead relay's shards move on.
pub(crate) const LEASE_MS: i64 = 10_000;

fn lease_key(shard: u32) -> Item {
    Item::from([
        ("job_id".to_owned(), s(format!("lease#{shard}"))),
        ("id".to_owned(), s("lease")),
    ])
}

impl DynamoStore {
    /// Takes (or renews) the lease of `shard`; `false` while another relay holds it.
    pub(crate) async fn lease(&self, shard: u32) -> Result<bool, BackendError> {
        let now = self.clock.now().as_millisecond();
        let taken = self
            .db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(lease_key(shard)))
            .update_expression("SET #owner = :me, lease_until = :until")
            .condition_expression(
                "attribute_not_exists(lease_until) OR lease_until <= :now OR #owner = :me",
            )
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_values(":me", s(self.process.id.clone()))
            .expression_attribute_values(":until", n(now + LEASE_MS))
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match taken {
            Ok(_) => {
                self.process
                    .leases
                    .lock()
                    .map_err(|_| poisoned())?
                    .insert(shard);
                Ok(true)
            }
            Err(error)
                if error
                    .as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(error) => Err(classify("UpdateItem outbox lease", error)),
        }
    }

    /// Ends the leases this process holds on `shards`, so the next round of any relay may take
    /// them.
    pub(crate) async fn release(
        &self,
        shards: impl IntoIterator<Item = u32>,
    ) -> Result<(), BackendError> {
        let held: Vec<u32> = {
            let mut leases = self.process.leases.lock().map_err(|_| poisoned())?;
            shards
                .into_iter()
                .filter(|shard| leases.remove(shard))
                .collect()
        };
        let releases = held.into_iter().map(|shard| async move {
            let released = self
                .db
                .update_item()
                .table_name(&self.names.outbox_table)
                .set_key(Some(lease_key(shard)))
                .update_expression("SET lease_until = :zero")
                .condition_expression("#owner = :me")
                .expression_attribute_names("#owner", "owner")
                .expression_attribute_values(":me", s(self.process.id.clone()))
                .expression_attribute_values(":zero", n(0))
                .send()
                .await;
            match released {
                // Lapsed and taken over already: nothing of ours to end.
                Err(error)
                    if error
                        .as_service_error()
                        .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
                {
                    Ok(())
                }
                other => other
                    .map(|_| ())
                    .map_err(|e| classify("UpdateItem outbox lease", e)),
            }
        });
        futures_util::future::try_join_all(releases).await?;
        Ok(())
    }
}

fn poisoned() -> BackendError {
    BackendError::permanent("the outbox lease set was poisoned")
}
