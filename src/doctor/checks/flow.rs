//! The agent flow end to end: register, the assertion verified against the published JWKS,
//! exchange, a read with the token, a bad token's challenge, revoke, `client_credentials`.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::Value;

use super::{challenge, fix, form, missing_fix, no_store, text_of, Discovered, FORM, JSON};
use crate::auth::assertion::{self, Expectations};
use crate::doctor::{Doctor, Section, MAX_REGISTRATIONS};
use crate::paths;

pub(super) async fn check(doctor: &mut Doctor, found: &Discovered) {
    doctor.section = Section::AgentFlow;
    let base = doctor.base.clone();
    let register = found
        .register
        .clone()
        .unwrap_or_else(|| paths::AGENT_IDENTITY.to_string());
    let token_path = found
        .token
        .clone()
        .unwrap_or_else(|| paths::OAUTH_TOKEN.to_string());
    let revoke_path = found
        .revoke
        .clone()
        .unwrap_or_else(|| paths::OAUTH_REVOKE.to_string());

    // Register anonymously.
    if doctor.registrations >= MAX_REGISTRATIONS {
        return;
    }
    doctor.registrations += 1;
    let Some(response) = doctor
        .send(
            Method::POST,
            &register,
            &[("content-type", JSON)],
            Bytes::from_static(br#"{"type":"anonymous"}"#),
        )
        .await
    else {
        return;
    };
    let assertion = response
        .json()
        .and_then(|body| body["identity_assertion"].as_str().map(str::to_string));
    let Some(assertion) = assertion.filter(|_| response.status == StatusCode::OK) else {
        doctor.fail(
            format!("register: POST {register}"),
            "200 with an identity_assertion",
            format!("{} {}", response.status, response.media_type()),
            missing_fix(response.status, true),
        );
        return;
    };
    doctor.pass(format!("register: POST {register}"));
    doctor.expect(
        no_store(&response),
        "register: Cache-Control: no-store",
        "no-store",
        response.header("cache-control"),
        fix::NO_CACHE,
    );

    // The assertion verifies against the JWKS that is published.
    let verified = assertion::verify(
        &assertion,
        |kid| {
            found
                .keys
                .iter()
                .find(|(id, _)| Some(id.as_str()) == kid)
                .map(|(_, point)| point.as_slice())
        },
        &Expectations {
            issuer: &base,
            now: std::time::SystemTime::now(),
            skew: std::time::Duration::from_secs(300),
            max_lifetime: std::time::Duration::from_secs(366 * 24 * 3600),
            check_time: true,
        },
    );
    let kid = assertion
        .split('.')
        .next()
        .and_then(|header| URL_SAFE_NO_PAD.decode(header).ok())
        .and_then(|header| serde_json::from_slice::<Value>(&header).ok())
        .map(|header| text_of(&header["kid"]))
        .unwrap_or_default();
    let published: Vec<&str> = found.keys.iter().map(|(kid, _)| kid.as_str()).collect();
    doctor.expect(
        verified.is_ok(),
        "identity assertion verifies against the published JWKS",
        format!(
            "signed by a key in {} ({})",
            paths::JWKS,
            published.join(", ")
        ),
        match &verified {
            Ok(_) => String::new(),
            Err(_) if !published.contains(&kid.as_str()) => {
                format!("signed with kid {kid}, which the JWKS does not publish")
            }
            Err(error) => format!("kid {kid}: {}", error.description()),
        },
        fix::STATE,
    );

    // Exchange it for an access token.
    let Some(response) = doctor
        .send(
            Method::POST,
            &token_path,
            &[FORM],
            form(&[
                ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                ("assertion", &assertion),
            ]),
        )
        .await
    else {
        return;
    };
    let token = response
        .json()
        .and_then(|body| body["access_token"].as_str().map(str::to_string))
        .filter(|_| response.status == StatusCode::OK);
    let Some(token) = token else {
        let error = response
            .json()
            .map(|body| text_of(&body["error"]))
            .unwrap_or_default();
        doctor.fail(
            format!("token: POST {token_path} (jwt-bearer)"),
            "200 with an access_token",
            format!("{} {error}", response.status),
            if error == "invalid_grant" {
                fix::STATE
            } else {
                missing_fix(response.status, true)
            },
        );
        return;
    };
    doctor.pass(format!("token: POST {token_path} (jwt-bearer)"));
    doctor.expect(
        no_store(&response) && response.header("pragma").contains("no-cache"),
        "token: Cache-Control: no-store and Pragma: no-cache",
        "no-store, no-cache",
        format!(
            "{:?}, {:?}",
            response.header("cache-control"),
            response.header("pragma")
        ),
        fix::NO_CACHE,
    );

    // Use it; an invalid one must be refused (which also shows Authorization reaches the core).
    let bearer = format!("Bearer {token}");
    if let Some(response) = doctor
        .send(
            Method::GET,
            paths::API_COMPANY,
            &[("authorization", &bearer)],
            Bytes::new(),
        )
        .await
    {
        doctor.expect(
            response.status == StatusCode::OK,
            "GET /api/company with the token",
            "200",
            response.status.to_string(),
            fix::PROXY,
        );
    }
    let prm = format!("resource_metadata=\"{base}{}\"", paths::PROTECTED_RESOURCE);
    challenge(
        doctor,
        paths::API_COMPANY,
        "Bearer doctor-invalid-token",
        &prm,
        "an invalid token",
    )
    .await;

    // Revoke it; it must then be refused.
    if let Some(response) = doctor
        .send(
            Method::POST,
            &revoke_path,
            &[FORM],
            form(&[("token", &token)]),
        )
        .await
    {
        doctor.expect(
            response.status == StatusCode::OK,
            format!("revoke: POST {revoke_path}"),
            "200",
            response.status.to_string(),
            missing_fix(response.status, true),
        );
    }
    challenge(
        doctor,
        paths::API_COMPANY,
        &bearer,
        &prm,
        "the revoked token",
    )
    .await;

    // client_credentials needs no secret.
    if let Some(response) = doctor
        .send(
            Method::POST,
            &token_path,
            &[FORM],
            form(&[("grant_type", "client_credentials")]),
        )
        .await
    {
        let ok = response.status == StatusCode::OK
            && response
                .json()
                .is_some_and(|body| body["access_token"].is_string());
        doctor.expect(
            ok,
            format!("token: POST {token_path} (client_credentials)"),
            "200 with an access_token",
            response.status.to_string(),
            missing_fix(response.status, true),
        );
    }
}
