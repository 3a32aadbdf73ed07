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
    // Messages carry file names and text from rollouts: escape them like any session text (a
    // list's items each on a line of its own).
    let escape = promptc::core::sanitize::escape_line;
    match error.downcast_ref::<Listed>() {
        Some(listed) => {
            let _ = writeln!(stderr, "error: {}", escape(&listed.message));
            for item in &listed.items {
                let _ = writeln!(stderr, "  {}", escape(item));
            }
        }
        None => {
            let _ = writeln!(stderr, "error: {}", escape(&error.to_string()));
        }
    }
    for cause in error.chain().skip(1) {
        let _ = writeln!(stderr, "  caused by: {}", escape(&cause.to_string()));
    }
    ExitStatus::Error.into()
}

/// An error that lists what it is about (the sessions an ambiguous id matches), an item a line.
#[derive(Debug)]
pub struct Listed {
    pub message: String,
    pub items: Vec<String>,
}

impl Listed {
    /// The first `shown` of `items` (`len` of them), and how many more there are.
    pub fn capped(
        message: String,
        items: impl Iterator<Item = String>,
        len: usize,
        shown: usize,
    ) -> Listed {
        let mut items: Vec<String> = items.take(shown).collect();
        if len > shown {
            items.push(format!("… and {} more", len - shown));
        }
        Listed { message, items }
    }
}

impl std::fmt::Display for Listed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        self.items
            .iter()
            .try_for_each(|item| write!(f, "\n  {item}"))
    }
}

impl std::error::Error for Listed {}
