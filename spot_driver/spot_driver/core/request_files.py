"""Files a request names by path (a choreography, an animation, a mission): there, readable
and not too large, or a CommandError that names the request's field."""

from pathlib import Path

from spot_driver.core.errors import CommandError


def request_file(path: str, what: str, field: str, max_bytes: int) -> Path:
    """The file ``path`` (the request's ``field``) names, for a ``what`` file of at most
    ``max_bytes``."""
    if not path:
        raise CommandError(f"no {what} file given ({field} is empty)")
    file = Path(path).expanduser()
    try:
        if not file.is_file():
            raise CommandError(f"{what} file {str(file)!r} not found ({field})")
        size = file.stat().st_size
    except OSError as exc:  # a name too long, a folder the driver may not enter
        raise CommandError(f"cannot use {field} {str(file)[:200]!r} as a {what} file: "
                           f"{exc.strerror}") from None
    if size > max_bytes:
        raise CommandError(f"{what} file {str(file)!r} is larger than {max_bytes} bytes "
                           f"({field})")
    return file
