use std::sync::Arc;

use jiff::SignedDuration;

use super::*;
use crate::domain::{
    EventId, HoldExtension, Intent, JobId, JobStatus, Prices, Reason, SeatLimit, SeatRequest,
    SeatState, Section, Tender, Waitlist,
};

fn at(seconds: i64) -> Timestamp {
    Timestamp::UNIX_EPOCH + SignedDuration::from_secs(seconds)
}

fn terms(waitlist: Waitlist, limit: Option<u32>) -> SaleTerms {
    SaleTerms {
        channels: Default::default(),
        hold: SignedDuration::from_secs(60),
        limit: limit.map(|seats| SeatLimit::parse(seats).unwrap()),
        prices: Arc::new(Prices::default()),
        extension: HoldExtension::NONE,
        waitlist,
        opens_at: None,
        best: crate::domain::Best::FrontCenter,
    }
}

fn free(ids: &[&str]) -> Vec<Seat> {
    ids.iter()
        .map(|id| Seat {
            seat_id: SeatId::parse(id).unwrap(),
            section: Section::parse(&id[..1]).unwrap(),
            state: SeatState::Available,
            place: None,
        })
        .collect()
}

/// A WAITLISTED job of `buyer` for `quantity` seats of section A.
fn waiting(buyer: &str, quantity: i64) -> Job {
    let intent = Intent {
        access: None,
        job_id: JobId::new(),
        event_id: EventId::parse("e").unwrap(),
        buyer_id: BuyerId::parse(buyer).unwrap(),
        request: SeatRequest::in_section("A", quantity).unwrap(),
        accepted_at: at(0),
        opens_at: None,
    };
    Job::pending(&intent).join_waitlist(at(0)).unwrap().job
}

fn section(quantity: i64) -> SeatRequest {
    SeatRequest::in_section("A", quantity).unwrap()
}

#[test]
fn a_section_request_waits_in_line_only_where_the_event_keeps_one() {
    let two_free = free(&["A-1", "A-2"]);
    let open = terms(Waitlist::Open, None);
    let no_line = |_: &Section| false;
    assert!(matches!(
        open.decide(&section(2), &two_free, at(1), no_line),
        ClaimDecision::Hold { .. }
    ));
    assert_eq!(
        open.decide(&section(3), &two_free, at(1), no_line),
        ClaimDecision::Waitlist
    );
    for closed in [Waitlist::None, Waitlist::Closed] {
        let decided = terms(closed, None).decide(&section(3), &two_free, at(1), |_| true);
        assert!(
            matches!(decided, ClaimDecision::Reject { .. }),
            "{closed:?}: {decided:?}"
        );
    }
}

#[test]
fn while_a_section_has_a_line_exact_requests_for_its_seats_are_refused() {
    let open = terms(Waitlist::Open, None);
    let two_free = free(&["A-1", "A-2"]);
    let line = |s: &Section| s.as_str() == "A";
    assert!(
        matches!(
            open.decide(&section(1), &two_free, at(1), line),
            ClaimDecision::Hold { .. }
        ),
        "free seats beside a line fit nobody ahead: a newcomer they fit takes them"
    );
    assert_eq!(
        open.decide(&section(3), &two_free, at(1), line),
        ClaimDecision::Waitlist
    );
    let lapsed = vec![Seat {
        state: SeatState::Held {
            job_id: JobId::new(),
            until: at(0),
        },
        ..two_free[0].clone()
    }];
    assert_eq!(
        open.decide(&section(1), &lapsed, at(1), line),
        ClaimDecision::Waitlist,
        "a lapsed hold beside a line goes to the line when it is expired, not to a newcomer"
    );
    assert!(
        matches!(
            open.decide(&section(1), &lapsed, at(1), |_| false),
            ClaimDecision::Hold { .. }
        ),
        "without a line, a lapsed hold is claimable"
    );
    let exact = SeatRequest::exact(&["A-1".to_owned()]).unwrap();
    assert_eq!(
        open.decide(&exact, &two_free, at(1), line),
        ClaimDecision::Reject {
            reason: Reason::reserved_for_waitlist()
        }
    );
    let elsewhere = SeatRequest::exact(&["B-1".to_owned()]).unwrap();
    assert!(matches!(
        open.decide(&elsewhere, &free(&["B-1"]), at(1), line),
        ClaimDecision::Hold { .. }
    ));
}

#[test]
fn released_seats_go_to_the_earliest_waiter_they_fit_and_the_head_keeps_its_place() {
    let line = [waiting("b1", 3), waiting("b2", 1)];
    let steps = hand_out(
        &line,
        &free(&["A-1", "A-2"]),
        &terms(Waitlist::Open, None),
        at(5),
        |_| 0,
    );
    let served: Vec<&str> = steps
        .iter()
        .map(|step| step.transition.job.buyer_id.as_str())
        .collect();
    assert_eq!(
        served,
        ["b2"],
        "two seats fit the second waiter, not the head"
    );
    assert_eq!(steps[0].seats.len(), 1);
    let nothing = hand_out(&line, &[], &terms(Waitlist::Open, None), at(5), |_| 0);
    assert!(nothing.is_empty(), "{nothing:?}");
    let steps = hand_out(
        &line,
        &free(&["A-1", "A-2", "A-3", "A-4"]),
        &terms(Waitlist::Open, None),
        at(5),
        |_| 0,
    );
    let held: Vec<(BuyerId, Vec<SeatId>)> = steps
        .iter()
        .map(|step| (step.transition.job.buyer_id.clone(), step.seats.clone()))
        .collect();
    assert_eq!(held.len(), 2);
    assert_eq!(held[0].0.as_str(), "b1");
    assert_eq!(held[0].1.len(), 3);
    assert_eq!(
        held[1].1,
        [SeatId::parse("A-4").unwrap()],
        "the next one gets what is left"
    );
    assert!(
        steps
            .iter()
            .all(|s| s.transition.job.status == JobStatus::Held
                && s.transition.from == JobStatus::Waitlisted
                && s.transition.job.hold_expires_at == Some(at(65)))
    );
}

#[test]
fn a_head_its_buyers_limit_no_longer_allows_is_rejected_and_the_next_served() {
    let line = [waiting("greedy", 2), waiting("b2", 2), waiting("b2", 1)];
    let limited = terms(Waitlist::Open, Some(2));
    // The counts take in the waits: greedy holds 1 and waits for 2, b2 waits for 3 (both from
    // before waits counted); each waiter's own wait is taken out of its buyer's count.
    let counted = |_: &BuyerId| 3;
    let steps = hand_out(
        &line,
        &free(&["A-1", "A-2", "A-3"]),
        &limited,
        at(5),
        counted,
    );
    let moves: Vec<(&str, JobStatus)> = steps
        .iter()
        .map(|s| (s.transition.job.buyer_id.as_str(), s.transition.job.status))
        .collect();
    // greedy would count 3 of 2; b2's first would too, and once it gave its 2 back, the second
    // fits.
    assert_eq!(
        moves,
        [
            ("greedy", JobStatus::Rejected),
            ("b2", JobStatus::Rejected),
            ("b2", JobStatus::Held)
        ]
    );
    assert!(
        steps[0]
            .transition
            .job
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("limit"))
    );
    assert_eq!(
        steps[0].transition.event.reason_code,
        Some(crate::domain::ReasonCode::BuyerLimit)
    );
}

#[test]
fn a_waiters_own_wait_never_counts_against_it_nor_twice_once_served() {
    let line = [waiting("b1", 1), waiting("b1", 1)];
    let limited = terms(Waitlist::Open, Some(2));
    // b1 counts exactly its two waits: the limit, and both are served.
    let steps = hand_out(&line, &free(&["A-1", "A-2"]), &limited, at(5), |_| 2);
    assert_eq!(steps.len(), 2);
    assert!(
        steps
            .iter()
            .all(|s| s.transition.job.status == JobStatus::Held)
    );
}

#[test]
fn a_waiting_job_leaves_the_line_only_by_hand_out_cancel_or_close() {
    let job = waiting("b1", 1);
    assert!(
        job.reject_waiting(&Reason::waitlist_closed(), at(1))
            .is_ok()
    );
    assert!(job.cancel(at(1)).unwrap().is_some());
    assert!(job.confirm(&Tender::Nothing, at(1)).is_err());
    assert!(job.expire(at(1)).is_err());
    assert_eq!(
        job.join_waitlist(at(1)),
        Err(JobStatus::Waitlisted),
        "a redelivery changes nothing"
    );
    let pending = Job {
        status: JobStatus::Pending,
        ..job
    };
    assert_eq!(
        pending.reject_waiting(&Reason::waitlist_closed(), at(1)),
        Err(JobStatus::Pending)
    );
}

/// An intent for `quantity` seats of section A, public or under channel `fanclub`.
fn intent_for_a(quantity: i64, fanclub: bool) -> Intent {
    Intent {
        access: fanclub.then(|| crate::domain::Access {
            channel: crate::domain::ChannelName::parse("fanclub").unwrap(),
            code: None,
        }),
        job_id: JobId::new(),
        event_id: EventId::parse("e").unwrap(),
        buyer_id: BuyerId::parse("b").unwrap(),
        request: section(quantity),
        accepted_at: at(0),
        opens_at: None,
    }
}

#[test]
fn a_channels_section_is_waited_for_by_the_public_and_its_line_served_from_the_release() {
    let spec = crate::domain::ChannelSpec {
        name: "fanclub".into(),
        sale_starts_at: None,
        release_at: Some(at(100).to_string()),
    };
    let mut with_channel = terms(Waitlist::Open, None);
    with_channel.channels =
        Arc::new(crate::domain::Channels::parse(Some(&[spec]), [("A", Some("fanclub"))]).unwrap());
    let two_free = free(&["A-1", "A-2"]);
    let (before, after) = (at(99), at(100));
    let public = intent_for_a(1, false);
    let no_line = |_: &Section| false;
    assert_eq!(
        with_channel.decide_intent(&public, &two_free, before, no_line),
        ClaimDecision::Waitlist,
        "the public waits for a channel's seats"
    );
    let fan = intent_for_a(3, true);
    assert!(
        matches!(
            with_channel.decide_intent(&fan, &two_free, before, |_| true),
            ClaimDecision::Reject { .. }
        ),
        "a channel's intent passes the public's line and never waits in it"
    );
    assert!(!with_channel.serves_line(&Section::parse("A").unwrap(), before));
    assert!(with_channel.serves_line(&Section::parse("A").unwrap(), after));
    assert!(matches!(
        with_channel.decide_intent(&public, &two_free, after, no_line),
        ClaimDecision::Hold { .. }
    ));
}
