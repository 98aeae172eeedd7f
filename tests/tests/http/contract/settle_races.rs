//! A confirm and a cancel racing on one hold: exactly one of them wins, the other is a 409, and
//! the job and its seat end as the winner left them, on every backend.

use axum::http::StatusCode;

use super::{DECIDED_WITHIN, app_with_event, seats};

#[tokio::test]
async fn a_confirm_and_a_cancel_racing_on_one_hold_leave_exactly_one_outcome() {
    let app = app_with_event().await;
    for n in 1..=10 {
        let seat = format!("A-1-{n}");
        let job_id = app
            .reserve_ok("e1", &format!("race-{n}"), &seats(&[&seat]))
            .await;
        assert_eq!(app.decided(&job_id, DECIDED_WITHIN).await["status"], "HELD");
        let (confirm, cancel) = (
            format!("/v1/jobs/{job_id}/confirm"),
            format!("/v1/jobs/{job_id}/cancel"),
        );
        let (confirmed, cancelled) = tokio::join!(app.post(&confirm), app.post(&cancel));
        let answers = [(confirmed.0, "SOLD"), (cancelled.0, "CANCELLED")];
        let won: Vec<&str> = answers
            .iter()
            .filter(|(status, _)| *status == StatusCode::OK)
            .map(|(_, outcome)| *outcome)
            .collect();
        assert_eq!(won.len(), 1, "{job_id}: {confirmed:?} {cancelled:?}");
        assert!(
            answers
                .iter()
                .any(|(status, _)| *status == StatusCode::CONFLICT),
            "{job_id}: the loser is a conflict: {confirmed:?} {cancelled:?}"
        );
        assert_eq!(app.job(&job_id).await["status"], won[0], "{job_id}");
        let state = app.seat_state("e1", &seat).await;
        let expected = if won[0] == "SOLD" {
            "SOLD"
        } else {
            "AVAILABLE"
        };
        assert_eq!(state, expected, "{job_id}: seat {seat}");
    }
}
