"""What spot_ros2 offers a user, read from its own files (``../shared/vendor/spot_ros2``, or
``SPOT_ROS2_DIR``): launch arguments, parameters, and topics/services/actions with their
types. doc/migration.md is held against this (test/test_migration_units.py).

Read from the source shapes the anchor uses: its Python node's ``create_*``/action-server
calls (types resolved through its imports), its C++ nodes' ``create_<kind><Type>(name)`` calls
(names through their ``k...`` constants), its image publisher's per-camera topics, and its
ros2_control controllers (names from the controllers file, topics from each controller's
source). Names are relative to the robot's namespace; a per-camera name has ``<c>``."""

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent


def anchor_dir() -> Path:
    """``SPOT_ROS2_DIR`` when set, else the workplace copy."""
    chosen = os.environ.get("SPOT_ROS2_DIR")
    return Path(chosen) if chosen else REPO.parent / "shared" / "vendor" / "spot_ros2"


@dataclass(frozen=True)
class Offer:
    """One interface: its name, its ROS type (``pkg/msg|srv|action/Name``), where it is made."""
    name: str
    type: str
    source: str


# ------------------------------------------------------------------ launch arguments, params
def _calls(tree: ast.AST, names: set[str]):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in names:
                yield called, node


def _string(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def launch_arguments(root: Path) -> set[str]:
    """Every launch argument of the driver's launch files: each ``DeclareLaunchArgument`` and
    each ``LaunchConfiguration`` they read (most are declared by a helper package outside
    these files). Not ``rs_launch.py``: the RealSense driver's own launch file."""
    out = set()
    for path in sorted((root / "spot_driver" / "launch").glob("*.py")):
        if path.name == "rs_launch.py":
            continue
        tree = ast.parse(path.read_text())
        for _, call in _calls(tree, {"DeclareLaunchArgument", "LaunchConfiguration"}):
            if call.args and (name := _string(call.args[0])):
                out.add(name)
    return out


_CPP_PARAMETER = re.compile(r'constexpr auto kParameter\w*\s*=\s*"(\w+)"')


def parameters(root: Path) -> set[str]:
    """The driver's parameters: the Python node's ``declare_parameter`` names, the C++ nodes'
    ``kParameter...`` constants and the example parameter file's keys."""
    driver = root / "spot_driver"
    out = set()
    for path in sorted((driver / "spot_driver").glob("*.py")):
        tree = ast.parse(path.read_text())
        constants = {t.id: node.value.value for node in ast.walk(tree)  # NAME_PARAM = "x"
                     if isinstance(node, ast.Assign) and _string(node.value) is not None
                     for t in node.targets if isinstance(t, ast.Name)}
        for _, call in _calls(tree, {"declare_parameter"}):
            first = call.args[0] if call.args else None
            if name := _string(first) or constants.get(getattr(first, "attr", "")):
                out.add(name)
    for path in sorted((driver / "src").rglob("*.cpp")):
        out.update(_CPP_PARAMETER.findall(path.read_text()))
    example = yaml.safe_load((driver / "config" / "spot_ros_example.yaml").read_text())
    for node in example.values():
        out.update(node.get("ros__parameters", {}))
    return out


# ------------------------------------------------------------------------ the Python node
_PY_KINDS = {"create_publisher": 0, "create_subscription": 0, "create_service": 0,
             "ActionServer": 1, "SingleGoalActionServer": 1}


def _imports(tree: ast.AST) -> dict[str, str]:
    """Local name -> ROS type for ``from <pkg>.<msg|srv|action> import X [as Y]``."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[-1] in ("msg", "srv", "action") and \
                node.module.count(".") == 1:
            for alias in node.names:
                out[alias.asname or alias.name] = f"{node.module.replace('.', '/')}/{alias.name}"
    return out


def _python_node(path: Path) -> set[Offer]:
    tree = ast.parse(path.read_text())
    types = _imports(tree)
    out = set()
    where = path.name
    for called, call in _calls(tree, set(_PY_KINDS) | {"SingleGoalMultipleActionServers"}):
        if called == "SingleGoalMultipleActionServers":  # (Type, "name", handler, ...) tuples
            for element in ast.walk(call.args[1]):
                if isinstance(element, ast.Tuple) and len(element.elts) >= 2 and \
                        (name := _string(element.elts[1])):
                    out.add(Offer(name, types[element.elts[0].id], where))
            continue
        first = _PY_KINDS[called]
        if len(call.args) > first + 1 and (name := _string(call.args[first + 1])):
            kind = call.args[first]
            out.add(Offer(name, types[kind.id], where))
    trigger = "std_srvs/srv/Trigger"
    for _, call in _calls(tree, {"TriggerServiceWrapper"}):  # the Trigger services
        if len(call.args) >= 2 and (name := _string(call.args[1])):
            out.add(Offer(name, trigger, where))
    return out


# --------------------------------------------------------------------------- the C++ nodes
_CONSTANT = re.compile(r'constexpr auto (k\w+)\s*(?:\{|=)\s*"([^"]+)"')
_CREATE = re.compile(r"create_(?:publisher|subscription|service)<([\w:]+)>\(\s*([\w\"/~]+)")
_METHOD = re.compile(r"^\S[^\n;]*\b\w+::(\w+)\(", re.MULTILINE)
_PASSED = re.compile(r"(\w+)\(\s*(k\w+ServiceName|kServiceName)\s*,")


def _ros_type(cpp: str, aliases: dict[str, str]) -> str:
    """``spot_msgs::msg::X`` or a ``using`` name -> ``spot_msgs/msg/X``."""
    return aliases.get(cpp, cpp).replace("::", "/")


def _using(text: str) -> dict[str, str]:
    """``using X = a::b::Y;`` and ``using a::b::X;`` -> {X: full name}."""
    out = dict(re.findall(r"using (\w+)\s*=\s*([\w:]+);", text))
    declared = re.findall(r"using ([\w:]+::\w+);", text)
    out.update({full.rsplit("::", 1)[1]: full for full in declared})
    return out


def _cpp_nodes(driver: Path) -> set[Offer]:
    out = set()
    for folder in ("robot_state", "lease", "kinematic"):
        texts = {p: p.read_text() for p in sorted((driver / "src" / folder).glob("*.cpp"))}
        headers = " ".join(p.read_text() for p in (driver / "include" / "spot_driver" /
                                                    folder).glob("*.hpp"))
        constants = {k: v for t in texts.values() for k, v in _CONSTANT.findall(t)}
        aliases = _using(headers + " ".join(texts.values()))
        # A middleware's create_service(service_name, ...) gets its name from its caller,
        # which passes a k...ServiceName constant to the method that creates it.
        passed = {method: constants[k] for t in texts.values() for method, k in _PASSED.findall(t)}
        for path, text in texts.items():
            methods = [(m.start(), m.group(1)) for m in _METHOD.finditer(text)]
            for match in _CREATE.finditer(text):
                cpp_type, arg = match.groups()
                method = next((name for at, name in reversed(methods) if at < match.start()), "")
                if arg.startswith('"'):
                    name = arg.strip('"')
                elif arg in constants:
                    name = constants[arg]
                elif arg == "service_name":
                    name = passed[method]
                else:
                    raise ValueError(f"{path.name}: a {cpp_type} named by {arg}")
                out.add(Offer(name, _ros_type(cpp_type, aliases), path.name))
    # Images: one topic group per camera source (images_middleware_handle.cpp): Image at
    # <topic>/image, CompressedImage at <topic>/compressed, CameraInfo at <topic>/camera_info;
    # <topic> is camera/<c>, depth/<c> or depth_registered/<c> (spot_image_sources.cpp).
    handle = (driver / "src" / "images" / "images_middleware_handle.cpp").read_text()
    suffixes = dict(re.findall(r'create_publisher<([\w:]+)>\(\s*\w+ \+ "/(\w+)"', handle))
    sources = (driver / "src" / "api" / "spot_image_sources.cpp").read_text()
    for group in ("camera", "depth", "depth_registered"):
        assert f'"{group}/"' in sources or f'"{group}"' in sources, group
        for cpp_type, suffix in suffixes.items():
            if group != "camera" and suffix == "compressed":
                continue  # depth images are never JPEG: only the camera group compresses
            out.add(Offer(f"{group}/<c>/{suffix}", _ros_type(cpp_type, {}),
                          "images_middleware_handle.cpp"))
    return out


# ------------------------------------------------------------------------ the launch files
# What upstream nodes the launch files start publish under a remapped name (their docs):
# depth_image_proc's point cloud nodes publish ``points``; robot_state_publisher publishes
# ``robot_description``.
UPSTREAM = {"points": "sensor_msgs/msg/PointCloud2"}
ROBOT_DESCRIPTION = Offer("robot_description", "std_msgs/msg/String", "spot_driver.launch.py")


def _launch_name(node: ast.AST, constants: dict[str, str]) -> str | None:
    """A remapping's target as a name here: ``PathJoinSubstitution([spot_name, "depth",
    camera, "points"])`` -> ``depth/<c>/points``; f-strings alike (the robot's prefix left
    out). None for a shape it does not know."""
    parts = []
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):  # .perform(...)
        node = node.func.value
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "PathJoinSubstitution":
        for element in node.args[0].elts:
            if (text := _string(element)) is not None:
                parts.append(text)
            elif isinstance(element, ast.Name) and element.id == "camera":
                parts.append("<c>")
        return "/".join(parts)
    if isinstance(node, ast.JoinedStr):
        text = ""
        for value in node.values:
            if isinstance(value, ast.Constant):
                text += value.value
            elif (name := getattr(value.value, "id", "")) in constants:
                text += constants[name]
        return text.lstrip("/")
    return None


def _launch_files(driver: Path) -> set[Offer]:
    out = set()
    stitcher = (driver / "src" / "image_stitcher" / "image_stitcher.cpp").read_text()
    published = {f"{base}/{leaf}": f"sensor_msgs/msg/{kind}"
                 for base in re.findall(r'advertiseCamera\("(\w+)/image"', stitcher)
                 for leaf, kind in (("image", "Image"), ("camera_info", "CameraInfo"))}
    published.update(UPSTREAM)
    for path in sorted((driver / "launch").glob("*.py")):
        tree = ast.parse(path.read_text())
        constants = {t.id: v.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                     for t in node.targets if isinstance(t, ast.Name)
                     for v in [node.value] if _string(v) is not None}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.keyword) and node.arg == "remappings"):
                continue
            for pair in node.value.elts:
                inner = _string(pair.elts[0]) or _launch_name(pair.elts[0], {}) or ""
                inner = inner.rsplit("}", 1)[-1].lstrip("/")  # f"{cam_prefix}/x" -> x
                if inner in published and (name := _launch_name(pair.elts[1], constants)):
                    out.add(Offer(name, published[inner], path.name))
        if any(_string(c.value) == "robot_state_publisher" for c in ast.walk(tree)
               if isinstance(c, ast.keyword) and c.arg == "executable"):
            out.add(ROBOT_DESCRIPTION)
    return out


# ------------------------------------------------------------------------- ros2_control
def _controllers(root: Path) -> set[Offer]:
    """Each controller of the controllers file: its topics, ``~/x`` made ``<controller>/x``."""
    config = yaml.safe_load((root / "spot_ros2_control" / "config" /
                             "spot_default_controllers_with_arm.yaml").read_text())
    manager = config["/**"]["controller_manager"]["ros__parameters"]
    sources = root / "spot_controllers"
    out = set()
    for controller, spec in manager.items():
        if not isinstance(spec, dict) or "type" not in spec:
            continue
        package, cls = spec["type"].split("/")
        if package != "spot_controllers":  # upstream joint_state_broadcaster: joint_states,
            out.add(Offer("low_level/joint_states", "sensor_msgs/msg/JointState",  # remapped
                          "spot_ros2_control.launch.py"))  # there to low_level/joint_states
            continue
        stem = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", cls).lower()
        text = (sources / "src" / f"{stem}.cpp").read_text()
        header = (sources / "include" / package / f"{stem}.hpp")
        header_text = header.read_text() if header.exists() else ""
        aliases = _using(text + header_text)
        made = r'create_(?:publisher|subscription)<([\w:]+)>\(\s*"~/(\w+)"'
        for cpp_type, name in re.findall(made, text):
            out.add(Offer(f"{controller}/{name}", _ros_type(cpp_type, aliases), f"{stem}.cpp"))
        params = sources / "include" / package / "parameters" / f"{stem}_parameters.yaml"
        variables = dict(re.findall(r"std::string (\w+) = params_\.(\w+);", text))
        for cpp_type, var in re.findall(r'create_publisher<([\w:]+)>\(\s*"~/" \+ (\w+)', text):
            spec_yaml = yaml.safe_load(params.read_text())
            default = next(iter(spec_yaml.values()))[variables[var]]["default_value"]
            out.add(Offer(f"{controller}/{default}", _ros_type(cpp_type, aliases), f"{stem}.cpp"))
        if "ForwardControllersBase" in header_text:  # forward_command_controller's ~/commands
            out.add(Offer(f"{controller}/commands", "std_msgs/msg/Float64MultiArray",
                          f"{stem}.hpp"))
    return out


def interfaces(root: Path) -> set[Offer]:
    """Every topic, service and action spot_ros2 offers (each name with each type)."""
    driver = root / "spot_driver"
    return _python_node(driver / "spot_driver" / "spot_ros2.py") | _cpp_nodes(driver) | \
        _launch_files(driver) | _controllers(root)
