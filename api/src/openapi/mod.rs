//! The OpenAPI 3.1 document `GET /openapi.json` serves, generated from the code: each handler's
//! `#[utoipa::path]` says its method, path, parameters, bodies and the statuses it answers, and
//! the router is built from the same list (`routes::api`), so a route cannot be served without
//! being documented. What every operation shares (the bounds' 503s, 405, 500, the problem body of
//! every error, and authentication when it is on) is added here once, in [`responses`].

mod responses;

use std::sync::OnceLock;

use axum::body::Bytes;
use axum::http::Method;
use utoipa::openapi::PathItem;
use utoipa::openapi::path::Operation;

/// The name of the bearer-token security scheme operations that need a token refer to.
pub const BEARER_SCHEME: &str = "bearerAuth";

/// The whole document as an API with authentication on (`auth`) or off serves it: every route
/// the router serves, each with every status it can answer.
#[must_use]
pub fn document(auth: bool) -> serde_json::Value {
    let mut document = crate::routes::api().into_openapi();
    responses::complete(&mut document, auth);
    let mut json = serde_json::to_value(&document).unwrap_or_else(|error| {
        // The document is plain data: this cannot fail, but an empty object beats a panic.
        tracing::error!(%error, "cannot render the OpenAPI document");
        serde_json::Value::Object(serde_json::Map::new())
    });
    camel_case_links(&mut json);
    json
}

/// utoipa 5 writes a link's fields in snake case (`operation_id`); OpenAPI spells them in
/// camel case (`operationId`), and tools ignore links without it.
fn camel_case_links(document: &mut serde_json::Value) {
    let Some(paths) = document["paths"].as_object_mut() else {
        return;
    };
    let responses = paths
        .values_mut()
        .filter_map(serde_json::Value::as_object_mut)
        .flat_map(|item| item.values_mut())
        .filter_map(|operation| operation.get_mut("responses")?.as_object_mut())
        .flat_map(|responses| responses.values_mut());
    for response in responses {
        let Some(links) = response.get_mut("links").and_then(|l| l.as_object_mut()) else {
            continue;
        };
        for link in links
            .values_mut()
            .filter_map(serde_json::Value::as_object_mut)
        {
            for (snake, camel) in [
                ("operation_id", "operationId"),
                ("operation_ref", "operationRef"),
                ("request_body", "requestBody"),
            ] {
                if let Some(value) = link.remove(snake) {
                    link.insert(camel.to_owned(), value);
                }
            }
        }
    }
}

/// The document as JSON, rendered once per process for each setting of `auth`: what the
/// composition hands the router's state to serve at `GET /openapi.json`.
#[must_use]
pub fn json(auth: bool) -> Bytes {
    static RENDERED: [OnceLock<Bytes>; 2] = [OnceLock::new(), OnceLock::new()];
    RENDERED[usize::from(auth)]
        .get_or_init(|| Bytes::from(document(auth).to_string()))
        .clone()
}

/// Every (method, path) the router serves, as the list it is built from holds them: paths in
/// the router's syntax (`/v1/jobs/{job_id}`), which is also OpenAPI's.
#[must_use]
pub fn routes() -> Vec<(Method, String)> {
    let document = crate::routes::api().into_openapi();
    let mut routes = Vec::new();
    for (path, item) in &document.paths.paths {
        for (method, _) in operations(item) {
            routes.push((method, path.clone()));
        }
    }
    routes
}

/// A path item's operations with their methods.
fn operations(item: &PathItem) -> Vec<(Method, &Operation)> {
    [
        (Method::GET, &item.get),
        (Method::PUT, &item.put),
        (Method::POST, &item.post),
        (Method::DELETE, &item.delete),
        (Method::OPTIONS, &item.options),
        (Method::HEAD, &item.head),
        (Method::PATCH, &item.patch),
        (Method::TRACE, &item.trace),
    ]
    .into_iter()
    .filter_map(|(method, operation)| Some((method, operation.as_ref()?)))
    .collect()
}

/// A path item's operations, to change.
fn operations_mut(item: &mut PathItem) -> impl Iterator<Item = &mut Operation> {
    [
        &mut item.get,
        &mut item.put,
        &mut item.post,
        &mut item.delete,
        &mut item.options,
        &mut item.head,
        &mut item.patch,
        &mut item.trace,
    ]
    .into_iter()
    .filter_map(Option::as_mut)
}
