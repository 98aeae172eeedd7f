//! How many messages wait where in the embedded queue.

use rusqlite::params;

use super::EmbeddedStore;
use super::intent_queue::{DEAD, MAIN};
use crate::error::sqlite_error;
use seatclaim_core::codec::to_ms;
use seatclaim_core::ports::{BackendError, QueueDepth};

impl EmbeddedStore {
    /// Ready, in-flight and dead messages, counted exactly in one snapshot.
    pub(super) async fn queue_depth(&self) -> Result<QueueDepth, BackendError> {
        let now = to_ms(self.clock.now());
        self.db
            .read(move |tx| {
                let mut count = tx
                    .prepare_cached(
                        "SELECT count(*) FILTER (WHERE queue = ?1 AND visible_at <= ?3),
                            count(*) FILTER (WHERE queue = ?1 AND visible_at > ?3),
                            count(*) FILTER (WHERE queue = ?2)
                     FROM messages",
                    )
                    .map_err(sqlite_error)?;
                let counts = count
                    .query_row(params![MAIN, DEAD, now], |row| {
                        Ok((
                            row.get::<_, i64>(0)?,
                            row.get::<_, i64>(1)?,
                            row.get::<_, i64>(2)?,
                        ))
                    })
                    .map_err(sqlite_error)?;
                let known = |n: i64| u64::try_from(n).unwrap_or(0);
                Ok(QueueDepth {
                    ready: known(counts.0),
                    in_flight: known(counts.1),
                    dead: known(counts.2),
                })
            })
            .await
    }
}
