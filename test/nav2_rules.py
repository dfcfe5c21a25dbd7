"""The rules by which a machine with ROS 2 Jazzy and Nav2 reads our Nav2 launch, encoded from
upstream source (Nav2 cannot run here; this is what stands in for it):

- rcl_yaml_param_parser (ros2/rcl 9.2, ``parse.c``): a params file's keys above
  ``ros__parameters`` join with ``/`` into a node name; nested keys below it join with ``.``
  into parameter names.
- rclcpp 28.1 (``parameter_map.cpp``, ``resolve_parameter_overrides.cpp``): a node takes the
  parameters of every entry whose name (with a leading ``/`` added) matches its *fully
  qualified* name as a whole, ``/*`` standing for one name token and ``/**`` for any number;
  later entries override earlier ones.
- rcl name expansion: a relative topic resolves in the subscribing node's namespace, ``~/`` in
  the node's own name; remappings given to a node replace the name first.
- Nav2 1.3.13 (ros-navigation/navigation2): which node subscribes to which topic parameter
  (with its default), and where costmaps live: ``Costmap2DROS(name, parent_namespace,
  name)`` is a node ``name`` in ``<parent namespace>/name`` (controller: local_costmap,
  planner: global_costmap).
"""

import re
from dataclasses import dataclass

import yaml

PARAMS_KEY = "ros__parameters"


def node_entries(text: str) -> list[tuple[str, dict]]:
    """(node name, {parameter: value}) for every node entry of a params file, in order."""
    out: list[tuple[str, dict]] = []

    def flatten(node: dict, prefix: str, into: dict) -> None:
        for key, value in node.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                flatten(value, name, into)
            else:
                into[name] = value

    def walk(node: dict, names: list[str]) -> None:
        for key, value in node.items():
            if key == PARAMS_KEY:
                assert names, "no node name before ros__parameters"
                params: dict = {}
                flatten(value, "", params)
                out.append(("/".join(names), params))
            elif isinstance(value, dict):
                walk(value, [*names, str(key)])

    walk(yaml.safe_load(text), [])
    return out


def matches(entry_name: str, node_fqn: str) -> bool:
    """rclcpp's ``is_node_name_matched`` (leading ``/`` added as ``parameter_map_from`` does)."""
    name = entry_name if entry_name.startswith("/") else "/" + entry_name
    pattern = name.replace("/*", r"(/\w+)")
    return re.fullmatch(pattern, node_fqn) is not None


def parameters_for(text: str, node_fqn: str) -> dict:
    """The parameters rclcpp gives the node ``node_fqn`` from a params file."""
    params: dict = {}
    for name, entry in node_entries(text):
        if matches(name, node_fqn):
            params.update(entry)
    return params


def fqn(namespace: str, name: str) -> str:
    return "/" + "/".join(p for p in (namespace.strip("/"), name) if p)


def resolve(topic: str, node_namespace: str, node_name: str,
            remaps: dict[str, str] | None = None) -> str:
    """rcl's expansion of ``topic`` for a node, after the node's remappings."""
    topic = (remaps or {}).get(topic, topic)
    if topic.startswith("/"):
        return topic
    if topic.startswith("~/"):
        return fqn(node_namespace, node_name) + topic[1:]
    return fqn(node_namespace, topic)


@dataclass(frozen=True)
class Topic:
    node: str  # the node's fully qualified name
    name: str  # resolved
    type: str  # ROS type, e.g. nav_msgs/msg/Odometry


ODOMETRY = "nav_msgs/msg/Odometry"
TWIST = "geometry_msgs/msg/Twist"
POINTS = "sensor_msgs/msg/PointCloud2"
SCAN = "sensor_msgs/msg/LaserScan"
GRID = "nav_msgs/msg/OccupancyGrid"
COSTMAP = "nav2_msgs/msg/Costmap"
POLYGON = "geometry_msgs/msg/PolygonStamped"
SOURCE_TYPES = {"pointcloud": POINTS, "scan": SCAN}


class Bringup:
    """Our Nav2 launch's nodes in ``namespace`` with the rendered ``params`` text and each
    node's remappings (the launch's ``NODES``)."""

    def __init__(self, params: str, namespace: str, nodes) -> None:
        self.text, self.namespace = params, namespace
        self.remaps = {server.name: server.remaps for server in nodes}

    def node_fqn(self, name: str) -> str:
        if name in ("local_costmap", "global_costmap"):
            return fqn(fqn(self.namespace, name), name)
        return fqn(self.namespace, name)

    def params(self, name: str) -> dict:
        return parameters_for(self.text, self.node_fqn(name))

    def _topic(self, name: str, topic: str, msg_type: str) -> Topic:
        node = self.node_fqn(name)
        namespace, _, node_name = node.rpartition("/")
        return Topic(node, resolve(topic, namespace, node_name, self.remaps.get(name)),
                     msg_type)

    def subscriptions(self) -> list[Topic]:
        """What the nodes subscribe to (Nav2 1.3.13: bt_navigator.cpp and controller_server.cpp
        ``odom_topic`` default ``odom``; velocity_smoother.cpp ``cmd_vel`` and, closed loop,
        ``odom_topic``; collision_monitor_node.cpp ``cmd_vel_in_topic`` default
        ``cmd_vel_smoothed``, source.cpp ``<source>.topic`` default ``scan``, polygon.cpp
        ``footprint_topic``; behavior_server.cpp's costmap and footprint topics;
        nav2_smoother.cpp ``costmap_topic`` / ``footprint_topic``; static_layer.cpp
        ``<layer>.map_topic`` else the costmap's ``map_topic``; obstacle_layer.cpp
        ``<layer>.<source>.topic`` default the source's name)."""
        out = []
        for name in ("bt_navigator", "controller_server"):
            out.append(self._topic(name, self.params(name).get("odom_topic", "odom"), ODOMETRY))
        smoother = self.params("velocity_smoother")
        out.append(self._topic("velocity_smoother", "cmd_vel", TWIST))
        if smoother.get("feedback", "OPEN_LOOP") == "CLOSED_LOOP":
            out.append(self._topic("velocity_smoother", smoother.get("odom_topic", "odom"),
                                   ODOMETRY))
        monitor = self.params("collision_monitor")
        out.append(self._topic("collision_monitor",
                               monitor.get("cmd_vel_in_topic", "cmd_vel_smoothed"), TWIST))
        for source in monitor["observation_sources"]:
            out.append(self._topic("collision_monitor", monitor.get(f"{source}.topic", "scan"),
                                   SOURCE_TYPES[monitor[f"{source}.type"]]))
        for polygon in monitor["polygons"]:
            if monitor.get(f"{polygon}.footprint_topic"):
                out.append(self._topic("collision_monitor",
                                       monitor[f"{polygon}.footprint_topic"], POLYGON))
        behavior = self.params("behavior_server")
        for key, default, msg_type in (
                ("local_costmap_topic", "local_costmap/costmap_raw", COSTMAP),
                ("global_costmap_topic", "global_costmap/costmap_raw", COSTMAP),
                ("local_footprint_topic", "local_costmap/published_footprint", POLYGON),
                ("global_footprint_topic", "global_costmap/published_footprint", POLYGON)):
            out.append(self._topic("behavior_server", behavior.get(key, default), msg_type))
        smoother_server = self.params("smoother_server")
        out.append(self._topic("smoother_server", smoother_server.get(
            "costmap_topic", "global_costmap/costmap_raw"), COSTMAP))
        out.append(self._topic("smoother_server", smoother_server.get(
            "footprint_topic", "global_costmap/published_footprint"), POLYGON))
        for costmap in ("local_costmap", "global_costmap"):
            out += self._layer_subscriptions(costmap)
        return out

    def _layer_subscriptions(self, costmap: str) -> list[Topic]:
        params = self.params(costmap)
        parent = fqn(self.namespace, "")
        out = []
        for layer in params.get("plugins", ["static_layer", "obstacle_layer",
                                            "inflation_layer"]):
            plugin = params[f"{layer}.plugin"]
            if plugin == "nav2_costmap_2d::StaticLayer":
                default = (parent if parent != "/" else "") + "/map"
                topic = params.get(f"{layer}.map_topic") or params.get("map_topic", default)
                out.append(self._topic(costmap, topic, GRID))
            elif plugin in ("nav2_costmap_2d::ObstacleLayer", "nav2_costmap_2d::VoxelLayer"):
                for source in params.get(f"{layer}.observation_sources", "").split():
                    kind = params.get(f"{layer}.{source}.data_type", "LaserScan")
                    out.append(self._topic(costmap, params.get(f"{layer}.{source}.topic", source),
                                           POINTS if kind == "PointCloud2" else SCAN))
        return out

    def publications(self) -> list[Topic]:
        """What the nodes publish that others of the bring-up read (costmap_2d_publisher.cpp
        ``costmap_raw``, costmap_2d_ros.cpp ``published_footprint``, controller_server.cpp and
        behaviors ``cmd_vel``, velocity_smoother.cpp ``cmd_vel_smoothed``, the collision
        monitor's ``cmd_vel_out_topic``)."""
        out = []
        for costmap in ("local_costmap", "global_costmap"):
            out.append(self._topic(costmap, "costmap_raw", COSTMAP))
            out.append(self._topic(costmap, "published_footprint", POLYGON))
        out.append(self._topic("controller_server", "cmd_vel", TWIST))
        out.append(self._topic("behavior_server", "cmd_vel", TWIST))
        out.append(self._topic("velocity_smoother", "cmd_vel_smoothed", TWIST))
        monitor = self.params("collision_monitor")
        out.append(self._topic("collision_monitor", monitor.get("cmd_vel_out_topic", "cmd_vel"),
                               TWIST))
        return out

    def unmet(self, driver_topics: dict[str, str]) -> list[Topic]:
        """Subscriptions that neither the driver (``{topic: type}``) nor the bring-up publish
        with their type."""
        offered = {(t.name, t.type) for t in self.publications()}
        offered |= set(driver_topics.items())
        return [t for t in self.subscriptions() if (t.name, t.type) not in offered]
