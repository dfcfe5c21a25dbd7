"""Nav2's parameters for one robot: ``config/nav2_params.yaml`` rendered for a namespace, a
frame prefix and the sensors the driver really publishes (pure: text in, text out).

Three rules of the tools decide what the file must look like (Nav2 1.3.13, rclcpp Jazzy):
- rclcpp gives a node the parameters under a top-level key that matches its *full* name
  (``/spot1/bt_navigator``), so under a namespace the whole file moves below that key (what
  nav2_bringup does with ``RewrittenYaml(root_key=namespace)``);
- a costmap runs as its own node in ``<namespace>/<costmap>``, where a relative topic of one of
  its layers would resolve: the layers' topics are made absolute in the robot's namespace;
- the collision monitor stops the robot while any of its sources is silent: only sources whose
  topics are published are kept.
"""

from collections.abc import Collection, Iterable

import yaml

# parameter names whose values are frames (Nav2 1.3.13: costmap_2d_ros.cpp, bt_navigator.cpp,
# behavior_server.cpp, nav2_smoother.cpp, collision_monitor_node.cpp, obstacle_layer.cpp)
FRAME_KEYS = ("global_frame", "robot_base_frame", "local_frame", "sensor_frame",
              "base_frame_id", "odom_frame_id")
COSTMAPS = ("local_costmap", "global_costmap")
# the point clouds Nav2 can observe, by the driver's topic (relative to the robot's namespace)
POINT_TOPICS = ("lidar/points", "depth/frontleft/points", "depth/frontright/points")
# what to start the driver with for each of them
POINT_TOPIC_SWITCH = {"lidar/points": "a lidar payload (lidar_source)",
                      "depth/frontleft/points": "publish_depth_points:=true",
                      "depth/frontright/points": "publish_depth_points:=true"}


def absolute(topic: str, namespace: str) -> str:
    """``topic`` resolved in the robot's namespace (absolute topics stay)."""
    if topic.startswith("/"):
        return topic
    return "/" + "/".join(part for part in (namespace.strip("/"), topic) if part)


def published_point_topics(topics: Iterable[str], namespace: str) -> set[str]:
    """The driver's point-cloud topics (relative, as in ``POINT_TOPICS``) among ``topics``
    (absolute names, e.g. from the ROS graph)."""
    present = set(topics)
    return {topic for topic in POINT_TOPICS if absolute(topic, namespace) in present}


def choose_point_topics(published: Collection[str], namespace: str) -> tuple[set[str], str]:
    """The point clouds Nav2 observes, given the topics on the ROS graph (absolute names), and
    a sentence for the log. With none published, the depth cameras' points: the collision
    monitor then holds every command until they come, and the sentence says so."""
    found = published_point_topics(published, namespace)
    if found:
        names = ", ".join(absolute(t, namespace) for t in sorted(found))
        return found, f"Nav2 observes {names}"
    wanted = {t for t in POINT_TOPICS if t.startswith("depth/")}
    names = ", ".join(absolute(t, namespace) for t in sorted(wanted))
    return wanted, (f"no point cloud of the driver is published: Nav2's collision monitor "
                    f"holds every command until {names} arrive (start the driver with "
                    f"{POINT_TOPIC_SWITCH[sorted(wanted)[0]]})")


def render(text: str, prefix: str = "", namespace: str = "",
           point_topics: Collection[str] | None = None) -> str:
    """The parameters with ``prefix`` before every frame, the costmap layers' topics absolute
    in ``namespace``, only the observation sources whose topic is in ``point_topics`` (all
    when None) and, under a namespace, everything below the key ``namespace``."""
    params = yaml.safe_load(text)
    _prefix_frames(params, prefix)
    if point_topics is not None:
        _keep_sources(params, set(point_topics))
    for costmap in COSTMAPS:
        _absolute_layer_topics(params[costmap][costmap]["ros__parameters"], namespace)
    if namespace.strip("/"):
        params = {namespace.strip("/"): params}
    return yaml.safe_dump(params, sort_keys=False)


def _prefix_frames(node, prefix: str) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in FRAME_KEYS and isinstance(value, str):
                node[key] = prefix + value
            else:
                _prefix_frames(value, prefix)


def _layers(costmap: dict) -> list[str]:
    return list(costmap.get("plugins", []))


def _keep_sources(params: dict, topics: set[str]) -> None:
    """Observation sources of the costmap layers and the collision monitor limited to
    ``topics``; a layer left without sources is taken out of its costmap."""
    for costmap_name in COSTMAPS:
        costmap = params[costmap_name][costmap_name]["ros__parameters"]
        for layer in _layers(costmap):
            sources = costmap[layer].get("observation_sources")
            if sources is None:
                continue
            kept = [s for s in sources.split() if costmap[layer][s]["topic"] in topics]
            for source in set(sources.split()) - set(kept):
                del costmap[layer][source]
            if kept:
                costmap[layer]["observation_sources"] = " ".join(kept)
            else:
                costmap["plugins"].remove(layer)
                del costmap[layer]
    monitor = params["collision_monitor"]["ros__parameters"]
    kept = [s for s in monitor["observation_sources"] if monitor[s]["topic"] in topics]
    if not kept:
        raise ValueError("the collision monitor needs at least one of "
                         f"{sorted(monitor[s]['topic'] for s in monitor['observation_sources'])}")
    for source in set(monitor["observation_sources"]) - set(kept):
        del monitor[source]
    monitor["observation_sources"] = kept


def _absolute_layer_topics(costmap: dict, namespace: str) -> None:
    for layer in _layers(costmap):
        entry = costmap[layer]
        if "map_topic" in entry:
            entry["map_topic"] = absolute(entry["map_topic"], namespace)
        for source in entry.get("observation_sources", "").split():
            entry[source]["topic"] = absolute(entry[source]["topic"], namespace)
