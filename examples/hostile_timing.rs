fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().unwrap())
        .unwrap_or(100_000);
    let kind = std::env::args().nth(2).unwrap_or_else(|| "div".into());
    let mut html = String::new();
    match kind.as_str() {
        "div" => {
            for _ in 0..n {
                html.push_str("<div>");
            }
            html.push_str("deep text");
        }
        "p" => {
            for _ in 0..n {
                html.push_str("<p><b>x");
            }
        }
        "oneline" => {
            html.push_str("<p>");
            for i in 0..n {
                html.push_str("word");
                html.push_str(&(i % 10).to_string());
                html.push(' ');
            }
        }
        "table" => {
            for _ in 0..n {
                html.push_str("<table><tr><td>");
            }
        }
        "a" => {
            for _ in 0..n {
                html.push_str("<a href=x>y");
            }
        }
        _ => {}
    }
    let t = std::time::Instant::now();
    let out = crawldedup::content::extract(&html, None);
    eprintln!(
        "{kind} n={n} bytes={} -> {} chars in {:?}",
        html.len(),
        out.text.len(),
        t.elapsed()
    );
}
