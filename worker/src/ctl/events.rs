//! `seatclaimctl events create`: an operator creates an event from the same JSON body that
//! `POST /v1/events` takes. A stack runs it under the operator's role, so that the API's role
//! needs no right to write new seats (`SEATCLAIM_API_CREATES_EVENTS=false`). `seatclaimctl
//! events close-waitlist ID` ends an event's waitlist, as `POST /v1/events/{id}/waitlist/close`.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use seatclaim_shared::Backend;
use seatclaim_shared::domain::{EventId, EventSpec, NewEvent};
use seatclaim_shared::ports::EventCreation;
use serde_json::json;

use super::emit;

#[derive(Debug, Subcommand)]
pub(super) enum EventsCommand {
    /// Creates an event and all its seats, AVAILABLE; exits 1 if the event already exists.
    Create {
        /// The event as JSON, as `POST /v1/events` takes it; `-` reads standard input.
        #[arg(long)]
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Closes an event's waitlist: every WAITLISTED job is REJECTED ("waitlist closed"), and the
    /// event behaves as one without a waitlist; exits 1 if there is no such event.
    CloseWaitlist {
        /// The event.
        event_id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub(super) async fn run(backend: &Backend, command: EventsCommand) -> anyhow::Result<ExitCode> {
    match command {
        EventsCommand::Create { file, json } => create(backend, &file, json).await,
        EventsCommand::CloseWaitlist { event_id, json } => {
            close_waitlist(backend, &event_id, json).await
        }
    }
}

async fn close_waitlist(backend: &Backend, raw: &str, json: bool) -> anyhow::Result<ExitCode> {
    let event_id = EventId::parse(raw).context("not an event id")?;
    let Some(rejected) = backend.inventory.close_waitlist(&event_id).await? else {
        eprintln!("event {event_id} does not exist");
        return Ok(ExitCode::from(1));
    };
    let value = json!({"event_id": event_id, "rejected": rejected});
    emit(json, &value, || {
        format!("closed the waitlist of event {event_id}: {rejected} waiting jobs rejected")
    });
    Ok(ExitCode::SUCCESS)
}

async fn create(backend: &Backend, file: &PathBuf, json: bool) -> anyhow::Result<ExitCode> {
    let text = read(file)?;
    let spec: EventSpec = serde_json::from_str(&text)
        .with_context(|| format!("{} is not an event body", file.display()))?;
    let event = NewEvent::parse(spec).context("the event is not valid")?;
    match backend.catalog.create_event(&event).await? {
        EventCreation::Created(seats) => {
            let value = json!({"event_id": event.event_id, "seats": seats});
            emit(json, &value, || {
                format!("created event {} with {seats} seats", event.event_id)
            });
            Ok(ExitCode::SUCCESS)
        }
        EventCreation::AlreadyExists => {
            eprintln!("event {} already exists", event.event_id);
            Ok(ExitCode::from(1))
        }
        EventCreation::Unsupported(refused) => {
            eprintln!("event {} was not created: {refused}", event.event_id);
            Ok(ExitCode::from(1))
        }
    }
}

fn read(file: &PathBuf) -> anyhow::Result<String> {
    if file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read the event from standard input")?;
        return Ok(text);
    }
    std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))
}
