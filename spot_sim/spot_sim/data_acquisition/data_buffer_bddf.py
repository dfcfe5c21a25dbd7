"""The data buffer as a BDDF file, as a robot's ``/v1/data-buffer/bddf/`` download gives it:
every record the data buffer holds in a time range (robot time), one protobuf series per
stream and message type, named ``<source>/<type>`` (a data blob's source is its channel):
``operator/TextMessage``, ``walker/Event`` [ours: a robot's series names are not
documented]."""

import io

from bosdyn.bddf import DataWriter, ProtobufSeriesWriter

from spot_sim.data_acquisition.data_buffer import DataStore


class _Buffer(io.BytesIO):
    """A file whose bytes outlive the BDDF writer closing it."""

    data = b""

    def close(self) -> None:
        if not self.closed:
            self.data = self.getvalue()
        super().close()


def bddf_bytes(store: DataStore, from_nsec: int, to_nsec: int, channels: list[str],
               type_name: str = "") -> bytes:
    """The BDDF of the records in [from_nsec, to_nsec] (only ``channels`` and messages of
    ``type_name``, when given); b"" when there are none."""
    out, written = _Buffer(), 0
    with DataWriter(out, annotations={"robot": "simulated Spot"}) as writer:
        series: dict[tuple[str, str], ProtobufSeriesWriter] = {}
        for page in store.pages():
            channel = page.spec.channel if page.spec is not None and page.spec.channel \
                else page.source
            if channels and channel not in channels:
                continue
            for nsec, message in list(page.records):
                name = message.DESCRIPTOR.full_name
                if not from_nsec <= nsec <= to_nsec or (type_name and name != type_name):
                    continue
                if (channel, name) not in series:
                    series[channel, name] = ProtobufSeriesWriter(
                        writer, type(message),
                        channel_name=f"{channel}/{message.DESCRIPTOR.name}")
                series[channel, name].write(nsec, message)
                written += 1
    out.close()
    return out.data if written else b""
