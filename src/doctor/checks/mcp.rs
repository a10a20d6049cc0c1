//! MCP in both protocol eras, and the headers that must reach the core through a proxy.

use bytes::Bytes;
use hyper::{Method, StatusCode};
use serde_json::{json, Value};

use super::{challenge, fix, missing_fix, text_of, JSON};
use crate::doctor::{Doctor, Section};
use crate::paths;

pub(super) async fn check(doctor: &mut Doctor) {
    doctor.section = Section::Mcp;
    let base = doctor.base.clone();
    const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");
    const TYPE: (&str, &str) = ("content-type", JSON);

    // The legacy era: initialize, tools/list, one tools/call.
    let request = |method: &str, params: Value| {
        Bytes::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string(),
        )
    };
    let Some(response) = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[ACCEPT, TYPE],
            request(
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "dossier-doctor", "version": env!("CARGO_PKG_VERSION")}}),
            ),
        )
        .await
    else {
        return;
    };
    let result = response
        .json()
        .map(|body| body["result"].clone())
        .unwrap_or(Value::Null);
    if !doctor.expect(
        response.status == StatusCode::OK && result["protocolVersion"].is_string(),
        "legacy era: initialize",
        "200 with a result naming the protocol version",
        format!(
            "{} {}",
            response.status,
            text_of(&result).chars().take(80).collect::<String>()
        ),
        missing_fix(response.status, true),
    ) {
        return;
    }
    let tools = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[ACCEPT, TYPE],
            request("tools/list", json!({})),
        )
        .await
        .and_then(|response| response.json())
        .and_then(|body| body["result"]["tools"].as_array().cloned())
        .unwrap_or_default();
    doctor.expect(
        !tools.is_empty(),
        "legacy era: tools/list",
        "at least one tool",
        format!("{} tools", tools.len()),
        fix::REBUILD,
    );
    // A tool that needs no arguments, so the call cannot fail for want of one.
    let tool = tools
        .iter()
        .find(|tool| {
            tool["inputSchema"]["required"]
                .as_array()
                .is_none_or(Vec::is_empty)
        })
        .and_then(|tool| tool["name"].as_str())
        .map(str::to_string);
    if let Some(name) = &tool {
        let answer = doctor
            .send(
                Method::POST,
                paths::MCP,
                &[ACCEPT, TYPE],
                request("tools/call", json!({"name": name, "arguments": {}})),
            )
            .await;
        if let Some(answer) = answer {
            let result = answer
                .json()
                .map(|body| body["result"].clone())
                .unwrap_or(Value::Null);
            doctor.expect(
                answer.status == StatusCode::OK && result.is_object() && result["isError"] != true,
                format!("legacy era: tools/call {name}"),
                "200 with a result",
                format!(
                    "{} {}",
                    answer.status,
                    text_of(&result).chars().take(80).collect::<String>()
                ),
                fix::PROXY,
            );
        }
    }

    // The modern era: server/discover, then the same call, with its headers and `_meta`.
    let modern = crate::mcp::MODERN_VERSIONS[0];
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": modern,
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let Some(response) = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[
                ACCEPT,
                TYPE,
                ("mcp-protocol-version", modern),
                ("mcp-method", "server/discover"),
            ],
            request("server/discover", json!({"_meta": meta})),
        )
        .await
    else {
        return;
    };
    let result = response
        .json()
        .map(|body| body["result"].clone())
        .unwrap_or(Value::Null);
    doctor.expect(
        response.status == StatusCode::OK && result.is_object(),
        format!("modern era ({modern}): server/discover"),
        "200 with a result",
        format!(
            "{} {}",
            response.status,
            text_of(&response.json().unwrap_or(Value::Null))
                .chars()
                .take(120)
                .collect::<String>()
        ),
        fix::FORWARD,
    );
    if let Some(name) = &tool {
        if let Some(answer) = doctor
            .send(
                Method::POST,
                paths::MCP,
                &[
                    ACCEPT,
                    TYPE,
                    ("mcp-protocol-version", modern),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", name),
                ],
                request(
                    "tools/call",
                    json!({"name": name, "arguments": {}, "_meta": meta}),
                ),
            )
            .await
        {
            let result = answer
                .json()
                .map(|body| body["result"].clone())
                .unwrap_or(Value::Null);
            doctor.expect(
                answer.status == StatusCode::OK && result.is_object() && result["isError"] != true,
                format!("modern era ({modern}): tools/call {name}"),
                "200 with a result",
                format!(
                    "{} {}",
                    answer.status,
                    text_of(&answer.json().unwrap_or(Value::Null))
                        .chars()
                        .take(120)
                        .collect::<String>()
                ),
                fix::FORWARD,
            );
        }
    }

    // Headers that must reach the core: each request below is refused by the core, and
    // accepted only when a proxy drops the header.
    let unknown_version = doctor
        .send(
            Method::POST,
            paths::MCP,
            &[ACCEPT, TYPE, ("mcp-protocol-version", "1999-01-01")],
            request("tools/list", json!({})),
        )
        .await;
    if let Some(response) = unknown_version {
        let refused = response.status.is_client_error()
            || response
                .json()
                .is_some_and(|body| body["error"].is_object());
        doctor.expect(
            refused,
            "MCP-Protocol-Version reaches the core (an unknown version is refused)",
            "an error for version 1999-01-01",
            format!("{} with a result", response.status),
            fix::FORWARD,
        );
    }
    /// Request headers, the status the core refuses them with, and the check's name.
    type Refused = (
        &'static [(&'static str, &'static str)],
        StatusCode,
        &'static str,
    );
    let refusals: [Refused; 2] = [
        (
            &[("accept", "text/html"), TYPE],
            StatusCode::NOT_ACCEPTABLE,
            "Accept reaches the core (Accept: text/html is refused with 406)",
        ),
        (
            &[ACCEPT, TYPE, ("origin", "https://doctor.invalid")],
            StatusCode::FORBIDDEN,
            "Origin reaches the core (a foreign Origin is refused with 403)",
        ),
    ];
    for (headers, refused_with, check) in refusals {
        if let Some(response) = doctor
            .send(
                Method::POST,
                paths::MCP,
                headers,
                request("ping", json!({})),
            )
            .await
        {
            doctor.expect(
                response.status == refused_with,
                check,
                refused_with.as_u16().to_string(),
                response.status.to_string(),
                fix::FORWARD,
            );
        }
    }
    let metadata = format!(
        "resource_metadata=\"{base}{}\"",
        paths::PROTECTED_RESOURCE_MCP
    );
    challenge(
        doctor,
        paths::MCP,
        "Bearer doctor-invalid-token",
        &metadata,
        "an invalid token",
    )
    .await;
}
