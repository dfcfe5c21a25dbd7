"""The robot's data-acquisition store over the SDK's ``DataAcquisitionStoreClient``: its
captures listed, and downloaded into a directory laid out as the SDK's
``data_acquisition_download.py`` (grpc) writes it. Reads only; nothing on the robot changes."""

from collections.abc import Iterator
from pathlib import Path

from bosdyn.api import data_acquisition_store_pb2, image_pb2
from bosdyn.client.data_acquisition_helpers import clean_filename
from bosdyn.client.data_acquisition_store import DataAcquisitionStoreClient

from spot_driver.core.errors import CommandError

Query = data_acquisition_store_pb2.QueryParameters


def _safe(name: str) -> str:
    """The SDK's clean_filename, and no way out of the directory: path separators become
    "_" and "." / ".." are not names (the SDK's program would follow them)."""
    cleaned = clean_filename(name).replace("/", "_").replace("\\", "_")
    return "_" if cleaned in ("", ".", "..") else cleaned


def file_name(result) -> tuple[str, str] | None:
    """(group folder, file name) for one query result, as the SDK's program names them
    (separators replaced); None for results it does not write (metadata, alerts)."""
    kind = result.WhichOneof("result")
    if kind == "image":
        extension = ".jpg" if result.image.image.format == image_pb2.Image.FORMAT_JPEG \
            else ".raw"
    elif kind in ("data", "large_data"):
        extension = getattr(result, kind).file_extension or ".bin"
    else:
        return None
    data_id = result.data_id
    name = f"{data_id.action_id.action_name}_{data_id.channel}{data_id.data_name}{extension}"
    return _safe(data_id.action_id.group_name), _safe(name)


def payload(result) -> bytes:
    kind = result.WhichOneof("result")
    if kind == "image":
        return result.image.image.data
    if kind == "large_data":
        return result.large_data.chunk.data
    return result.data.data


class CaptureStore:
    def __init__(self, connection) -> None:
        self._connection = connection

    def client(self) -> DataAcquisitionStoreClient:
        return self._connection.client(DataAcquisitionStoreClient)

    def results(self, group: str = "", action: str = "", contents: bool = True,
                ) -> Iterator:
        """Every stored capture (oldest first) of ``group`` and ``action`` ("" for all), paged
        through the robot's QueryStoredCaptures as the SDK's program pages it."""
        from_id = 0
        while True:
            query = Query(include_images=True, include_data=True, include_large=True,
                          include_metadata=True, captures_from_id=from_id,
                          only_include_identifiers=not contents)
            results = self.client().query_stored_captures(query=query).results
            if not results:
                return
            for result in results:
                action_id = result.data_id.action_id
                if (not group or action_id.group_name == group) and \
                        (not action or action_id.action_name == action):
                    yield result
            from_id = max(r.data_id.id for r in results) + 1

    def download(self, directory: str, group: str = "", action: str = "") -> list[str]:
        """Write the selected captures under ``directory``/DATA; returns the files written."""
        if not directory:
            raise CommandError("name a directory to download into")
        root = Path(directory).absolute()
        folder = Path(root.parent, _safe(root.name), "DATA")
        written = []
        for result in self.results(group, action):
            named = file_name(result)
            if named is None:
                continue
            path = folder / named[0] / named[1]
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(payload(result))
            except OSError as exc:
                raise CommandError(f"cannot write {path}: {exc.strerror}") from None
            written.append(str(path))
        if not written:
            raise CommandError("no stored captures match" + (f" group {group!r}" if group else "")
                               + (f" action {action!r}" if action else ""))
        return written
