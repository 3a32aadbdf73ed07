//! `promptc fingerprint`.

use crate::cli::{FingerprintArgs, Format};
use crate::commands::{Context, Items, keep_until_exit, load, plan, with_stdout};
use crate::exit::ExitStatus;
use promptc::AgentSession;
use promptc::render::fingerprint::write_fingerprints;

pub fn run(args: FingerprintArgs, context: &Context) -> anyhow::Result<ExitStatus> {
    let session = load(&args.input, context, Items::Counts)?;
    let steps: Vec<usize> = if args.select.turn.is_some() {
        vec![session.select_step(args.select.turn.as_ref(), args.select.step)?]
    } else {
        (0..session.steps().len()).collect()
    };
    let plan = plan(&session, &args.plan, false, context)?;
    let json = args.format.format() == Format::Json;
    with_stdout(|out| write_fingerprints(out, &session, &plan, &steps, json))?;
    keep_until_exit((session, plan));
    Ok(ExitStatus::Success)
}
