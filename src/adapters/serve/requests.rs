//! Reading the sidecar's request bodies: every refusal is one line and a status.

use axum::http::StatusCode;
use serde::Deserialize;

use super::{ApiError, DEFAULT_MAX_URLS, parse_json};
use crate::urls::Canonicalizer;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct UrlsRequest {
    pub(super) urls: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PageRequest {
    url: String,
    #[serde(default)]
    content_type: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    body_base64: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    include_text: bool,
}

/// What a page check is given, read and checked.
pub(super) enum Input {
    Html(Vec<u8>),
    Text(String),
}

/// A page check's request, read and checked: nothing in it can fail later but the work.
pub(super) struct PageCheck {
    pub(super) url: String,
    pub(super) content_type: Option<String>,
    pub(super) input: Input,
    pub(super) include_text: bool,
}

/// Reads a `pages/check` body: JSON of the documented shape, a URL that canonicalizes
/// (one that `urls/check` would call invalid is refused the same way, before any work),
/// exactly one of the three inputs, valid base64.
pub(super) fn read_page_check(
    body: &[u8],
    canonicalizer: &Canonicalizer,
) -> Result<PageCheck, ApiError> {
    let request: PageRequest = parse_json(body)?;
    if request.url.trim().is_empty() {
        return Err(ApiError::bad_request("url: must not be empty"));
    }
    if let Err(e) = canonicalizer.canonicalize(&request.url) {
        return Err(ApiError::bad_request(format!(
            "url: `{}`: {e}",
            request.url
        )));
    }
    let input = match (request.body, request.body_base64, request.text) {
        (Some(body), None, None) => Input::Html(body.into_bytes()),
        (None, Some(encoded), None) => {
            let bytes = data_encoding::BASE64
                .decode(encoded.trim().as_bytes())
                .map_err(|e| ApiError::bad_request(format!("body_base64: {e}")))?;
            Input::Html(bytes)
        }
        (None, None, Some(text)) => Input::Text(text),
        _ => {
            return Err(ApiError::bad_request(
                "give exactly one of body, body_base64 and text",
            ));
        }
    };
    Ok(PageCheck {
        url: request.url,
        content_type: request.content_type,
        input,
        include_text: request.include_text,
    })
}

/// Reads a `urls/check` body: JSON of the documented shape, at most `max_urls` URLs.
pub(super) fn read_url_check(body: &[u8], max_urls: usize) -> Result<UrlsRequest, ApiError> {
    let request: UrlsRequest = parse_json(body)?;
    if request.urls.len() > max_urls {
        return Err(ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!(
                "{} URLs in one request; at most {max_urls} (send several batches)",
                request.urls.len(),
            ),
        });
    }
    Ok(request)
}

/// Reads a request body for `route` (`/v1/urls/check` or `/v1/pages/check`) as the server
/// does, without doing the work: `Err` holds the status and the one-line message the
/// client would get. For fuzzing and for clients that want to check requests offline.
pub fn read_request(route: &str, body: &[u8]) -> Result<(), (u16, String)> {
    let refused = |e: ApiError| (e.status.as_u16(), e.message);
    match route {
        "/v1/urls/check" => read_url_check(body, DEFAULT_MAX_URLS)
            .map(|_| ())
            .map_err(refused),
        "/v1/pages/check" => read_page_check(body, &Canonicalizer::default())
            .map(|_| ())
            .map_err(refused),
        other => Err((404, format!("no route {other}"))),
    }
}
