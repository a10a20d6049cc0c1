//! "Did you mean …?": the nearest of a set of known names to one that is not among them,
//! for mistakes in `dossier.toml` keys and in the paths pages link to.

/// The candidate closest to `wanted`, if one is close enough to be a likely typo
/// (Jaro-Winkler similarity above 0.8, which favours a shared beginning: `/carers` finds
/// `/careers`, `base_url` finds `base-url`).
pub(crate) fn nearest<'a>(
    wanted: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .map(|candidate| (strsim::jaro_winkler(wanted, candidate), candidate))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn a_near_name_is_suggested_and_a_far_one_is_not() {
        let known = ["/careers", "/about", "/docs"];
        assert_eq!(nearest("/carers", known.into_iter()), Some("/careers"));
        assert_eq!(nearest("/no-such-page", known.into_iter()), None);
        assert_eq!(
            nearest("base_url", ["base-url", "addr"].into_iter()),
            Some("base-url")
        );
    }
}
