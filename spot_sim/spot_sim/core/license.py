"""The robot's license: which features it may use (``--withhold-feature`` removes some)."""

FEATURES = ("docking", "choreography", "graph_navigation", "arm", "autowalk", "spot_check",
            "joint_control")


class License:
    def __init__(self, serial: str, withheld: tuple[str, ...] = ()) -> None:
        unknown = set(withheld) - set(FEATURES)
        if unknown:
            raise ValueError(f"unknown license features {sorted(unknown)}; known: {FEATURES}")
        self.serial = serial
        self.features = tuple(f for f in FEATURES if f not in withheld)

    def allows(self, feature: str) -> bool:
        return feature in self.features

    def refusal(self, feature: str) -> str:
        """The sentence a feature-gated service answers with when ``feature`` is withheld."""
        return f"the robot's license does not include the feature {feature!r}"
