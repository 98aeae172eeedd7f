//! Whether a section has a line, read without a hot key. Every claim of a section on an event
//! with an open waitlist must know it, so the answer cannot be a read of the line's eight
//! shards each time (on the hot seats' section that is more than half of each shard's read
//! limit at the target rate). The join that forms a line also writes the section's flag, in
//! [`FLAG_COPIES`] copies, and a claim reads one copy at random (strongly consistent): no flag,
//! no line. A flag stays while the waitlist is open, so a flagged section may have had a line
//! that emptied since: a claim reads the line's shards only where it would take seats (free
//! seats that satisfy it), and joins the line without reading it where it would wait anyway.

use aws_sdk_dynamodb::types::{Put, TransactWriteItem};

use crate::DynamoStore;
use crate::dynamo::error::{build_error, classify};
use crate::dynamo::item::{Item, s};
use seatclaim_core::domain::EventId;
use seatclaim_core::ports::BackendError;

/// Copies of a section's flag: a claim reads one, so a section's claims spread over this many
/// keys (a tenth of the sale's 16,700 intents a second is about 2,100 reads on each).
pub(crate) const FLAG_COPIES: u32 = 8;

fn flag_key(event_id: &EventId, section: &str, copy: u32) -> Item {
    Item::from([
        (
            "job_id".to_owned(),
            s(format!("line#{event_id}#{section}#flag{copy}")),
        ),
        ("id".to_owned(), s("#flag")),
    ])
}

impl DynamoStore {
    /// Whether `section` has its flag: one copy, at random, read strongly consistent.
    pub(crate) async fn flagged(
        &self,
        event_id: &EventId,
        section: &str,
    ) -> Result<bool, BackendError> {
        let copy = fastrand::u32(..FLAG_COPIES);
        let output = self
            .db
            .get_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(flag_key(event_id, section, copy)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify("GetItem line flag", e))?;
        Ok(output.item().is_some())
    }

    /// The puts of every copy of `section`'s flag, in the join that forms its line.
    pub(crate) fn flag_writes(
        &self,
        event_id: &EventId,
        section: &str,
    ) -> Result<Vec<TransactWriteItem>, BackendError> {
        (0..FLAG_COPIES)
            .map(|copy| {
                let put = Put::builder()
                    .table_name(&self.names.outbox_table)
                    .set_item(Some(flag_key(event_id, section, copy)))
                    .build()
                    .map_err(build_error)?;
                Ok(TransactWriteItem::builder().put(put).build())
            })
            .collect()
    }
}
