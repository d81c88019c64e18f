//! The parser's tokenizer, as the project's copy of html5ever changes it
//! (`vendor/html5ever/PATCH.md`: tag and attribute names read a run at a time, ASCII
//! characters taken off the input without decoding), gives the tokens that html5ever's own
//! character-at-a-time reading gives. The copy reads the old way when every parse error
//! must be reported (`exact_errors`), so one build holds both: the tokens of each generated
//! input are compared between the two, parse errors left aside (only the exact mode reports
//! all of them) and adjacent character tokens joined (the exact mode reads text a character
//! at a time as well).

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use proptest::prelude::*;

#[derive(Default)]
struct Tokens(RefCell<Vec<String>>);

impl TokenSink for Tokens {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut tokens = self.0.borrow_mut();
        match token {
            Token::ParseError(_) => {}
            Token::CharacterTokens(text) => match tokens.last_mut() {
                Some(last) if last.starts_with("text:") => last.push_str(&text),
                _ => tokens.push(format!("text:{text}")),
            },
            Token::NullCharacterToken => match tokens.last_mut() {
                Some(last) if last.starts_with("text:") => last.push('\0'),
                _ => tokens.push("text:\0".to_string()),
            },
            other => tokens.push(format!("{other:?}")),
        }
        TokenSinkResult::Continue
    }
}

/// The tokens of `pieces`, each handed to the parser as a buffer of its own, fed one at a
/// time when `incremental` (a name then ends with its buffer and goes on in the next).
fn tokens(pieces: &[String], exact_errors: bool, incremental: bool) -> Vec<String> {
    let opts = TokenizerOpts {
        exact_errors,
        ..Default::default()
    };
    let tokenizer = Tokenizer::new(Tokens::default(), opts);
    let input = BufferQueue::default();
    for piece in pieces {
        input.push_back(StrTendril::from_slice(piece));
        if incremental {
            let _ = tokenizer.feed(&input);
        }
    }
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.0.take()
}

/// Markup made of the pieces that decide how a name is read: capitals, the characters
/// that end a name or make a parse error in it, whitespace of every kind (a carriage
/// return before a line feed), NUL, and characters beyond ASCII.
fn markup() -> impl Strategy<Value = String> {
    const CHARACTERS: &[&str] = &[
        "<", "</", ">", "/", "/>", "=", "\"", "'", " ", "\t", "\n", "\r", "\r\n", "\u{c}", "\0",
        "a", "B", "z", "Q", "-", ":", "_", "1", "!", "?", "`", "{", "~", "\u{7f}", "é", "Ж", "中",
        "&", "<!", "<?",
    ];
    const LONGER: &[&str] = &[
        "DiV",
        "cLaSs",
        "href",
        "SPAN",
        "data-X",
        "&amp;",
        "<!--",
        "-->",
        "x=\"1\"",
        "y='2'",
        "z=3",
        "<P CLASS=A>",
        "</P >",
        "<br/>",
    ];
    let piece = prop::sample::select([CHARACTERS, LONGER].concat());
    prop::collection::vec(piece, 0..80).prop_map(|pieces| pieces.concat())
}

/// `text` cut into buffers at the given byte offsets (moved back to a character boundary).
fn cut(text: &str, cuts: &[usize]) -> Vec<String> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|&c| {
            let mut c = c % (text.len() + 1);
            while !text.is_char_boundary(c) {
                c -= 1;
            }
            c
        })
        .collect();
    at.push(0);
    at.push(text.len());
    at.sort_unstable();
    at.dedup();
    at.windows(2)
        .map(|w| text[w[0]..w[1]].to_string())
        .filter(|piece| !piece.is_empty())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn names_read_a_run_at_a_time_give_the_same_tokens(
        text in markup(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        incremental in any::<bool>(),
    ) {
        let pieces = cut(&text, &cuts);
        let exact = tokens(&pieces, true, incremental);
        let fast = tokens(&pieces, false, incremental);
        prop_assert_eq!(fast, exact, "input {:?} in pieces {:?}", text, pieces);
    }
}

#[test]
fn names_keep_their_case_folding_and_their_errors() {
    let pieces = ["<DiV CLASS=\"A\" data-X='1' b\0c=2 q\"r=3>t</DiV >".to_string()];
    let fast = tokens(&pieces, false, false);
    assert_eq!(fast, tokens(&pieces, true, false));
    let start = &fast[0];
    assert!(start.contains("name: Atom('div'"), "{start}");
    assert!(start.contains("local: Atom('class'"), "{start}");
    assert!(start.contains("local: Atom('data-x'"), "{start}");
    assert!(start.contains("b\u{fffd}c"), "{start}");
    assert!(start.contains("Atom('q\"r'"), "{start}");
}
