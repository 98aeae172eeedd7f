//! `seatclaimctl audit EVENT`: prints `app::audit_event`'s report and exits 1 on a violation.

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use seatclaim_shared::Backend;
use seatclaim_shared::app::audit_event;
use seatclaim_shared::domain::{AuditLimits, EventId};
use serde_json::json;

use super::{emit, parse_duration};

#[derive(Debug, Args)]
pub(super) struct AuditArgs {
    /// The event to audit.
    event_id: String,
    /// A job PENDING longer than this is reported.
    #[arg(long, value_parser = parse_duration, default_value = "5m")]
    max_pending: jiff::SignedDuration,
    /// An unpublished event older than this is reported.
    #[arg(long, value_parser = parse_duration, default_value = "1m")]
    max_outbox_lag: jiff::SignedDuration,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub(super) async fn run(backend: &Backend, args: AuditArgs) -> anyhow::Result<ExitCode> {
    let event_id = EventId::parse(&args.event_id).context("not an event id")?;
    let limits = AuditLimits {
        max_pending: args.max_pending,
        max_outbox_lag: args.max_outbox_lag,
    };
    let Some(report) = audit_event(backend, &event_id, limits).await? else {
        bail!("no event {event_id}");
    };
    let problems: Vec<String> = report.violations.iter().map(ToString::to_string).collect();
    let json = json!({
        "event_id": event_id,
        "ok": problems.is_empty(),
        "seats": report.seats,
        "jobs": report.jobs,
        "violations": problems,
    });
    emit(args.json, &json, || {
        let mut text = format!(
            "event {event_id}: {} seats, jobs {:?}",
            report.seats, report.jobs
        );
        if problems.is_empty() {
            text.push_str("\naudit passed");
        }
        for problem in &problems {
            text.push_str(&format!("\nVIOLATION: {problem}"));
        }
        text
    });
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
