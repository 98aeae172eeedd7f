//! Standing the backend up: the resource names a prefix gives (`names`), the settings
//! (`settings`), creating the resources (`provision`) and migrating older ones (`migrate`, with the
//! table reads it needs in `migrate_tables`).

pub(crate) mod migrate;
mod migrate_codes;
pub(crate) mod migrate_tables;
pub(crate) mod names;
pub(crate) mod provision;
pub(crate) mod settings;
