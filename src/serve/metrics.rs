//! `GET /metrics` in the Prometheus text format, on a listener of its own (`--metrics-addr`,
//! off by default), so the numbers are never public by accident.
//!
//! Counting costs a few relaxed atomic adds per request: fixed arrays indexed by route and
//! status class, no locks and no allocation on the request path. What other parts own
//! (open connections, reloads, revocations, rate-limit refusals, the store) is read from
//! them when the page is asked for.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::routes::MetricLabel;

/// Status classes: 1xx to 5xx.
const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// Upper bounds of the latency histogram, in seconds.
const BUCKETS: [f64; 11] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 0.5, 2.5,
];

/// Request counts and latencies since the process started.
#[derive(Debug)]
pub struct Metrics {
    /// By label (the endpoint table's, in [`MetricLabel::all`] order) and status class.
    requests: Vec<[AtomicU64; 5]>,
    /// Cumulative counts per bucket, then the `+Inf` bucket.
    latency_buckets: [AtomicU64; 12],
    latency_micros: AtomicU64,
}

/// Values owned elsewhere, read when the page is made.
#[derive(Debug, Clone, Default)]
pub struct Gauges {
    pub open_connections: u64,
    pub reloads: u64,
    pub reloads_refused: u64,
    pub content_errors: u64,
    pub revocations: u64,
    pub rate_limited: u64,
    pub store_ok: bool,
    /// Whether response bodies are in the spool; `None` with `--no-spool`.
    pub spool_ok: Option<bool>,
    pub access_log_dropped: u64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            requests: MetricLabel::all()
                .iter()
                .map(|_| Default::default())
                .collect(),
            latency_buckets: Default::default(),
            latency_micros: AtomicU64::new(0),
        }
    }
}

impl Metrics {
    pub(crate) fn record(&self, label: MetricLabel, status: u16, elapsed: Duration) {
        let class = usize::from(status / 100).clamp(1, 5) - 1;
        if let Some(counts) = self.requests.get(label.index()) {
            counts[class].fetch_add(1, Ordering::Relaxed);
        }
        let seconds = elapsed.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(BUCKETS.len());
        self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.latency_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// The page, in the Prometheus text exposition format 0.0.4.
    pub fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        out.push_str("# HELP dossier_requests_total HTTP requests answered, by route and status class.\n# TYPE dossier_requests_total counter\n");
        for (route, counts) in MetricLabel::all().iter().zip(&self.requests) {
            for (class, count) in CLASSES.iter().zip(counts) {
                let count = count.load(Ordering::Relaxed);
                if count > 0 {
                    out.push_str(&format!(
                        "dossier_requests_total{{route=\"{route}\",status=\"{class}\"}} {count}\n"
                    ));
                }
            }
        }
        out.push_str("# HELP dossier_request_duration_seconds Time from request to response headers.\n# TYPE dossier_request_duration_seconds histogram\n");
        let mut cumulative = 0;
        for (index, count) in self.latency_buckets.iter().enumerate() {
            cumulative += count.load(Ordering::Relaxed);
            let bound = BUCKETS
                .get(index)
                .map_or_else(|| "+Inf".to_string(), |b| b.to_string());
            out.push_str(&format!(
                "dossier_request_duration_seconds_bucket{{le=\"{bound}\"}} {cumulative}\n"
            ));
        }
        let sum = self.latency_micros.load(Ordering::Relaxed) as f64 / 1e6;
        out.push_str(&format!(
            "dossier_request_duration_seconds_sum {sum}\ndossier_request_duration_seconds_count {cumulative}\n"
        ));
        let gauge = |out: &mut String, name: &str, kind: &str, help: &str, value: u64| {
            out.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
            ));
        };
        gauge(
            &mut out,
            "dossier_open_connections",
            "gauge",
            "Connections open now.",
            gauges.open_connections,
        );
        gauge(
            &mut out,
            "dossier_access_log_dropped_total",
            "counter",
            "Access lines dropped because the log writer could not keep up (requests never wait for it).",
            gauges.access_log_dropped,
        );
        gauge(
            &mut out,
            "dossier_reloads_total",
            "counter",
            "Content versions swapped in by hot reload.",
            gauges.reloads,
        );
        gauge(
            &mut out,
            "dossier_reloads_refused_total",
            "counter",
            "Edits that did not compile; the last good version kept serving.",
            gauges.reloads_refused,
        );
        gauge(
            &mut out,
            "dossier_content_errors",
            "gauge",
            "Problems reported for the latest edit (0 when it compiled).",
            gauges.content_errors,
        );
        gauge(
            &mut out,
            "dossier_revocations_total",
            "counter",
            "Credentials revoked by this process.",
            gauges.revocations,
        );
        gauge(
            &mut out,
            "dossier_rate_limited_total",
            "counter",
            "Registration and token requests refused by a rate limit.",
            gauges.rate_limited,
        );
        gauge(
            &mut out,
            "dossier_store_up",
            "gauge",
            "1 while the revocation store can write, 0 while degraded.",
            u64::from(gauges.store_ok),
        );
        if let Some(spool_ok) = gauges.spool_ok {
            gauge(
                &mut out,
                "dossier_spool_up",
                "gauge",
                "1 while response bodies are kept in the spool, 0 when it could not be opened or written (they stay in memory until a restart).",
                u64::from(spool_ok),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_counts_by_route_and_class_and_the_histogram_adds_up() {
        let metrics = Metrics::default();
        let label = |path| crate::routes::find(path).unwrap().metric(false);
        metrics.record(label("/"), 200, Duration::from_micros(80));
        metrics.record(label("/about"), 304, Duration::from_micros(300));
        metrics.record(label("/oauth2/token"), 429, Duration::from_millis(3));
        let page = metrics.render(&Gauges {
            store_ok: true,
            ..Gauges::default()
        });
        assert!(page.contains("dossier_requests_total{route=\"document\",status=\"2xx\"} 1\n"));
        assert!(page.contains("dossier_requests_total{route=\"document\",status=\"3xx\"} 1\n"));
        assert!(page.contains("dossier_requests_total{route=\"token\",status=\"4xx\"} 1\n"));
        assert!(page.contains("dossier_request_duration_seconds_bucket{le=\"0.0001\"} 1\n"));
        assert!(page.contains("dossier_request_duration_seconds_bucket{le=\"0.0005\"} 2\n"));
        assert!(page.contains("dossier_request_duration_seconds_bucket{le=\"+Inf\"} 3\n"));
        assert!(page.contains("dossier_request_duration_seconds_count 3\n"));
        assert!(page.contains("dossier_store_up 1\n"));
        assert!(!page.contains("dossier_spool_up"), "no spool, no gauge");
        let page = metrics.render(&Gauges {
            spool_ok: Some(false),
            ..Gauges::default()
        });
        assert!(page.contains("dossier_spool_up 0\n"));
        // Every sample line is `name{labels} value` or `name value`.
        for line in page.lines().filter(|l| !l.starts_with('#')) {
            let value = line.rsplit(' ').next().unwrap();
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }
}
