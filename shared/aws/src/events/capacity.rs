//! Each section's capacity on the event item (`capacity`: a JSON object of section to
//! `[seats, longest_block]`), worked out by the domain at creation so an admission refuses a
//! request its section can never serve without reading the seats. Events created before it have
//! none, and their admissions check only that the section exists.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::dynamo::item::{Item, opt_s};
use seatclaim_core::domain::{NewEvent, SectionCapacity, capacities};
use seatclaim_core::ports::BackendError;

/// The event item's attribute.
pub(crate) const CAPACITY: &str = "capacity";

/// The attribute's value for `event`.
pub(crate) fn encode(event: &NewEvent) -> Result<AttributeValue, BackendError> {
    let places = event.places.iter().copied().map(Some);
    let sections = event.seats.iter().map(|(_, section)| section);
    let found = capacities(sections.zip(places.chain(std::iter::repeat(None))));
    let stored: HashMap<&str, (usize, usize)> = found
        .iter()
        .map(|(section, c)| (section.as_str(), (c.seats, c.longest_block)))
        .collect();
    serde_json::to_string(&stored)
        .map(AttributeValue::S)
        .map_err(|e| BackendError::permanent(format!("encoding capacities: {e}")))
}

/// The capacities an event item records (none for an event created before them).
pub(crate) fn decode(item: &Item) -> Result<HashMap<String, SectionCapacity>, BackendError> {
    let Some(text) = opt_s(item, CAPACITY) else {
        return Ok(HashMap::new());
    };
    let stored: HashMap<String, (usize, usize)> = serde_json::from_str(text)
        .map_err(|e| BackendError::permanent(format!("an unreadable capacity: {e}")))?;
    Ok(stored
        .into_iter()
        .map(|(section, (seats, longest_block))| {
            (
                section,
                SectionCapacity {
                    seats,
                    longest_block,
                },
            )
        })
        .collect())
}
