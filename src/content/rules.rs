//! Field rules: the checks serde's types cannot express (non-empty text, slugs, emails, URLs).
//!
//! Each rule records a problem against a field path; the loader later turns the path into a
//! line number. Rules are deliberately strict about shape and lenient about taste: they reject
//! what would break a consumer (a URL without a host, an email without a domain), not style.

/// Problems found in one file: `(field path, message)`.
#[derive(Debug, Default)]
pub struct Problems(pub Vec<(String, String)>);

impl Problems {
    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.0.push((field.to_string(), message.into()));
    }
}

/// Longest accepted single text field; content is prose, not a data dump.
const MAX_TEXT: usize = 20_000;

pub(crate) fn text(problems: &mut Problems, field: &str, value: &str) {
    if value.trim().is_empty() {
        problems.add(field, "empty: write some text here");
    } else if value.len() > MAX_TEXT {
        problems.add(
            field,
            format!("too long: {} bytes, at most {MAX_TEXT}", value.len()),
        );
    } else if value
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        problems.add(field, "contains a control character");
    }
}

pub(crate) fn optional_text(problems: &mut Problems, field: &str, value: Option<&str>) {
    if let Some(value) = value {
        text(problems, field, value);
    }
}

/// [`slug`] as a JSON Schema pattern, for the published schemas of ids and slugs.
pub(crate) const ID_PATTERN: &str = "^[a-z0-9]+(-[a-z0-9]+)*$";

/// The shape [`lei`] checks (its check digits are beyond a pattern), for published schemas.
pub(crate) const LEI_PATTERN: &str = "^[A-Z0-9]{18}[0-9]{2}$";

/// Lowercase ASCII letters, digits and single dashes, not at either end: safe in any URL.
pub(crate) fn slug(problems: &mut Problems, field: &str, value: &str) {
    let well_formed = !value.is_empty()
        && value.len() <= 80
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
        && !value.ends_with('-')
        && !value.contains("--");
    if !well_formed {
        problems.add(
            field,
            format!("`{value}` is not a slug: use lowercase letters, digits and single dashes, e.g. `field-sensors`"),
        );
    }
}

pub(crate) fn email(problems: &mut Problems, field: &str, value: &str) {
    if !is_email(value) {
        problems.add(
            field,
            format!("`{value}` is not an email address like `press@example.com`"),
        );
    }
}

fn is_email(value: &str) -> bool {
    let Some((local, domain)) = value.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && local.len() <= 64
        && !local.contains(['@', ' ', '<', '>', ',', ';', '"'])
        && !local.chars().any(char::is_control)
        && is_hostname(domain)
        && domain.contains('.')
}

fn is_hostname(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// An absolute `http` or `https` URL with a host; what a reader's browser can open.
pub(crate) fn url(problems: &mut Problems, field: &str, value: &str) {
    if !is_web_url(value) {
        problems.add(
            field,
            format!("`{value}` is not an absolute http(s) URL like `https://example.com/about`"),
        );
    }
}

fn is_web_url(value: &str) -> bool {
    let rest = if let Some(rest) = value.strip_prefix("https://") {
        rest
    } else if let Some(rest) = value.strip_prefix("http://") {
        rest
    } else {
        return false;
    };
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    if authority.contains('@') {
        return false;
    }
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        Some(_) => return false,
        None => authority,
    };
    is_hostname(host)
}

/// International format is encouraged but not required; only the characters are checked.
pub(crate) fn phone(problems: &mut Problems, field: &str, value: &str) {
    let digits = value.bytes().filter(u8::is_ascii_digit).count();
    let allowed = value
        .bytes()
        .all(|b| b.is_ascii_digit() || b" +-().".contains(&b));
    if !allowed || !(5..=20).contains(&digits) {
        problems.add(
            field,
            format!("`{value}` is not a phone number like `+49 30 1234 5678`"),
        );
    }
}

pub(crate) fn country(problems: &mut Problems, field: &str, value: &str) {
    if value.len() != 2 || !value.bytes().all(|b| b.is_ascii_uppercase()) {
        problems.add(
            field,
            format!("`{value}` is not an ISO 3166-1 alpha-2 country code like `DE` or `US`"),
        );
    }
}

pub(crate) fn year(problems: &mut Problems, field: &str, value: u16) {
    if !(1000..=2100).contains(&value) {
        problems.add(field, format!("{value} is not a plausible year"));
    }
}

/// `YYYY-MM-DD` with a real month and day.
pub(crate) fn date(problems: &mut Problems, field: &str, value: &str) {
    if !is_date(value) {
        problems.add(
            field,
            format!("`{value}` is not a date in the form YYYY-MM-DD"),
        );
    }
}

fn is_date(value: &str) -> bool {
    let parts: Vec<&str> = value.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return false;
    };
    let numeric = |s: &str, len: usize| s.len() == len && s.bytes().all(|b| b.is_ascii_digit());
    if !(numeric(year, 4) && numeric(month, 2) && numeric(day, 2)) {
        return false;
    }
    let (Ok(year), Ok(month), Ok(day)) = (
        year.parse::<u32>(),
        month.parse::<u32>(),
        day.parse::<u32>(),
    ) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days_in_month).contains(&day)
}

/// ISO 17442: 18 letters or digits, then two check digits such that the whole, read as a
/// number with letters as 10 to 35, leaves 1 when divided by 97 (ISO 7064 MOD 97-10).
pub(crate) fn lei(problems: &mut Problems, field: &str, value: &str) {
    if !is_lei(value) {
        problems.add(
            field,
            format!("`{value}` is not a valid LEI: 20 characters, letters and digits, the last two check digits (ISO 17442)"),
        );
    }
}

pub(crate) fn is_lei(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.len() != 20
        || !bytes[..18]
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
        || !bytes[18..].iter().all(u8::is_ascii_digit)
    {
        return false;
    }
    let remainder = bytes.iter().fold(0u32, |remainder, &b| {
        if b.is_ascii_digit() {
            (remainder * 10 + u32::from(b - b'0')) % 97
        } else {
            (remainder * 100 + u32::from(b - b'A' + 10)) % 97
        }
    });
    remainder == 1
}

/// A country (ISO 3166-1 alpha-2) or a subdivision (ISO 3166-2, e.g. `US-DE`).
pub(crate) fn jurisdiction(problems: &mut Problems, field: &str, value: &str) {
    let (country, subdivision) = value.split_once('-').unwrap_or((value, ""));
    let country_ok = country.len() == 2 && country.bytes().all(|b| b.is_ascii_uppercase());
    let subdivision_ok = value.len() == 2
        || ((1..=3).contains(&subdivision.len())
            && subdivision
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()));
    if !country_ok || !subdivision_ok {
        problems.add(
            field,
            format!("`{value}` is not a jurisdiction: an ISO 3166-1 country like `DE`, or an ISO 3166-2 subdivision like `US-DE`"),
        );
    }
}

/// A VAT number with its two-letter country prefix, e.g. `DE123456789`.
pub(crate) fn vat_id(problems: &mut Problems, field: &str, value: &str) {
    let bytes = value.as_bytes();
    let ok = (4..=15).contains(&bytes.len())
        && bytes[..2].iter().all(u8::is_ascii_uppercase)
        && bytes[2..]
            .iter()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase());
    if !ok {
        problems.add(
            field,
            format!("`{value}` is not a VAT number with its country prefix, like `DE123456789`"),
        );
    }
}

/// A NAICS code: 2 to 6 digits.
pub(crate) fn naics_code(problems: &mut Problems, field: &str, value: &str) {
    if !digits(value, 2..=6) {
        problems.add(
            field,
            format!("`{value}` is not a NAICS code: 2 to 6 digits, like `334519`"),
        );
    }
}

/// An ISIC Rev. 4 code: a section letter `A`–`U`, or 2 to 4 digits.
pub(crate) fn isic_code(problems: &mut Problems, field: &str, value: &str) {
    if !(digits(value, 2..=4) || (value.len() == 1 && ("A"..="U").contains(&value))) {
        problems.add(
            field,
            format!(
                "`{value}` is not an ISIC code: a section letter A to U or 2 to 4 digits, like `2651`"
            ),
        );
    }
}

fn digits(value: &str, count: std::ops::RangeInclusive<usize>) -> bool {
    count.contains(&value.len()) && value.bytes().all(|b| b.is_ascii_digit())
}

/// Latitude within ±90 and longitude within ±180 degrees.
pub(crate) fn geo(problems: &mut Problems, field: &str, latitude: f64, longitude: f64) {
    if !(latitude.is_finite() && (-90.0..=90.0).contains(&latitude)) {
        problems.add(
            &format!("{field}.latitude"),
            format!("{latitude} is not a latitude between -90 and 90"),
        );
    }
    if !(longitude.is_finite() && (-180.0..=180.0).contains(&longitude)) {
        problems.add(
            &format!("{field}.longitude"),
            format!("{longitude} is not a longitude between -180 and 180"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(rule: fn(&mut Problems, &str, &str), value: &str) -> bool {
        let mut problems = Problems::default();
        rule(&mut problems, "f", value);
        problems.0.is_empty()
    }

    #[test]
    fn emails() {
        assert!(check(email, "press@cobalt-ridge.example"));
        for bad in ["", "a", "a@", "@b.c", "a@b", "a b@c.d", "a@-b.c", "a@b..c"] {
            assert!(!check(email, bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn urls() {
        assert!(check(url, "https://example.com"));
        assert!(check(url, "http://example.com:8080/a?b#c"));
        for bad in [
            "example.com",
            "ftp://x.y",
            "https://",
            "https://a b",
            "https://u@h.com",
            "https://h:x/",
            "javascript:alert(1)",
        ] {
            assert!(!check(url, bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn slugs_dates_countries_phones() {
        assert!(check(slug, "field-sensors"));
        for bad in ["", "Field", "a_b", "-a", "a-", "a--b", "ä"] {
            assert!(!check(slug, bad), "{bad:?} accepted");
        }
        assert!(check(date, "2024-02-29"));
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "2024-1-01",
            "24-01-01",
            "2024-01-32",
        ] {
            assert!(!check(date, bad), "{bad:?} accepted");
        }
        assert!(check(country, "DE"));
        assert!(!check(country, "de"));
        assert!(check(phone, "+49 (30) 1234-5678"));
        assert!(!check(phone, "call us"));
    }

    #[test]
    fn leis_are_checked_with_their_check_digits() {
        // Published LEIs (GLEIF's own, and a bank's).
        for good in ["506700GE1G29325QX363", "7LTWFZYICNSX8D621K86"] {
            assert!(is_lei(good), "{good}");
        }
        for bad in [
            "506700GE1G29325QX364",
            "506700GE1G29325QX36",
            "506700ge1g29325qx363",
            "506700GE1G29325QX3A3",
            "",
        ] {
            assert!(!is_lei(bad), "{bad:?} accepted");
        }
    }

    #[test]
    fn jurisdictions_vat_ids_and_industry_codes() {
        for good in ["DE", "US-DE", "GB-ENG", "FR-75"] {
            assert!(check(jurisdiction, good), "{good}");
        }
        for bad in ["de", "USA", "US-", "US-DELA", "U1"] {
            assert!(!check(jurisdiction, bad), "{bad:?} accepted");
        }
        assert!(check(vat_id, "DE123456789"));
        assert!(!check(vat_id, "123456789"));
        let code = |rule: fn(&mut Problems, &str, &str), value: &str| {
            let mut problems = Problems::default();
            rule(&mut problems, "f", value);
            problems.0.is_empty()
        };
        assert!(code(naics_code, "334519"));
        assert!(!code(naics_code, "3345190"));
        assert!(code(isic_code, "2651"));
        assert!(code(isic_code, "C"));
        assert!(!code(isic_code, "Z"));
        let mut problems = Problems::default();
        geo(&mut problems, "g", 91.0, f64::NAN);
        assert_eq!(problems.0.len(), 2);
    }
}
