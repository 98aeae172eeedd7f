//! What operators run: `seatclaimctl`, backups and restores, schema migrations of the data
//! folder, retention, and the expiry of holds.

mod backup;
mod ctl;
mod expiry;
mod line_upgrade;
mod migrations;
mod older_schema;
mod retention;
