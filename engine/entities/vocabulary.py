"""Word tables and regex helpers for :mod:`engine.entities.extractor`: general English and software
vocabulary.

Kept apart so the extractor reads as logic. Nothing here is tuned to any particular conversation
or dataset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engine.text.terms import STOPWORDS


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _alt(words: Iterable[str]) -> str:
    """A regex alternation of ``words``, longest first so no word shadows a longer one."""
    return "|".join(re.escape(word) for word in sorted(set(words), key=lambda w: (-len(w), w)))


def _trie(words: Iterable[str]) -> str:
    """A regex matching any of ``words``, factored by shared prefixes.

    The regex engine tries alternatives one by one; factoring lets a failed first letter rule out a
    whole group at once, so a search for hundreds of phrases costs about as much as for ten.
    """
    groups: dict[str, list[str]] = {}
    for word in set(words):
        groups.setdefault(word[:1], []).append(word[1:])
    parts = [re.escape(head) + _trie(tails) for head, tails in sorted(groups.items()) if head]
    if not parts:
        return ""
    body = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
    return f"(?:{body})?" if "" in groups else body


# --- Word tables: general English and software vocabulary, not tuned to any corpus. ---------------------
_EXTS = _set("""py pyi pyx ipynb js mjs cjs ts tsx jsx json jsonl toml yaml yml ini cfg conf env md rst
txt csv tsv html htm css scss sass less xml svg sh bash zsh fish ps1 bat c h cc cpp cxx hpp rs go java kt
kts scala rb php swift cs sql lua pl dart ex exs erl hs clj el vim nix tf hcl proto graphql lock log gradle
cmake mk patch diff pem crt pdf png jpg jpeg gif webp ico mp3 mp4 wav zip gz tgz tar bz2 xz whl jar dll
dylib exe db sqlite sqlite3 parquet pkl onnx wasm tex bib j2 jinja tmpl vue svelte astro service timer
socket""")
_NAMED_FILES = _set("""Dockerfile Containerfile Makefile GNUmakefile Gemfile Rakefile Procfile Vagrantfile
Jenkinsfile Justfile Brewfile Pipfile Snakefile""")
_ROOT_DIRS = _set("etc usr var tmp opt home bin sbin lib dev proc sys srv mnt root boot run Users Volumes")
_DIRS = _set("""src lib libs test tests spec docs doc app apps bin scripts config configs include pkg cmd
internal node_modules dist build public static assets components utils tools examples packages vendor
migrations templates .github .venv venv site-packages""")
_TLDS = _set("com org net edu gov co uk de fr jp cn ru ai io eu info biz tv ly xyz ca au nl")
_PROGRAMS = _set("""git pip pip3 pipx python python3 uv uvx poetry conda mamba npm npx yarn pnpm node deno
bun docker docker-compose podman kubectl helm terraform cargo rustc rustup go make cmake gcc g++ clang curl
wget ls cd cat echo grep rg find sed awk cp mv rm mkdir touch chmod chown sudo apt apt-get brew dnf yum
pacman ssh scp rsync tar unzip export source systemctl journalctl ps kill df du which pytest ruff mypy
black tox nox java javac mvn gradle dotnet ruby gem bundle rails php composer psql mysql sqlite3 redis-cli
aws gcloud az heroku vercel ollama vim nano tmux openssl ping dig tail head less xargs env alembic uvicorn
gunicorn flask jupyter pre-commit gh hatch pdm twine""")
_KEYWORDS = _set("""and as assert async await break case catch class const continue def default del delete
do elif else enum except export extends false final finally fn for from func function global if impl
import in interface is lambda let match mod mut new nil none nonlocal not null or package pass pub raise
return self static struct super switch this throw true try type typeof undefined use var void while with
yield int str float bool dict list tuple set print len range echo fi then done esac local""")
_NOT_IDENTIFIERS = _KEYWORDS | STOPWORDS
_CONTROL = _KEYWORDS  # syntax ("if (", "while(") and builtins ("print(x)", "len(a)"): nobody's own function
_ERRNOS = _set("""ECONNREFUSED ECONNRESET ECONNABORTED ENOENT EACCES EPERM EADDRINUSE EADDRNOTAVAIL EPIPE
ETIMEDOUT EHOSTUNREACH ENETUNREACH ENOTFOUND EEXIST ENOTDIR EISDIR ENOSPC EMFILE ENFILE EAGAIN EINVAL
ENOMEM EBADF EBUSY EROFS ELOOP ENAMETOOLONG ENOTEMPTY EINTR EIO EDEADLK ENOEXEC ETXTBSY EPROTO ENOTCONN""")
_ERROR_PHRASE_TEXT = """segmentation fault|segfault|core dumped|permission denied|connection refused|
connection reset by peer|connection reset|out of memory|no such file or directory|command not found|
access denied|deadlock detected|stack smashing detected|bus error|killed by signal"""
_ERROR_PHRASES = [" ".join(phrase.split()) for phrase in _ERROR_PHRASE_TEXT.split("|")]
_HTTP_REASONS = """Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|
Conflict|Gone|Request Timeout|Unprocessable Entity|Too Many Requests|Internal Server Error|Not Implemented|
Bad Gateway|Service Unavailable|Gateway Timeout""".replace("\n", "")
_WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday"
_MONTHS = "January February March April May June July August September October November December"
_MONTH_ABBR = "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
_WEEKDAY_ABBR = "Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun"
_MONTH_NAMES = _set(_MONTHS.casefold())
_REL_UNITS = "week weekend month year night morning afternoon evening summer winter spring fall autumn"
_NUMBER_WORDS = (
    "two three four five six seven eight nine ten eleven twelve fifteen twenty thirty fifty hundred"
)
_UNITS = _set("""ms msec millisecond milliseconds sec secs second seconds min mins minute minutes hr hrs
hour hours day days week weeks month months year years yr yrs decade decades ns microseconds nanoseconds
kb mb gb tb pb kib mib gib tib kbps mbps gbps byte bytes bit bits token tokens word words line lines char
chars character characters page pages request requests req/s rps qps call calls thread threads core cores
cpu cpus gpu gpus row rows step steps epoch epochs km kilometer kilometers kilometre kilometres mile miles
mi meter meters metre metres m/s feet foot ft inches cm mm kg kilogram kilograms gram grams lb lbs pound
pounds ounce ounces oz liter liters litre litres ml mph kph km/h degree degrees °c °f calorie calories kcal
dollar dollars buck bucks euro euros cent cents usd eur gbp hz khz mhz ghz fps dpi px pt rem kw kwh mah
percent""")
# Never a one-word name, and a capitalised run is split around them ("Thanks Caroline" -> Caroline).
_NEVER = _set(
    f"""i i'm hey hi hello hiya yo thanks thank thx ty wow oh ooh ah aw aww yeah yea yes yep yup
no nope nah ok okay lol lmao haha hahaha hehe omg btw fyi imo imho tbh asap ps todo fixme note nb dear sorry
please pls cheers congrats congratulations bye goodbye goodnight welcome hmm um umm uh er yay ugh oops whoa
wtf mr mrs ms dr prof sir error err warning warn info debug fatal morning afternoon evening night birthday
luck weekend tv pc diy faq eta etc vs {_WEEKDAYS} {_MONTHS}""".casefold()
)
# Words that start sentences in chat: a name only if also capitalised mid-sentence in the same text.
_COMMON = _set("""actually add agreed alright amazing anyway anyways apparently awesome basically beautiful
best besides birthday check cool currently definitely done even eventually everyone everybody everything
exactly excellent excited fantastic feel feeling finally fine first fix fixed found fortunately funny get
getting glad go going good got great guess happy hard honestly hope hopefully imagine indeed instead
interesting keep kind know last lastly later lately like look looking looks love loved lovely luckily made
make maybe meanwhile met morning never next nice night nobody nothing perfect perhaps plus pretty probably
proud quick quite rather really recently remember right run said same saw say says see seems seriously
similarly someone something sometimes soon sounds speaking started still super sure surely take talking
tell think thought told took totally true try trying unfortunately update usage use using usually wait
want wanted went wish wonderful question answer example result output input summary overview background
context problem solution issue idea plan goal reason tip hint install setup options notes steps step edit
set call open close start stop read write change move rename replace remove delete create test build
deploy restart enable disable turn return traceback file files line lines path paths failed unable invalid
missing unknown unexpected received sent loaded connected retrying skipped done tried felt needed decided
realized noticed finished learned visited spent bought watched played asked talked worked moved long short
big small little old many much another other own back""")
# Shapes of words that open sentences capitalised: gerunds and participles ("Painting", "Attached"),
# adverbs ("Absolutely"), verbs ("Prioritize", "Identify") and abstract nouns ("Consistency").
_COMMON_SUFFIXES = (
    *("ing", "ed", "ly", "ize", "ise", "yze", "ify", "tion", "sion", "ions", "ment", "ments", "ness"),
    *("ity", "ities", "ency", "encies"),
)
# Verbs that open instructions and requests ("Echo it back", "Continue from there", "Compare the two"),
# including the app's own command words, and nouns and adjectives that open statements about a system
# or a day ("Startup is slow", "Memory is 2 GB", "Separate question").
_IMPERATIVES = _set("""accept access adapt adjust aim allocate allow analyse analyze append apply approach
archive arrange ask assess assign assume attach attempt avoid backup balance batch begin believe boost
break bring browse calculate cancel capture catch celebrate challenge choose clarify clean clear climb
collect combine comment commit communicate compare compile complete compute configure confirm connect
consider contact continue convert copy count cover crop cut dance debug decide declare decrease dedicate
define delegate describe design detect determine develop discuss display divide document double download
drag draw drink drive drop echo eliminate embrace encourage engage ensure enter establish estimate
evaluate examine exercise expand expect explain explore export extend fetch fill filter find follow
forget form format gather generate give grab grow handle help hide hold identify ignore implement import
improve include increase incorporate inspect insert install integrate introduce invest invite join jump
keep label launch learn leave leverage limit link list listen load log lower maintain manage map mark
measure meet merge migrate mind minimize mix modify monitor motivate mount name narrow navigate note
notice observe obtain offer omit organize organise outline pack paint parse participate paste pause pay
pick pin place plan play point practice practise prepare press prevent print prioritize proceed process
promote protect provide prune publish pull push put raise reach recall record reduce refer refresh
register reject relax release reload remind render repeat replace reply report request require reset
resolve respect rest restore resume retry reuse review rewrite save scale schedule scroll search select
send separate serve share shift show sign simplify skip sleep slow sort speak specify split stack stage
start stay stick store stretch structure study submit suggest summarize summarise supply support swap
switch sync target teach tell test thank track train transfer translate travel treat trim trust tune
type uncomment undo unpin upgrade upload utilize validate verify view visit walk warm watch wrap yield
zoom focus reflect enjoy imagine wonder startup shutdown memory storage performance latency speed security
network database server client backend frontend cache logging logs testing docs documentation config
configuration dependency
dependencies environment version versions today tonight tomorrow yesterday everything anything nothing
something anyone nowhere somewhere thing things stuff people folks guys man dude wanna gonna gotta
woah whoa wow sounds congrats absolutely certainly definitely therefore however although though
given based depending regarding overall generally typically ideally alternatively additionally
finally simple simply essential necessary important optional visual rich complete beneficial well
talk tips success point points lost took gave came felt left held ran began brought taught caught
meant paid sold won wrote heard knew grew drew threw flew drove rode ate fell forgot chose broke spoke
woke wore hid hit hurt shut sat stood understood slept swam sang drank""")
_SENTENCE_WORDS = STOPWORDS | _COMMON | _IMPERATIVES
_SENTENCE_WORDS |= _set(f"one {_NUMBER_WORDS} first second third")
# Adjectives lead names ("Great Britain", "Long Island", "Last of Us"): they open a sentence without
# being dropped from the capitalised run they open.
_ADJECTIVES = _set("""great good happy long short big small little old best nice cool beautiful lovely perfect
quick super true wonderful amazing awesome fantastic excellent glad proud funny hard pretty fine right same
last next first kind""")
_OPENERS = _SENTENCE_WORDS - _ADJECTIVES
_ADVERBS = _set("anyway anyways maybe perhaps meanwhile besides instead otherwise plus still")
_ARTICLES = _set("a an the my our your his her their its this that these those")
_BRANDS = _set("""YouTube iPhone iPad iPod iMac macOS iOS PayPal LinkedIn PlayStation WhatsApp TikTok
FaceTime PowerPoint GitHub GitLab DoorDash WordPress SoundCloud OpenAI eBay McDonald McDonalds DeepMind
HuggingFace JavaScript TypeScript PostgreSQL MySQL MongoDB BitBucket DevOps FedEx AirPods MacBook""")
_PROG_LANGS = _set("""python py python3 js javascript ts typescript jsx tsx rust rs go golang java kotlin kt
c cpp c++ cc h hpp cs csharp swift ruby rb php scala lua perl pl r dart elixir ex haskell hs ocaml ml
clojure sql html css scss xml vue svelte""")
_SHELL_LANGS = _set("sh bash shell console zsh fish powershell ps1 pwsh cmd bat terminal shellsession")
_TITLE_SMALL = _set("a an the and or but nor of in on at to for by with from as vs via into onto per de la")
_ERROR_SUFFIXES = ("error", "exception", "warning", "fault", "failure", "panic", "interrupt", "exit", "fatal")
_MESSAGE_HEADS = _set("Error ERROR error Exception FATAL Fatal fatal panic")
# Lower-case keywords found in one pass, each mapped to the check that confirms it.
_KEYWORD_KIND = dict.fromkeys(_ERROR_PHRASES, "error") | dict.fromkeys(_NUMBER_WORDS.split(), "number")
_KEYWORD_KIND |= dict.fromkeys(_set("yesterday today tomorrow tonight"), "date")
_KEYWORD_KIND |= {
    f"{when} {unit}": "date"
    for when in ("last", "next", "this", "coming", "past")
    for unit in f"{_REL_UNITS} {_WEEKDAYS} {_WEEKDAY_ABBR} {_MONTHS}".casefold().split()
}
_KEYWORD_KIND |= dict.fromkeys(
    [*_set(f"{_WEEKDAYS} {_WEEKDAY_ABBR}".casefold()), *(d + "s" for d in _set(_WEEKDAYS.casefold()))],
    "weekday",
)
_KEYWORD_KIND |= dict.fromkeys(_set(f"{_MONTHS} {_MONTH_ABBR}".casefold()), "month")
_KEYWORD_KIND |= dict.fromkeys(
    _set("def class function fn func interface struct enum trait impl type"), "def"
)
_KEYWORD_KIND |= dict.fromkeys(_set("http status error code"), "http") | {"ago": "ago", "export": "export"}
