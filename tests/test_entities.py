"""Entity extraction finds what a conversation refers to, in technical chat and in ordinary talk."""

from __future__ import annotations

import pytest

from engine.entities.extractor import EntityKind, extract_entities

K = EntityKind


def found(text: str) -> set[tuple[EntityKind, str]]:
    return {(m.kind, m.label) for m in extract_entities(text)}


@pytest.mark.parametrize(
    ("text", "kind", "label"),
    [
        # PATH
        ("Look at src/auth.py:42 please", K.PATH, "src/auth.py:42"),  # the line number stays in the label
        ("edit ./x.toml first", K.PATH, "./x.toml"),
        ("cat /etc/hosts", K.PATH, "/etc/hosts"),
        (r"open C:\Users\me\file.txt now", K.PATH, r"C:\Users\me\file.txt"),
        ("in ~/projects/app and ../lib/util.js.", K.PATH, "../lib/util.js"),  # sentence full stop dropped
        ("the package.json and README.md", K.PATH, "README.md"),  # a bare file name with a known extension
        ("copy .env and .gitignore", K.PATH, ".gitignore"),  # a dotfile
        ("The Dockerfile is wrong", K.PATH, "Dockerfile"),  # a well-known extension-less file
        ("under src/components", K.PATH, "src/components"),  # a usual top-level directory
        # ERROR
        ("I get JWTError when I log in", K.ERROR, "JWTError"),
        ("raise ValueError(msg)", K.ERROR, "ValueError"),
        ("got ECONNREFUSED from the db", K.ERROR, "ECONNREFUSED"),
        ("Segmentation fault (core dumped)", K.ERROR, "Segmentation fault"),
        ("it says permission denied", K.ERROR, "permission denied"),
        ("the API gave HTTP 404 again", K.ERROR, "HTTP 404"),
        ("then 500 Internal Server Error", K.ERROR, "500 Internal Server Error"),
        ("Error: connection refused. Then I retried.", K.ERROR, "connection refused"),  # up to its end
        ("ValueError: invalid literal for int()", K.ERROR, "invalid literal for int()"),
        ("fatal: not a git repository", K.ERROR, "not a git repository"),
        # SYMBOL
        ("calling verify_token() fails", K.SYMBOL, "verify_token()"),
        ("obj.method() returns None", K.SYMBOL, "obj.method()"),
        ("see AuthService.verify for details", K.SYMBOL, "AuthService.verify"),
        ("the TokenCounter class", K.SYMBOL, "TokenCounter"),  # CamelCase with two humps
        ("an HTTPServer instance", K.SYMBOL, "HTTPServer"),
        ("call getUserName here", K.SYMBOL, "getUserName"),  # lowerCamelCase
        ("`def parse_args(argv):`", K.SYMBOL, "parse_args"),
        ("```python\nclass Foo:\n    pass\n```", K.SYMBOL, "Foo"),  # a definition inside code
        ("compute(x, y) is slow", K.SYMBOL, "compute"),  # a call with arguments: the name
        # IDENTIFIER
        ("set `max_retries` higher", K.IDENTIFIER, "max_retries"),
        ("the verify_token helper", K.IDENTIFIER, "verify_token"),  # snake_case needs no backticks
        ("rename `foo` to `bar`", K.IDENTIFIER, "foo"),
        ("```python\nx = self.cache_size\n```", K.IDENTIFIER, "self.cache_size"),
        # CONFIG_KEY
        ("raise timeouts.read to 60", K.CONFIG_KEY, "timeouts.read"),
        ("set max_retries = 3 in the file", K.CONFIG_KEY, "max_retries"),
        ('{"api_key": "x", "timeout": 30}', K.CONFIG_KEY, "timeout"),
        ("```toml\n[tool.ruff]\nline-length = 110\n```", K.CONFIG_KEY, "tool.ruff"),
        ("```toml\n[tool.ruff]\nline-length = 110\n```", K.CONFIG_KEY, "line-length"),
        ("```yaml\nserver:\n  port: 8080\n```", K.CONFIG_KEY, "port"),
        ("use --retries=3 or timeout=30s", K.CONFIG_KEY, "timeout"),
        # ENV_VAR
        ("export OPENAI_API_KEY first", K.ENV_VAR, "OPENAI_API_KEY"),
        ("cd $HOME", K.ENV_VAR, "$HOME"),
        ("echo ${PATH}", K.ENV_VAR, "${PATH}"),
        ("%APPDATA% on Windows", K.ENV_VAR, "APPDATA"),
        ('os.environ["DATABASE_URL"]', K.ENV_VAR, "DATABASE_URL"),
        ("run PORT=8080 python app.py", K.ENV_VAR, "PORT"),
        # URL
        ("docs at https://example.com/docs.", K.URL, "https://example.com/docs"),  # full stop dropped
        ("(see http://localhost:8000/api?x=1)", K.URL, "http://localhost:8000/api?x=1"),  # bracket dropped
        ("the wiki https://w.org/wiki/Foo_(bar) says", K.URL, "https://w.org/wiki/Foo_(bar)"),  # bracket kept
        ("go to www.python.org, then", K.URL, "www.python.org"),
        # COMMAND
        ("$ docker compose up -d", K.COMMAND, "docker compose up -d"),
        ("Run `pip install -r requirements.txt` now", K.COMMAND, "pip install -r requirements.txt"),
        ("```bash\nkubectl get pods -n prod\n```", K.COMMAND, "kubectl get pods -n prod"),
        ("```\n$ cargo build --release\n```", K.COMMAND, "cargo build --release"),
        # QUANTITY
        ("it took 20 minutes", K.QUANTITY, "20 minutes"),
        ("uses 3.5 GB of RAM", K.QUANTITY, "3.5 GB"),
        ("a 128k tokens window", K.QUANTITY, "128k tokens"),
        ("CPU at 42% today", K.QUANTITY, "42%"),
        ("it costs $30 a month", K.QUANTITY, "$30"),
        ("we walked 5 km", K.QUANTITY, "5 km"),
        ("now 10x faster", K.QUANTITY, "10x"),
        ("I ran two miles", K.QUANTITY, "two miles"),  # a number word
        ("a timeout of 30s", K.QUANTITY, "30s"),
        # DATE
        ("on 7 May 2023 we met", K.DATE, "7 May 2023"),
        ("and again on May 8, 2023.", K.DATE, "May 8, 2023"),
        ("deployed 2023-05-08 at noon", K.DATE, "2023-05-08"),
        ("due 5/8/2023", K.DATE, "5/8/2023"),
        ("I went last Tuesday", K.DATE, "last Tuesday"),
        ("Yesterday was rough", K.DATE, "Yesterday"),
        ("three weeks ago we left", K.DATE, "three weeks ago"),
        ("see you on Monday", K.DATE, "Monday"),  # a weekday with a preposition
        ("I started painting in 2022", K.DATE, "2022"),  # a year after "in"
        ("we moved in June", K.DATE, "June"),
        ("since last year", K.DATE, "last year"),
        # NAME
        ("I talked to Caroline today", K.NAME, "Caroline"),
        ("Caroline went home", K.NAME, "Caroline"),  # sentence-initial but no common word
        ("the LGBTQ support group", K.NAME, "LGBTQ"),
        ("we flew to New York", K.NAME, "New York"),
        ("ordered on Door Dash", K.NAME, "Door Dash"),
        ("Caroline's mom called", K.NAME, "Caroline"),  # the possessive is not part of the name
        ("Thanks Mel!", K.NAME, "Mel"),  # the greeting is not
        ("I love Charlotte's Web so much", K.NAME, "Charlotte's Web"),
        ("at the University of Michigan", K.NAME, "University of Michigan"),
        ("with Jean-Luc O'Brien", K.NAME, "Jean-Luc O'Brien"),
        ("Hope you're well. I told Hope about it.", K.NAME, "Hope"),  # a common word, also mid-sentence
        ("I use Python and React", K.NAME, "React"),
        ("Great Britain is lovely", K.NAME, "Great Britain"),  # an adjective can open a name
        ("Then Hope Adoption Center called", K.NAME, "Hope Adoption Center"),
        ("Anyway New York was fun", K.NAME, "New York"),  # an adverb opening the sentence is not in it
        ("Happy Birthday Caroline!", K.NAME, "Caroline"),
        ("The Museum of Modern Art", K.NAME, "Museum of Modern Art"),
        ("we saw Van Gogh", K.NAME, "Van Gogh"),
        # TITLE
        ("I read “Becoming Nicole” last month", K.TITLE, "Becoming Nicole"),
        ('I loved "The Hobbit" as a kid', K.TITLE, "The Hobbit"),
        ("read 'Oh, the Places You'll Go' again", K.TITLE, "Oh, the Places You'll Go"),
        ('my kids like "Charlotte\'s Web"', K.TITLE, "Charlotte's Web"),
    ],
)
def test_finds(text: str, kind: EntityKind, label: str) -> None:
    assert (kind, label) in found(text)


@pytest.mark.parametrize(
    ("text", "kind", "label"),
    [
        # Sentence-initial common words, greetings and function words are not names.
        ("When did you go?", K.NAME, "When"),
        ("That is great", K.NAME, "That"),
        ("Wow, amazing!", K.NAME, "Wow"),
        ("Thanks for that", K.NAME, "Thanks"),
        ("Hey there", K.NAME, "Hey"),
        ("I think so", K.NAME, "I"),
        ("The end", K.NAME, "The"),
        ("Hope you're well", K.NAME, "Hope"),  # no evidence that Hope is a person
        ("Painting is calming", K.NAME, "Painting"),  # a gerund opening a sentence
        ("A B C", K.NAME, "A"),  # single letters
        ("Refactor the module, then refactor the tests", K.NAME, "Refactor"),  # written lower-case nearby
        ("Happy Birthday Caroline!", K.NAME, "Happy Birthday Caroline"),
        ("Good Morning everyone", K.NAME, "Good"),
        ("npm ERR! code E0308", K.NAME, "E0308"),
        ("on Monday", K.NAME, "Monday"),  # weekdays and months are dates
        ("in May", K.NAME, "May"),
        # Overlaps go to the higher precedence.
        ("https://example.com/a/b.py", K.PATH, "example.com/a/b.py"),  # a URL is not also a path
        ("https://example.com/a/b.py", K.PATH, "b.py"),
        ("see src/New York.py", K.NAME, "New"),  # a path is not also a name
        ("JWTError again", K.NAME, "JWTError"),  # an error is not also a name
        ("JWTError again", K.SYMBOL, "JWTError"),
        ("read “Becoming Nicole”", K.NAME, "Nicole"),  # a title is not also a name
        ("OPENAI_API_KEY=sk", K.CONFIG_KEY, "OPENAI_API_KEY"),
        # Not paths.
        ("and/or he/him km/h", K.PATH, "and/or"),
        ("he/him/his pronouns", K.PATH, "he/him/his"),
        ("24/7 and 1/2 cup", K.PATH, "24/7"),
        ("e.g. this", K.CONFIG_KEY, "e.g"),  # abbreviations are not dotted keys
        ("visit google.com", K.CONFIG_KEY, "google.com"),  # nor are domain names
        # Not symbols.
        ("the file(s) are here", K.SYMBOL, "file"),  # a plural, not a call
        ("if (x) return", K.SYMBOL, "if"),
        ("I bought an iPhone on YouTube", K.SYMBOL, "YouTube"),  # brands are not code
        ("Dr McDonald said", K.SYMBOL, "McDonald"),
        ("the PhD thesis", K.SYMBOL, "PhD"),
        # Not dates or quantities.
        ("you may go", K.DATE, "may"),
        ("May I come?", K.DATE, "May"),  # "May" needs a preposition or a day
        ("Python 3.11 and v1.2.3", K.QUANTITY, "3.11"),  # versions have no unit
        ("in 2000 ms", K.DATE, "2000"),  # a number with a unit is no year
        # Not titles: speech, code, plain words.
        ('she said "thanks so much for the help"', K.TITLE, "thanks so much for the help"),
        ('he said "Thanks"', K.TITLE, "Thanks"),
        ('`x = "Hello World"`', K.TITLE, "Hello World"),
        # Not config keys.
        ("Note: the build is slow", K.CONFIG_KEY, "Note"),
        ("```python\nresult = compute()\n```", K.CONFIG_KEY, "result"),  # a variable, not a key
        # Not commands.
        ("I will make it", K.COMMAND, "make it"),  # a program's name in prose is just a word
    ],
)
def test_does_not_find(text: str, kind: EntityKind, label: str) -> None:
    assert (kind, label) not in found(text)


def test_refs_are_stable_across_spellings() -> None:
    first = {m.label: m.ref for m in extract_entities("src/auth.py:42 then src/auth.py")}
    assert first == {"src/auth.py:42": "path:src/auth.py"}  # one mention per ref, the first label
    assert extract_entities("auth.py")[0].ref == extract_entities("see AUTH.PY:7")[0].ref
    assert extract_entities("$PATH")[0].ref == extract_entities("${PATH}")[0].ref == "env_var:path"
    assert extract_entities("./x.toml")[0].ref == extract_entities("x.toml")[0].ref == "path:x.toml"
    assert extract_entities("I met Caroline")[0].ref == extract_entities("CAROLINE")[0].ref == "name:caroline"
    assert extract_entities("HTTP 404")[0].ref == extract_entities("404 Not Found")[0].ref == "error:http 404"
    assert extract_entities("verify()")[0].ref == extract_entities("verify(token)")[0].ref == "symbol:verify"
    assert extract_entities("flew to New\tYork")[0].ref == "name:new york"  # whitespace collapsed


def test_mentions_come_in_order_of_first_appearance() -> None:
    text = "Caroline sent src/a.py to Mel at https://x.org on Monday, then Caroline left."
    labels = [m.label for m in extract_entities(text)]
    assert labels == ["Caroline", "src/a.py", "Mel", "https://x.org", "Monday"]


def test_containers_hold_other_entities() -> None:
    """A command, an error message or a title may contain higher-precedence entities whole."""
    mentions = found("$ curl https://api.example.com/v1 -o out.json")
    assert (K.COMMAND, "curl https://api.example.com/v1 -o out.json") in mentions
    assert (K.URL, "https://api.example.com/v1") in mentions
    assert (K.PATH, "out.json") in mentions
    mentions = found("Error: cannot open src/a.py in load_config()")
    assert (K.ERROR, "cannot open src/a.py in load_config()") in mentions
    assert (K.PATH, "src/a.py") in mentions
    assert (K.SYMBOL, "load_config()") in mentions


def test_technical_chat() -> None:
    text = (
        "I get `JWTError: Signature has expired` in src/auth.py:42 when `verify_token()` runs. "
        "I set OPENAI_API_KEY and timeouts.read = 30 per https://docs.example.com/auth."
    )
    assert found(text) >= {
        (K.ERROR, "JWTError"),
        (K.ERROR, "Signature has expired"),
        (K.PATH, "src/auth.py:42"),
        (K.SYMBOL, "verify_token()"),
        (K.ENV_VAR, "OPENAI_API_KEY"),
        (K.CONFIG_KEY, "timeouts.read"),
        (K.URL, "https://docs.example.com/auth"),
    }
    assert not {m for m in extract_entities(text) if m.kind is K.NAME}


def test_ordinary_conversation() -> None:
    text = (
        "Caroline: Hey Mel! I went to the LGBTQ support group yesterday and it was so powerful.\n"
        "Melanie: Wow, that's awesome! I read “Becoming Nicole” last week, it took me 3 days. "
        "We're going to New York on 7 May 2023."
    )
    assert found(text) == {
        (K.NAME, "Caroline"),
        (K.NAME, "Mel"),
        (K.NAME, "LGBTQ"),
        (K.DATE, "yesterday"),
        (K.NAME, "Melanie"),
        (K.TITLE, "Becoming Nicole"),
        (K.DATE, "last week"),
        (K.QUANTITY, "3 days"),
        (K.NAME, "New York"),
        (K.DATE, "7 May 2023"),
    }


def _possessive_or_atomic(pattern: str) -> bool:
    """Whether a regex source holds a possessive repeat (``x*+``, ``x{1,9}+``) or an atomic group."""
    i, previous = 0, ""
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i, previous = i + 2, "x"
            continue
        if c == "[":  # a class: skip to its closing bracket (a first "]" or "^]" is a member)
            i += 2 if pattern[i + 1 : i + 2] == "^" else 1
            i += 1 if pattern[i : i + 1] == "]" else 0
            while pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i, previous = i + 1, "x"
            continue
        if pattern.startswith("(?>", i) or (c == "+" and previous in ("*", "+", "?", "}")):
            return True
        previous = "(" if c == "(" else c if c in "*+?}" and previous != "(" else "x"
        i += 1
    return False


def test_no_pattern_in_the_engine_depends_on_the_python_patch_release() -> None:
    """Possessive repeats and atomic groups match differently on early 3.11 releases (Debian's 3.11.2
    missed "'Oh, the Places You'll Go'"), and README promises any 3.11: the engine uses neither."""
    import importlib
    import pkgutil
    import re

    import engine

    assert _possessive_or_atomic(r"(?:a|b){1,120}+") and _possessive_or_atomic(r"(?>ab)c")
    assert not _possessive_or_atomic(r"[+*]+[}+]{1,2}(?:a+)?\++x")
    offending = []
    for info in pkgutil.walk_packages(engine.__path__, "engine."):
        for name, value in vars(importlib.import_module(info.name)).items():
            values = [*value.values()] if isinstance(value, dict) else value
            values = values if isinstance(values, list) else [values]
            patterns = [v.pattern for v in values if isinstance(v, re.Pattern) and isinstance(v.pattern, str)]
            offending += [f"{info.name}.{name}" for p in patterns if _possessive_or_atomic(p)]
    assert offending == []
