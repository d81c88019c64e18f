#!/bin/sh
# Fetches seven Chinese blogs as their sites serve them (static sites built by generators
# such as Hexo, published on GitHub Pages, each with its theme's sidebar: recent posts,
# categories with counts, tags, archives) and keeps their post pages under
# target/cjk-sites/NAME, for the template evaluation's `--site HOST=FOLDER`. Needs git and
# the network; for evaluation only, never for tests. Each repository is pinned to the
# commit the figures in docs/quality.md were measured on.
# Usage: scripts/cjk-blog-sites.sh   (prints the --site arguments to pass to eval_templates)
# CJK_SITES_GIT_BASE (default https://github.com) is where OWNER/NAME.git is cloned from: a
# mirror, or a local folder of bare repositories laid out the same way.
set -eu
base=${CJK_SITES_GIT_BASE:-https://github.com}
cd "$(dirname "$0")/.."
mkdir -p target/cjk-sites
args=""
while read -r name repo commit; do
    out="target/cjk-sites/$name"
    if [ ! -d "$out" ]; then
        tmp="target/cjk-sites/.$name.git"
        rm -rf "$tmp"
        git clone --quiet --bare --filter=blob:none "$base/$repo.git" "$tmp"
        mkdir -p "$out"
        # Post pages only: dated paths (2019/05/15/slug/index.html) or posts/.
        git -C "$tmp" ls-tree -r --name-only "$commit" |
            grep -E '^(20[0-9][0-9]/|posts?/|p/|article/)[^"]*\.html$' |
            while read -r file; do
                mkdir -p "$out/$(dirname "$file")"
                git -C "$tmp" show "$commit:$file" > "$out/$file"
            done
        rm -rf "$tmp"
    fi
    args="$args --site $name.blog=$out"
done <<'EOF'
00arthur00 00arthur00/00arthur00.github.io 173116ad1ff06737d59e6d463520de8a5f4740c4
00ye 00ye/00ye.github.io 4f31221adf5052b8970080f4c92b120d458d052a
011127wyw 011127wyw/011127wyw.github.io 5bb3c952811a2b5b749eedf235071c94c25d6143
dydeve dydeve/dydeve.github.io 77aa9d9c8f89f338b7245fefb1484407fb86e7ad
dyike dyike/dyike.github.io 54b893390e73a372b2412d8bee856d63d3bec2a1
dylanleung dylanleung/qinyuanpei.github.io d22ad2d79cdd5d7326c45b0475f372ce5d8e4966
dylanhouxinglin dylanhouxinglin/dylanhouxinglin.github.io 712f87d819c25c86c1342400c10bf7e18cc4e388
EOF
echo "$args"
