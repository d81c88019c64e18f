//! robots.txt per host: fetched once per host by the first task that needs it, kept, and
//! asked again after a 5xx or an unreachable host.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use url::Url;

use super::fetch::Fetcher;
use super::frontier::host_key;

/// robots.txt rules of one host.
#[derive(Clone)]
pub(super) enum Robots {
    /// No robots.txt, a 4xx, or rules parsed.
    Rules(Option<Arc<texting_robots::Robot>>),
    /// 5xx or unreachable: closed until then.
    Closed(Instant),
    /// The SSRF guard refuses the host's address: nothing of it is fetched in this run,
    /// and no attempt is repeated.
    Refused(super::fetch::FetchError),
}

/// robots.txt per host. Each host has its own async lock, held while its robots.txt is
/// fetched, so that the tasks of one host wait for one fetch instead of each making its own.
pub(super) type RobotsCache = Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Robots>>>>>>;

/// The rules of `url`'s host from `cache`, fetched with `fetcher` as `user_agent` when the
/// cache has none (or the host's closing after a failure, `retry` long, is over).
pub(super) async fn robots_for(
    cache: &RobotsCache,
    fetcher: &Fetcher,
    user_agent: &str,
    retry: Duration,
    url: &Url,
) -> Robots {
    let host = host_key(url);
    let slot = cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(host.to_string())
        .or_default()
        .clone();
    let mut cached = slot.lock().await;
    match &*cached {
        Some(Robots::Closed(until)) if *until <= Instant::now() => {}
        Some(other) => return other.clone(),
        None => {}
    }
    let mut robots_url = url.clone();
    robots_url.set_path("/robots.txt");
    robots_url.set_query(None);
    let entry = match fetcher.fetch(&robots_url, |u| Ok(u.clone())).await {
        Ok(f) if (200..300).contains(&f.status) => Robots::Rules(
            texting_robots::Robot::new(user_agent, &f.body)
                .ok()
                .map(Arc::new),
        ),
        Ok(f) if (400..500).contains(&f.status) => Robots::Rules(None),
        Ok(f) => {
            tracing::info!("{robots_url}: HTTP {}: host closed for a while", f.status);
            Robots::Closed(Instant::now() + retry)
        }
        Err(e @ super::fetch::FetchError::Refused { .. }) => {
            tracing::warn!("{e}");
            Robots::Refused(e)
        }
        Err(e) => {
            tracing::info!("{e}: host closed for a while");
            Robots::Closed(Instant::now() + retry)
        }
    };
    *cached = Some(entry.clone());
    entry
}
