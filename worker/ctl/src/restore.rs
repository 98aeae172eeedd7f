//! What `seatclaimctl restore` says once the database is back at the backup's moment: the holds
//! and sales the published events told buyers of after that moment, which the restored folder no
//! longer knows. Their seats show AVAILABLE again and may be sold a second time; each job needs
//! reconciling by hand (and `seatclaimctl audit --events` names a seat sold twice).

use seatclaim_core::domain::ReservationEvent;
use seatclaim_core::reports::Restored;
use serde_json::json;

use super::emit;

/// Prints the restore's line and the newer holds and sales, as text or as JSON.
pub(super) fn report(json: bool, restored: &Restored, newer: &[ReservationEvent]) {
    let value = json!({
        "restored": restored.to_string(),
        "schema_version": restored.schema_version,
        "newer_than_backup": newer,
    });
    emit(json, &value, || {
        let mut text = restored.to_string();
        if newer.is_empty() {
            text.push_str("\nno published hold or sale is newer than the backup");
            return text;
        }
        text.push_str(&format!(
            "\n{} published holds and sales are newer than the backup; reconcile their jobs:",
            newer.len()
        ));
        for event in newer {
            let seats: Vec<&str> = event.seat_ids.iter().map(|seat| seat.as_str()).collect();
            text.push_str(&format!(
                "\n  job {} {} seats {} of event {} at {} (buyer {})",
                event.job_id,
                event.status.as_str(),
                seats.join(", "),
                event.event_id,
                event.occurred_at,
                event.buyer_id
            ));
        }
        text
    });
}
