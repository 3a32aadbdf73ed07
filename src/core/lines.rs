//! What every agent's loader says of the lines it reads: a line it could not use, the excerpt
//! that names it, and the time a line records.

/// A line promptc could not use, and why.
#[derive(Debug, Clone)]
pub struct SkippedLine {
    pub line: usize,
    /// 1-based column of a JSON error, when there is one.
    pub column: Option<usize>,
    pub reason: String,
    /// A short, escaped-on-render start of the line.
    pub excerpt: String,
}

/// A skipped line as the JSON documents list it (`skipped_lines`): the excerpt is for messages.
#[derive(serde::Serialize)]
pub struct SkippedDocument<'a> {
    pub line: usize,
    pub column: Option<usize>,
    pub reason: &'a str,
}

impl<'a> From<&'a SkippedLine> for SkippedDocument<'a> {
    fn from(s: &'a SkippedLine) -> Self {
        SkippedDocument {
            line: s.line,
            column: s.column,
            reason: &s.reason,
        }
    }
}

/// A note or approximation as the JSON documents list them: its line, where it is about one
/// the note does not name itself.
#[derive(serde::Serialize)]
pub struct LineNote<'a> {
    pub line: Option<usize>,
    pub note: &'a str,
}

impl<'a> From<&'a (usize, String)> for LineNote<'a> {
    fn from((line, note): &'a (usize, String)) -> Self {
        LineNote {
            line: Some(*line),
            note,
        }
    }
}

/// The UTF-8 byte order mark some editors put at the start of a file. JSON readers pass over it
/// there (jq, Python's `json.loads` of bytes), and so does promptc, on a file's first line.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// A file's first line without its byte order mark, if it has one, and the bytes taken off (3
/// or 0): an error's column counts them back.
pub fn without_bom(first_line: &[u8]) -> (&[u8], usize) {
    match first_line.strip_prefix(UTF8_BOM) {
        Some(rest) => (rest, UTF8_BOM.len()),
        None => (first_line, 0),
    }
}

const EXCERPT_CHARS: usize = 60;

/// A short excerpt of a line around `column` (1-based byte column), for messages. Works on a
/// window of the line, so a 100 MB line costs no more than a short one.
pub fn excerpt(line: &[u8], column: Option<usize>) -> String {
    const WINDOW: usize = EXCERPT_CHARS * 4;
    let center = column.unwrap_or(1).saturating_sub(1).min(line.len());
    let start = center.saturating_sub(WINDOW / 2);
    let end = (start + WINDOW).min(line.len());
    let window = String::from_utf8_lossy(&line[start..end]);
    let chars: Vec<char> = window.chars().collect();
    // Keep EXCERPT_CHARS characters around the column's position in the window.
    let center_chars = String::from_utf8_lossy(&line[start..center])
        .chars()
        .count();
    let from = if column.is_some() {
        center_chars.saturating_sub(EXCERPT_CHARS / 2)
    } else {
        0
    };
    let to = (from + EXCERPT_CHARS).min(chars.len());
    let from = to.saturating_sub(EXCERPT_CHARS).min(from);
    let mut out = String::new();
    if start > 0 || from > 0 {
        out.push('…');
    }
    out.extend(&chars[from..to]);
    if end < line.len() || to < chars.len() {
        out.push('…');
    }
    out
}

/// Whole seconds since the Unix epoch of an RFC 3339 timestamp, as the agents write them
/// (`2025-11-17T21:32:46.911Z`).
pub fn unix_seconds(timestamp: &str) -> Option<i64> {
    let timestamp: jiff::Timestamp = timestamp.parse().ok()?;
    Some(timestamp.as_second())
}

/// What a JSON value is, by its first byte, for a message that names what a line held where an
/// object was expected (the value was parsed: its first byte tells its kind).
pub fn json_kind(first: Option<u8>) -> &'static str {
    match first {
        Some(b'[') => "array",
        Some(b'"') => "string",
        Some(b't' | b'f') => "boolean",
        Some(b'n') => "null",
        _ => "number",
    }
}
