//! An intent: what a buyer asked for, as it travels from admission through the queue to the worker.

use std::collections::HashSet;

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{BuyerId, ChannelName, CodeHash, EventId, JobId, SeatId, Section, ValidationError};

/// The most seats one intent may claim; keeps a claim within one DynamoDB transaction's item limit.
pub const MAX_SEATS_PER_INTENT: usize = 10;

/// Which seats a buyer wants. Either way the claim is all or none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeatRequest {
    /// These exact seats.
    Seats(Vec<SeatId>),
    /// `quantity` seats that are free in `section`, the best first; with `together`, seats
    /// adjacent in one row.
    Section {
        /// The section to pick from.
        section: Section,
        /// How many seats.
        quantity: u8,
        /// Whether the seats must be adjacent in one row (absent in older messages: false).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        together: bool,
    },
}

impl SeatRequest {
    /// Checks an exact-seat request: 1 to 10 seats, none named twice.
    pub fn exact(seats: &[String]) -> Result<Self, ValidationError> {
        if seats.is_empty() || seats.len() > MAX_SEATS_PER_INTENT {
            return Err(ValidationError::new(
                "seat_ids",
                format!("must list 1 to {MAX_SEATS_PER_INTENT} seats"),
            ));
        }
        let ids = seats
            .iter()
            .map(|s| SeatId::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let mut seen = HashSet::new();
        if let Some(dup) = ids.iter().find(|id| !seen.insert(*id)) {
            return Err(ValidationError::new(
                "seat_ids",
                format!("lists seat {dup} more than once"),
            ));
        }
        Ok(Self::Seats(ids))
    }

    /// Checks an any-in-section request: a valid section and a quantity of 1 to 10.
    pub fn in_section(section: &str, quantity: i64) -> Result<Self, ValidationError> {
        Self::section_request(section, quantity, false)
    }

    /// [`SeatRequest::in_section`], for seats adjacent in one row.
    pub fn together_in(section: &str, quantity: i64) -> Result<Self, ValidationError> {
        Self::section_request(section, quantity, true)
    }

    fn section_request(
        section: &str,
        quantity: i64,
        together: bool,
    ) -> Result<Self, ValidationError> {
        let section = Section::parse(section)?;
        let quantity = u8::try_from(quantity)
            .ok()
            .filter(|q| (1..=MAX_SEATS_PER_INTENT).contains(&usize::from(*q)))
            .ok_or_else(|| {
                ValidationError::new(
                    "quantity",
                    format!("must be between 1 and {MAX_SEATS_PER_INTENT}"),
                )
            })?;
        Ok(Self::Section {
            section,
            quantity,
            together,
        })
    }

    /// How many seats the request wants.
    #[must_use]
    pub fn quantity(&self) -> usize {
        match self {
            Self::Seats(ids) => ids.len(),
            Self::Section { quantity, .. } => usize::from(*quantity),
        }
    }

    /// The section of a section request (`None` for exact seats): the line it may wait in.
    #[must_use]
    pub fn section(&self) -> Option<&Section> {
        match self {
            Self::Seats(_) => None,
            Self::Section { section, .. } => Some(section),
        }
    }

    /// A canonical text of the request, compared to tell "the same request again" from "a different
    /// request with a reused key". Serialisation of this type is deterministic, so equal requests
    /// give equal fingerprints.
    #[must_use]
    pub fn fingerprint(&self, event_id: &EventId) -> String {
        // Serialising a plain enum of strings and integers cannot fail.
        let request = serde_json::to_string(self).unwrap_or_default();
        format!("{event_id}|{request}")
    }
}

/// One accepted reservation attempt, as the worker receives it. Its `job_id` is the idempotency
/// handle for everything downstream: however often it is delivered, it decides one job once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intent {
    /// The job this intent decides.
    pub job_id: JobId,
    /// The event whose seats are wanted.
    pub event_id: EventId,
    /// Who wants them.
    pub buyer_id: BuyerId,
    /// Which seats.
    pub request: SeatRequest,
    /// When admission accepted it; lets operators see queueing delay.
    pub accepted_at: Timestamp,
    /// When its sale opens, for an intent admitted before it (it waits in the pre-queue till
    /// then); absent otherwise, and in older messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opens_at: Option<Timestamp>,
    /// The sales channel it was admitted under, and the access code that admitted it (as its
    /// keyed hash); absent for a public intent, and in older messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
}

/// The sales channel an intent was admitted under: by an access code of the channel (named by
/// its keyed hash, never in the clear), or by a partner's scope (`seatclaim/channel:<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// The channel.
    pub channel: ChannelName,
    /// The code that admitted it, if a code did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<CodeHash>,
}

impl Intent {
    /// Whether the intent is too old to claim seats for: after a long outage or a late replay the
    /// buyer has stopped waiting, so it is rejected ("request expired") rather than held. Its
    /// age counts from its admission, or from its sale's opening if it waited for that.
    #[must_use]
    pub fn is_stale(&self, now: Timestamp, max_age: jiff::SignedDuration) -> bool {
        let since = self
            .opens_at
            .map_or(self.accepted_at, |opens| opens.max(self.accepted_at));
        now.duration_since(since) > max_age
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_is_stale_only_past_the_maximum_age() {
        let intent = Intent {
            access: None,
            job_id: JobId::new(),
            event_id: EventId::parse("e1").unwrap(),
            buyer_id: BuyerId::parse("b1").unwrap(),
            request: SeatRequest::in_section("A", 1).unwrap(),
            accepted_at: Timestamp::UNIX_EPOCH,
            opens_at: None,
        };
        let max_age = jiff::SignedDuration::from_secs(60);
        let at = |secs| Timestamp::from_second(secs).unwrap();
        assert!(!intent.is_stale(at(60), max_age));
        assert!(intent.is_stale(at(61), max_age));
        // Admitted before its sale opened at 100: it has waited only since then.
        let waiting = Intent {
            opens_at: Some(at(100)),
            ..intent
        };
        assert!(!waiting.is_stale(at(160), max_age));
        assert!(waiting.is_stale(at(161), max_age));
    }

    #[test]
    fn an_exact_request_needs_one_to_ten_distinct_seats() {
        assert!(SeatRequest::exact(&[]).is_err());
        let eleven: Vec<String> = (0..11).map(|i| format!("s{i}")).collect();
        assert!(SeatRequest::exact(&eleven).is_err());
        let err = SeatRequest::exact(&["a".into(), "a".into()]).unwrap_err();
        assert!(err.message.contains("more than once"));
        assert!(matches!(
            SeatRequest::exact(&["a".into(), "b".into()]),
            Ok(SeatRequest::Seats(ids)) if ids.len() == 2
        ));
    }

    #[test]
    fn a_section_request_needs_a_quantity_of_one_to_ten() {
        for bad in [0, 11, -1, 300] {
            assert_eq!(
                SeatRequest::in_section("A", bad).unwrap_err().field,
                "quantity"
            );
        }
        assert!(matches!(
            SeatRequest::in_section("A", 10),
            Ok(SeatRequest::Section { quantity: 10, .. })
        ));
    }

    #[test]
    fn fingerprints_differ_when_the_request_or_event_differs() {
        let e1 = EventId::parse("e1").unwrap();
        let e2 = EventId::parse("e2").unwrap();
        let a = SeatRequest::exact(&["a".into()]).unwrap();
        let b = SeatRequest::exact(&["b".into()]).unwrap();
        assert_eq!(a.fingerprint(&e1), a.clone().fingerprint(&e1));
        assert_ne!(a.fingerprint(&e1), b.fingerprint(&e1));
        assert_ne!(a.fingerprint(&e1), a.fingerprint(&e2));
    }

    #[test]
    fn an_intent_survives_the_queue_encoding() {
        let intent = Intent {
            access: None,
            job_id: JobId::new(),
            event_id: EventId::parse("e1").unwrap(),
            buyer_id: BuyerId::parse("b1").unwrap(),
            request: SeatRequest::in_section("A", 2).unwrap(),
            accepted_at: Timestamp::UNIX_EPOCH,
            opens_at: None,
        };
        let text = serde_json::to_string(&intent).unwrap();
        assert_eq!(serde_json::from_str::<Intent>(&text).unwrap(), intent);
    }
}
