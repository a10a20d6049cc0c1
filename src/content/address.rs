//! Postal addresses in the order each country writes them.
//!
//! Content stores an address as fields; a reader expects it the way letters to that country
//! are addressed: `Boulder, CO 80302` in the US, `80331 München` in Germany, the postcode on
//! its own line in the UK, largest unit first in Japan. The formats follow the Universal
//! Postal Union's conventions (as also used by Google's libaddressinput); countries not
//! listed get the most common European order, postcode before locality.

use super::model::Address;

/// How the lines after the street are built, from `{locality}`, `{region}` and `{postal}`.
enum Order {
    /// `Boulder, Colorado 80302` (US, CA).
    LocalityRegionPostal,
    /// `Sydney NSW 2000` (AU).
    LocalityRegionPostalNoComma,
    /// `London` / `SW1A 1AA` on separate lines (GB, IE).
    LocalityThenPostal,
    /// `80331 München` (most of Europe and many others).
    PostalLocality,
    /// `20121 Milano MI` (IT, ES).
    PostalLocalityRegion,
    /// Postcode, then region and locality, then the street: largest first (JP, CN, KR, TW).
    LargestFirst,
    /// `São Paulo - SP` / `01310-100` (BR).
    LocalityDashRegionThenPostal,
    /// `Mumbai 400001` / `Maharashtra` (IN).
    LocalityPostalThenRegion,
}

fn order(country: &str) -> Order {
    match country {
        "US" | "CA" => Order::LocalityRegionPostal,
        "AU" | "NZ" => Order::LocalityRegionPostalNoComma,
        "GB" | "IE" => Order::LocalityThenPostal,
        "IT" | "ES" | "MX" => Order::PostalLocalityRegion,
        "JP" | "CN" | "KR" | "TW" => Order::LargestFirst,
        "BR" => Order::LocalityDashRegionThenPostal,
        "IN" => Order::LocalityPostalThenRegion,
        _ => Order::PostalLocality,
    }
}

/// English names for the countries most often seen; others are shown by their code.
fn country_name(code: &str) -> &str {
    match code {
        "US" => "United States",
        "CA" => "Canada",
        "GB" => "United Kingdom",
        "IE" => "Ireland",
        "DE" => "Germany",
        "AT" => "Austria",
        "CH" => "Switzerland",
        "FR" => "France",
        "IT" => "Italy",
        "ES" => "Spain",
        "PT" => "Portugal",
        "NL" => "Netherlands",
        "BE" => "Belgium",
        "LU" => "Luxembourg",
        "DK" => "Denmark",
        "SE" => "Sweden",
        "NO" => "Norway",
        "FI" => "Finland",
        "PL" => "Poland",
        "CZ" => "Czechia",
        "JP" => "Japan",
        "CN" => "China",
        "KR" => "South Korea",
        "TW" => "Taiwan",
        "SG" => "Singapore",
        "IN" => "India",
        "AU" => "Australia",
        "NZ" => "New Zealand",
        "BR" => "Brazil",
        "MX" => "Mexico",
        "ZA" => "South Africa",
        "AE" => "United Arab Emirates",
        other => other,
    }
}

fn join(parts: &[Option<&str>], separator: &str) -> String {
    parts
        .iter()
        .flatten()
        .filter(|part| !part.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(separator)
}

impl Address {
    /// The address as the lines of an envelope, ending with the country's name.
    pub fn lines(&self) -> Vec<String> {
        let street = Some(self.street.as_str());
        let locality = Some(self.locality.as_str());
        let region = self.region.as_deref();
        let postal = Some(self.postal_code.as_str());
        let mut lines = match order(&self.country) {
            Order::LocalityRegionPostal => vec![
                self.street.clone(),
                join(&[locality, Some(&join(&[region, postal], " "))], ", "),
            ],
            Order::LocalityRegionPostalNoComma => {
                vec![self.street.clone(), join(&[locality, region, postal], " ")]
            }
            Order::LocalityThenPostal => vec![
                self.street.clone(),
                join(&[locality, region], ", "),
                self.postal_code.clone(),
            ],
            Order::PostalLocality => {
                let mut lines = vec![self.street.clone(), join(&[postal, locality], " ")];
                lines.extend(region.map(str::to_string));
                lines
            }
            Order::PostalLocalityRegion => {
                vec![self.street.clone(), join(&[postal, locality, region], " ")]
            }
            Order::LargestFirst => vec![
                self.postal_code.clone(),
                join(&[region, locality], " "),
                join(&[street], ""),
            ],
            Order::LocalityDashRegionThenPostal => vec![
                self.street.clone(),
                join(&[locality, region], " - "),
                self.postal_code.clone(),
            ],
            Order::LocalityPostalThenRegion => {
                let mut lines = vec![self.street.clone(), join(&[locality, postal], " ")];
                lines.extend(region.map(str::to_string));
                lines
            }
        };
        lines.retain(|line| !line.is_empty());
        lines.push(country_name(&self.country).to_string());
        lines
    }

    /// Where it is, for a fact line: `Boulder, Colorado, United States`.
    pub fn place(&self) -> String {
        join(
            &[
                Some(self.locality.as_str()),
                self.region.as_deref(),
                Some(country_name(&self.country)),
            ],
            ", ",
        )
    }

    /// The address on one line, parts separated by commas.
    pub fn one_line(&self) -> String {
        self.lines().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(
        street: &str,
        locality: &str,
        region: Option<&str>,
        postal: &str,
        country: &str,
    ) -> Address {
        Address {
            street: street.into(),
            locality: locality.into(),
            region: region.map(Into::into),
            postal_code: postal.into(),
            country: country.into(),
        }
    }

    #[test]
    fn each_country_in_its_own_order() {
        let us = address("2750 Pearl Street", "Boulder", Some("CO"), "80302", "US");
        assert_eq!(
            us.lines(),
            ["2750 Pearl Street", "Boulder, CO 80302", "United States"]
        );
        let de = address("Marienplatz 8", "München", None, "80331", "DE");
        assert_eq!(de.one_line(), "Marienplatz 8, 80331 München, Germany");
        let gb = address("10 Downing Street", "London", None, "SW1A 2AA", "GB");
        assert_eq!(
            gb.lines(),
            ["10 Downing Street", "London", "SW1A 2AA", "United Kingdom"]
        );
        let jp = address(
            "1-1 Marunouchi",
            "Chiyoda-ku",
            Some("Tokyo"),
            "100-0005",
            "JP",
        );
        assert_eq!(
            jp.lines(),
            ["100-0005", "Tokyo Chiyoda-ku", "1-1 Marunouchi", "Japan"]
        );
        let it = address("Via Roma 1", "Milano", Some("MI"), "20121", "IT");
        assert_eq!(it.lines()[1], "20121 Milano MI");
        let unknown = address("Main Road 1", "Windhoek", None, "10005", "NA");
        assert_eq!(unknown.one_line(), "Main Road 1, 10005 Windhoek, NA");
    }
}
