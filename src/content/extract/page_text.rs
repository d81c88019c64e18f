//! The text of a page beside its main text: what its lines are compared on with the other
//! pages of its host (`Prepared::page_text`).

/// The page's text for comparing it with the other pages of its host: the page rendered
/// from its root (`whole`), when that holds more than the main text (`text`); `None` when it
/// is the main text. When the main text came from a block the rest of the page leaves out
/// (a reference list taken over a short abstract), the page's rendering is shorter than
/// the main text or lacks it: the page's text is then the main text followed by the lines
/// of the rest that it does not hold, so that it always holds what is compared.
pub(super) fn with_main_text(whole: String, text: &str) -> Option<String> {
    if whole.len() > text.len() {
        return Some(whole);
    }
    let main: rustc_hash::FxHashSet<&str> = text.lines().map(str::trim).collect();
    let mut page = text.to_string();
    let mut added = false;
    for line in whole.lines().filter(|l| !main.contains(l.trim())) {
        page.push_str(if added { "\n" } else { "\n\n" });
        page.push_str(line);
        added = true;
    }
    added.then_some(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_text_always_holds_the_main_text() {
        // The page rendered from its root holds more than the main text: it is the page text.
        let whole = "Menu line\n\nThe story itself.\n\nMore text".to_string();
        assert_eq!(
            with_main_text(whole.clone(), "The story itself."),
            Some(whole)
        );
        // The main text came from a block the page's rendering leaves out (a reference list
        // taken over a short abstract): the page text is the main text and the rest.
        let references = "References\n\n- 1. Peasah SK, et al. Influenza cost. Vaccine. 2013.\n\
                          - 2. Longini IM. Strategy for distribution. Am J Epidemiol. 2005.";
        assert_eq!(
            with_main_text("Background:\n\nA short abstract.".to_string(), references),
            Some(format!("{references}\n\nBackground:\nA short abstract."))
        );
        // Nothing more than the main text: no page text of its own.
        assert_eq!(with_main_text("References".to_string(), references), None);
    }
}
