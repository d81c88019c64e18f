//! The lines of a rendered text that are the page's, not the article's, in Chinese
//! (simplified and traditional) and Japanese: the kinds of [`super::lines`], which knows
//! them in European languages, as sites in these scripts write them.
//!
//! A Chinese article page carries its publication line ("发布时间：2026-03-01 来源：市文化局
//! 浏览次数：1234 【字号：大 中 小】"), a breadcrumb ("当前位置：首页 > 新闻中心 > 正文"),
//! links to the articles before and after it ("上一篇：..." "下一篇：..."), its editor
//! ("责任编辑：李四"), rows of controls ("【打印本页】【关闭窗口】", "分享到："), counters
//! ("阅读(1234)"), the site's rights and registration ("版权所有 未经授权禁止转载",
//! "京ICP备12345678号") and pleas to follow or install ("扫一扫关注我们"); a Japanese blog its
//! "投稿日：", "カテゴリー：", "前の記事", "シェアする". The "上一篇" line names another
//! article of the site, a different one on every page: left in, it is a sentence of each
//! page's own, and two copies of one article in two places of a site differ by it.
//!
//! A line is one of these when it is short ([`PAGE_LINE_CHARS`]) and, past any opening
//! brackets, starts with one of the labels and a colon, is made only of controls and the
//! brackets and marks between them, or is a counter or a rights notice. Only lines with a
//! Han or Kana character are read; every other line is left to [`super::lines`].

use regex::Regex;
use std::sync::LazyLock;

/// Lines this long (in characters) or longer are never taken for the page's own line: a
/// paragraph of an article can start with a label.
pub(super) const PAGE_LINE_CHARS: usize = 120;

/// Labels of a page's metadata, its links to other articles and its breadcrumb, followed by
/// a colon (`：` or `:`). A label that also opens a paragraph of an article ("记者：" before
/// a question in an interview, "时间：" and "地址：" in a notice) is not here.
const LABELS: &str = concat!(
    // Chinese (simplified): publication, source, people, counts, filing.
    "发布时间|发布日期|发表时间|发表日期|更新时间|更新日期|来源|信息来源|文章来源|",
    "稿件来源|作者|编辑|责任编辑|责编|审核|校对|浏览|浏览次数|浏览量|阅读|阅读量|阅读次数|",
    "点击|点击数|点击量|点击率|访问量|标签|关键词|关键字|所属分类|分类|所属栏目|栏目|",
    "本文链接|原文链接|文章链接|本文地址|转载请注明|上一篇|下一篇|上一条|下一条|上一页|下一页|",
    "当前位置|您的位置|你的位置|您现在的位置|你现在的位置|您当前的位置|现在位置|所在位置|",
    "分享到|分享至|字号|主办|承办|协办|主管|技术支持|网站标识码|备案号|",
    // Chinese (traditional).
    "發布時間|發表時間|發佈時間|更新時間|來源|資料來源|編輯|責任編輯|瀏覽|瀏覽次數|閱讀|",
    "點擊|點閱|標籤|關鍵字|分類|本文連結|上一篇|下一篇|目前位置|您的位置|分享到|",
    // Japanese.
    "投稿日|投稿日時|公開日|公開日時|更新日|更新日時|最終更新日|最終更新|作成日|投稿者|",
    "著者|執筆者|カテゴリー|カテゴリ|タグ|前の記事|次の記事|前の投稿|次の投稿|現在位置|",
    "現在の位置|現在のページ",
);

/// Controls a row is made of: printing, closing, going back or up, bookmarking, sharing,
/// praising, reporting, reading on, the font size.
const CONTROLS: &str = concat!(
    "打印|打印本页|打印此页|打印文章|打印本文|关闭|关闭窗口|关闭本页|返回|返回顶部|回到顶部|",
    "返回首页|返回列表|返回上一页|收藏|加入收藏|收藏本文|收藏本页|分享|转发|点赞|打赏|",
    "去打赏|赞赏|举报|纠错|我要纠错|更多|查看更多|阅读全文|阅读原文|展开全文|显示全文|",
    "收起|字号|大\\s*中\\s*小|扫一扫|复制链接|写评论|我要评论|",
    "列印|關閉|關閉視窗|回到頂部|返回頂部|加入最愛|分享|檢舉|",
    "シェア|シェアする|ツイート|いいね|印刷|印刷する|続きを読む|もっと見る|もっと読む|",
    "一覧へ戻る|一覧に戻る|記事一覧へ|戻る|トップへ|ページトップへ|ページの先頭へ|",
    "ページの先頭に戻る|トップへ戻る|閉じる|ブックマーク|保存",
);

/// Words of a rights notice or a site's registration, anywhere in a short line.
const RIGHTS: &str = concat!(
    "版权所有|版權所有|未经授权|未經授權|禁止转载|禁止轉載|不得转载|转载请注明|ICP备|ICP证|",
    "公网安备|無断転載|無断複製|無断使用",
);

/// Words of a plea to follow the site, install its app or sign in, anywhere in a short
/// line.
const PLEAS: &str = concat!(
    "关注我们|关注公众号|扫描二维码|扫码关注|扫一扫关注|微信扫一扫|下载客户端|下载APP|",
    "打开APP|在APP中打开|App内阅读|客户端阅读|アプリで読む|アプリをダウンロード|会員登録|",
    "無料登録|フォローする",
);

/// Lines this long (in characters) or longer are never taken for a plea ([`PLEAS`]).
pub(super) const PLEA_LINE_CHARS: usize = 60;

/// Whether `c` is a Han or Kana character.
fn is_han_or_kana(c: char) -> bool {
    matches!(u32::from(c), 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff)
}

/// Whether a line of main text is the page's, not the article's (see the [module
/// documentation](self)).
pub(super) fn is_page_line(trimmed: &str) -> bool {
    static LABELLED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"^[\s【\[（(〔「『<《◆■●▶▼►·>|]*({LABELS})\s*[：:]"
        ))
        .expect("the label pattern is valid")
    });
    static ROW: LazyLock<Regex> = LazyLock::new(|| {
        // One to six controls, each in brackets or between marks; a count after each
        // ("赞(0)", "阅读(1234)").
        let mark = r"[\s【】\[\]（）()〔〕「」『』<>《》|/｜·•\-—:：»›]";
        Regex::new(&format!(
            r"^{mark}*(({CONTROLS}|阅读|浏览|评论|点击|赞|收藏|分享)(\s*[（(]\d+[)）])?{mark}*){{1,6}}$"
        ))
        .expect("the control pattern is valid")
    });
    static ANYWHERE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(r"(?i){RIGHTS}|(?P<plea>{PLEAS})"))
            .expect("the rights pattern is valid")
    });
    // A character is at most four bytes: a line this long has too many characters, however
    // it is written (most paragraphs of a page), and is settled by its length alone.
    if trimmed.len() >= 4 * PAGE_LINE_CHARS {
        return false;
    }
    // Kana and the ideographs are led by 0xE3-0xE9 or 0xEF in UTF-8: a line without such a
    // byte (most lines of a page in a Latin script) is settled without decoding it.
    if !crate::text::any_byte(trimmed.as_bytes(), |b| matches!(b, 0xE3..=0xE9 | 0xEF))
        || !trimmed.chars().any(is_han_or_kana)
    {
        return false;
    }
    let chars = trimmed.chars().count();
    if chars >= PAGE_LINE_CHARS {
        return false;
    }
    if LABELLED.is_match(trimmed) || ROW.is_match(trimmed) {
        return true;
    }
    ANYWHERE
        .captures(trimmed)
        .is_some_and(|c| c.name("plea").is_none() || chars < PLEA_LINE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::is_page_line;

    #[test]
    fn a_chinese_or_japanese_page_line_is_told_from_the_articles() {
        for line in [
            "发布时间：2026-03-01 09:30 来源：市文化局 作者：张三 浏览次数：1234 【字号：大 中 小】",
            "当前位置：首页 > 新闻中心 > 正文",
            "上一篇：市政府召开第十二次常务会议研究部署重点工作",
            "（责任编辑：李四）",
            "【打印本页】【关闭窗口】",
            "【大 中 小】",
            "分享到：",
            "赞(0) 收藏 分享",
            "主办：某某市人民政府办公室 版权所有 未经授权禁止转载",
            "京ICP备12345678号-1",
            "扫一扫关注我们",
            "來源：中央社",
            "投稿日：2026年3月1日",
            "カテゴリー：お知らせ",
            "シェアする ツイート",
            "前の記事：春の特別展のお知らせ",
        ] {
            assert!(is_page_line(line), "{line}");
        }
        for line in [
            "记者从市文化局获悉，市图书馆自下月起将周末开放时间延长至晚上九点。",
            "记者：您认为这项政策的效果如何？",
            "时间：3月1日上午九点 地点：市图书馆三楼报告厅",
            "市民可以关注我们的图书馆活动，报名参加周末的读书会，名额有限，先到先得。图书馆还将在三楼增设自习座位两百个，欢迎大家前来。",
            "小",
            "Copyright 2026 Harbour Verlag",
            "図書館は来月から週末の開館時間を延長する。",
        ] {
            assert!(!is_page_line(line), "{line}");
        }
    }
}
