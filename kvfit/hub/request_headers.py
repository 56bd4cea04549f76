"""The headers huggingface_hub's build_hf_headers sends (user agent, token), built cheaply.

build_hf_headers and get_token live in modules that import huggingface_hub.errors, which
imports httpx2: most of a Hub plan's start-up. So the answer is composed here from the
library's own constants whenever it is certain without that import, and left to the library
(utils._auth.get_token) whenever it is not:

- HF_HUB_DISABLE_IMPLICIT_TOKEN set: no token (build_hf_headers sends none);
- HF_OIDC_RESOURCE set (token exchange in CI) or running under IPython (Colab secrets):
  the library's get_token;
- HF_TOKEN, else HUGGING_FACE_HUB_TOKEN: that token, cleaned as the library cleans it;
- no token file (constants.HF_TOKEN_PATH): no token;
- a token file: its token, unless the stored-tokens file carries OAuth refresh data, in which
  case the library's get_token (it may refresh the token first).

The user agent is the library's with telemetry off (kvfit never lets the library add its
telemetry parts: composing them fetches an agent registry from the Hub):
"kvfit/<version>; hf_hub/<version>; python/<version>[; origin/<HF_HUB_USER_AGENT_ORIGIN>]".
"""

from __future__ import annotations

import os
import sys

from .. import __version__


def hf_headers() -> dict[str, str]:
    """{"user-agent": ..., "authorization": "Bearer <token>" when there is a token}."""
    import huggingface_hub
    from huggingface_hub import constants

    agent = (f"kvfit/{__version__}; hf_hub/{huggingface_hub.__version__}; "
             f"python/{sys.version.split()[0].rstrip('+')}")
    if constants.HF_HUB_USER_AGENT_ORIGIN is not None:
        agent += f"; origin/{constants.HF_HUB_USER_AGENT_ORIGIN}"
    headers = {"user-agent": agent}
    token = None if constants.HF_HUB_DISABLE_IMPLICIT_TOKEN else hub_token()
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return headers


def hub_token() -> str | None:
    """The token huggingface_hub.utils.get_token() would return (see the module docstring)."""
    from huggingface_hub import constants

    if os.environ.get("HF_OIDC_RESOURCE") or "IPython" in sys.modules:
        return _library_token()
    env = _clean(os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"))
    if env is not None:
        return env
    try:
        with open(constants.HF_TOKEN_PATH, encoding="utf-8") as handle:
            stored = _clean(handle.read())
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return _library_token()
    if stored is None or _may_refresh(constants.HF_STORED_TOKENS_PATH):
        return _library_token()
    return stored


def _may_refresh(stored_tokens_path: str) -> bool:
    """Whether the stored-tokens file holds OAuth refresh data (or cannot be read)."""
    try:
        with open(stored_tokens_path, "rb") as handle:
            return b"refresh_token" in handle.read()
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _library_token() -> str | None:
    from huggingface_hub.utils._auth import get_token

    return get_token()


def _clean(token: str | None) -> str | None:
    """huggingface_hub's _clean_token: no CR/LF, stripped, '' -> None."""
    if token is None:
        return None
    return token.replace("\r", "").replace("\n", "").strip() or None
