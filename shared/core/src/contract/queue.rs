//! The contract of the intent queue: visibility timeouts, acknowledgements with the next receive,
//! retry delays and heartbeats.

use super::*;

/// A received message is hidden for the visibility timeout, then delivered again with a higher
/// receive count; a deleted message never comes back.
pub async fn unacknowledged_messages_come_back_after_the_visibility_timeout(f: Fixture) {
    let event = with_event(&f).await;
    let kept = intent(&f, &event, "b1", exact(&["A-1-1"]));
    let acked = intent(&f, &event, "b2", exact(&["A-1-2"]));
    f.backend
        .queue
        .send(&[kept.clone(), acked.clone()])
        .await
        .unwrap();
    let first = receive_all(&f, 2).await;
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|d| d.receive_count == 1));
    let acked_delivery = first
        .iter()
        .find(|d| d.job_id == Some(acked.job_id))
        .expect("the job id travels with the message");
    f.backend
        .queue
        .delete(std::slice::from_ref(&acked_delivery.receipt))
        .await
        .unwrap();
    assert!(
        f.backend
            .queue
            .receive(10, Duration::ZERO)
            .await
            .unwrap()
            .is_empty(),
        "hidden while in flight"
    );

    // Both were received together: when the kept one is back, so would the deleted one be.
    let again = after_the_visibility_timeout(&f, 1).await;
    assert_eq!(again.len(), 1, "only the unacknowledged message returns");
    assert_eq!(again[0].job_id, Some(kept.job_id));
    assert_eq!(again[0].receive_count, 2);
    assert_eq!(again[0].message, Message::Intent(kept));
    assert_nothing_more(&f, "the deleted message stays deleted").await;
}

/// The worker loop's turn: the acknowledgements passed with a receive are made (the message never
/// comes back), and the receive still returns what is waiting.
pub async fn acknowledging_with_the_next_receive_deletes_the_message(f: Fixture) {
    let event = with_event(&f).await;
    let first = intent(&f, &event, "b1", exact(&["A-1-1"]));
    let second = intent(&f, &event, "b2", exact(&["A-1-2"]));
    f.backend
        .queue
        .send(std::slice::from_ref(&first))
        .await
        .unwrap();
    let got = receive_all(&f, 1).await;
    assert_eq!(got.len(), 1);
    f.backend
        .queue
        .send(std::slice::from_ref(&second))
        .await
        .unwrap();
    // Passed with the first receive only; later ones acknowledge nothing.
    let done = RefCell::new(vec![got[0].receipt.clone()]);
    let next = eventually(QUEUE_WITHIN, "the receive that acknowledges", || async {
        let done = done.take();
        let next = f
            .backend
            .queue
            .acknowledge_and_receive(&done, 10, Duration::from_millis(500))
            .await
            .unwrap();
        (!next.is_empty()).then_some(next)
    })
    .await;
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].job_id, Some(second.job_id));
    f.backend
        .queue
        .delete(&[next[0].receipt.clone()])
        .await
        .unwrap();

    assert_stays_away(&f, &event, "both were acknowledged, neither comes back").await;
}

/// `retry_after` brings a message back after the given delay instead of the visibility timeout.
pub async fn a_retried_message_comes_back_after_its_delay(f: Fixture) {
    let event = with_event(&f).await;
    f.backend
        .queue
        .send(&[intent(&f, &event, "b1", exact(&["A-1-1"]))])
        .await
        .unwrap();
    let first = receive_all(&f, 1).await;
    f.backend
        .queue
        .retry_after(&first[0].receipt, Duration::ZERO)
        .await
        .unwrap();
    let again = receive_all(&f, 1).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].receive_count, 2);
}

/// A heartbeat keeps a slow batch's messages hidden past the visibility timeout.
pub async fn extending_visibility_keeps_a_slow_batch_hidden(f: Fixture) {
    let event = with_event(&f).await;
    let slow = intent(&f, &event, "b1", exact(&["A-1-1"]));
    f.backend
        .queue
        .send(std::slice::from_ref(&slow))
        .await
        .unwrap();
    let got = receive_all(&f, 1).await;
    // Long enough that the control below, sent, received and let go after it, is back first
    // even on a loaded machine: SQS times this in real time.
    let hidden_for = f.visibility_timeout * 10;
    f.backend
        .queue
        .extend_visibility(&[got[0].receipt.clone()], hidden_for)
        .await
        .unwrap();
    // The control, received after the slow one and not extended, comes back first.
    let control = received_control(&f, &event).await;
    let back = after_the_visibility_timeout(&f, 1).await;
    assert_eq!(
        job_ids(&back),
        [Some(control)],
        "the extended one is still hidden"
    );
    f.backend
        .queue
        .delete(&[back[0].receipt.clone()])
        .await
        .unwrap();
    assert_nothing_more(&f, "the extended one is still hidden").await;

    f.clock.advance(signed(hidden_for));
    let again = receive_all(&f, 1).await;
    assert_eq!(
        job_ids(&again),
        [Some(slow.job_id)],
        "visible again once the extension ran out"
    );
}
