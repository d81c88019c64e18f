"""The page stage through the Python API: answers, threads, durability, bad input."""

import os
import signal
import subprocess
import sys
import textwrap
import threading

import pytest

import crawldedup

WORDS = (
    "harbour council valley coast market river bridge school garden library station festival "
    "museum orchard meadow lantern quarry chapel ferry beacon"
).split()


def article(seed, paragraphs=6):
    """An HTML page with a main text of its own (deterministic from `seed`)."""
    text = []
    state = seed * 7919 + 1
    for _ in range(paragraphs):
        words = []
        for _ in range(60):
            state = (state * 1103515245 + 12345) % 2**31
            words.append(WORDS[state % len(WORDS)])
        text.append("<p>" + " ".join(words) + ".</p>")
    return (
        "<html><head><title>Story %d</title></head><body><nav><a href='/'>Home</a></nav>"
        "<article><h1>Story %d</h1>%s</article><footer>Contact us</footer></body></html>"
        % (seed, seed, "".join(text))
    )


def test_urls_are_canonical_and_answered_new_once():
    with crawldedup.Dedup() as dedup:
        first = dedup.check_url("https://Example.com/a/?utm_source=x&b=2&a=1#top")
        assert first.verdict == "new" and first.is_new
        assert first.canonical == "https://example.com/a/?a=1&b=2"
        again = dedup.check_url("https://example.com/a/?a=1&b=2")
        assert again.verdict == "seen" and not again.is_new
        verdicts = dedup.check_urls(["https://example.com/b", "https://example.com/b", "nope"])
        assert [v.verdict for v in verdicts] == ["new", "seen", "invalid"]
        assert verdicts[2].canonical is None and verdicts[2].error
        assert dedup.stats()["urls_new"] == 2


def test_pages_exact_and_near_duplicates_carry_their_measures():
    with crawldedup.Dedup() as dedup:
        original = article(1)
        unique = dedup.check_page("https://a.test/1", body=original.encode())
        assert unique.verdict == "unique" and unique.is_unique and not unique.is_duplicate
        assert len(unique.simhash) == 16 and unique.id == 0
        exact = dedup.check_page("https://b.test/copy", body=original, content_type="text/html")
        assert exact.verdict == "exact_duplicate" and exact.is_duplicate
        assert (exact.of, exact.distance, exact.similarity, exact.containment) == (
            "https://a.test/1", 0, 1.0, 1.0)
        edited = original.replace("</article>", "<p>One more line from the editor.</p></article>")
        near = dedup.check_page("https://c.test/edited", body=edited, include_text=True)
        assert near.verdict == "near_duplicate", near
        assert near.of == "https://a.test/1"
        assert 0 < near.similarity < 1 and near.containment > 0.9 and near.distance <= 3
        assert "One more line" in near.text and near.title == "Story 1"
        assert near.to_dict()["verdict"] == "near_duplicate"
        other = dedup.check_page("https://a.test/2", text=crawldedup.extract(article(2)).text)
        assert other.verdict == "unique"
        empty = dedup.check_page("https://a.test/empty", body=b"<html><body></body></html>")
        assert empty.verdict == "no_text"
        stats = dedup.stats()
        assert (stats["pages_unique"], stats["pages_exact_duplicate"],
                stats["pages_near_duplicate"], stats["pages_no_text"]) == (2, 1, 1, 1)


def test_extract_simhash_and_canonicalize():
    page = crawldedup.extract(article(3).encode(), url="https://a.test/x/y")
    assert page.title == "Story 3"
    assert "Contact us" not in page.text and "Home" not in page.text
    assert page.links == ["https://a.test/"]
    assert crawldedup.simhash(page.text) == crawldedup.Dedup().simhash(page.text)
    assert crawldedup.canonicalize("HTTP://A.test:80/x/../y?utm_medium=m") == "http://a.test/y"
    with pytest.raises(ValueError, match="not a URL|relative URL"):
        crawldedup.canonicalize("not a url")


def test_of_threads_checking_one_page_at_once_exactly_one_gets_unique():
    threads = 8
    rounds = 40
    with crawldedup.Dedup(durability="checkpoint") as dedup:
        barrier = threading.Barrier(threads)
        answers = [[None] * threads for _ in range(rounds)]

        def work(t):
            for r in range(rounds):
                body = article(1000 + r)
                barrier.wait()
                url_verdict = dedup.check_url(f"https://race.test/{r}")
                page_verdict = dedup.check_page(f"https://race.test/{r}/{t}", body=body)
                answers[r][t] = (url_verdict.verdict, page_verdict.verdict)

        workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        for r in range(rounds):
            urls = [a[0] for a in answers[r]]
            pages = [a[1] for a in answers[r]]
            assert urls.count("new") == 1 and urls.count("seen") == threads - 1, urls
            assert pages.count("unique") == 1, pages
            # The copies are duplicates of it: exact, or near once the host's template (what
            # its pages repeat) is dropped from the later ones.
            assert all(p in ("unique", "exact_duplicate", "near_duplicate") for p in pages), pages


def test_an_answer_is_durable_before_it_is_returned(tmp_path):
    state = tmp_path / "state"
    child = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys, time, crawldedup
            sys.path.insert(0, {os.path.dirname(__file__)!r})
            from test_stage import article
            dedup = crawldedup.Dedup({str(state)!r})
            assert dedup.check_url("https://kill.test/a").verdict == "new"
            assert dedup.check_page("https://kill.test/a", body=article(7)).verdict == "unique"
            fast = crawldedup.Dedup({str(tmp_path / "fast")!r}, durability="checkpoint")
            assert fast.check_url("https://kill.test/durable", durable=True).verdict == "new"
            assert fast.check_page("https://kill.test/d", body=article(6), durable=True).is_unique
            print("answered", flush=True)
            time.sleep(600)
        """)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "answered"
    child.send_signal(signal.SIGKILL)
    child.wait()
    with crawldedup.Dedup(state) as dedup:
        assert dedup.check_url("https://kill.test/a").verdict == "seen"
        again = dedup.check_page("https://kill.test/copy", body=article(7))
        assert again.verdict == "exact_duplicate" and again.of == "https://kill.test/a"
    # durable=True on a stage that otherwise waits for checkpoints.
    with crawldedup.Dedup(tmp_path / "fast") as fast:
        assert fast.check_url("https://kill.test/durable").verdict == "seen"
        assert fast.check_page("https://kill.test/copy", body=article(6)).is_duplicate


def test_a_state_directory_resumes_after_close(tmp_path):
    with crawldedup.Dedup(tmp_path / "state", durability="checkpoint") as dedup:
        dedup.check_url("https://resume.test/")
        dedup.check_page("https://resume.test/", body=article(8))
        report = dedup.close()
        assert report["documents"] == 1
        assert dedup.closed and dedup.close() is None
        with pytest.raises(crawldedup.ClosedError, match="closed"):
            dedup.check_url("https://resume.test/")
    with crawldedup.Dedup(tmp_path / "state") as dedup:
        assert dedup.check_url("https://resume.test/").verdict == "seen"
        assert dedup.check_page("https://x.test/", body=article(8)).is_duplicate


def test_settings_and_config_are_checked_in_one_line(tmp_path):
    with pytest.raises(crawldedup.ConfigError) as e:
        crawldedup.Dedup(settings={"url_filter.expected_url": 10})
    assert "unknown field `expected_url`" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(crawldedup.ConfigError, match="strictly between 0 and 1"):
        crawldedup.Dedup(settings={"url_filter.false_positive_rate": 1.5})
    with pytest.raises(crawldedup.ConfigError, match="durability"):
        crawldedup.Dedup(durability="sometimes")
    config = tmp_path / "crawler.toml"
    config.write_text("[dedup]\nmax_distance = 99\n")
    with pytest.raises(crawldedup.ConfigError, match="max_distance"):
        crawldedup.Dedup(config=config)
    with crawldedup.Dedup(settings={"url_filter.expected_urls": 1000,
                                    "url_filter.strip_params": ["ref", "utm_*"],
                                    "dedup.max_distance": 2}) as dedup:
        assert dedup.check_url("https://a.test/?ref=x&k=1").canonical == "https://a.test/?k=1"
    assert issubclass(crawldedup.ConfigError, crawldedup.Error)
    assert issubclass(crawldedup.StateError, crawldedup.Error)


def test_bad_input_is_an_exception_or_a_verdict_never_a_crash(tmp_path):
    with crawldedup.Dedup() as dedup:
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64
        assert dedup.check_page("https://a.test/img", body=png).verdict == "no_text"
        assert dedup.check_page("https://a.test/bin", body=png, content_type="text/html").verdict \
            == "no_text"
        latin1 = "<html><body><p>%s</p></body></html>" % ("Caf\xe9 cr\xe8me " * 200)
        verdict = dedup.check_page("https://a.test/l1", body=latin1.encode("latin-1"),
                                   content_type="text/html; charset=iso-8859-1", include_text=True)
        assert "Café crème" in verdict.text
        big = b"<html><body><p>" + b"word " * 2_000_000 + b"</p></body></html>"
        assert dedup.check_page("https://a.test/big", body=big).verdict in ("unique", "no_text")
        assert dedup.check_page("::not a url::", body=article(9)).verdict == "unique"
        with pytest.raises(TypeError, match="bytes or str"):
            dedup.check_page("https://a.test/", body=12)
        with pytest.raises(TypeError, match="exactly one"):
            dedup.check_page("https://a.test/", body=b"x", text="x")
        with pytest.raises(TypeError, match="exactly one"):
            dedup.check_page("https://a.test/")
        with pytest.raises(ValueError, match="url"):
            dedup.extract(b"<p>x</p>", url="no scheme")
        assert crawldedup.extract(b"\xff\xfe\x00garbage\x00" * 100).text is not None


def test_a_damaged_or_locked_state_directory_is_one_clear_error(tmp_path):
    state = tmp_path / "state"
    dedup = crawldedup.Dedup(state)
    with pytest.raises(crawldedup.StateError) as locked:
        crawldedup.Dedup(state)
    assert "\n" not in str(locked.value) and str(state) in str(locked.value)
    dedup.check_page("https://a.test/", body=article(10))
    dedup.close()
    ledger = state / "state-ledger"
    assert ledger.exists()
    ledger.write_bytes(b"garbage" * 10)
    with pytest.raises(crawldedup.StateError) as damaged:
        crawldedup.Dedup(state)
    assert "\n" not in str(damaged.value) and "ledger" in str(damaged.value)
