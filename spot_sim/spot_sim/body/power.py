"""Motor power: the on/off state machine and the power commands that follow it."""

from dataclasses import dataclass

from bosdyn.api import power_pb2, robot_state_pb2

MotorPower = robot_state_pb2.PowerState


@dataclass
class PowerCommand:
    id: int
    turn_on: bool
    status: int = power_pb2.STATUS_IN_PROGRESS


class Power:
    """Motor power state, the time its transition completes, and the power commands."""

    def __init__(self, power_on_sec: float, power_off_sec: float) -> None:
        self._on_sec, self._off_sec = power_on_sec, power_off_sec
        self.state = MotorPower.STATE_OFF
        self.change_ns = 0
        self.commands: dict[int, PowerCommand] = {}

    @property
    def on(self) -> bool:
        return self.state == MotorPower.STATE_ON

    @property
    def on_or_coming(self) -> bool:
        return self.state in (MotorPower.STATE_ON, MotorPower.STATE_POWERING_ON)

    def add_command(self, command_id: int, turn_on: bool) -> PowerCommand:
        command = PowerCommand(command_id, turn_on)
        self.commands[command_id] = command
        return command

    def begin_on(self, now_ns: int) -> None:
        if self.state in (MotorPower.STATE_OFF, MotorPower.STATE_POWERING_OFF):
            self.state = MotorPower.STATE_POWERING_ON
            self.change_ns = now_ns + int(self._on_sec * 1e9)

    def begin_off(self, now_ns: int) -> None:
        self.state = MotorPower.STATE_POWERING_OFF
        self.change_ns = now_ns + int(self._off_sec * 1e9)

    def step(self, now_ns: int) -> None:
        """Complete a transition whose time has come."""
        if now_ns < self.change_ns:
            return
        if self.state == MotorPower.STATE_POWERING_ON:
            self.state = MotorPower.STATE_ON
        elif self.state == MotorPower.STATE_POWERING_OFF:
            self.state = MotorPower.STATE_OFF

    def update_commands(self) -> None:
        """Power commands in progress succeed once the state is reached (a power-on that
        finds the motors off again was cut by the e-stop)."""
        for command in self.commands.values():
            if command.status != power_pb2.STATUS_IN_PROGRESS:
                continue
            if command.turn_on and self.state == MotorPower.STATE_ON:
                command.status = power_pb2.STATUS_SUCCESS
            elif not command.turn_on and self.state == MotorPower.STATE_OFF:
                command.status = power_pb2.STATUS_SUCCESS
            elif command.turn_on and self.state == MotorPower.STATE_OFF:
                command.status = power_pb2.STATUS_ESTOPPED

    def feedback(self, command_id: int) -> int:
        command = self.commands.get(command_id)
        return power_pb2.STATUS_UNKNOWN if command is None else command.status
