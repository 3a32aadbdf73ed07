use super::*;

#[test]
fn session_text_is_inert() {
    let text = esc("<script>alert('x')</script>\u{202e}evil\u{7}&\"");
    assert!(!text.contains('<') && !text.contains('>') && !text.contains('\u{202e}'));
    assert!(text.contains("&lt;script&gt;") && text.contains("&#39;") && text.contains("&quot;"));
    assert!(text.contains("\\u{202e}"));
}

#[test]
fn side_by_side_marks_only_the_differing_characters() {
    let (left, right) = side_by_side("the cat sat <here>", "the bat sat <here>");
    assert_eq!(left, "the <del>c</del>at sat &lt;here&gt;");
    assert_eq!(right, "the <ins>b</ins>at sat &lt;here&gt;");
    let (left, right) = side_by_side("same", "same");
    assert_eq!((left.as_str(), right.as_str()), ("same", "same"));
    // A multi-byte character at the first difference is not split.
    let (left, right) = side_by_side("aé", "aè");
    assert_eq!(left, "a<del>é</del>");
    assert_eq!(right, "a<ins>è</ins>");
}

#[test]
fn pieces_are_cut_on_a_character_boundary() {
    let text = "é".repeat(ITEM_BYTES);
    let p = Piece::new("t".into(), &text);
    assert!(p.text.len() <= ITEM_BYTES);
    assert_eq!(p.text.len() + p.cut, text.len());
}
