//! The OpenAPI schema of [`ReasonCode`]: a string enum of every code, its description the
//! table of codes, so the document lists the same rows the code answers with.

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use super::ReasonCode;

impl utoipa::PartialSchema for ReasonCode {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(table()))
            .enum_values(Some(ReasonCode::ALL.iter().map(|code| code.as_str())))
            .into()
    }
}

impl utoipa::ToSchema for ReasonCode {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ReasonCode")
    }
}

/// The description: what the code is for, then one line per code.
fn table() -> String {
    let mut text = String::from(
        "A stable, machine-readable reason beside the human text: why a job was REJECTED or \
         FAILED (`reason_code` beside `reason`), why a request got a problem (beside \
         `detail`), or why a payment sold nothing. A code is never renamed or reused; new \
         codes may be added.\n",
    );
    for code in ReasonCode::ALL {
        text.push_str(&format!("\n- `{}`: {}", code.as_str(), code.description()));
    }
    text
}
