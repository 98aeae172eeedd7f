//! Reading seats for a claim: the named seats with strongly consistent reads, or a section's
//! free seats from its sparse index.

use aws_sdk_dynamodb::types::KeysAndAttributes;

use crate::DynamoStore;
use crate::dynamo::error::{build_error, classify};
use crate::dynamo::item::{Item, get_s, opt_s, s};
use crate::dynamo::keys::{free_key, seat_key};
use crate::seats::seat_items::seat_from_item;
use crate::setup::names::FREE_SEATS_INDEX;
use seatclaim_core::domain::{EventId, Intent, Seat, SeatId, SeatRequest, SeatState};
use seatclaim_core::ports::BackendError;

impl DynamoStore {
    /// Reads seats with strongly consistent reads, in the order asked.
    pub(crate) async fn read_seats(
        &self,
        job_event: &EventId,
        ids: &[SeatId],
    ) -> Result<Vec<Seat>, BackendError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<Item> = ids.iter().map(|id| seat_key(job_event, id)).collect();
        let request = KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .consistent_read(true)
            .build()
            .map_err(build_error)?;
        let output = self
            .db
            .batch_get_item()
            .request_items(&self.names.seats_table, request)
            .send()
            .await
            .map_err(|e| classify("BatchGetItem seats", e))?;
        if output
            .unprocessed_keys()
            .is_some_and(|left| !left.is_empty())
        {
            return Err(BackendError::transient(
                "BatchGetItem left seats unprocessed",
            ));
        }
        let items = output
            .responses()
            .and_then(|r| r.get(&self.names.seats_table))
            .cloned()
            .unwrap_or_default();
        let mut seats = items
            .iter()
            .map(seat_from_item)
            .collect::<Result<Vec<_>, _>>()?;
        seats.sort_by_key(|seat| ids.iter().position(|id| id == &seat.seat_id));
        Ok(seats)
    }

    /// Free seats of a section from the sparse index: pages of many more than needed, so
    /// concurrent claims can each pick different ones. A large section's free list is sharded:
    /// the read starts at a random shard and moves on until it has enough, so an empty result
    /// means every shard was empty. Eventually consistent: the conditional write is the authority.
    pub(crate) async fn free_seats(
        &self,
        event_id: &EventId,
        section: &str,
        quantity: u8,
    ) -> Result<Vec<Seat>, BackendError> {
        let shards = self.free_shards(event_id, section).await?;
        let first = fastrand::u32(..shards);
        let limit = (i32::from(quantity) * 16).clamp(64, 250);
        let mut seats = Vec::new();
        for step in 0..shards {
            let key = free_key(event_id, section, (first + step) % shards, shards);
            let (page, _) = self.free_page(&key, section, limit, None).await?;
            seats.extend(page);
            if seats.len() >= usize::from(quantity) {
                break;
            }
        }
        Ok(seats)
    }

    /// How many free-list shards a section has.
    pub(crate) async fn free_shards(
        &self,
        event_id: &EventId,
        section: &str,
    ) -> Result<u32, BackendError> {
        Ok(self
            .event_meta(event_id)
            .await?
            .and_then(|meta| meta.free_shards.get(section).copied())
            .unwrap_or(1)
            .max(1))
    }

    /// One page of a free-list shard, best first: up to `limit` seats from `start`, and where
    /// the next page starts (`None`: the list ends here).
    pub(crate) async fn free_page(
        &self,
        key: &str,
        section: &str,
        limit: i32,
        start: Option<Item>,
    ) -> Result<(Vec<Seat>, Option<Item>), BackendError> {
        let output = self
            .db
            .query()
            .table_name(&self.names.seats_table)
            .index_name(FREE_SEATS_INDEX)
            .key_condition_expression("free_key = :key")
            .expression_attribute_values(":key", s(key))
            .projection_expression("seat_id, place")
            .limit(limit)
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| classify("Query free seats", e))?;
        let section = seatclaim_core::domain::Section::parse(section)
            .map_err(|_| BackendError::permanent("invalid section"))?;
        let seats = output
            .items()
            .iter()
            .map(|item| {
                Ok(Seat {
                    seat_id: SeatId::parse(get_s(item, "seat_id")?)
                        .map_err(|_| BackendError::permanent("invalid seat id"))?,
                    section: section.clone(),
                    state: SeatState::Available,
                    place: opt_s(item, "place")
                        .map(serde_json::from_str)
                        .transpose()
                        .map_err(|_| BackendError::permanent("a seat with an unreadable place"))?,
                })
            })
            .collect::<Result<_, BackendError>>()?;
        Ok((seats, output.last_evaluated_key().cloned()))
    }

    /// The seats a claim decides on: the named ones, or free ones of the section.
    pub(crate) async fn candidates(&self, intent: &Intent) -> Result<Vec<Seat>, BackendError> {
        match &intent.request {
            SeatRequest::Seats(ids) => self.read_seats(&intent.event_id, ids).await,
            SeatRequest::Section {
                section,
                quantity,
                together: true,
            } => {
                self.free_rows(&intent.event_id, section.as_str(), *quantity)
                    .await
            }
            SeatRequest::Section {
                section, quantity, ..
            } => {
                self.free_seats(&intent.event_id, section.as_str(), *quantity)
                    .await
            }
        }
    }
}
