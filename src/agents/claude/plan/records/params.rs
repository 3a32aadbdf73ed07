//! A record's `params`, read once per text.

use std::sync::Arc;

use serde_json::Value;

use super::{ParamsRead, Records};
use crate::core::hash::hash;

impl Records {
    /// What of a record's `params` the prompt depends on (`thinking`, `tool_choice`) and its
    /// hash; `None` where they are not a JSON object. Read once per text.
    pub(super) fn params(&mut self, text: &Arc<str>) -> Option<ParamsRead> {
        if let Some((last, read)) = &self.last_params
            && Arc::ptr_eq(last, text)
        {
            return read.clone();
        }
        let read = match self.params.get(text) {
            Some(known) => known.clone(),
            None => {
                let read = match serde_json::from_str::<Value>(text) {
                    Ok(Value::Object(map)) => {
                        let part = serde_json::json!({
                            "thinking": map.get("thinking"),
                            "tool_choice": map.get("tool_choice"),
                        });
                        let key = hash("claude-record-params", part.to_string().as_bytes());
                        Some(Arc::new((key, part)))
                    }
                    _ => None,
                };
                self.params.insert(text.clone(), read.clone());
                read
            }
        };
        self.last_params = Some((text.clone(), read.clone()));
        read
    }
}
