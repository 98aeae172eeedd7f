//! Reasons a client can match: every rejection of a job, every failure, every problem the API
//! answers with and every payment that sold nothing carries a stable code beside its text. The
//! text is for people and may name seats, sections and limits; the code is one of the rows
//! below, and a row is never renamed or reused, so a client matches on it instead of on prose.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The reason given when an exact seat was taken first; clients match on it, so it is fixed text.
pub const REASON_UNAVAILABLE: &str = "seat no longer available";

/// The reason given when an intent waited too long to be decided; clients match on it.
pub const REASON_EXPIRED: &str = "request expired";

/// Why an exact request for a seat of a section with a line is rejected.
pub const REASON_RESERVED: &str = "seat reserved for the waitlist";
/// Why the jobs still waiting are rejected when an operator closes the waitlist.
pub const REASON_WAITLIST_CLOSED: &str = "waitlist closed";

/// Declares [`ReasonCode`] from one row per code: the variant, its wire spelling and a one-line
/// description (the variant's doc, the OpenAPI document's and docs/api.md's). A new code is one
/// row here.
macro_rules! reason_codes {
    ($($name:ident => $code:literal, $description:literal;)+) => {
        /// Why a job was rejected or failed, why a request got a problem, or why a payment sold
        /// nothing: the `reason_code` beside every `reason` and problem `detail`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ReasonCode {
            $(#[doc = $description] $name,)+
        }

        impl ReasonCode {
            /// Every code, in the table's order: for parsing, the documents and exhaustive tests.
            pub const ALL: &'static [Self] = &[$(Self::$name),+];

            /// The wire and storage spelling, `snake_case`.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$name => $code,)+
                }
            }

            /// What the code means, in one line.
            #[must_use]
            pub const fn description(self) -> &'static str {
                match self {
                    $(Self::$name => $description,)+
                }
            }
        }
    };
}

reason_codes! {
    // A job REJECTED or FAILED (the job view's and the reservation events' `reason_code`).
    SeatUnavailable => "seat_unavailable", "A seat asked for was taken (held or sold) first.";
    SeatUnknown => "seat_unknown", "A seat asked for does not exist in the event.";
    NotEnoughSeats => "not_enough_seats", "The section has fewer free seats than were asked for.";
    NoAdjacentSeats => "no_adjacent_seats", "No row of the section has that many free seats side by side.";
    BuyerLimit => "buyer_limit", "The buyer would count more of the event's seats than its per-buyer limit.";
    RequestExpired => "request_expired", "The request waited longer than the maximum age to be decided.";
    ReservedForWaitlist => "reserved_for_waitlist", "The seats asked for by id belong to a section whose waitlist is served first.";
    WaitlistClosed => "waitlist_closed", "An operator closed the waitlist the job waited in.";
    ChannelSeats => "channel_seats", "The seats asked for are set aside for a sales channel the request was not admitted under (or the request's channel holds none of them).";
    ChannelNotOpen => "channel_not_open", "The request's sales channel does not sell before its own sale_starts_at.";
    AccessCodeUnknown => "access_code_unknown", "The access code is not one of the event's codes.";
    AccessCodeExpired => "access_code_expired", "The access code is not valid at this time (before its valid_from or after its valid_until).";
    AccessCodeUsedUp => "access_code_used_up", "The access code's seats (its max_seats) are all held or sold.";
    AccessCodeBound => "access_code_bound", "The access code is bound to another buyer, who used it first.";
    AccessCodeRevoked => "access_code_revoked", "An operator revoked the access code.";
    Failed => "failed", "Processing failed for good; the request will not be retried.";
    // A problem+json answer (`reason_code` beside `detail`).
    InvalidRequest => "invalid_request", "A field of a well-formed request breaks a rule.";
    MalformedRequest => "malformed_request", "A header, query or body could not be read as the operation takes it.";
    SectionUnknown => "section_unknown", "The section asked for does not exist in the event.";
    Unservable => "unservable", "The event cannot seat the request as asked (more seats together than a row has).";
    NotFound => "not_found", "No such event, job or route.";
    MethodNotAllowed => "method_not_allowed", "The path does not take this method.";
    PayloadTooLarge => "payload_too_large", "The request body is over the route's limit.";
    UnsupportedMediaType => "unsupported_media_type", "The request body is not declared as JSON.";
    EventExists => "event_exists", "An event with this id already exists.";
    ChannelUnknown => "channel_unknown", "The event has no channel of this name.";
    CodeExists => "code_exists", "One of the access codes already exists for the event.";
    AlreadyQueued => "already_queued", "The buyer already waits in the event's line for the sale's opening.";
    IdempotencyKeyReused => "idempotency_key_reused", "The Idempotency-Key was used by this buyer for another request.";
    WrongStatus => "wrong_status", "The job is not in a status the action applies to.";
    HoldLapsed => "hold_lapsed", "The hold's deadline has passed.";
    HoldLive => "hold_live", "The hold's deadline has not passed yet.";
    PaymentRequired => "payment_required", "The hold is priced and is sold by its payment, not by a confirm.";
    PaymentMismatch => "payment_mismatch", "The payment is not the hold's amount due.";
    PaidOtherwise => "paid_otherwise", "The job was already sold by another payment.";
    NotExtendable => "not_extendable", "The event's holds cannot be extended.";
    ExtensionsUsedUp => "extensions_used_up", "The hold has had every extension the event allows.";
    Unauthorized => "unauthorized", "No valid bearer token.";
    Forbidden => "forbidden", "The token may not do this.";
    RateLimited => "rate_limited", "The buyer sends reservations faster than its rate allows.";
    TooManyLongPolls => "too_many_long_polls", "The buyer already holds its share of waiting long polls.";
    Overloaded => "overloaded", "More requests are in flight, or seat-map reads asked, than the service takes at once.";
    TimedOut => "timed_out", "The request took longer than the request timeout.";
    BodyTooSlow => "body_too_slow", "The request body did not arrive within the body-read timeout.";
    InvalidSignature => "invalid_signature", "A webhook's signature is missing, wrong or stale.";
    Unavailable => "unavailable", "The backend failed in a way a retry may fix.";
    Internal => "internal", "The service failed in a way a retry will not fix.";
    // A payment that sold nothing (`PaymentUnmatched`), beside the codes of a settlement's conflicts.
    PaymentRefused => "payment_refused", "The payment is of a mode or an account this deployment takes no payments for.";
    PaymentNamesNoJob => "payment_names_no_job", "The payment names no job.";
    PaymentUnreadable => "payment_unreadable", "No amount or currency could be read from the payment.";
}

impl ReasonCode {
    /// Reads the wire or storage spelling back; `None` for a spelling this build does not know.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|code| code.as_str() == text)
    }

    /// The code of a rejection stored before codes were: its text was fixed (or fixed around
    /// the seat, section or limit it names), so it says which rejection it was. `None` for a
    /// text no rejection had.
    #[must_use]
    pub fn of_legacy_text(text: &str) -> Option<Self> {
        let code = match text {
            REASON_UNAVAILABLE => Self::SeatUnavailable,
            REASON_EXPIRED => Self::RequestExpired,
            REASON_RESERVED => Self::ReservedForWaitlist,
            REASON_WAITLIST_CLOSED => Self::WaitlistClosed,
            _ if text.starts_with("buyer limit reached: ") => Self::BuyerLimit,
            _ if text.starts_with("not enough seats available in section ") => Self::NotEnoughSeats,
            _ if text.starts_with("no ") && text.contains(" adjacent seats in section ") => {
                Self::NoAdjacentSeats
            }
            _ if text.starts_with("seat ") && text.ends_with(" does not exist") => {
                Self::SeatUnknown
            }
            _ => return None,
        };
        Some(code)
    }
}

/// Reads a stored or published code leniently: one this build does not know (written by a
/// newer build, before a rollback) reads as none, and the reader falls back on the reason's text,
/// instead of the whole record becoming unreadable. For `#[serde(deserialize_with)]`.
pub(crate) fn lenient<'de, D>(deserializer: D) -> Result<Option<ReasonCode>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let text: Option<String> = Option::deserialize(deserializer)?;
    Ok(text.as_deref().and_then(ReasonCode::parse))
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A reason as the domain decides it: the code a client matches and the text a person reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// The stable code.
    pub code: ReasonCode,
    /// The human text, exactly as buyers have always read it.
    pub text: String,
}

impl Reason {
    /// A reason with its code and text.
    pub fn new(code: ReasonCode, text: impl Into<String>) -> Self {
        Self {
            code,
            text: text.into(),
        }
    }

    /// An exact seat was taken first.
    #[must_use]
    pub fn seat_unavailable() -> Self {
        Self::new(ReasonCode::SeatUnavailable, REASON_UNAVAILABLE)
    }

    /// The intent waited too long to be decided.
    #[must_use]
    pub fn request_expired() -> Self {
        Self::new(ReasonCode::RequestExpired, REASON_EXPIRED)
    }

    /// An exact request for a seat of a section with a line.
    #[must_use]
    pub fn reserved_for_waitlist() -> Self {
        Self::new(ReasonCode::ReservedForWaitlist, REASON_RESERVED)
    }

    /// An operator closed the line the job waited in.
    #[must_use]
    pub fn waitlist_closed() -> Self {
        Self::new(ReasonCode::WaitlistClosed, REASON_WAITLIST_CLOSED)
    }

    /// Processing failed for good, for the reason `text` (operators read it; buyers see the
    /// code and a generic text).
    pub fn failed(text: impl Into<String>) -> Self {
        Self::new(ReasonCode::Failed, text)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(feature = "openapi")]
mod schema;

#[cfg(test)]
mod tests;
