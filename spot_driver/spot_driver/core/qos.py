"""QoS profiles used by the driver's publishers and subscriptions."""

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

# Robot state at rate: reliable so tf2, robot_state_publisher and Nav2 (which ask for
# reliable delivery) all match; a shallow queue so nothing stale piles up.
STATE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10,
                   reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
# Velocity commands in (cmd_vel, arm/cmd_vel): reliable to match any publisher, and one deep.
# A velocity is only worth its newest value: a driver that fell behind sends that one, not a
# backlog of stale ones each moving the robot again.
VELOCITY_COMMAND = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                              reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.VOLATILE)
# Periodic status streams: newest sample wins.
STREAM = qos_profile_sensor_data
# Sensor streams (images, camera_info, depth, points, lidar), REP-2003: reliable by default so
# default subscribers (RViz displays, image_transport) receive them; best-effort subscribers
# match too. The parameter sensor_qos: best_effort publishes STREAM instead.
SENSOR = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5,
                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
SENSOR_PROFILES = {"reliable": SENSOR, "best_effort": STREAM}
# Latched data (static TF, settings): late subscribers get the last value.
LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Subscribing to latched data from many publishers (tf2's /tf_static listener depth).
LATCHED_LISTENER = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                              reliability=ReliabilityPolicy.RELIABLE,
                              durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Service and action requests: deep enough that hundreds of callers arriving at once are all
# queued and answered (the rclpy default of 10 silently drops the rest).
SERVICE_QUEUE_DEPTH = 1000
SERVICES = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=SERVICE_QUEUE_DEPTH,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)
# Keyword arguments for an rclpy ActionServer or ActionClient: the same depth for goals,
# results and cancels (a client's answers queue on its side as a server's requests do).
ACTION_QUEUES = dict(goal_service_qos_profile=SERVICES, result_service_qos_profile=SERVICES,
                     cancel_service_qos_profile=SERVICES)
