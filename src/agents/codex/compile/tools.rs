//! Tool specs from a `--tools` file (rollouts do not record the tools Codex sends).

use serde_json::Value;
use serde_json::value::RawValue;

/// serde's message, cut where it quotes a long value of the file (a whole file given as a JSON
/// string was quoted whole).
fn brief(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.chars().count() <= 160 {
        return text;
    }
    let head: String = text.chars().take(100).collect();
    format!("{head}… at line {} column {}", e.line(), e.column())
}

/// Parse a `--tools` file: a JSON array of tool specs, or a captured request with `tools`.
pub fn parse_tools(text: &str) -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct Captured<'a> {
        #[serde(borrow)]
        tools: Vec<&'a RawValue>,
    }
    let trimmed = text.trim_start();
    let tools: Vec<&RawValue> = if trimmed.starts_with('[') {
        serde_json::from_str(text)
            .map_err(|e| format!("not a JSON array of tool specs: {}", brief(&e)))?
    } else {
        serde_json::from_str::<Captured<'_>>(text)
            .map_err(|e| {
                format!(
                    "neither a JSON array of tool specs nor a request with `tools`: {}",
                    brief(&e)
                )
            })?
            .tools
    };
    tools
        .into_iter()
        .map(|raw| {
            let value: Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
            if !value.is_object() {
                return Err("a tool spec is not a JSON object".to_string());
            }
            // Compact form, keys in the file's order.
            Ok(value.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::parse_tools;

    /// A file of another kind is named briefly: a long JSON string is not quoted back whole.
    #[test]
    fn errors_do_not_quote_the_whole_file() {
        let long = serde_json::Value::String("You are Codex. ".repeat(2000)).to_string();
        let error = parse_tools(&long).unwrap_err();
        assert!(
            error.starts_with("neither a JSON array of tool specs nor a request with `tools`: invalid type: string"),
            "{error}"
        );
        assert!(error.ends_with("at line 1 column 30002"), "{error}");
        assert!(
            error.chars().count() < 220,
            "{} chars",
            error.chars().count()
        );
        let short = parse_tools("{\"model\": 1}").unwrap_err();
        assert!(
            short.ends_with("missing field `tools` at line 1 column 12"),
            "{short}"
        );
        assert_eq!(
            parse_tools(r#"[{"type":"function","name":"shell"}]"#),
            Ok(vec![r#"{"type":"function","name":"shell"}"#.to_string()])
        );
    }
}
