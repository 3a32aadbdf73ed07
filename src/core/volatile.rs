//! Per-run values (timestamps, clock times) inside text that should be stable: each one breaks
//! the prompt cache on every run when it sits in the shared prefix (drift class D6).

/// A volatile value found in a text: where it starts and the matched text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volatile {
    pub offset: usize,
    pub text: String,
}

fn digits(bytes: &[u8], at: usize, count: usize) -> bool {
    at + count <= bytes.len() && bytes[at..at + count].iter().all(u8::is_ascii_digit)
}

/// Length of a clock time `HH:MM` (optionally `:SS` and fractions) at `at`, or 0.
fn clock_at(bytes: &[u8], at: usize) -> usize {
    if !(digits(bytes, at, 2) && bytes.get(at + 2) == Some(&b':') && digits(bytes, at + 3, 2)) {
        return 0;
    }
    let mut end = at + 5;
    if bytes.get(end) == Some(&b':') && digits(bytes, end + 1, 2) {
        end += 3;
        if bytes.get(end) == Some(&b'.') {
            end += 1;
            while end < bytes.len() && bytes[end].is_ascii_digit() {
                end += 1;
            }
        }
    }
    end - at
}

/// Every date-time (`YYYY-MM-DD[T ]HH:MM[:SS]`) and clock time with seconds (`HH:MM:SS`).
/// A bare date is not reported: Codex appends a new environment message when the date rolls
/// over, which is expected.
pub fn find(text: &str) -> Vec<Volatile> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let at_word_start = i == 0 || !bytes[i - 1].is_ascii_digit();
        if at_word_start
            && digits(bytes, i, 4)
            && bytes.get(i + 4) == Some(&b'-')
            && digits(bytes, i + 5, 2)
            && bytes.get(i + 7) == Some(&b'-')
            && digits(bytes, i + 8, 2)
            && matches!(bytes.get(i + 10), Some(b'T' | b' '))
        {
            let clock = clock_at(bytes, i + 11);
            if clock > 0 {
                let mut end = i + 11 + clock;
                if bytes.get(end) == Some(&b'Z') {
                    end += 1;
                }
                found.push(Volatile {
                    offset: i,
                    text: text[i..end].to_string(),
                });
                i = end;
                continue;
            }
        }
        if at_word_start {
            let clock = clock_at(bytes, i);
            if clock >= 8 {
                found.push(Volatile {
                    offset: i,
                    text: text[i..i + clock].to_string(),
                });
                i += clock;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// The text with every volatile value's digits replaced by `#`: two texts that differ only in
/// volatile values mask to the same string.
pub fn mask(text: &str) -> String {
    let found = find(text);
    if found.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for v in found {
        out.push_str(&text[last..v.offset]);
        out.extend(
            v.text
                .chars()
                .map(|c| if c.is_ascii_digit() { '#' } else { c }),
        );
        last = v.offset + v.text.len();
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_timestamps_and_clock_times() {
        let texts: Vec<String> =
            find("now 2026-01-05T10:00:00Z and 2026-01-05 10:00 at 12:34:56.789 ok")
                .into_iter()
                .map(|v| v.text)
                .collect();
        assert_eq!(
            texts,
            ["2026-01-05T10:00:00Z", "2026-01-05 10:00", "12:34:56.789"]
        );
    }

    #[test]
    fn ignores_dates_versions_and_short_times() {
        assert!(find("<current_date>2026-06-05</current_date> v0.58.0 at 10:30").is_empty());
    }

    #[test]
    fn masks_only_volatile_digits() {
        assert_eq!(
            mask("t=2026-01-05T10:00:00Z n=42"),
            "t=####-##-##T##:##:##Z n=42"
        );
        assert_eq!(mask("It is 10:00:00 UTC."), mask("It is 11:30:59 UTC."));
    }
}
