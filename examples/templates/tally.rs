//! The evaluation's counts: distinct articles lost (briefs among them) and edited copies
//! found with their own original or with another page, in all and by part.

use super::Page;

#[derive(Default, Debug)]
pub struct Result_ {
    articles: usize,
    briefs: usize,
    lost: usize,
    lost_briefs: usize,
    copies: usize,
    copies_right: usize,
    copies_wrong: usize,
    /// The same, for copies of briefs.
    brief_copies: usize,
    brief_copies_right: usize,
    brief_copies_wrong: usize,
}

/// The figures of a run: in all, and by part of the evaluation.
#[derive(Default, Debug)]
pub struct Tally {
    total: Result_,
    by_set: std::collections::BTreeMap<String, Result_>,
}

fn report_line(name: &str, r: &Result_) {
    println!(
        "{name:<32} lost {:>4} of {:>5} distinct articles ({} of {} briefs); copies found with the right original {:>4} of {:>4} ({:.3}), with another {}; copies of briefs {} of {} ({:.3}), with another {}",
        r.lost,
        r.articles,
        r.lost_briefs,
        r.briefs,
        r.copies_right,
        r.copies,
        r.copies_right as f64 / r.copies.max(1) as f64,
        r.copies_wrong,
        r.brief_copies_right,
        r.brief_copies,
        r.brief_copies_right as f64 / r.brief_copies.max(1) as f64,
        r.brief_copies_wrong
    );
}

pub fn report(name: &str, r: &Tally) {
    report_line(name, &r.total);
    if r.by_set.len() > 1 {
        for (set, part) in &r.by_set {
            report_line(&format!("  {set}"), part);
        }
    }
}

pub fn tally(r: &mut Tally, page: &Page, duplicate_of: Option<String>) {
    let part = r.by_set.entry(page.set.clone()).or_default();
    for r in [&mut r.total, part] {
        match &page.copy_of {
            None => {
                r.articles += 1;
                r.briefs += usize::from(page.brief);
                if duplicate_of.is_some() {
                    r.lost += 1;
                    r.lost_briefs += usize::from(page.brief);
                }
            }
            Some(original) => {
                let (copies, right, wrong) = if page.brief {
                    (
                        &mut r.brief_copies,
                        &mut r.brief_copies_right,
                        &mut r.brief_copies_wrong,
                    )
                } else {
                    (&mut r.copies, &mut r.copies_right, &mut r.copies_wrong)
                };
                *copies += 1;
                match &duplicate_of {
                    Some(of) if of == original => *right += 1,
                    Some(_) => *wrong += 1,
                    None => {}
                }
            }
        }
    }
}
