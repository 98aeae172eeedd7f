use super::*;
use crate::domain::{BuyerId, EventId, Job, JobId, JobStatus, SeatId, SeatRequest};

fn job() -> Job {
    Job {
        job_id: JobId::new(),
        event_id: EventId::parse("e1").unwrap(),
        buyer_id: BuyerId::parse("b1").unwrap(),
        request: SeatRequest::exact(&["A-1-1".into()]).unwrap(),
        status: JobStatus::Held,
        seat_ids: vec![SeatId::parse("A-1-1").unwrap()],
        hold_expires_at: Some(Timestamp::from_second(100).unwrap()),
        reason: None,
        accepted_at: Timestamp::from_second(1).unwrap(),
        first_error: Some("throttled".into()),
        last_error: None,
        amount_due: None,
        payment_ref: None,
        hold_extensions: 0,
    }
}

#[test]
fn a_job_survives_its_record() {
    let job = job();
    assert_eq!(JobRecord::of(&job).unwrap().into_job().unwrap(), job);
}

#[test]
fn a_record_with_an_unknown_status_is_refused_for_good() {
    let mut record = JobRecord::of(&job()).unwrap();
    record.status = "LOST".into();
    let error = record.into_job().unwrap_err();
    assert!(!error.is_transient());
    assert!(error.message.contains("unknown status"), "{error}");
}

#[test]
fn a_held_seat_without_a_deadline_is_inconsistent() {
    let record = SeatRecord {
        seat_id: "A-1-1".into(),
        section: "A".into(),
        state: "HELD".into(),
        job_id: Some(JobId::new().to_string()),
        hold_until: None,
        place: None,
    };
    assert!(
        record
            .into_seat()
            .unwrap_err()
            .message
            .contains("inconsistent")
    );
}

#[test]
fn an_undecodable_body_is_kept_as_it_came() {
    let message = decode_message("{not an intent".into());
    assert!(matches!(&message, Message::Undecodable { body, .. } if body == "{not an intent"));
    assert_eq!(encode_message(&message).unwrap(), "{not an intent");
}
