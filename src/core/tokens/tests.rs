//! How close token estimates come to what the provider counted.

use crate::agents::codex::plan::plan;
use crate::fingerprint::PlanOptions;
use crate::test_support::real_sample;

#[test]
fn long_texts_are_estimated_from_samples_within_a_few_percent() {
    // A log-like text of 200 KB: the sampled estimate stays close to the exact count.
    let line = "2026-01-05 10:00:00 INFO compiling crate widgets v0.1.0 (/home/dev/widgets)\n";
    let text = line.repeat(200 * 1024 / line.len());
    let exact = bpe_openai::o200k_base().count(&text) as f64;
    let estimated = super::count(&text) as f64;
    assert!(
        ((estimated - exact) / exact).abs() < 0.02,
        "{estimated} vs {exact}"
    );
}

#[test]
fn counts_known_strings() {
    // o200k: "hello world" is two tokens; the empty string none.
    assert_eq!(super::count("hello world"), 2);
    assert_eq!(super::count(""), 0);
}

/// On the real 0.58.0 rollout, compare each step's observed input growth (what the provider
/// counted for the items added since the previous request) with promptc's estimate of those
/// items. Relative error per step, over steps whose observed growth is at least 200 tokens.
#[test]
fn estimated_growth_tracks_observed_growth_on_the_058_sample() {
    let Some((_, s)) = real_sample("019a93b9") else {
        return;
    };
    let p = plan(
        &s,
        &PlanOptions {
            estimate_tokens: true,
            ..PlanOptions::default()
        },
    );
    let mut errors: Vec<f64> = Vec::new();
    let mut total_observed = 0i64;
    let mut total_estimated = 0i64;
    for k in 1..s.replay.steps.len() {
        let (Some(prev), Some(now)) = (&s.replay.steps[k - 1].usage, &s.replay.steps[k].usage)
        else {
            continue;
        };
        let observed = now.usage.input_tokens as i64 - prev.usage.input_tokens as i64;
        let estimated =
            p.input_tokens(k, p.views[k].1) as i64 - p.input_tokens(k - 1, p.views[k - 1].1) as i64;
        total_observed += observed;
        total_estimated += estimated;
        if observed >= 200 {
            errors.push((estimated - observed) as f64 / observed as f64);
        }
    }
    errors.sort_by(|a, b| a.total_cmp(b));
    let median = errors[errors.len() / 2];
    let p10 = errors[errors.len() / 10];
    let p90 = errors[errors.len() * 9 / 10];
    let overall = (total_estimated - total_observed) as f64 / total_observed as f64;
    eprintln!(
        "growth error over {} steps: p10 {p10:.3}, median {median:.3}, p90 {p90:.3}; total estimated {total_estimated} vs observed {total_observed} ({overall:.3})",
        errors.len()
    );
    assert!(median.abs() < 0.15, "median relative error {median}");
    assert!(overall.abs() < 0.15, "overall relative error {overall}");
}

#[test]
fn remembered_pieces_count_like_the_tokenizer() {
    let texts = [
        "fn main() {\n    println!(\"héllo, wörld\");\n}\n",
        "error[E0425]: cannot find value `x` in this scope\n  --> src/main.rs:2:5\n",
        "   \t\n\n  trailing spaces and 12345678 numbers, 日本語のテキスト, emoji 🎉🎉",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbb",
    ];
    // Twice: the second round is answered from the remembered pieces.
    for _ in 0..2 {
        for text in texts {
            assert_eq!(
                super::count_exact(text),
                bpe_openai::o200k_base().count(text),
                "{text:?}"
            );
        }
    }
}

/// The pieces of `text` as promptc's pre-tokenizer cuts them.
fn pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    super::for_each_piece(text, |piece| out.push(piece));
    out
}

#[test]
fn texts_split_as_the_tokenizer_splits_them() {
    let mut texts: Vec<String> = [
        "",
        " ",
        "a",
        "  \n",
        "x  \n\n  y",
        "tabs\t\tand\r\nCRLF\r\n",
        "I'll say it's THEY'RE we've you'd",
        "ABCdef GHI jkl MNOpqRS",
        "12345678901 1.5e10 0x1F",
        "path/to/file.rs:12:5 // comment /* block */",
        "e\u{301}te\u{301} combining, ﬁ ligature, İstanbul, ß",
        "日本語のテキスト、中文，한국어",
        "emoji 🎉🎉 👩‍💻 flags 🇫🇷",
        "trailing spaces   ",
        "\u{a0}non-breaking\u{2009}thin\u{3000}ideographic",
    ]
    .map(str::to_string)
    .to_vec();
    for (_, bytes) in crate::test_support::fixture_bytes()
        .into_iter()
        .chain(crate::test_support::real_sample_bytes())
    {
        texts.extend(
            String::from_utf8_lossy(&bytes)
                .lines()
                .take(400)
                .map(str::to_string),
        );
    }
    for text in &texts {
        assert_splits_as_the_tokenizer(text).unwrap();
    }
}

proptest::proptest! {
    #[test]
    fn random_texts_split_as_the_tokenizer_splits_them(
        parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(" "), proptest::strategy::Just("  "),
                proptest::strategy::Just("\n"), proptest::strategy::Just("\r\n"),
                proptest::strategy::Just("\t"), proptest::strategy::Just("a"),
                proptest::strategy::Just("Ab"), proptest::strategy::Just("CD"),
                proptest::strategy::Just("'s"), proptest::strategy::Just("'LL"),
                proptest::strategy::Just("7"), proptest::strategy::Just("1234"),
                proptest::strategy::Just("/"), proptest::strategy::Just("{}"),
                proptest::strategy::Just("é"), proptest::strategy::Just("\u{301}"),
                proptest::strategy::Just("日本"), proptest::strategy::Just("🎉"),
                proptest::strategy::Just("\u{a0}"), proptest::strategy::Just("\u{0}"),
            ],
            0..40,
        ),
    ) {
        let text: String = parts.concat();
        let expected: Vec<&str> = bpe_openai::o200k_base().split(&text).collect();
        proptest::prop_assert_eq!(pieces(&text), expected, "{:?}", text);
        proptest::prop_assert_eq!(super::count_exact(&text), bpe_openai::o200k_base().count(text.as_str()));
    }
}

/// One character of each kind the pre-tokenizer tells apart: ASCII letters (those of the
/// contractions among them), digits, white space, punctuation and controls; and of each Unicode
/// class: upper, title, lower, modifier and other letters, the three kinds of marks, numbers,
/// white space, and others (symbols, a format character, an unassigned one), with `ſ` and the
/// Kelvin sign, which fold to `s` and `k`.
const SPLIT_ALPHABET: [&str; 58] = [
    "A",
    "Z",
    "a",
    "s",
    "t",
    "r",
    "e",
    "v",
    "l",
    "m",
    "d",
    "k",
    "S",
    "T",
    "R",
    "E",
    "L",
    "D",
    "0",
    "9",
    "\r",
    "\n",
    "\t",
    "\u{b}",
    "\u{c}",
    " ",
    "'",
    "/",
    "!",
    "\0",
    "\u{1f}",
    "\u{7f}",
    "é",
    "É",
    "Ω",
    "ǅ",
    "ʰ",
    "日",
    "א",
    "\u{301}",
    "\u{903}",
    "\u{20dd}",
    "ſ",
    "\u{212a}",
    "\u{661}",
    "²",
    "Ⅻ",
    "\u{a0}",
    "\u{85}",
    "\u{2028}",
    "\u{3000}",
    "\u{1680}",
    "€",
    "—",
    "🎉",
    "\u{200b}",
    "\u{378}",
    "\u{10ffff}",
];

/// The pieces of `text` as the general matcher alone cuts them.
fn general_pieces(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = start + super::pieces::piece_end(&text[start..]);
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// The pieces of `text` as the ASCII path alone cuts them, `None` where it leaves one to the
/// general matcher.
fn ascii_pieces(text: &str) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let end = start + super::ascii::piece_end(&text[start..])?;
        out.push(&text[start..end]);
        start = end;
    }
    Some(out)
}

/// `text` splits as bpe_openai splits it: with both matchers, with the general one alone, and
/// (ASCII text) with the ASCII one alone.
fn assert_splits_as_the_tokenizer(text: &str) -> Result<(), proptest::test_runner::TestCaseError> {
    let expected: Vec<&str> = bpe_openai::o200k_base().split(text).collect();
    proptest::prop_assert_eq!(&pieces(text), &expected, "{:?}", text);
    proptest::prop_assert_eq!(&general_pieces(text), &expected, "{:?}", text);
    if text.is_ascii() {
        proptest::prop_assert_eq!(ascii_pieces(text), Some(expected), "{:?}", text);
    }
    Ok(())
}

#[test]
fn every_short_text_splits_as_the_tokenizer_splits_it() {
    // Every text of three characters of the alphabet, and of shorter ones, with any ASCII
    // character in one of the three places: each way a piece can start, and what follows it.
    let ascii: Vec<String> = (0..128u8)
        .map(|byte| char::from(byte).to_string())
        .collect();
    let alphabet: Vec<String> = SPLIT_ALPHABET.map(str::to_string).to_vec();
    let or_none = |chars: &[String]| -> Vec<String> {
        std::iter::once(String::new())
            .chain(chars.iter().cloned())
            .collect()
    };
    let places = [
        [ascii.clone(), or_none(&alphabet), or_none(&alphabet)],
        [alphabet.clone(), or_none(&ascii), or_none(&alphabet)],
        [alphabet.clone(), alphabet.clone(), ascii.clone()],
    ];
    let mut text = String::new();
    for [first, second, third] in &places {
        for a in first {
            for b in second {
                for c in third {
                    text.clear();
                    text.extend([a.as_str(), b, c]);
                    assert_splits_as_the_tokenizer(&text).unwrap();
                }
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3_000))]
    #[test]
    fn random_texts_of_every_kind_split_as_the_tokenizer_splits_them(
        parts in proptest::collection::vec(
            proptest::prop_oneof![
                3 => proptest::strategy::Strategy::prop_map(
                    proptest::sample::select(&SPLIT_ALPHABET[..]),
                    str::to_string,
                ),
                1 => proptest::strategy::Strategy::prop_map(proptest::char::any(), String::from),
            ],
            0..48,
        ),
    ) {
        assert_splits_as_the_tokenizer(&parts.concat())?;
    }
}

#[test]
fn characters_are_in_the_classes_of_the_regexs_tables() {
    use super::pieces::{Class, class_of};
    use regex_syntax::hir::{Class as HirClass, HirKind};
    let classes = [
        (r"\p{Lu}", Class::Upper),
        (r"\p{Lt}", Class::Upper),
        (r"\p{Ll}", Class::Lower),
        (r"\p{Lm}", Class::Both),
        (r"\p{Lo}", Class::Both),
        (r"\p{M}", Class::Mark),
        (r"\p{N}", Class::Digit),
        (r"\s", Class::Space),
    ];
    let mut classified = 0;
    for (pattern, class) in classes {
        let hir = regex_syntax::parse(pattern).expect("parses");
        let HirKind::Class(HirClass::Unicode(ranges)) = hir.kind() else {
            panic!("{pattern}");
        };
        for range in ranges.ranges() {
            for c in range.start()..=range.end() {
                let expected = if matches!(c, '\r' | '\n') {
                    Class::Newline
                } else {
                    class
                };
                assert_eq!(class_of(c), expected, "{c:?} in {pattern}");
                classified += 1;
            }
        }
    }
    // Every other character is `Other`. (Not std's `is_numeric` and `is_whitespace`: std's
    // Unicode is newer than the regex's, and the regex's is what bpe_openai cuts with.)
    let others = (0..=0x10FFFF)
        .filter_map(char::from_u32)
        .filter(|&c| class_of(c) == Class::Other)
        .count();
    assert_eq!(
        classified + others,
        0x10FFFF + 1 - 0x800,
        "every scalar value in one class"
    );
}

#[test]
fn every_token_counts_as_one_token() {
    // BPE encodes each vocabulary entry to itself: a wrong merge table, trie or prefix table
    // splits some of them.
    let bpe = &bpe_openai::o200k_base().bpe;
    assert_eq!(bpe.num_tokens(), 199_998);
    for id in 0..bpe.num_tokens() as u32 {
        let bytes = bpe.token_bytes(id);
        assert_eq!(super::o200k::count(bytes), 1, "token {id} {bytes:?}");
    }
}

#[test]
fn pieces_of_real_text_count_as_the_tokenizer_counts_them() {
    let bpe = &bpe_openai::o200k_base().bpe;
    let mut pieces = std::collections::HashSet::new();
    for (_, bytes) in crate::test_support::fixture_bytes()
        .into_iter()
        .chain(crate::test_support::real_sample_bytes())
    {
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines().filter(|line| line.len() <= 4096).take(100) {
            // The whole line as one piece too: long texts with many backtracking points.
            assert_eq!(
                super::o200k::count(line.as_bytes()),
                bpe.count(line.as_bytes()),
                "{line:?}"
            );
            super::for_each_piece(line, |piece| {
                pieces.insert(piece.to_string());
            });
        }
    }
    for piece in &pieces {
        assert_eq!(
            super::o200k::count(piece.as_bytes()),
            bpe.count(piece.as_bytes()),
            "{piece:?}"
        );
    }
    assert!(pieces.len() > 1_000, "{} distinct pieces", pieces.len());
}

proptest::proptest! {
    #[test]
    fn random_bytes_count_as_the_tokenizer_counts_them(
        bytes in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::num::u8::ANY,
                proptest::sample::select(b" etaoinshrdlu\n".to_vec()),
            ],
            0..300,
        ),
    ) {
        proptest::prop_assert_eq!(
            super::o200k::count(&bytes),
            bpe_openai::o200k_base().bpe.count(&bytes)
        );
    }
}
