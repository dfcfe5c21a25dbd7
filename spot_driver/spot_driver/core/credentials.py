"""Robot credentials from the environment or a file; never from ROS parameters.

The password is kept out of ``repr``/``str`` so it cannot leak through logs or tracebacks.
"""

import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

USERNAME_ENV = "BOSDYN_CLIENT_USERNAME"
PASSWORD_ENV = "BOSDYN_CLIENT_PASSWORD"


class CredentialsError(Exception):
    """Credentials are missing or unreadable (the message never contains a secret)."""


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str = field(repr=False)

    def __str__(self) -> str:
        return f"Credentials(username={self.username!r}, password=<hidden>)"


def _parse_file(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines; keys ``username``/``password`` or the environment variable names."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().lower()
        key = {USERNAME_ENV.lower(): "username", PASSWORD_ENV.lower(): "password"}.get(key, key)
        values[key] = value.strip()
    return values


def load_credentials(credentials_file: str = "", environ: Mapping[str, str] = os.environ,
                     warn: Callable[[str], None] | None = None) -> Credentials:
    """Credentials from ``credentials_file`` when given, else from the environment."""
    if credentials_file:
        path = Path(credentials_file).expanduser()
        try:
            mode = path.stat().st_mode
            values = _parse_file(path)
        except OSError as exc:
            raise CredentialsError(
                f"cannot read credentials file {str(path)!r} (parameter 'credentials_file'): "
                f"{exc.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO) and warn is not None:
            warn(f"credentials file {str(path)!r} is readable by other users; "
                 f"restrict it with 'chmod 600'")
        if not values.get("username") or not values.get("password"):
            raise CredentialsError(
                f"credentials file {str(path)!r} must define username=... and password=...")
        return Credentials(values["username"], values["password"])
    username, password = environ.get(USERNAME_ENV, ""), environ.get(PASSWORD_ENV, "")
    if not username or not password:
        raise CredentialsError(
            f"no robot credentials: set {USERNAME_ENV} and {PASSWORD_ENV}, or the "
            f"'credentials_file' parameter")
    return Credentials(username, password)
