"""Mission nodes that use GraphNav: navigate to a waypoint, along a route or to a seed-frame
pose, and set the localization. They call the robot's graph-nav servicer in process, so they
pass the checks a client's requests do. Navigation gets the mission's pause time as its end
time and is renewed (same command id) when the mission's client renews the pause time."""

from bosdyn.api.graph_nav import graph_nav_pb2
from bosdyn.api.mission import nodes_pb2

from spot_sim.missions.nodes import FAILURE, RUNNING, SUCCESS, MissionNodeError, Node

Feedback = graph_nav_pb2.NavigationFeedbackResponse
# node kind -> (request type, response type, (node field, request field) copied)
_REQUESTS = {
    "navigate_to": (graph_nav_pb2.NavigateToRequest, graph_nav_pb2.NavigateToResponse,
                    (("destination_waypoint_id",) * 2, ("route_gen_params", "route_params"),
                     ("travel_params",) * 2)),
    "navigate_route": (graph_nav_pb2.NavigateRouteRequest, graph_nav_pb2.NavigateRouteResponse,
                       (("route",) * 2, ("route_follow_params",) * 2,
                        ("travel_params",) * 2)),
    "navigate_to_anchor": (graph_nav_pb2.NavigateToAnchorRequest,
                           graph_nav_pb2.NavigateToAnchorResponse,
                           (("seed_tform_goal",) * 2, ("route_gen_params", "route_params"),
                            ("travel_params",) * 2)),
}


class BosdynNavigate(Node):
    """BosdynNavigateTo, BosdynNavigateRoute and BosdynNavigateToAnchor."""

    def __init__(self, node_id, name, parameters, spec, kind: str):
        super().__init__(node_id, name, parameters)
        self.spec, self.kind = spec, kind
        self.command_id, self.sent_end_ns = 0, 0

    def _send(self, ctx) -> None:
        request_type, response_type, fields = _REQUESTS[self.kind]
        request = request_type(clock_identifier=ctx.clock_identifier,
                               command_id=self.command_id)
        for source, target in fields:
            if request.DESCRIPTOR.fields_by_name[target].message_type is None:
                setattr(request, target, getattr(self.spec, source))
            elif self.spec.HasField(source):
                getattr(request, target).CopyFrom(getattr(self.spec, source))
        request.leases.append(ctx.lease("body"))
        request.end_time.CopyFrom(ctx.timestamp(ctx.pause_ns))
        response = ctx.robot.navigate(self.kind, request)
        for use in response.lease_use_results:
            if use.status != use.STATUS_OK:
                raise MissionNodeError(f"lease error: {use.Status.Name(use.status)}")
        if self.command_id and response.status == response_type.STATUS_UNRECOGNIZED_COMMAND:
            return  # it ended between the feedback and the renewal: the next tick reads how
        if response.status != response_type.STATUS_OK:
            raise MissionNodeError(f"navigation refused: "
                                   f"{response_type.Status.Name(response.status)}")
        self.command_id, self.sent_end_ns = response.command_id, ctx.pause_ns

    def update(self, ctx):
        if self.command_id == 0:
            self._send(ctx)
        feedback = ctx.robot.navigation_feedback(self.command_id)
        key = self.spec.navigation_feedback_response_blackboard_key
        if key:
            ctx.blackboard.write(key, feedback.status)
        if feedback.status == Feedback.STATUS_FOLLOWING_ROUTE:
            if ctx.pause_ns != self.sent_end_ns:
                self._send(ctx)  # the mission's pause time was renewed: so is the command
            return RUNNING
        if feedback.status == Feedback.STATUS_REACHED_GOAL:
            return SUCCESS
        self.error = Feedback.Status.Name(feedback.status)
        return FAILURE

    def halt(self, ctx):
        if self.running and self.command_id:
            ctx.robot.cancel_navigation(self.command_id, ctx.lease("body"))
        super().halt(ctx)

    def finish(self, ctx):
        self.command_id = 0


class BosdynGraphNavLocalize(Node):
    def __init__(self, node_id, name, parameters, spec: nodes_pb2.BosdynGraphNavLocalize):
        super().__init__(node_id, name, parameters)
        self.spec = spec

    def update(self, ctx):
        response = ctx.robot.set_localization(self.spec.localization_request)
        if self.spec.response_bb_key:
            ctx.blackboard.write(self.spec.response_bb_key, response.status)
        if response.status == response.STATUS_OK:
            return SUCCESS
        self.error = graph_nav_pb2.SetLocalizationResponse.Status.Name(response.status)
        return FAILURE
