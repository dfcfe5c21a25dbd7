"""The Spot CAM's SDK clients, or a clear error on a robot without a Spot CAM."""

from bosdyn.client.robot import UnregisteredServiceNameError

from spot_driver.errors import CommandError

NO_SPOT_CAM = "this robot has no Spot CAM (its directory lists no {service} service)"


def spot_cam_client(connection, client_type, service: str = ""):
    """The connection's ``client_type`` client (of ``service``, default the type's own);
    CommandError when the robot has no Spot CAM."""
    service = service or client_type.default_service_name
    try:
        return connection.client(client_type, service)
    except UnregisteredServiceNameError as exc:
        raise CommandError(NO_SPOT_CAM.format(service=service)) from exc
