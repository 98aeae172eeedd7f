//! Access codes on DynamoDB. Each code is one item of the seats table (key
//! `<event>#code#<hash>`: seat ids cannot contain `#`, so no seat shares it), holding the code's
//! terms, whether it was revoked, the buyer it is bound to, and its count: the seats held, waited
//! for and sold under it, kept as the buyer's seat count is (`seats/seat_counts.rs`) and moved
//! in the same transaction as the seats (`Write::CodeCount` of the core's plans, conditioned on
//! the code's ceiling), plus the seats sold, for its standing.

use aws_sdk_dynamodb::types::TransactWriteItem;
use futures_util::{StreamExt, TryStreamExt};

use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, Transacted, get_n, get_s, n, opt_n, opt_s, s, transact, update};
use crate::dynamo::keys::code_block;
use crate::seats::seat_counts::{SOLD, count_of};
use seatclaim_core::codec::from_ms;
use seatclaim_core::domain::{BuyerId, ChannelName, CodeHash, CodeRecord, CodeTerms, EventId, Job};
use seatclaim_core::ports::{BackendError, CodeStanding, CodesCreation};
use seatclaim_core::step::BuyerCount;

/// Code items written at once while creating codes.
const PUTS: usize = 16;

/// The key of the event's code `hash`.
pub(crate) fn code_key(event_id: &EventId, hash: &CodeHash) -> Item {
    Item::from([(
        "seat_key".to_owned(),
        s(format!("{event_id}#code#{}", hash.as_str())),
    )])
}

/// The code item a new code starts as.
fn code_item(event_id: &EventId, code: &CodeRecord) -> Item {
    let terms = &code.terms;
    let mut item = code_key(event_id, &code.hash);
    // In the `by-block` index, for the summary's tallies (`tallies.rs`).
    item.insert("block".to_owned(), s(code_block(event_id, &code.hash)));
    item.insert("position".to_owned(), n(0));
    item.insert("channel".to_owned(), s(terms.channel.as_str()));
    item.insert("max_seats".to_owned(), n(i64::from(terms.max_seats)));
    item.insert("bind".to_owned(), n(i64::from(terms.bind)));
    if let Some(from) = terms.valid_from {
        item.insert("valid_from".to_owned(), n(from.as_millisecond()));
    }
    if let Some(until) = terms.valid_until {
        item.insert("valid_until".to_owned(), n(until.as_millisecond()));
    }
    item
}

/// The code a code item holds.
fn record_of(item: &Item, hash: &CodeHash) -> Result<CodeRecord, BackendError> {
    let corrupt = |what: &str| BackendError::permanent(format!("code item: {what}"));
    let instant = |name: &str| opt_n(item, name)?.map(from_ms).transpose();
    Ok(CodeRecord {
        hash: hash.clone(),
        terms: CodeTerms {
            channel: ChannelName::parse(get_s(item, "channel")?).map_err(|_| corrupt("channel"))?,
            max_seats: u32::try_from(get_n(item, "max_seats")?).map_err(|_| corrupt("seats"))?,
            valid_from: instant("valid_from")?,
            valid_until: instant("valid_until")?,
            bind: get_n(item, "bind")? != 0,
        },
        bound_to: (opt_s(item, "bound_to"))
            .map(|b| BuyerId::parse(b).map_err(|_| corrupt("buyer")))
            .transpose()?,
        revoked: opt_n(item, "revoked")?.unwrap_or(0) != 0,
    })
}

impl DynamoStore {
    /// Stores the event's new codes: each put on condition that it is new; if one exists, the
    /// ones this call put are deleted again and none stays.
    pub(crate) async fn create_codes(
        &self,
        event_id: &EventId,
        codes: &[CodeRecord],
    ) -> Result<CodesCreation, BackendError> {
        let Some(meta) = self.event_meta(event_id).await? else {
            return Ok(CodesCreation::NoSuchEvent);
        };
        if codes
            .iter()
            .any(|c| meta.channels.get(&c.terms.channel).is_none())
        {
            return Ok(CodesCreation::NoSuchChannel);
        }
        let puts: Vec<_> = codes
            .iter()
            .map(|code| self.put_code(event_id, code))
            .collect();
        let put = futures_util::stream::iter(puts)
            .buffered(PUTS)
            .try_collect::<Vec<bool>>()
            .await?;
        if put.iter().all(|put| *put) {
            return Ok(CodesCreation::Created(codes.len()));
        }
        let made = codes.iter().zip(&put).filter(|(_, put)| **put);
        for (code, _) in made {
            self.db
                .delete_item()
                .table_name(&self.names.seats_table)
                .set_key(Some(code_key(event_id, &code.hash)))
                .send()
                .await
                .map_err(|e| classify("DeleteItem code", e))?;
        }
        Ok(CodesCreation::Exists)
    }

    /// Puts a new code's item; `false` if the code exists already.
    async fn put_code(&self, event_id: &EventId, code: &CodeRecord) -> Result<bool, BackendError> {
        let item = code_item(event_id, code);
        let put = crate::dynamo::item::put_new(&self.names.seats_table, item, "seat_key")?;
        Ok(matches!(
            transact(&self.db, vec![put]).await?,
            Transacted::Committed
        ))
    }

    /// The event's code `hash` and its count at `now`, read strongly.
    pub(crate) async fn code_with_count(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<(CodeRecord, BuyerCount, u32)>, BackendError> {
        let Some(item) = self.count_item(code_key(event_id, hash)).await? else {
            return Ok(None);
        };
        let sold = opt_n(&item, SOLD)?.map_or(0, |n| u32::try_from(n.max(0)).unwrap_or(u32::MAX));
        let count = count_of(Some(&item), now)?;
        Ok(Some((record_of(&item, hash)?, count, sold)))
    }

    /// The code's standing: its seats held (and waited for; lapsed holds until expired) and sold.
    pub(crate) async fn code_standing(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<CodeStanding>, BackendError> {
        let code = self.code_with_count(event_id, hash, now).await?;
        Ok(code.map(|(record, count, sold)| CodeStanding {
            record,
            held: count.seats.unwrap_or(0).saturating_sub(sold),
            sold,
        }))
    }

    /// Revokes the code; `false` if there is no such code.
    pub(crate) async fn revoke(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
    ) -> Result<bool, BackendError> {
        let revoke = update(
            &self.names.seats_table,
            code_key(event_id, hash),
            "SET revoked = :one",
            Some("attribute_exists(channel)"),
            &[],
            vec![(":one", n(1))],
        )?;
        Ok(matches!(
            transact(&self.db, vec![revoke]).await?,
            Transacted::Committed
        ))
    }

    /// The binding of `job`'s code to its buyer, on condition that nobody else is bound.
    pub(crate) fn bind_write(
        &self,
        job: &Job,
        hash: &CodeHash,
    ) -> Result<TransactWriteItem, BackendError> {
        update(
            &self.names.seats_table,
            code_key(&job.event_id, hash),
            "SET bound_to = :buyer",
            Some("attribute_not_exists(bound_to) OR bound_to = :buyer"),
            &[],
            vec![(":buyer", s(job.buyer_id.as_str()))],
        )
    }
}
