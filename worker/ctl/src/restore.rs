//! What `seatclaimctl restore` says once the database is back at the backup's moment and the
//! events published after it are re-applied: each job brought back to its published state, and
//! each one it could not bring back (a seat another job has, an event the backup lacks, a job
//! the log leaves undecided), which an operator reconciles by hand.

use seatclaim_core::reports::Restored;
use serde_json::json;

use super::emit;

/// Prints the restore's line and what it re-applied, as text or as JSON.
pub(super) fn report(json: bool, restored: &Restored) {
    let done = &restored.reapplication;
    let value = json!({
        "restored": restored.to_string(),
        "schema_version": restored.schema_version,
        "reapplied": done.reapplied,
        "not_reapplied": done.not_reapplied,
        "unchanged": done.unchanged,
    });
    emit(json, &value, || {
        let mut text = restored.to_string();
        if done.reapplied.is_empty() && done.not_reapplied.is_empty() {
            text.push_str(&format!(
                "\nnothing published after the backup to re-apply ({} jobs already as published)",
                done.unchanged
            ));
        }
        if !done.reapplied.is_empty() {
            text.push_str(&format!(
                "\nre-applied {} jobs published after the backup:",
                done.reapplied.len()
            ));
            for job in &done.reapplied {
                text.push_str(&format!("\n  {job}"));
            }
        }
        if !done.not_reapplied.is_empty() {
            text.push_str(&format!(
                "\n{} jobs published after the backup were NOT re-applied; reconcile them:",
                done.not_reapplied.len()
            ));
            for job in &done.not_reapplied {
                text.push_str(&format!("\n  {job}"));
            }
        }
        text
    });
}
