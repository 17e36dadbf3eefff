"""The one-screen "connect a model" help: where the config lives and what to put in it."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from tui import textual_fixes
from tui.bindings import closing
from tui.sanitize import inert
from tui.screens.dialog import Dialog
from tui.services import AppServices

textual_fixes.fill_mdurl_tables()  # before this screen's Markdown is parsed, in a thread


def connect_help(services: AppServices) -> str:
    """The help text, naming this machine's config path and the current model."""
    now = (
        "You are using the **built-in offline model**: it answers on your machine with a digest of what "
        "it was sent."
        if services.offline
        else f"You are connected to **{inert(services.model_name)}**."
    )
    config = inert(str(services.config_path))
    return f"""\
# Connect a model

{now} Heedful talks to any server that speaks the OpenAI chat-completions protocol.

## Quickest: environment variables

```sh
export OPENAI_API_KEY=sk-...                       # OpenAI
export OPENAI_BASE_URL=http://localhost:11434/v1   # Ollama, or any compatible server
heedful --model gpt-4o-mini
```

`heedful --base-url URL --model NAME` works for one run without changing anything.

## Or the config file

`{config}` (set `HEEDFUL_CONFIG` to use another file):

```toml
model = "openai/gpt-4o-mini"          # provider/model

[providers.openai]
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"        # the NAME of the variable holding the key
models = {{ "gpt-4o-mini" = 128000 }}   # context windows in tokens

[providers.ollama]                    # local: no key needed
base_url = "http://localhost:11434/v1"
models = {{ "llama3.2" = 131072 }}
```

Keys are read from the environment and never written to Heedful's database.
Restart Heedful after changing the file.

*Esc closes this screen.*
"""


class ConnectScreen(Dialog[None]):
    CSS_PATH = "connect.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [closing("escape,f3", name="connect_close")]

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        self.services = services

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog"):
            yield Markdown(connect_help(self.services), open_links=False)
