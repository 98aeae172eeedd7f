//! Access codes: an event's promoter hands out codes of a channel (a fan club's, a card
//! holder's); a reservation naming one is admitted under the code's channel, and the claim counts
//! the code's seats in the same atomic step as the seats themselves, so a code is never used past
//! its `max_seats`, whatever the concurrency. A code is stored, queued and logged only as its keyed
//! hash ([`CodeKey::hash`]): the plain code exists in the request that names it and, for codes
//! the service generated, in the one answer that returns them.

use std::fmt;

use hmac::{Hmac, Mac};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::{BuyerId, ChannelName, EventId, Reason, ReasonCode, ValidationError};

/// The most codes one request may create or generate.
pub const MAX_CODES_PER_REQUEST: usize = 10_000;
/// The most seats one code may hold and buy in all.
pub const MAX_SEATS_PER_CODE: u32 = 10_000;

/// Characters of a generated code: no 0/O, 1/I/L, so a code read aloud or off a card is typed
/// right (32 symbols, 5 bits each).
const GENERATED: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// A code as a buyer types it: 4 to 64 of `A-Z a-z 0-9 -`. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct AccessCode(String);

impl AccessCode {
    /// Accepts a client's code.
    pub fn parse(text: &str) -> Result<Self, ValidationError> {
        let fits = (4..=64).contains(&text.len())
            && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !fits {
            return Err(ValidationError::new(
                "access_code",
                "must be 4 to 64 letters, digits or -",
            ));
        }
        Ok(Self(text.to_owned()))
    }

    /// A new random code, `XXXX-XXXX` (40 bits).
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes)?;
        let symbol = |b: u8| char::from(GENERATED[usize::from(b) % GENERATED.len()]);
        let text: String = bytes.iter().map(|b| symbol(*b)).collect();
        Ok(Self(format!("{}-{}", &text[..4], &text[4..])))
    }

    /// The code as typed, for the one answer that hands generated codes out.
    #[must_use]
    pub fn reveal(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for AccessCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AccessCode(..)")
    }
}

/// The deployment's secret key for codes' hashes (`SEATCLAIM_ACCESS_CODE_KEY`): without it a
/// stolen copy of the store cannot be tried against guessed codes.
#[derive(Clone)]
pub struct CodeKey(Vec<u8>);

impl CodeKey {
    /// A key of at least 32 bytes.
    pub fn new(bytes: Vec<u8>) -> Result<Self, ValidationError> {
        if bytes.len() < 32 {
            return Err(ValidationError::new(
                "SEATCLAIM_ACCESS_CODE_KEY",
                "must be at least 32 bytes",
            ));
        }
        Ok(Self(bytes))
    }

    /// The keyed hash of `code` in `event_id`: HMAC-SHA256 over the event and the code.
    #[must_use]
    pub fn hash(&self, event_id: &EventId, code: &AccessCode) -> CodeHash {
        // A key of any length is accepted by HMAC; `new` already asked for 32 bytes.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(event_id.as_str().as_bytes());
        mac.update(b"\n");
        mac.update(code.0.as_bytes());
        CodeHash(hex::encode(mac.finalize().into_bytes()))
    }
}

impl fmt::Debug for CodeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CodeKey(..)")
    }
}

/// A code's keyed hash, 64 hex digits: how codes are stored, queued and named in jobs.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CodeHash(String);

impl CodeHash {
    /// Reads a stored hash back.
    pub fn parse(text: &str) -> Result<Self, ValidationError> {
        let hex = text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit());
        if !hex {
            return Err(ValidationError::new("code", "is not a code's hash"));
        }
        Ok(Self(text.to_ascii_lowercase()))
    }

    /// The hash as stored.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for CodeHash {
    type Error = ValidationError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::parse(&value)
    }
}

impl From<CodeHash> for String {
    fn from(value: CodeHash) -> Self {
        value.0
    }
}

/// What a code allows, as its creator set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeTerms {
    /// The channel it admits to.
    pub channel: ChannelName,
    /// The seats it may hold and buy in all.
    pub max_seats: u32,
    /// From when it may be used.
    pub valid_from: Option<Timestamp>,
    /// Until when it may be used.
    pub valid_until: Option<Timestamp>,
    /// Whether its first buyer is the only one who may use it again.
    pub bind: bool,
}

/// A code as stored: its hash, its terms, the buyer it is bound to and whether it was revoked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRecord {
    /// The code's keyed hash.
    pub hash: CodeHash,
    /// What it allows.
    pub terms: CodeTerms,
    /// The buyer who used it first, for a code that binds.
    pub bound_to: Option<BuyerId>,
    /// Whether an operator revoked it.
    pub revoked: bool,
}

impl CodeRecord {
    /// Whether `buyer` may hold `quantity` more seats under this code at `now`, the code
    /// counting `used` seats (held and not lapsed, waited for, or sold): the rule the claim
    /// decides in its atomic step; the reason names the code's failing rule.
    pub fn admits(
        &self,
        buyer: &BuyerId,
        quantity: usize,
        used: u32,
        now: Timestamp,
    ) -> Result<(), Reason> {
        let terms = &self.terms;
        if self.revoked {
            return Err(Reason::new(
                ReasonCode::AccessCodeRevoked,
                "access code revoked",
            ));
        }
        let early = terms.valid_from.is_some_and(|from| now < from);
        let late = terms.valid_until.is_some_and(|until| now >= until);
        if early || late {
            return Err(Reason::new(
                ReasonCode::AccessCodeExpired,
                "access code not valid now",
            ));
        }
        if terms.bind && self.bound_to.as_ref().is_some_and(|bound| bound != buyer) {
            return Err(Reason::new(
                ReasonCode::AccessCodeBound,
                "access code bound to another buyer",
            ));
        }
        let wanted = u32::try_from(quantity).unwrap_or(u32::MAX);
        if used.saturating_add(wanted) > terms.max_seats {
            return Err(Reason::new(
                ReasonCode::AccessCodeUsedUp,
                format!("access code used up: {} seats", terms.max_seats),
            ));
        }
        Ok(())
    }

    /// The buyer a hold under this code binds it to: the first buyer of a binding code.
    #[must_use]
    pub fn binds(&self, buyer: &BuyerId) -> Option<BuyerId> {
        (self.terms.bind && self.bound_to.is_none()).then(|| buyer.clone())
    }
}

/// The reason of a claim naming a code the event does not have.
#[must_use]
pub fn unknown_code() -> Reason {
    Reason::new(ReasonCode::AccessCodeUnknown, "access code unknown")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(bind: bool) -> CodeRecord {
        let key = CodeKey::new(vec![7; 32]).unwrap();
        let event = EventId::parse("e").unwrap();
        CodeRecord {
            hash: key.hash(&event, &AccessCode::parse("FAN-7Q2X").unwrap()),
            terms: CodeTerms {
                channel: ChannelName::parse("fanclub").unwrap(),
                max_seats: 4,
                valid_from: Some("2030-01-01T00:00:00Z".parse().unwrap()),
                valid_until: Some("2030-01-02T00:00:00Z".parse().unwrap()),
                bind,
            },
            bound_to: None,
            revoked: false,
        }
    }

    #[test]
    fn a_code_admits_up_to_its_seats_within_its_window() {
        let code = record(false);
        let buyer = BuyerId::parse("b").unwrap();
        let during: Timestamp = "2030-01-01T12:00:00Z".parse().unwrap();
        assert!(code.admits(&buyer, 2, 2, during).is_ok());
        let over = code.admits(&buyer, 3, 2, during).unwrap_err();
        assert_eq!(over.code, ReasonCode::AccessCodeUsedUp);
        let after: Timestamp = "2030-01-02T00:00:00Z".parse().unwrap();
        assert_eq!(
            code.admits(&buyer, 1, 0, after).unwrap_err().code,
            ReasonCode::AccessCodeExpired
        );
    }

    #[test]
    fn a_binding_code_serves_its_first_buyer_only() {
        let mut code = record(true);
        let (first, other) = (BuyerId::parse("a").unwrap(), BuyerId::parse("b").unwrap());
        code.bound_to = code.binds(&first);
        let during: Timestamp = "2030-01-01T12:00:00Z".parse().unwrap();
        assert!(code.admits(&first, 1, 1, during).is_ok());
        assert_eq!(
            code.admits(&other, 1, 1, during).unwrap_err().code,
            ReasonCode::AccessCodeBound
        );
    }

    #[test]
    fn the_hash_is_keyed_and_neither_shows_the_code() {
        let event = EventId::parse("e").unwrap();
        let code = AccessCode::parse("FAN-7Q2X").unwrap();
        let one = CodeKey::new(vec![1; 32]).unwrap().hash(&event, &code);
        let two = CodeKey::new(vec![2; 32]).unwrap().hash(&event, &code);
        assert_ne!(one, two);
        assert!(!format!("{code:?}{one:?}").contains("7Q2X"));
        assert_eq!(AccessCode::generate().unwrap().reveal().len(), 9);
    }
}
