"""``heedful`` with no subcommand: wire the store, the model and the turn service, then run the app."""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from engine.curation.budget import profile_named
from engine.errors import StoreError
from engine.protocols.memory import MemoryAssessor
from engine.protocols.models import (
    NO_CURATION_MODELS,
    ChatModel,
    CurationModels,
    CuratorModel,
    ModelSummarizer,
    TokenCounter,
)
from providers.resolve import ModelChoice, resolve_model
from sessions import paths
from sessions.config_file import ConfigRead, QuickSettings, quick_settings, read_config, write_default_config
from sessions.store import SqliteChatStore, open_store
from tui.services import THEME_STATE_KEY, AppServices, EngineServices, Notice

if TYPE_CHECKING:
    from engine.protocols.embeddings import Embedder
    from engine.turn.service import TurnService
    from sessions.config import Config

ENGINE_MODULES = (
    "engine.text.tokens",
    "engine.turn.retrying",
    "engine.memory.assessment",
    "engine.memory.service",
    "engine.curation.session_curations",
    "engine.curation.context_service",
    "engine.turn.service",
    "providers.catalog",
    "engine.curation.index",
    "engine.entities.extractor",
    "engine.curation.scoring",
    "engine.curation.planning",
    "engine.curation.context_building",
)
"""What the first frame does without, imported after it one module at a time (see
:func:`load_engine`); the first request imports the rest of what it needs itself."""


def build_model(choice: ModelChoice, config: Config, counter: TokenCounter) -> ChatModel:
    """The offline model, or an OpenAI-compatible client (whose import is deferred to first use)."""
    if choice.offline:
        from providers.offline import OfflineModel

        return OfflineModel(counter)
    from providers.openai_chat import OpenAIChatModel

    return OpenAIChatModel(
        model=choice.model,
        base_url=choice.base_url,
        api_key=choice.api_key,
        context_window=choice.context_window,
        connect_timeout=config.timeouts.connect,
        read_timeout=config.timeouts.read,
        key_hint=choice.key_hint,
    )


def build_assessor(choice: ModelChoice, config: Config) -> MemoryAssessor:
    """The connected model assesses memories (falling back to the heuristic); offline, the heuristic."""
    if choice.offline:
        from engine.memory.assessment import OfflineAssessor

        return OfflineAssessor()
    from providers.client_factory import client_factory
    from providers.memory_assessor import OpenAIMemoryAssessor

    clients = client_factory(
        base_url=choice.base_url, api_key=choice.api_key, connect_timeout=config.timeouts.connect
    )
    return OpenAIMemoryAssessor(clients, choice.model)


def build_curation_models(choice: ModelChoice, config: Config, counter: TokenCounter) -> CurationModels:
    """The curator, the summarizer and (``embeddings = "provider"``) the embedding model on the
    chat model's server (the config's curator model, or the chat model itself); none for the
    offline model or where the config turns them off."""
    settings = config.curation
    wants_vectors = config.embeddings == "provider"
    if choice.offline or not (settings.curator or settings.model_summaries or wants_vectors):
        return NO_CURATION_MODELS
    from providers.client_factory import client_factory
    from providers.prices import price_for
    from providers.windows import known_window

    name = settings.curator_model or choice.model
    clients = client_factory(
        base_url=choice.base_url, api_key=choice.api_key, connect_timeout=config.timeouts.connect
    )
    curator: CuratorModel | None = None
    summarizer: ModelSummarizer | None = None
    embedder: Embedder | None = None
    if settings.curator:
        from providers.openai_curator import OpenAICurator

        curator = OpenAICurator(clients, name, timeout=settings.curator_timeout)
    if settings.model_summaries:
        from providers.openai_summarizer import OpenAISummarizer

        window = (
            choice.context_window if name == choice.model else known_window(name) or choice.context_window
        )
        summarizer = OpenAISummarizer(clients, name, counter=counter, window=window)
    if wants_vectors:
        from providers.openai_embedder import ProviderEmbedder

        embedder = ProviderEmbedder(
            model=config.embedding_model,
            base_url=choice.base_url,
            api_key=choice.api_key,
            connect_timeout=config.timeouts.connect,
            key_hint=choice.key_hint,
        )
    return CurationModels(curator, summarizer, price_for(name, settings.prices), embedder)


def _open_store(database: Path, notices: list[Notice]) -> tuple[SqliteChatStore, str | None]:
    """The store and the theme kept in it; an in-memory store when the database cannot be used."""
    try:
        opened = open_store(database)
    except StoreError as err:
        return _unsaved(err, notices), None
    try:
        # The first read: a file that opens but is damaged where the app looks first fails here,
        # before the app starts, rather than in the middle of showing a session.
        theme = opened.store.get_state(THEME_STATE_KEY)
    except StoreError as err:
        opened.store.close()
        return _unsaved(err, notices), None
    if opened.notice:
        notices.append(Notice(opened.notice, "warning"))
    return opened.store, theme


def _unsaved(err: StoreError, notices: list[Notice]) -> SqliteChatStore:
    # Still start, so the user can read the message; nothing of this run will be kept.
    notices.append(Notice(f"{err.user_message} Nothing you write now will be saved.", "error"))
    return SqliteChatStore(Path(":memory:"))


def build_services(
    *,
    base_url: str | None = None,
    model: str | None = None,
    session_id: int | None = None,
    env: Mapping[str, str] | None = None,
    defer_engine: bool = False,
) -> tuple[AppServices, str | None]:
    """Everything the app needs, and the theme to restore. Never raises for bad config or storage.

    With ``defer_engine`` the turn service, the context and memory services and the token counter
    are left for the app to load once its first frame is drawn (``AppServices.engine``).
    """
    environment = os.environ if env is None else env
    notices: list[Notice] = []
    config_path = paths.config_path()
    read = read_config(config_path)
    # A file that surely validates with nothing to report is validated (pydantic's imports are
    # slow) with the engine, after the first frame; one that may have a problem, now.
    quick = quick_settings(read)
    settings: QuickSettings | Config
    config: Config | None = None
    if quick is None:
        from sessions.config import validate_config

        loaded = validate_config(read)
        config = settings = loaded.config
        notices.extend(Notice(problem, "error") for problem in loaded.problems)
    else:
        settings = quick
        notices.extend(Notice(problem, "error") for problem in read.problems)
    if not read.exists:
        try:
            if write_default_config(config_path):
                notices.append(Notice(f"Wrote a starter config to {config_path}."))
        except OSError as err:
            notices.append(
                Notice(f"Could not write a starter config to {config_path}: {err.strerror}.", "warning")
            )

    notices.extend(Notice(warning, "warning") for warning in paths.directory_warnings())
    database = paths.database_path()
    store, theme = _open_store(database, notices)

    choice = resolve_model(settings, environment, base_url=base_url, model=model)
    notices.extend(Notice(text, "warning") for text in choice.notices)
    profile = profile_named(settings.profile)
    if profile.warning:
        notices.append(Notice(profile.warning, "warning"))
    services = AppServices(
        store=store,
        load=partial(load_engine, store, config or read, choice, environment, base_url),
        first_model=choice.model,
        first_offline=choice.offline,
        config_path=config_path,
        database_path=database,
        notices=notices,
        session_id=session_id,
        keys=dict(settings.keys),
    )
    if not defer_engine:
        services.load_engine()
    return services, theme


def load_engine(
    store: SqliteChatStore,
    config: Config | ConfigRead,
    choice: ModelChoice,
    environment: Mapping[str, str],
    base_url: str | None,
) -> EngineServices:
    """The curation engine, the model and the token counter (blocking: the app runs it in a thread
    after its first frame), with the config validated now if it was not before the first frame.
    Modules are imported one at a time, handing the interpreter back to the event loop between
    two, so keys typed meanwhile are not held up for the whole import."""
    notices: list[Notice] = []
    if isinstance(config, ConfigRead):
        from sessions.config import validate_config

        loaded = validate_config(config)
        # quick_settings let the first frame go ahead only for a file with nothing more to report.
        notices.extend(Notice(p, "error") for p in loaded.problems if p not in config.problems)
        config = loaded.config
    for name in ENGINE_MODULES:
        importlib.import_module(name)
        time.sleep(0)
    from engine.memory.service import MemoryService
    from engine.text.tokens import LazyTokenCounter, load_counter
    from engine.turn.retrying import RetryPolicy
    from engine.turn.service import TurnService
    from providers.catalog import ModelCatalog

    counter = LazyTokenCounter(partial(load_counter, choice.model, model_is_offline=choice.offline))
    chat_model = build_model(choice, config, counter)
    memory = MemoryService(
        store,
        build_assessor(choice, config),
        counter,
        inactivity_minutes=config.memory.inactivity_minutes,
        enabled=config.memory.enabled,
    )
    try:
        memory.expire_now()  # memories past their expiry go before anything can read them
    except StoreError as err:
        notices.append(Notice(f"Old memories could not be expired: {err.user_message}", "warning"))
    models = ModelCatalog(
        config,
        environment,
        base_url=base_url,
        default=(chat_model, choice),
        build=lambda chosen: build_model(chosen, config, counter),
        curation=lambda chosen: build_curation_models(chosen, config, counter),
    )
    turns = TurnService(
        store,
        chat_model,
        counter,
        system_prompt=config.system_prompt,
        profile=profile_named(config.profile),
        retry_policy=RetryPolicy(retries=config.max_retries),
        memory=memory,
        curation_models=models.curation_for,
        recall=store,
    )
    memory.on_change = turns.refresh_memory
    turns.set_pin_limit(config.curation.pin_limit)
    memory.new_session_budget = turns.new_session_memory_budget
    # Reading the token encoding is slow: here, off the event loop, not at the first send.
    counter.load()
    if config.embeddings == "local":
        load_embedder(turns, notices)
    elif config.embeddings == "provider":
        use_provider_embedder(turns, store, choice, notices)
    return EngineServices(
        turns=turns,
        models=models,
        context=turns.context_service(),
        memory=memory,
        counter=counter,
        notices=notices,
    )


def load_embedder(turns: TurnService, notices: list[Notice]) -> None:
    """The local embedding model for recall by meaning (in load_engine's thread); a warning if it
    cannot be loaded, and words alone."""
    from providers.local_embedder import load_local_embedder

    try:
        turns.use_embedder(load_local_embedder())
    except (ImportError, OSError) as err:
        notices.append(
            Notice(f"Recall by meaning is off: the local embedding model did not load ({err}).", "warning")
        )


PROVIDER_EMBEDDING_SECONDS = 3.0
"""Seconds a plan may spend asking the provider for new vectors: a long session's first plan
measures what it can, and the next plans the rest."""


def use_provider_embedder(
    turns: TurnService, store: SqliteChatStore, choice: ModelChoice, notices: list[Notice]
) -> None:
    """Recall by meaning with the embedding model of the chat model's server (``embeddings =
    "provider"``), following the model, its vectors kept in the store; a warning when the app
    starts offline (words alone until a server is chosen)."""
    if choice.offline:
        notices.append(
            Notice('Recall by meaning is off: embeddings = "provider" needs a connected server.', "warning")
        )
    turns.use_model_embedder(cache=store, budget=PROVIDER_EMBEDDING_SECONDS)


def run_chat(*, base_url: str | None, model: str | None, session_id: int | None) -> int:
    services, theme = build_services(base_url=base_url, model=model, session_id=session_id, defer_engine=True)
    from tui.app import HeedfulApp  # Textual is imported only once the arguments are known to be good.

    app = HeedfulApp(services, theme=theme)
    try:
        app.run()
    finally:
        services.store.close()
    if app.return_code not in (None, 0):
        print("Heedful stopped unexpectedly; your messages are saved.", file=sys.stderr)
    return app.return_code or 0
