"""How many characters of Han, Kana and Hangul say what one English word says, measured on
parallel texts: the same help pages in English and in Chinese, Japanese or Korean, as
Debian's packages install them. Each page's main text is extracted by `crawldedup extract`;
a page counts when at least half of its translation's characters are of the script measured
and its English has at least 20 words beyond those left untranslated. The words of each
page's English, less the runs of the translation that hold no such character (names, code,
numbers and sentences left in English), are fitted over all pages, without an intercept, as
a sum over the character classes of characters / (characters a word).

For evaluation only, never for tests. Needs the packages (apt-get install
libreoffice-help-en-us libreoffice-help-zh-cn libreoffice-help-ja libreoffice-help-ko
gimp-help-en gimp-help-ja gimp-help-zh-cn gimp-help-ko) and a built `crawldedup`.

usage: python3 scripts/script_units.py target/release/crawldedup
"""
import json
import os
import subprocess
import sys

SITES = [
    # (site, root, English folder, [(language folder, classes fitted)])
    ("libreoffice-help", "/usr/share/libreoffice/help", "en-US",
     [("zh-CN", ["han"]), ("ja", ["han", "kana"]), ("ko", ["hangul"])]),
    ("gimp-help", "/usr/share/gimp/2.0/help", "en",
     [("zh_CN", ["han"]), ("ja", ["han", "kana"]), ("ko", ["hangul"])]),
]


def char_class(c):
    o = ord(c)
    if 0xAC00 <= o <= 0xD7AF:
        return "hangul"
    if 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9F:
        return "kana"
    if (0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF
            or 0x20000 <= o <= 0x3134F):
        return "han"
    return None


def texts(binary, folder, files):
    """The main text of each file under `folder`, by its path there."""
    out = {}
    for start in range(0, len(files), 500):
        batch = files[start:start + 500]
        run = subprocess.run([binary, "extract", "--json", *batch], cwd=folder,
                             capture_output=True, text=True, check=False)
        for line in run.stdout.splitlines():
            page = json.loads(line)
            out[page["file"]] = page.get("text", "")
    return out


def solve(matrix, vector):
    """Gauss-Jordan on a small square system."""
    n = len(vector)
    m = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for i in range(n):
        pivot = m[i][i]
        m[i] = [x / pivot for x in m[i]]
        for r in range(n):
            if r != i:
                factor = m[r][i]
                m[r] = [x - factor * y for x, y in zip(m[r], m[i])]
    return [m[i][n] for i in range(n)]


def fit(english, translated, classes):
    rows = []
    for name, text in translated.items():
        words = len(english.get(name, "").split())
        counts = dict.fromkeys(classes, 0)
        non_space = 0
        for c in text:
            if c.isspace():
                continue
            non_space += 1
            k = char_class(c)
            if k in counts:
                counts[k] += 1
        if non_space == 0 or sum(counts.values()) < non_space / 2:
            continue
        untranslated = sum(1 for run in text.split() if not any(char_class(c) for c in run))
        content = words - untranslated
        if content < 20:
            continue
        rows.append((content, [counts[k] for k in classes]))
    n = len(classes)
    normal = [[sum(x[i] * x[j] for _, x in rows) for j in range(n)] for i in range(n)]
    moments = [sum(x[i] * y for y, x in rows) for i in range(n)]
    per_char = solve(normal, moments)
    return len(rows), sum(y for y, _ in rows), dict(zip(classes, per_char))


def main():
    binary = os.path.abspath(sys.argv[1])
    print("site              language  pages  English words  characters a word")
    for site, root, english_folder, languages in SITES:
        english_root = os.path.join(root, english_folder)
        if not os.path.isdir(english_root):
            print(f"{site}: not installed ({english_root})")
            continue
        files = sorted(
            os.path.relpath(os.path.join(d, f), english_root)
            for d, _, names in os.walk(english_root) for f in names if f.endswith(".html"))
        english = texts(binary, english_root, files)
        for language, classes in languages:
            folder = os.path.join(root, language)
            if not os.path.isdir(folder):
                print(f"{site} {language}: not installed")
                continue
            present = [f for f in files if os.path.exists(os.path.join(folder, f))]
            pages, words, per_char = fit(english, texts(binary, folder, present), classes)
            result = ", ".join(
                f"{k} {1 / w:.2f}" if w > 0 else f"{k} -" for k, w in per_char.items())
            print(f"{site:17} {language:8} {pages:6} {words:14}  {result}")


if __name__ == "__main__":
    main()
