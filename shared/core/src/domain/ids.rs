//! Identifiers that arrive from clients, parsed once at the edge so the rest of the code can trust them.
//!
//! Each newtype can only be built through `parse`, which is where the rules for its shape live.

use std::fmt;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::ValidationError;

/// Characters allowed in names that end up in keys (event, seat, section and buyer ids): they are
/// safe in URLs, log lines, SQLite and DynamoDB keys without escaping.
fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':')
}

fn parse_key(field: &'static str, value: &str, max_len: usize) -> Result<String, ValidationError> {
    if value.is_empty() || value.len() > max_len {
        return Err(ValidationError::new(
            field,
            format!("must be 1 to {max_len} characters long"),
        ));
    }
    if let Some(bad) = value.chars().find(|c| !is_key_char(*c)) {
        return Err(ValidationError::new(
            field,
            format!("contains {bad:?}; only letters, digits and - _ . : are allowed"),
        ));
    }
    Ok(value.to_owned())
}

macro_rules! key_newtype {
    ($(#[$doc:meta])* $name:ident, $field:literal, $max:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Parses a client-supplied value, naming the field in the error so the client can fix it.
            pub fn parse(value: &str) -> Result<Self, ValidationError> {
                parse_key($field, value, $max).map(Self)
            }

            /// The identifier as it is stored and shown.
            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = ValidationError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::parse(&value)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

key_newtype!(
    /// Names one sale (a show, a match); every seat and job belongs to exactly one.
    EventId, "event_id", 64
);
key_newtype!(
    /// Names one seat within its event; unique per event, chosen by the organiser or generated as section-row-number.
    SeatId, "seat_id", 64
);
key_newtype!(
    /// Groups seats so a buyer can ask for "any N in section A".
    Section, "section", 64
);
key_newtype!(
    /// The buyer on whose behalf an intent is made; idempotency keys are scoped to it.
    BuyerId, "buyer_id", 128
);
key_newtype!(
    /// Names a sales channel of an event (a fan club, a card holder, a partner): its seats are
    /// sold only to intents admitted under it until it releases them.
    ChannelName, "channel", 32
);

/// The client's name for one attempt to reserve, so that a retried POST finds the job it already created.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Accepts 1 to 255 printable ASCII characters (space to tilde), as the HTTP contract promises.
    pub fn parse(value: &str) -> Result<Self, ValidationError> {
        let printable = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
        if value.is_empty() || value.len() > 255 || !printable {
            return Err(ValidationError::new(
                "Idempotency-Key",
                "must be 1 to 255 printable ASCII characters",
            ));
        }
        Ok(Self(value.to_owned()))
    }

    /// The key as the client sent it.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The namespace of key-named job ids ([`JobId::for_key`]); fixed for ever, as ids made from it
/// are stored.
const JOB_ID_NAMESPACE: Uuid = Uuid::from_u128(0x5ea7_c1a1_0b1d_4e5a_9a7e_51d3_a11c_0001);

/// Identifies a job: the server's handle on one accepted intent, handed to the client in the 202.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JobId(Uuid);

#[allow(
    clippy::new_without_default,
    reason = "an id is made on purpose, never by default"
)]
impl JobId {
    /// A fresh random id (UUIDv4): it leaks nothing about volume or order, and as a sort key it
    /// spreads writes over a key range (DynamoDB splits a busy item collection by it).
    #[must_use]
    pub fn new() -> Self {
        Self(Uuid::new_v4())
    }

    /// A fresh time-ordered id (UUIDv7), for stores that keep jobs in key order (SQLite's
    /// B-trees): the jobs a batch works on were accepted together, so their keys share a few
    /// pages instead of taking one page each. Its 74 random bits leak nothing about volume.
    #[must_use]
    pub fn time_ordered() -> Self {
        Self(Uuid::now_v7())
    }

    /// The id of the job a buyer's idempotency key names (UUIDv5 of `buyer#key`): the same for
    /// every retry, so a store whose job item is also the key's record (DynamoDB) admits with
    /// one conditional write. Buyer ids cannot contain '#', so the pair is unambiguous; the
    /// hash does not reveal the key.
    #[must_use]
    pub fn for_key(buyer: &BuyerId, key: &IdempotencyKey) -> Self {
        let name = format!("{}#{}", buyer.as_str(), key.as_str());
        Self(Uuid::new_v5(&JOB_ID_NAMESPACE, name.as_bytes()))
    }

    /// Reads an id from a URL or a message; `None` for anything that is not a UUID, which callers treat as unknown.
    #[must_use]
    pub fn parse(value: &str) -> Option<Self> {
        Uuid::parse_str(value).ok().map(Self)
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_names_one_job_per_buyer() {
        let key = IdempotencyKey::parse("order-1").unwrap();
        let other = IdempotencyKey::parse("order-2").unwrap();
        let (b1, b2) = (BuyerId::parse("b1").unwrap(), BuyerId::parse("b2").unwrap());
        assert_eq!(JobId::for_key(&b1, &key), JobId::for_key(&b1, &key));
        assert_ne!(JobId::for_key(&b1, &key), JobId::for_key(&b2, &key));
        assert_ne!(JobId::for_key(&b1, &key), JobId::for_key(&b1, &other));
        // Stored ids depend on it: the namespace and the name's form never change.
        let pinned = Uuid::new_v5(
            &Uuid::from_u128(0x5ea7_c1a1_0b1d_4e5a_9a7e_51d3_a11c_0001),
            b"b1#order-1",
        );
        assert_eq!(JobId::for_key(&b1, &key).to_string(), pinned.to_string());
    }

    /// The embedded store's locality rests on this: ids made later sort later.
    #[test]
    fn time_ordered_job_ids_sort_in_the_order_they_were_made() {
        let ids: Vec<JobId> = (0..1_000).map(|_| JobId::time_ordered()).collect();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(
            ids.windows(2)
                .all(|pair| pair[0].to_string() < pair[1].to_string()),
            "the stored text sorts the same way"
        );
    }

    #[test]
    fn a_seat_id_with_a_slash_is_rejected_with_its_field_named() {
        let err = SeatId::parse("A/1").unwrap_err();
        assert_eq!(err.field, "seat_id");
        assert!(err.message.contains("'/'"), "{}", err.message);
    }

    #[test]
    fn an_empty_or_overlong_event_id_is_rejected() {
        assert!(EventId::parse("").is_err());
        assert!(EventId::parse(&"e".repeat(65)).is_err());
        assert!(EventId::parse(&"e".repeat(64)).is_ok());
    }

    #[test]
    fn idempotency_keys_allow_printable_ascii_only() {
        assert!(IdempotencyKey::parse("order 42 / retry #1").is_ok());
        assert!(IdempotencyKey::parse(&"k".repeat(255)).is_ok());
        assert!(IdempotencyKey::parse(&"k".repeat(256)).is_err());
        assert!(IdempotencyKey::parse("tab\there").is_err());
        assert!(IdempotencyKey::parse("caf\u{e9}").is_err());
        assert!(IdempotencyKey::parse("").is_err());
    }

    #[test]
    fn job_ids_round_trip_through_their_text_form() {
        let id = JobId::new();
        assert_eq!(JobId::parse(&id.to_string()), Some(id));
        assert_eq!(JobId::parse("not-a-uuid"), None);
    }
}
