//! Doctor's output: text for people (findings by section, then a summary table; colour only
//! on a terminal and without `NO_COLOR`), JSON for machines.

use super::{Outcome, Report, Section};

/// The text report. `colour` adds ANSI colours to the outcome words.
pub fn render_text(report: &Report, colour: bool) -> String {
    let paint = |outcome: Outcome| {
        let (word, code) = match outcome {
            Outcome::Pass => ("pass", "32"),
            Outcome::Warn => ("warn", "33"),
            Outcome::Fail => ("FAIL", "31;1"),
        };
        if colour {
            format!("\x1b[{code}m{word}\x1b[0m")
        } else {
            word.to_string()
        }
    };
    let mut out = format!(
        "dossier doctor {} ({} requests)\n",
        report.url, report.requests
    );
    for section in Section::ALL {
        let findings: Vec<_> = report
            .findings
            .iter()
            .filter(|finding| finding.section == section)
            .collect();
        if findings.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{}\n", section.title()));
        for finding in findings {
            out.push_str(&format!(
                "  {}  {}\n",
                paint(finding.outcome),
                finding.check
            ));
            if finding.outcome != Outcome::Pass {
                for (label, text) in [
                    ("expected", &finding.expected),
                    ("seen", &finding.seen),
                    ("fix", &finding.fix),
                ] {
                    if !text.is_empty() {
                        out.push_str(&format!("        {label:<9}{text}\n"));
                    }
                }
            }
        }
    }
    out.push_str(&format!(
        "\n{:<12}{:>6}{:>6}{:>6}\n",
        "section", "pass", "warn", "fail"
    ));
    for section in Section::ALL {
        let count = |outcome| {
            report
                .findings
                .iter()
                .filter(|finding| finding.section == section && finding.outcome == outcome)
                .count()
        };
        out.push_str(&format!(
            "{:<12}{:>6}{:>6}{:>6}\n",
            section.title(),
            count(Outcome::Pass),
            count(Outcome::Warn),
            count(Outcome::Fail)
        ));
    }
    out.push_str(&format!(
        "{:<12}{:>6}{:>6}{:>6}\n",
        "total",
        report.count(Outcome::Pass),
        report.count(Outcome::Warn),
        report.count(Outcome::Fail)
    ));
    out.push_str(if report.healthy() {
        "\nhealthy: nothing failed\n"
    } else {
        "\nunhealthy: fix what failed, then run doctor again\n"
    });
    out
}

/// The JSON report: the findings with counts, for CI and monitoring.
pub fn render_json(report: &Report) -> String {
    let value = serde_json::json!({
        "url": report.url,
        "healthy": report.healthy(),
        "requests": report.requests,
        "passed": report.count(Outcome::Pass),
        "warnings": report.count(Outcome::Warn),
        "failures": report.count(Outcome::Fail),
        "findings": report.findings,
    });
    serde_json::to_string_pretty(&value).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::super::Finding;
    use super::*;

    fn report() -> Report {
        Report {
            url: "https://info.example.com".into(),
            requests: 3,
            findings: vec![
                Finding {
                    section: Section::Discovery,
                    check: "GET /.well-known/jwks.json".into(),
                    outcome: Outcome::Pass,
                    expected: String::new(),
                    seen: String::new(),
                    fix: String::new(),
                },
                Finding {
                    section: Section::Headers,
                    check: "CORS".into(),
                    outcome: Outcome::Fail,
                    expected: "*".into(),
                    seen: "none".into(),
                    fix: "upload _headers".into(),
                },
            ],
        }
    }

    #[test]
    fn text_says_what_was_expected_seen_and_how_to_fix_it() {
        let text = render_text(&report(), false);
        assert!(text.contains("  FAIL  CORS\n        expected *\n        seen     none\n        fix      upload _headers\n"), "{text}");
        assert!(text.contains("headers          0     0     1\n"), "{text}");
        assert!(text.contains("total            1     0     1\n"), "{text}");
        assert!(!text.contains('\x1b'));
        assert!(render_text(&report(), true).contains("\x1b[31;1mFAIL"));
    }

    #[test]
    fn json_counts_the_outcomes() {
        let value: serde_json::Value = serde_json::from_str(&render_json(&report())).unwrap();
        assert_eq!(value["healthy"], false);
        assert_eq!(value["failures"], 1);
        assert_eq!(value["findings"][1]["section"], "headers");
        assert_eq!(value["findings"][1]["fix"], "upload _headers");
        assert!(value["findings"][0].get("fix").is_none());
    }
}
