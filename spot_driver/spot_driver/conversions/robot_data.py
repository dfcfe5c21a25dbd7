"""The error every decoder of the robot's data raises (pure: no robot connection)."""


class RobotDataError(ValueError):
    """The robot answered with data the driver cannot read (a corrupt JPEG, a cloud whose
    bytes do not fit its encoding): an error the robot returned, said in a sentence, not a
    defect of the driver (``errors.describe`` says it as it is)."""
