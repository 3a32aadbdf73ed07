//! Tool specs from a `--tools` file (rollouts do not record the tools Codex sends).

use serde_json::Value;
use serde_json::value::RawValue;

/// Parse a `--tools` file: a JSON array of tool specs, or a captured request with `tools`.
pub fn parse_tools(text: &str) -> Result<Vec<String>, String> {
    #[derive(serde::Deserialize)]
    struct Captured<'a> {
        #[serde(borrow)]
        tools: Vec<&'a RawValue>,
    }
    let trimmed = text.trim_start();
    let tools: Vec<&RawValue> = if trimmed.starts_with('[') {
        serde_json::from_str(text).map_err(|e| format!("not a JSON array of tool specs: {e}"))?
    } else {
        serde_json::from_str::<Captured<'_>>(text)
            .map_err(|e| {
                format!("neither a JSON array of tool specs nor a request with `tools`: {e}")
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
