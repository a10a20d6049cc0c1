//! Parsing OAuth form bodies (RFC 6749 §3.2, Appendix B) by hand, because the rules are
//! stricter than a generic form decoder: the content type must be
//! `application/x-www-form-urlencoded` (a UTF-8 `charset` is allowed), no parameter may
//! appear twice, and a parameter without a value counts as absent.

use std::collections::HashMap;

use crate::wire::{RevocationRequest, TokenRequest};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.description())]
pub enum FormError {
    ContentType,
    Charset,
    Repeated(String),
}

impl FormError {
    pub fn description(&self) -> String {
        match self {
            FormError::ContentType => {
                "send the parameters as application/x-www-form-urlencoded".to_string()
            }
            FormError::Charset => "the form must be UTF-8".to_string(),
            FormError::Repeated(name) => format!("the parameter `{name}` appears more than once"),
        }
    }
}

/// The parameters of a form body, each at most once, empty values dropped.
#[derive(Debug, Default)]
pub struct Form(HashMap<String, String>);

impl Form {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }
}

/// True when `content_type` is `media_type`, ignoring case and parameters.
pub fn is_media_type(content_type: Option<&str>, media_type: &str) -> bool {
    content_type
        .and_then(|value| value.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case(media_type))
}

pub fn parse(content_type: Option<&str>, body: &[u8]) -> Result<Form, FormError> {
    let content_type = content_type.ok_or(FormError::ContentType)?;
    if !is_media_type(Some(content_type), "application/x-www-form-urlencoded") {
        return Err(FormError::ContentType);
    }
    for parameter in content_type.split(';').skip(1) {
        if let Some((name, value)) = parameter.split_once('=') {
            if name.trim().eq_ignore_ascii_case("charset") {
                let value = value.trim().trim_matches('"');
                if !value.eq_ignore_ascii_case("utf-8") && !value.eq_ignore_ascii_case("utf8") {
                    return Err(FormError::Charset);
                }
            }
        }
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut present_names = std::collections::HashSet::new();
    for (name, value) in form_urlencoded::parse(body) {
        if !present_names.insert(name.to_string()) {
            return Err(FormError::Repeated(name.into_owned()));
        }
        if !value.is_empty() {
            seen.insert(name.into_owned(), value.into_owned());
        }
    }
    Ok(Form(seen))
}

/// The token and revocation requests read from their forms.
impl<'a> TokenRequest<'a> {
    pub(super) fn from_form(form: &'a Form) -> TokenRequest<'a> {
        TokenRequest {
            grant_type: form.get("grant_type"),
            assertion: form.get("assertion"),
            scope: form.get("scope"),
            resource: form.get("resource"),
            client_id: form.get("client_id"),
        }
    }
}
impl<'a> RevocationRequest<'a> {
    pub(super) fn from_form(form: &'a Form) -> RevocationRequest<'a> {
        RevocationRequest {
            token: form.get("token"),
            token_type_hint: form.get("token_type_hint"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: Option<&str> = Some("application/x-www-form-urlencoded");

    #[test]
    fn parses_parameters_once_each() {
        let form = parse(
            FORM,
            b"grant_type=client_credentials&scope=company%3Aread&empty=",
        )
        .unwrap();
        assert_eq!(form.get("grant_type"), Some("client_credentials"));
        assert_eq!(form.get("scope"), Some("company:read"));
        assert!(!form.has("empty"));
        assert_eq!(
            parse(FORM, b"a=1&a=2").unwrap_err(),
            FormError::Repeated("a".into())
        );
        assert_eq!(
            parse(FORM, b"a=&a=2").unwrap_err(),
            FormError::Repeated("a".into())
        );
    }

    #[test]
    fn content_types() {
        for ok in [
            "application/x-www-form-urlencoded",
            "application/x-www-form-urlencoded;charset=UTF-8",
            "Application/X-WWW-Form-Urlencoded; charset=\"utf-8\"",
        ] {
            assert!(parse(Some(ok), b"a=1").is_ok(), "{ok}");
        }
        assert_eq!(parse(None, b"a=1").unwrap_err(), FormError::ContentType);
        assert_eq!(
            parse(Some("application/json"), b"{}").unwrap_err(),
            FormError::ContentType
        );
        assert_eq!(
            parse(
                Some("application/x-www-form-urlencoded; charset=latin1"),
                b"a=1"
            )
            .unwrap_err(),
            FormError::Charset
        );
    }
}
