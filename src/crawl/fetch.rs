//! Fetching one URL: redirects followed by hand (each hop checked by the caller and by the
//! SSRF guard), a body cap enforced while streaming and after decompression, timeouts, and
//! errors that say what went wrong.

use std::time::Duration;

use url::Url;

use super::guard::{self, GuardError, GuardedResolver};
use crate::config::CrawlConfig;

/// Most redirects followed for one URL.
pub const MAX_REDIRECTS: usize = 5;

/// How the fetcher behaves: [`FetchConfig::from_crawl`], then the `with_` setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FetchConfig {
    /// TCP connect timeout.
    pub connect_timeout: Duration,
    /// Whole-request timeout (headers and body), per hop.
    pub request_timeout: Duration,
    /// Largest body, counted after decompression.
    pub max_body_bytes: u64,
    /// The User-Agent header.
    pub user_agent: String,
    /// Lift the SSRF guard.
    pub allow_private_ips: bool,
}

impl FetchConfig {
    /// The fetch settings of a `[crawl]` section.
    pub fn from_crawl(crawl: &CrawlConfig) -> FetchConfig {
        FetchConfig {
            connect_timeout: Duration::from_millis(crawl.connect_timeout_ms),
            request_timeout: Duration::from_millis(crawl.request_timeout_ms),
            max_body_bytes: crawl.max_body_bytes,
            user_agent: crawl.user_agent.clone(),
            allow_private_ips: crawl.allow_private_ips,
        }
    }

    /// Sets the connect and whole-request timeouts.
    pub fn with_timeouts(mut self, connect: Duration, request: Duration) -> FetchConfig {
        self.connect_timeout = connect;
        self.request_timeout = request;
        self
    }

    /// Sets [`FetchConfig::max_body_bytes`].
    pub fn with_max_body_bytes(mut self, bytes: u64) -> FetchConfig {
        self.max_body_bytes = bytes;
        self
    }

    /// Sets the User-Agent header.
    pub fn with_user_agent(mut self, user_agent: impl Into<String>) -> FetchConfig {
        self.user_agent = user_agent.into();
        self
    }

    /// Lifts the SSRF guard (`true`), for a crawl of loopback or private addresses.
    pub fn with_allow_private_ips(mut self, allow: bool) -> FetchConfig {
        self.allow_private_ips = allow;
        self
    }
}

/// What the caller decides about a redirect target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hop {
    /// Follow the redirect to this URL (canonical, in scope) now.
    Follow(Url),
    /// Do not follow it now: the fetch ends with the redirect response, and the caller
    /// fetches the target later (for example after reading another host's robots.txt).
    Defer(Url),
}

/// A response, after any redirects.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL that answered (the last hop, as the caller's hop check returned it).
    pub url: Url,
    /// Its status.
    pub status: u16,
    /// Its `Content-Type`, if any.
    pub content_type: Option<String>,
    /// `Retry-After` in seconds, if given.
    pub retry_after: Option<Duration>,
    /// The body, decompressed.
    pub body: Vec<u8>,
    /// Each redirect followed: the URL that redirected and its status.
    pub redirects: Vec<(Url, u16)>,
    /// A redirect target the caller deferred ([`Hop::Defer`]); the response is then the
    /// redirect itself (a 3xx status, no body).
    pub deferred: Option<Url>,
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The SSRF guard or the caller's hop check refused a URL.
    #[error("{url}: refused: {reason}")]
    Refused {
        /// The URL refused.
        url: String,
        /// Why.
        reason: String,
    },
    /// A redirect led back to a URL already visited in this chain.
    #[error("{url}: redirect loop")]
    RedirectLoop {
        /// The URL that would have been visited again.
        url: String,
    },
    /// More than `MAX_REDIRECTS` redirects.
    #[error("{url}: more than {MAX_REDIRECTS} redirects")]
    TooManyRedirects {
        /// The URL that redirected once too often.
        url: String,
    },
    /// A redirect without a usable Location.
    #[error("{url}: redirect with a bad Location: {location}")]
    BadRedirect {
        /// The redirecting URL.
        url: String,
        /// The Location header.
        location: String,
    },
    /// The body (after decompression) passed the cap.
    #[error("{url}: body larger than {limit} bytes")]
    TooLarge {
        /// The URL.
        url: String,
        /// The cap.
        limit: u64,
    },
    /// Connecting, or the whole request, took too long.
    #[error("{url}: timed out")]
    Timeout {
        /// The URL.
        url: String,
    },
    /// The connection failed (DNS, refused, reset, TLS, a broken body).
    #[error("{url}: {message}")]
    Network {
        /// The URL.
        url: String,
        /// What happened.
        message: String,
    },
}

impl FetchError {
    /// True for failures worth retrying (timeouts and network errors).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            FetchError::Timeout { .. } | FetchError::Network { .. }
        )
    }

    /// A short label: `refused`, `redirect_loop`, `too_many_redirects`, `bad_redirect`,
    /// `too_large`, `timeout` or `network`.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::Refused { .. } => "refused",
            FetchError::RedirectLoop { .. } => "redirect_loop",
            FetchError::TooManyRedirects { .. } => "too_many_redirects",
            FetchError::BadRedirect { .. } => "bad_redirect",
            FetchError::TooLarge { .. } => "too_large",
            FetchError::Timeout { .. } => "timeout",
            FetchError::Network { .. } => "network",
        }
    }
}

/// The HTTP client of a [`Fetcher`] could not be built (its TLS roots, its resolver).
#[derive(Debug, thiserror::Error)]
#[error("HTTP client: {0}")]
pub struct ClientError(#[source] pub reqwest::Error);

/// The HTTP client of the crawler.
///
/// Requests go over pooled keep-alive connections. A server may close an idle connection
/// just as a request is sent on it (without `Connection: close`, when its keep-alive timer
/// fires): the request then fails before any response. Such a GET is sent again at once,
/// once, on a connection of its own, and the failure is not counted as an attempt.
#[derive(Debug, Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    /// The same client without a pool: every request on a new connection.
    fresh: reqwest::Client,
    config: FetchConfig,
}

impl Fetcher {
    /// A fetcher with its own connection pool.
    pub fn new(config: FetchConfig) -> Result<Fetcher, ClientError> {
        let builder = || {
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(config.connect_timeout)
                .timeout(config.request_timeout)
                .user_agent(config.user_agent.clone())
                .dns_resolver(GuardedResolver::new(config.allow_private_ips))
        };
        let client = builder().build().map_err(ClientError)?;
        let fresh = builder()
            .pool_max_idle_per_host(0)
            .build()
            .map_err(ClientError)?;
        Ok(Fetcher {
            client,
            fresh,
            config,
        })
    }

    /// Sends a GET for `url`; a request that failed on a pooled connection the server had
    /// closed goes again on a new connection.
    async fn send(&self, url: &Url) -> Result<reqwest::Response, FetchError> {
        match self.client.get(url.clone()).send().await {
            Ok(response) => Ok(response),
            Err(e) if closed_before_answer(&e) => {
                tracing::debug!(
                    "{url}: pooled connection closed by the server ({e}); sent again on a new one"
                );
                self.fresh
                    .get(url.clone())
                    .send()
                    .await
                    .map_err(|e| classify(url, &e))
            }
            Err(e) => Err(classify(url, &e)),
        }
    }

    /// The settings in use.
    pub fn config(&self) -> &FetchConfig {
        &self.config
    }

    /// Fetches `url`, following redirects. `hop` is asked about every redirect target
    /// (resolved against the redirecting URL): it returns the URL to fetch (canonical, in
    /// scope) or the reason to refuse it.
    pub async fn fetch(
        &self,
        url: &Url,
        hop: impl Fn(&Url) -> Result<Url, String>,
    ) -> Result<Fetched, FetchError> {
        self.fetch_with(url, |next| hop(next).map(Hop::Follow))
            .await
    }

    /// As [`Fetcher::fetch`], with a hop check that may also defer a redirect target.
    pub async fn fetch_with(
        &self,
        url: &Url,
        hop: impl Fn(&Url) -> Result<Hop, String>,
    ) -> Result<Fetched, FetchError> {
        let mut current = url.clone();
        let mut redirects: Vec<(Url, u16)> = Vec::new();
        loop {
            guard::check_literal(&current, self.config.allow_private_ips).map_err(|reason| {
                FetchError::Refused {
                    url: current.to_string(),
                    reason,
                }
            })?;
            // The client's request timeout runs from connecting until the body's last byte.
            let response = self.send(&current).await?;
            let status = response.status().as_u16();
            if (300..400).contains(&status) && response.headers().contains_key("location") {
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let Ok(next) = current.join(&location) else {
                    return Err(FetchError::BadRedirect {
                        url: current.to_string(),
                        location,
                    });
                };
                let next = match hop(&next) {
                    Ok(Hop::Follow(next)) => next,
                    Ok(Hop::Defer(target)) => {
                        return Ok(Fetched {
                            url: current,
                            status,
                            content_type: None,
                            retry_after: None,
                            body: Vec::new(),
                            redirects,
                            deferred: Some(target),
                        });
                    }
                    Err(reason) => {
                        return Err(FetchError::Refused {
                            url: next.to_string(),
                            reason,
                        });
                    }
                };
                redirects.push((current.clone(), status));
                // At most a few hops: the list of URLs fetched so far is the set visited.
                if redirects.iter().any(|(seen, _)| *seen == next) {
                    return Err(FetchError::RedirectLoop {
                        url: next.to_string(),
                    });
                }
                if redirects.len() > MAX_REDIRECTS {
                    return Err(FetchError::TooManyRedirects {
                        url: current.to_string(),
                    });
                }
                current = next;
                continue;
            }
            let content_type = response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = self.read_body(&current, response).await?;
            return Ok(Fetched {
                url: current,
                status,
                content_type,
                retry_after,
                body,
                redirects,
                deferred: None,
            });
        }
    }

    async fn read_body(
        &self,
        url: &Url,
        mut response: reqwest::Response,
    ) -> Result<Vec<u8>, FetchError> {
        let limit = self.config.max_body_bytes;
        let too_large = || FetchError::TooLarge {
            url: url.to_string(),
            limit,
        };
        let encoded = response.headers().contains_key("content-encoding");
        let mut body = Vec::new();
        if let Some(length) = response.content_length() {
            if length > limit && !encoded {
                return Err(too_large());
            }
            if !encoded {
                // The declared length, room for it at once (it is within the cap).
                body.reserve_exact(length as usize);
            }
        }
        while let Some(chunk) = response.chunk().await.map_err(|e| classify(url, &e))? {
            if body.len() as u64 + chunk.len() as u64 > limit {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// Whether a request failed because its connection closed before any response came: the
/// server ended a kept-alive connection as the request went out (hyper's "connection closed
/// before message completed", or a reset or broken pipe on writing). Not a failure to
/// connect, a timeout or the guard's refusal, and never an error while reading a body.
fn closed_before_answer(error: &reqwest::Error) -> bool {
    if error.is_connect() || error.is_timeout() || !error.is_request() {
        return false;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(hyper) = e.downcast_ref::<hyper::Error>() {
            if hyper.is_incomplete_message() || hyper.is_canceled() {
                return true;
            }
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
            if matches!(io.kind(), ConnectionReset | BrokenPipe | ConnectionAborted) {
                return true;
            }
        }
        source = e.source();
    }
    false
}

/// Maps a reqwest error to a fetch error, finding the guard's refusal in its causes.
fn classify(url: &Url, error: &reqwest::Error) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if let Some(guard) = e.downcast_ref::<GuardError>() {
            return FetchError::Refused {
                url: url.to_string(),
                reason: guard.to_string(),
            };
        }
        source = e.source();
    }
    if error.is_timeout() {
        return FetchError::Timeout {
            url: url.to_string(),
        };
    }
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        message = format!("{message}: {e}");
        source = e.source();
    }
    FetchError::Network {
        url: url.to_string(),
        message,
    }
}
