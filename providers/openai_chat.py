"""A :class:`engine.protocols.models.ChatModel` for any OpenAI-compatible chat-completions endpoint.

OpenAI itself, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter, Groq... all speak the same
``/v1/chat/completions`` protocol, so one adapter over ``openai.AsyncOpenAI`` serves them all.

The ``openai`` package is imported on the first request, not with this module: the first screen
should not wait for it. Every exception the package (or a broken
server) can produce is translated into :class:`engine.errors.ModelError`, whose message tells the
user what happened and what to do; cancellation is never translated.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Sequence
from typing import TYPE_CHECKING

from engine.chat import PromptMessage
from engine.errors import ModelError, ModelErrorKind
from engine.protocols.models import ModelEvent, ReplyFinished, TextDelta, UsageReport
from engine.text.redaction import StreamRedactor, redact
from engine.text.thinking import CLOSE, OPEN
from providers.client_factory import KeptClient, loaded
from providers.client_settings import ClientSettings
from providers.openai_errors import Phase, translate
from providers.stream_chunks import read_chunk
from providers.windows import window_in

THINK_OPEN = f"{OPEN}\n"
THINK_CLOSE = f"\n{CLOSE}\n\n"

if TYPE_CHECKING:
    import openai


class OpenAIChatModel:
    """A chat model behind an OpenAI-compatible HTTP API.

    Args:
        model: The model's name as the server knows it.
        base_url: The API's base URL (e.g. ``http://localhost:11434/v1``); None means the openai
            package's default (``$OPENAI_BASE_URL``, else OpenAI's own API).
        api_key: The key, or None (or empty) for servers that need none.
        context_window: The model's context window in tokens.
        connect_timeout: Seconds to wait for the connection.
        read_timeout: Seconds to wait for the answer's headers, and then for each next piece.
        key_hint: Where the key comes from (e.g. ``$OPENAI_API_KEY``), for error messages.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        api_key: str | None,
        context_window: int,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        key_hint: str | None = None,
    ) -> None:
        self._model = model
        self._settings = ClientSettings.of(base_url, api_key, connect_timeout, read_timeout)
        self._context_window = context_window
        self._window_asked = False
        self._server_window: int | None = None
        self._endpoint = self._settings.endpoint(model, key_hint)
        self._client = KeptClient(lambda: self._new_client())  # looked up when made (tests wrap it)

    @property
    def name(self) -> str:
        return self._model

    @property
    def is_offline(self) -> bool:
        return False

    @property
    def context_window(self) -> int:
        return self._context_window

    async def warm_up(self) -> None:
        """Import openai and build the client in a thread (done by the first request, it held the
        event loop). A request made meanwhile awaits the same warm-up. Never raises: a
        client that cannot be made fails the request that needs it."""
        with contextlib.suppress(Exception):
            await self._client.get()

    def _new_client(self) -> openai.AsyncOpenAI:
        import openai

        return loaded(openai.AsyncOpenAI(**self._settings.options()))

    async def window_limit(self) -> int | None:
        """The context window the server reports for the model, asked once; None if it says nothing.

        vLLM (``max_model_len``), LM Studio (``max_context_length``), OpenRouter
        (``context_length``) and Groq (``context_window``) say it in ``GET /models/{id}``; OpenAI
        and Ollama do not. Any failure counts as "nothing said": this must never stop a turn.
        """
        if self._window_asked:
            return self._server_window
        self._window_asked = True
        await self.warm_up()  # not the import on the event loop
        import openai

        try:
            client = self._client.now().with_options(timeout=WINDOW_PROBE_TIMEOUT, max_retries=0)
            model = await client.models.retrieve(self._model)
            self._server_window = window_in(model.model_extra or {})
        except (openai.OpenAIError, ValueError, AttributeError, TypeError):
            self._server_window = None
        return self._server_window

    async def aclose(self) -> None:
        """Close the HTTP connections. The model may be used again afterwards (a new client is made)."""
        await self._client.aclose()

    async def stream(
        self, messages: Sequence[PromptMessage], *, temperature: float | None = None
    ) -> AsyncGenerator[ModelEvent, None]:
        """Stream the reply to ``messages``; see :meth:`engine.protocols.models.ChatModel.stream`.

        Raises:
            ModelError: on any failure of the request, the connection or the server's answer,
                including a stream that ends without a finish reason (kind ``CUT``).
        """
        await self.warm_up()  # not the import on the event loop
        import openai

        phase: Phase = "request"
        finish_reason: str | None = None
        usage: UsageReport | None = None
        chunks = 0
        thinking = answered = False
        said = ""
        redactor = StreamRedactor()
        try:
            client = self._client.now()
            # What create() sends, posted as given and read as plain JSON: create() runs each
            # message through the client's type transform and builds a pydantic model of each
            # chunk, all on the event loop.
            body: dict[str, object] = {
                "model": self._model,
                "messages": [m.as_openai() for m in messages],
                "stream": True,
                "stream_options": {"include_usage": True},
            }
            if temperature is not None:
                body["temperature"] = temperature
            response = await client.post(
                "/chat/completions",
                body=body,
                cast_to=object,
                stream=True,
                stream_cls=openai.AsyncStream[object],
                options={"security": {"bearer_auth": True}},
            )
            phase = "stream"
            # Leaving the block by any route (an error, the consumer stopping, cancellation)
            # closes the HTTP response, so the server stops generating.
            async with response:
                async for data in response:
                    chunks += 1
                    chunk = read_chunk(data)
                    usage = chunk.usage or usage
                    # Thinking sent apart is kept as the inline block that opens the reply, as
                    # other reasoning models write it (see engine.text.thinking). Any that came after
                    # the answer began could not be told from the answer, and is let go.
                    if chunk.reasoning and not answered:
                        if not thinking:
                            thinking = True
                            said = THINK_OPEN
                        said += chunk.reasoning
                    if chunk.text:
                        if thinking:
                            thinking = False
                            said += THINK_CLOSE
                        answered = True
                        said += chunk.text
                    # Through the redaction gate: a key the server puts in the reply (even split
                    # over pieces) is not shown or stored.
                    if said and (said := redactor.feed(said)):
                        yield TextDelta(said)
                    said = ""
                    if chunk.finish_reason:
                        finish_reason = chunk.finish_reason
        except (openai.APIConnectionError, openai.APITimeoutError) as err:
            # Once the model has said it finished, the reply is whole: a connection that drops
            # (or stalls) before the usage chunk or [DONE] loses nothing the user would see.
            if finish_reason is None:
                raise self._translate(err, phase) from err
        except (openai.OpenAIError, ValueError) as err:
            # ValueError covers json.JSONDecodeError (a bad SSE data line: openai lets it through
            # unwrapped) and UnicodeDecodeError.
            raise self._translate(err, phase) from err
        if finish_reason is None:
            if chunks == 0:
                raise ModelError(
                    ModelErrorKind.BAD_RESPONSE,
                    f"The server at {self._endpoint.where} answered, but not with a stream of chat replies. "
                    "Check that the base URL points at an OpenAI-compatible API.",
                )
            raise ModelError(
                ModelErrorKind.CUT,
                "The reply stopped before the model said it had finished. Retry to ask again.",
            )
        # What the gate held back, and the end of thinking when the model finished while thinking.
        if rest := (redactor.feed(THINK_CLOSE) if thinking else "") + redactor.finish():
            yield TextDelta(rest)
        if usage is not None:
            yield usage
        yield ReplyFinished(finish_reason)

    async def list_models(self) -> list[str]:
        """The names of the models the server offers (``GET /models``).

        Raises:
            ModelError: as :meth:`stream` does.
        """
        await self.warm_up()
        import openai

        try:
            page = await self._client.now().models.list()
            data = getattr(page, "data", None) or []
            return [redact(str(model.id)) for model in data if getattr(model, "id", None) is not None]
        # openai builds the page without validating it, so an answer of the wrong shape (an HTML
        # page, say) fails with AttributeError or TypeError inside the package.
        except (openai.OpenAIError, ValueError, AttributeError, TypeError) as err:
            raise self._translate(err, "models") from err

    def _translate(self, err: Exception, phase: Phase) -> ModelError:
        return translate(err, phase, self._endpoint)


WINDOW_PROBE_TIMEOUT = 3.0
"""Seconds to wait for the server to describe the model before the first turn goes ahead anyway."""
