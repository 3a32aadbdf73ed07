//! Exit statuses and the one place errors are printed.

use std::io::Write;
use std::process::ExitCode;

/// 0 success, 1 differences or failed assertions, 2 errors (as diff(1)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Success,
    Differences,
    Error,
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        match status {
            ExitStatus::Success => ExitCode::from(0),
            ExitStatus::Differences => ExitCode::from(1),
            ExitStatus::Error => ExitCode::from(2),
        }
    }
}

/// True when the error is a closed pipe (`promptc view | head`): not a failure.
pub fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Print `error: …` and its causes on stderr; exit 2, or 0 for a broken pipe.
pub fn report(error: &anyhow::Error) -> ExitCode {
    if is_broken_pipe(error) {
        return ExitStatus::Success.into();
    }
    let mut stderr = std::io::stderr().lock();
    // Messages carry file names and text from rollouts: escape them like any session text.
    let _ = writeln!(
        stderr,
        "error: {}",
        promptc::core::sanitize::escape_line(&error.to_string())
    );
    for cause in error.chain().skip(1) {
        let _ = writeln!(
            stderr,
            "  caused by: {}",
            promptc::core::sanitize::escape_line(&cause.to_string())
        );
    }
    ExitStatus::Error.into()
}
