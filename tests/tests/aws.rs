//! The AWS backend's own suites, on the emulators (DynamoDB Local, moto): the schema's
//! migrations, DynamoDB's rejections and the relay's shards, and the requests each step costs.

mod migration;
mod rejections;
mod relay;
mod requests;
