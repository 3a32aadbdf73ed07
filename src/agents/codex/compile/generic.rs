//! The body of a step no known build wrote: the generic Responses-API shape, every part as the
//! rollout records it, with what that leaves unknown named in `approximations`.

use super::{
    CompiledRequest, NO_INSTRUCTIONS, NO_TOOLS, RequestParts, common_approximations,
    json_string_or_null, params_object, push_field, push_input, tools_json,
};

/// The generic shape, for turns no known build wrote: every build- or model-dependent field is
/// `null` and named.
pub(super) fn compile_generic(parts: &RequestParts<'_>) -> CompiledRequest {
    let mut approximations = vec![(
        "request shape",
        "the step's turn_context is not one of a recorded Codex build: the generic shape",
    )];
    common_approximations(parts, &mut approximations);
    let context = parts.context;
    let model = context.and_then(|c| c.model.as_deref());
    if parts.instructions.is_none() {
        approximations.push(("instructions", NO_INSTRUCTIONS));
    }
    if parts.tools.tools.is_none() {
        approximations.push(("tools", NO_TOOLS));
    }
    approximations.push((
        "parallel_tool_calls",
        "a model-family setting, not recorded",
    ));
    if context.is_some_and(|c| c.effort.is_none()) {
        approximations.push((
            "reasoning.effort",
            "not recorded: the model's default applies",
        ));
    }
    let params_object = params_object(context);

    let mut body =
        String::with_capacity(parts.input.iter().map(|i| i.len() + 1).sum::<usize>() + 512);
    body.push('{');
    push_field(&mut body, "model", &json_string_or_null(model));
    push_field(
        &mut body,
        "instructions",
        &json_string_or_null(parts.instructions),
    );
    push_input(&mut body, parts.input.iter().copied());
    push_field(&mut body, "tools", &tools_json(parts.tools));
    // The remaining fields are the params object's own fields, in request order.
    for (key, value) in &params_object {
        if key == "model" || key == "prompt_cache_key" || key == "text" {
            continue;
        }
        push_field(&mut body, key, &value.to_string());
    }
    push_field(
        &mut body,
        "prompt_cache_key",
        &json_string_or_null(parts.prompt_cache_key),
    );
    if let Some(text) = params_object.get("text") {
        push_field(&mut body, "text", &text.to_string());
    }
    body.push('}');
    CompiledRequest {
        body,
        approximations,
        build: None,
        rules: Vec::new(),
    }
}
