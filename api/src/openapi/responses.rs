//! What every operation shares, added to the generated operations in one place rather than
//! repeated on each handler: the statuses any route can answer (405 through the fallback, 500,
//! and the bounds' 503), the problem body of every error (narrowed to the problem types its
//! status comes with), and authentication, whose scheme and 401s exist only when it is on.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::{Components, OpenApi, Ref, RefOr, Response};

use super::{BEARER_SCHEME, operations_mut};
use crate::problem::ProblemType;

/// The media type of every error.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Statuses every operation may answer, whatever its handler does.
const SHARED: &[(u16, &str)] = &[
    (
        405,
        "The path does not take the request's method (any method it has no operation for); \
         the `Allow` header lists those it takes.",
    ),
    (
        500,
        "An internal error, never intended: the backend failed in a way a retry will not fix.",
    ),
    (
        503,
        "Retry after `Retry-After` seconds: the API is at `SEATCLAIM_MAX_IN_FLIGHT` requests \
         (`overloaded`), the request passed `SEATCLAIM_REQUEST_TIMEOUT_SECS` (`timeout`), or \
         the backend is unavailable (`unavailable`).",
    ),
];

/// The 401 every operation that needs a token answers when authentication is on.
const UNAUTHENTICATED: &str = "No valid bearer token: missing, malformed, badly signed, expired \
    or not yet valid. `WWW-Authenticate` carries the RFC 6750 challenge.";

/// Adds the shared statuses, the problem bodies and (with `auth`) authentication to every
/// operation of `document`; without `auth`, drops the security requirements.
pub(super) fn complete(document: &mut OpenApi, auth: bool) {
    for item in document.paths.paths.values_mut() {
        for operation in operations_mut(item) {
            let secured = operation
                .security
                .as_ref()
                .is_some_and(|requirements| !requirements.is_empty());
            if auth && secured {
                add(operation, 401, UNAUTHENTICATED);
            } else {
                operation.security = None;
            }
            for (status, description) in SHARED {
                add(operation, *status, description);
            }
            for (status, response) in &mut operation.responses.responses {
                if let (Ok(status), RefOr::T(response)) = (status.parse::<u16>(), response) {
                    describe_problem(status, response);
                }
            }
        }
    }
    if auth {
        let scheme = Http::builder()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("JWT")
            .description(Some(
                "A JWT from the deployment's issuer (RS256/ES256 against its JWKS, or HS256). \
                 Its `sub` is the buyer; the admin scope may create events and read every job.",
            ))
            .build();
        document
            .components
            .get_or_insert_with(Components::new)
            .security_schemes
            .insert(BEARER_SCHEME.to_owned(), SecurityScheme::Http(scheme));
    }
}

/// Adds a response for `status` unless the handler documents its own.
fn add(operation: &mut Operation, status: u16, description: &str) {
    operation
        .responses
        .responses
        .entry(status.to_string())
        .or_insert_with(|| RefOr::T(Response::new(description)));
}

/// Gives an error response its problem body, the problem types its status comes with, and the
/// headers that status carries.
fn describe_problem(status: u16, response: &mut Response) {
    if status < 400 || !response.content.is_empty() {
        return;
    }
    let kinds: Vec<ProblemType> = ProblemType::of_status(status).collect();
    let urns: Vec<String> = kinds.iter().map(|kind| kind.urn()).collect();
    let narrowed = ObjectBuilder::new()
        .property(
            "type",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(urns.clone())),
        )
        .property(
            "status",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .enum_values(Some([status])),
        );
    let schema = AllOfBuilder::new()
        .item(Ref::from_schema_name("Problem"))
        .item(narrowed)
        .build();
    response.description = format!(
        "{} Problem type: {}.",
        response.description,
        urns.iter()
            .map(|urn| format!("`{urn}`"))
            .collect::<Vec<_>>()
            .join(" or ")
    );
    let content = ContentBuilder::new()
        .schema(Some(Schema::AllOf(schema)))
        .build();
    response.content.insert(PROBLEM_JSON.to_owned(), content);
    if let Some((name, about)) = header_of(status) {
        let header = HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String))
            .description(Some(about))
            .build();
        response.headers.insert(name.to_owned(), header);
    }
}

/// The header an error status carries, and what it says.
fn header_of(status: u16) -> Option<(&'static str, &'static str)> {
    match status {
        401 => Some((
            "WWW-Authenticate",
            "`Bearer realm=\"seatclaim\"`, with `error=\"invalid_token\"` for a token that was sent.",
        )),
        403 => Some((
            "WWW-Authenticate",
            "With a token that lacks a scope: `error=\"insufficient_scope\"` and the `scope`.",
        )),
        405 => Some(("Allow", "The methods the path takes.")),
        429 => Some((
            "Retry-After",
            "Whole seconds until the buyer may reserve again, or poll with `wait` again.",
        )),
        503 => Some(("Retry-After", "Seconds to wait before retrying (1).")),
        _ => None,
    }
}
