//! Colour and width decisions, made once per stream and passed down as values.

use std::io::IsTerminal;

use crate::cli::ColorChoice;
use crate::env;

/// Which stream a decision is for.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Decide colour for a stream: the flag, then `NO_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR=0`,
/// `TERM=dumb`, then whether the stream is a terminal.
pub fn use_color(choice: ColorChoice, stream: Stream) -> bool {
    let is_terminal = match stream {
        Stream::Stdout => std::io::stdout().is_terminal(),
        Stream::Stderr => std::io::stderr().is_terminal(),
    };
    decide_color(choice, is_terminal, &env::var)
}

/// The decision itself, with the environment passed in (tested without touching it).
pub fn decide_color(
    choice: ColorChoice,
    is_terminal: bool,
    var: &dyn Fn(&str) -> Option<String>,
) -> bool {
    match choice {
        ColorChoice::Always => return true,
        ColorChoice::Never => return false,
        ColorChoice::Auto => {}
    }
    if var(env::NO_COLOR).is_some_and(|v| !v.is_empty()) {
        return false;
    }
    if var(env::CLICOLOR_FORCE).is_some_and(|v| !v.is_empty() && v != "0") {
        return true;
    }
    if var(env::CLICOLOR).is_some_and(|v| v == "0") {
        return false;
    }
    if var(env::TERM).is_some_and(|v| v == "dumb") {
        return false;
    }
    is_terminal
}

/// Wider output is cut to this: no terminal is wider, and formatting widths must stay small.
const MAX_WIDTH: usize = 1000;

/// Output width: `--width`, then `COLUMNS`, then 100; at most 1000.
pub fn width(flag: Option<usize>) -> usize {
    flag.or_else(|| env::var(env::COLUMNS).and_then(|c| c.trim().parse().ok()))
        .filter(|&w| w >= 20)
        .map(|w| w.min(MAX_WIDTH))
        .unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    #[test]
    fn width_is_capped() {
        assert_eq!(width(Some(140_000)), MAX_WIDTH);
        assert_eq!(width(Some(usize::MAX)), MAX_WIDTH);
        assert_eq!(width(Some(160)), 160);
    }

    #[test]
    fn color_precedence() {
        assert!(decide_color(
            ColorChoice::Always,
            false,
            &with(&[("NO_COLOR", "1")])
        ));
        assert!(!decide_color(ColorChoice::Never, true, &with(&[])));
        assert!(decide_color(ColorChoice::Auto, true, &with(&[])));
        assert!(!decide_color(ColorChoice::Auto, false, &with(&[])));
        assert!(!decide_color(
            ColorChoice::Auto,
            true,
            &with(&[("NO_COLOR", "1")])
        ));
        assert!(decide_color(
            ColorChoice::Auto,
            true,
            &with(&[("NO_COLOR", "")])
        ));
        assert!(decide_color(
            ColorChoice::Auto,
            false,
            &with(&[("CLICOLOR_FORCE", "1")])
        ));
        assert!(!decide_color(
            ColorChoice::Auto,
            false,
            &with(&[("CLICOLOR_FORCE", "0")])
        ));
        assert!(!decide_color(
            ColorChoice::Auto,
            true,
            &with(&[("CLICOLOR", "0")])
        ));
        assert!(!decide_color(
            ColorChoice::Auto,
            true,
            &with(&[("TERM", "dumb")])
        ));
    }
}
