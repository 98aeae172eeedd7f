//! `seatclaimctl jobs show`: a job with its history.

use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use seatclaim_core::domain::JobId;
use seatclaim_core::{Backend, app};
use serde_json::json;

use super::emit;

#[derive(Debug, Subcommand)]
pub(super) enum JobsCommand {
    /// Shows a job and its history of transitions (each with its reservation event).
    Show {
        /// The job's id.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub(super) async fn run(backend: &Backend, command: JobsCommand) -> anyhow::Result<ExitCode> {
    let JobsCommand::Show { id, json } = command;
    let job_id = JobId::parse(&id).with_context(|| format!("{id:?} is not a job id"))?;
    let Some(job) = app::jobs::job(backend, job_id).await? else {
        eprintln!("no job {id}");
        return Ok(ExitCode::from(1));
    };
    let history = backend.jobs.history(job_id).await?;
    let value = json!({"job": job, "history": history});
    emit(json, &value, || {
        let mut text = format!(
            "job {}  {}  event {}  buyer {}\n  request {}\n  seats {:?}  hold until {}\n  reason {}  code {}\n  first error {}\n  last error {}\n  accepted {}\nhistory:",
            job.job_id,
            job.status.as_str(),
            job.event_id,
            job.buyer_id,
            json!(job.request),
            job.seat_ids.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
            job.hold_expires_at
                .map_or("-".to_owned(), |t| t.to_string()),
            job.reason.as_deref().unwrap_or("-"),
            job.reason_code.map_or("-", |code| code.as_str()),
            job.first_error.as_deref().unwrap_or("-"),
            job.last_error.as_deref().unwrap_or("-"),
            job.accepted_at,
        );
        for event in &history {
            text.push_str(&format!(
                "\n  {}  {}",
                event.occurred_at,
                event.detail_type()
            ));
            if let Some(reason) = &event.reason {
                let code = event.reason_code.map_or("-", |code| code.as_str());
                text.push_str(&format!(" ({reason}; {code})"));
            }
        }
        text
    });
    Ok(ExitCode::SUCCESS)
}
