//! The buyer web page: static files built into the binary, so the one-command local run serves
//! it too. `/` lists the events and `/events/{event_id}` shows one seat map; both are the same
//! page, which reads the path. Its style sheet and script modules are served under `/ui/` from
//! one table ([`FILES`]), and `/ui/config.json` tells it how to sign in.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::state::{AppState, UiOidc};

/// A file of `api/ui/` served under `/ui/`.
#[derive(Clone, Copy)]
struct UiFile {
    /// Its name in `api/ui/` and under `/ui/`.
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const HTML: &str = "text/html; charset=utf-8";
const JAVASCRIPT: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// The table row of `api/ui/<name>`, its content built into the binary.
macro_rules! ui_file {
    ($name:literal, $content_type:expr) => {
        UiFile {
            name: $name,
            content_type: $content_type,
            body: include_str!(concat!("../../ui/", $name)),
        }
    };
}

/// The page, at `/` and `/events/{event_id}`.
const INDEX: UiFile = ui_file!("index.html", HTML);
/// The entry module, which imports the others.
const APP_JS: UiFile = ui_file!("app.js", JAVASCRIPT);
const APP_CSS: UiFile = ui_file!("app.css", CSS);

/// Every file of `api/ui/` but the page itself, by the name `/ui/{file}` serves it under (a
/// unit test below holds it to the folder).
const FILES: &[UiFile] = &[
    APP_CSS,
    APP_JS,
    ui_file!("account.js", JAVASCRIPT),
    ui_file!("api.js", JAVASCRIPT),
    ui_file!("dom.js", JAVASCRIPT),
    ui_file!("event_page.js", JAVASCRIPT),
    ui_file!("events.js", JAVASCRIPT),
    ui_file!("form.js", JAVASCRIPT),
    ui_file!("job_view.js", JAVASCRIPT),
    ui_file!("oidc.js", JAVASCRIPT),
    ui_file!("page_state.js", JAVASCRIPT),
    ui_file!("reasons.js", JAVASCRIPT),
    ui_file!("reservation.js", JAVASCRIPT),
    ui_file!("seat_map.js", JAVASCRIPT),
    ui_file!("storage.js", JAVASCRIPT),
];

fn serve(file: UiFile) -> Response {
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static(file.content_type),
            ),
            // The files change only with the binary; a short reuse keeps a deploy visible soon.
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=60"),
            ),
        ],
        file.body,
    )
        .into_response()
}

/// `GET /`: the page, listing the events.
#[utoipa::path(
    get,
    path = "/",
    tag = "web page",
    operation_id = "page",
    responses(
        (status = 200, description = "The buyer page (it lists the events).",
            body = String, content_type = "text/html"),
    ),
)]
pub async fn page() -> Response {
    serve(INDEX)
}

/// `GET /events/{event_id}`: the same page, which reads the path and shows that event.
#[utoipa::path(
    get,
    path = "/events/{event_id}",
    tag = "web page",
    operation_id = "event_page",
    params(("event_id" = String, Path, description = "The event the page shows (the page \
        itself reads it, so any value answers the page).")),
    responses(
        (status = 200, description = "The buyer page, showing the event's seat map.",
            body = String, content_type = "text/html"),
    ),
)]
pub async fn event_page() -> Response {
    page().await
}

/// `GET /ui/app.js`: the page's entry module (the page loads it by this name).
#[utoipa::path(
    get,
    path = "/ui/app.js",
    tag = "web page",
    operation_id = "page_script",
    responses(
        (status = 200, description = "The page's entry module, which imports the others \
            (`/ui/{file}`).", body = String, content_type = "text/javascript"),
    ),
)]
pub async fn script() -> Response {
    serve(APP_JS)
}

/// `GET /ui/app.css`: the page's style sheet.
#[utoipa::path(
    get,
    path = "/ui/app.css",
    tag = "web page",
    operation_id = "page_style",
    responses(
        (status = 200, description = "The page's style sheet.",
            body = String, content_type = "text/css"),
    ),
)]
pub async fn style() -> Response {
    serve(APP_CSS)
}

/// `GET /ui/{file}`: any other file of the page (its script modules), by name.
#[utoipa::path(
    get,
    path = "/ui/{file}",
    tag = "web page",
    operation_id = "page_file",
    params(("file" = String, Path, description = "A file of the page: one of the modules \
        `/ui/app.js` imports (or `app.js` and `app.css` themselves).", example = "api.js")),
    responses(
        (status = 200, description = "The file: a script module, or the style sheet.",
            content(
                (String = "text/javascript"),
                (String = "text/css"),
            )),
        (status = 400, description = "A file name that is not UTF-8 once percent-decoded."),
        (status = 404, description = "The page has no file of that name."),
    ),
)]
pub async fn page_file(ApiPath(name): ApiPath<String>) -> Result<Response, ApiError> {
    FILES
        .iter()
        .find(|known| known.name == name)
        .map(|known| serve(*known))
        .ok_or_else(|| ApiError::NotFound(format!("the page has no file {name}")))
}

/// What `/ui/config.json` answers.
#[derive(Serialize, ToSchema)]
pub struct UiConfig {
    /// Whether the API wants bearer tokens.
    auth: bool,
    /// Only with `auth`: the OpenID Connect sign-in, `null` when none is configured (the page
    /// then takes a pasted token).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<UiOidc>, required = false)]
    oidc: Option<Option<UiOidc>>,
    /// Only with `auth`: whether the page takes a token from a `#token=<jwt>` link (HS256
    /// development keys only, never beside an issuer's keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    token_links: Option<bool>,
}

/// `GET /ui/config.json`: whether the API wants tokens, and the OpenID Connect client the page
/// signs in with (`null` when none is configured: the page then takes a pasted token).
#[utoipa::path(
    get,
    path = "/ui/config.json",
    tag = "web page",
    operation_id = "page_config",
    responses((status = 200, description = "How the page signs in.", body = UiConfig)),
)]
pub async fn config(State(state): State<AppState>) -> Json<UiConfig> {
    let access = &state.access;
    Json(match access.auth {
        None => UiConfig {
            auth: false,
            oidc: None,
            token_links: None,
        },
        Some(_) => UiConfig {
            auth: true,
            oidc: Some(access.ui_oidc.clone()),
            token_links: Some(access.token_links),
        },
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{FILES, INDEX};

    #[test]
    fn the_table_serves_every_file_of_the_folder_but_the_page() {
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/ui");
        let on_disk: BTreeSet<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name != "index.html")
            .collect();
        let served: BTreeSet<String> = FILES.iter().map(|f| f.name.to_owned()).collect();
        assert_eq!(served.len(), FILES.len(), "each file once");
        assert_eq!(served, on_disk, "FILES lists exactly the files of api/ui");
    }

    #[test]
    fn every_module_imported_is_served_and_preloaded() {
        for module in FILES.iter().filter(|f| f.name.ends_with(".js")) {
            for imported in module.body.split("from './").skip(1) {
                let name = imported.split('\'').next().unwrap();
                assert!(
                    FILES.iter().any(|f| f.name == name),
                    "{} imports {name}, which FILES lacks",
                    module.name
                );
                assert!(
                    INDEX.body.contains(&format!("href=\"/ui/{name}\"")),
                    "index.html preloads {name}"
                );
            }
        }
    }
}
