use std::collections::HashSet;

use super::*;
use crate::domain::{SeatLimit, no_block_reason};

#[test]
fn every_code_has_its_own_spelling_and_reads_back_from_it() {
    let spellings: HashSet<&str> = ReasonCode::ALL.iter().map(|code| code.as_str()).collect();
    assert_eq!(
        spellings.len(),
        ReasonCode::ALL.len(),
        "a code is spelled twice"
    );
    for code in ReasonCode::ALL.iter().copied() {
        assert_eq!(ReasonCode::parse(code.as_str()), Some(code));
        let json = serde_json::to_string(&code).unwrap();
        assert_eq!(
            json,
            format!("\"{}\"", code.as_str()),
            "serde spells {code:?} otherwise"
        );
        assert_eq!(serde_json::from_str::<ReasonCode>(&json).unwrap(), code);
    }
    assert_eq!(ReasonCode::parse("Seat_Unavailable"), None);
}

#[test]
fn every_code_is_snake_case_with_a_one_line_description() {
    for code in ReasonCode::ALL {
        let spelling = code.as_str();
        assert!(
            spelling.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{spelling}"
        );
        let description = code.description();
        assert!(!description.contains('\n'), "{spelling}: {description}");
        assert!(description.ends_with('.'), "{spelling}: {description}");
    }
}

#[test]
fn the_codes_clients_were_promised_are_spelled_as_promised() {
    for (code, spelling) in [
        (ReasonCode::SeatUnavailable, "seat_unavailable"),
        (ReasonCode::BuyerLimit, "buyer_limit"),
        (ReasonCode::NoAdjacentSeats, "no_adjacent_seats"),
        (ReasonCode::RequestExpired, "request_expired"),
    ] {
        assert_eq!(code.as_str(), spelling);
    }
}

#[test]
fn a_rejection_stored_before_codes_reads_with_the_code_it_would_have_today() {
    let limit = SeatLimit::parse(2).unwrap().reason();
    let texts = [
        Reason::seat_unavailable(),
        Reason::request_expired(),
        Reason::reserved_for_waitlist(),
        Reason::waitlist_closed(),
        limit,
        no_block_reason(4, "A"),
        Reason::new(ReasonCode::SeatUnknown, "seat A-1-99 does not exist"),
        Reason::new(
            ReasonCode::NotEnoughSeats,
            "not enough seats available in section B",
        ),
    ];
    for reason in texts {
        assert_eq!(
            ReasonCode::of_legacy_text(&reason.text),
            Some(reason.code),
            "{reason}"
        );
    }
    assert_eq!(ReasonCode::of_legacy_text("gave up after 5 attempts"), None);
    assert_eq!(ReasonCode::of_legacy_text(""), None);
}

#[test]
fn a_code_this_build_does_not_know_reads_as_none_not_as_an_error() {
    #[derive(serde::Deserialize)]
    struct Stored {
        #[serde(default, deserialize_with = "lenient")]
        reason_code: Option<ReasonCode>,
    }
    let read = |json: &str| serde_json::from_str::<Stored>(json).unwrap().reason_code;
    assert_eq!(
        read(r#"{"reason_code": "buyer_limit"}"#),
        Some(ReasonCode::BuyerLimit)
    );
    assert_eq!(
        read(r#"{"reason_code": "a_code_from_a_newer_build"}"#),
        None
    );
    assert_eq!(read(r#"{"reason_code": null}"#), None);
    assert_eq!(read("{}"), None);
}
