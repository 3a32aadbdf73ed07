//! Session ids as people type them: the shortest prefix that still tells them apart.

/// The shortest prefix length, at least `min`, that tells every id from every other (as
/// `git log --oneline` abbreviates hashes): the length a listing shows, which `promptc view`
/// then accepts. Ids that appear twice cannot be told apart: their full length is returned.
pub fn unique_prefix_len<'a>(ids: impl IntoIterator<Item = &'a str>, min: usize) -> usize {
    let mut ids: Vec<&str> = ids.into_iter().collect();
    ids.sort_unstable();
    let mut len = min;
    for pair in ids.windows(2) {
        let common = pair[0]
            .bytes()
            .zip(pair[1].bytes())
            .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
            .count();
        len = len.max(common + 1);
    }
    let longest = ids.iter().map(|id| id.len()).max().unwrap_or(0);
    len.min(longest.max(min))
}

/// True when `query` could name a session: a non-empty run of hexadecimal digits and dashes.
pub fn is_id_query(query: &str) -> bool {
    !query.is_empty() && query.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// True when `query` is `id` or a prefix of it (case-insensitive).
pub fn id_matches(query: &str, id: &str) -> bool {
    id.len() >= query.len() && id.as_bytes()[..query.len()].eq_ignore_ascii_case(query.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::unique_prefix_len;

    #[test]
    fn abbreviations_tell_ids_apart() {
        let ids = [
            "019b8e10-0000-7000-8000-000000000004",
            "019b8e10-0000-7000-8000-000000000013",
            "5973b6c0-94b8-487b-a530-2aeb6098ae0e",
        ];
        assert_eq!(unique_prefix_len(ids, 8), 35);
        assert_eq!(unique_prefix_len([ids[0], ids[2]], 8), 8);
        assert_eq!(
            unique_prefix_len(["019b8e10-0000-7", "019b8e10-0001-7"], 8),
            13
        );
        assert_eq!(unique_prefix_len([ids[0], ids[0]], 8), 36);
        assert_eq!(unique_prefix_len(["abc"], 8), 8);
        assert_eq!(unique_prefix_len([], 8), 8);
    }
}
