"""The robot model against Boston Dynamics' published figures, not against our own geometry
file: the numbers below are copied from the sources named beside them, and the model is read
through its URDF (expanded by xacro, loaded by pinocchio), so a wrong spot_kinematics.yaml
fails here whatever the simulator says.

Sources: [BD] the URDFs of the Spot SDK v5.1.4 (files/spot_base_urdf.zip, armless, and
files/spot_with_arm_urdf.zip); [DOC] Spot SDK docs (concepts/about_spot.md: net weight 32.5 kg,
HX +/-45 deg, knee 14-160 deg; concepts/arm/arm_concepts.md: the hand frame 0.19557 m ahead of
the wrist; joint_control/supplemental_data.md: gear ratio x max motor torque); [MJM] MuJoCo
Menagerie's boston_dynamics_spot (foot 0.3365 m below the knee).
"""

import math

import numpy as np
import pinocchio as pin
import pytest

from spot_driver.description.robot_model import robot_description

LEGS = ("front_left", "front_right", "rear_left", "rear_right")
HIP = {"front_left": (0.29785, 0.055), "front_right": (0.29785, -0.055),  # [BD]
       "rear_left": (-0.29785, 0.055), "rear_right": (-0.29785, -0.055)}
UPPER_LEG_Y = 0.110945  # [BD] hip_x joint -> hip_y joint
KNEE = (0.025, 0.0, -0.3205)  # [BD] hip_y joint -> knee
FOOT = 0.3365  # [MJM]
KNEE_LIMITS = {"front_left": (-2.7929, -0.254402), "front_right": (-2.7929, -0.255648),  # [BD]
               "rear_left": (-2.7929, -0.247067), "rear_right": (-2.7929, -0.248282)}
HIP_X_LIMIT = math.radians(45)  # [DOC]
HIP_EFFORT = 51 * 0.88  # [DOC] gear ratio x max motor torque, N m
ARM_EFFORT = {"arm_sh0": 101 * 0.89, "arm_el1": 101 * 0.23, "arm_wr0": 101 * 0.23,  # [DOC]
              "arm_wr1": 101 * 0.23, "arm_f1x": 56.55 * 0.20}
SH0_IN_BODY = (0.292, 0.0, 0.188)  # [BD]
UPPER_ARM, FOREARM = 0.3385, (0.4033, 0.0, 0.075)  # [BD] sh1 -> el0, el0 -> el1 (= wr0 = wr1)
HAND_IN_WRIST = 0.19557  # [DOC]
GRIPPER_IN_WRIST = (0.11745, 0.0, 0.01482)  # [BD]
LEG_MASS = 1.13688339 + 2.25620359 + 0.33  # [BD] hip + upper + lower leg
BODY_MASS = 16.70765207  # [BD]
ARM_MASS = 1.904699 + 1.85701942 + 0.94831958 + 1.0175482 + 0.5826374 + 0.93335298 \
    + 0.22383315  # [BD] sh0 .. wr1 and the finger
NET_WEIGHT = 32.5  # [DOC] kg, Spot without arm


def model(has_arm: bool) -> tuple[pin.Model, pin.Data]:
    m = pin.buildModelFromXML(robot_description(has_arm), pin.JointModelFreeFlyer())
    return m, m.createData()


def frame(m, d, q, name: str) -> np.ndarray:
    pin.framesForwardKinematics(m, d, q)
    return d.oMf[m.getFrameId(name)].translation.copy()


def neutral(m) -> np.ndarray:
    q = pin.neutral(m)  # body at the origin, every joint 0
    return q


@pytest.mark.parametrize("has_arm", [False, True])
def test_total_mass_is_the_published_description(has_arm):
    m, _ = model(has_arm)
    expected = BODY_MASS + 4 * LEG_MASS + (ARM_MASS if has_arm else 0.0)
    assert pin.computeTotalMass(m) == pytest.approx(expected, abs=1e-6)
    if not has_arm:  # and within 5 % of the spec sheet's net weight
        assert pin.computeTotalMass(m) == pytest.approx(NET_WEIGHT, rel=0.05)
    for inertia in m.inertias[1:]:  # every moving body has a physical inertia
        assert inertia.mass > 0 and np.all(np.linalg.eigvalsh(inertia.inertia) > 0)


def test_legs_have_spots_offsets_and_segment_lengths():
    m, d = model(False)
    q = neutral(m)
    for leg in LEGS:
        side = 1.0 if "left" in leg else -1.0
        hip_x, hip_y = HIP[leg]
        np.testing.assert_allclose(frame(m, d, q, f"{leg}_hip"), (hip_x, hip_y, 0), atol=1e-9)
        upper = (hip_x, hip_y + side * UPPER_LEG_Y, 0.0)
        np.testing.assert_allclose(frame(m, d, q, f"{leg}_upper_leg"), upper, atol=1e-9)
        knee = np.add(upper, KNEE)
        np.testing.assert_allclose(frame(m, d, q, f"{leg}_lower_leg"), knee, atol=1e-9)
        np.testing.assert_allclose(frame(m, d, q, f"{leg}_foot"), knee - (0, 0, FOOT),
                                   atol=1e-9)
    # feet 0.166 m beside the centre line (5.6 cm wider than a model without the hip_y offset)
    assert abs(frame(m, d, q, "front_left_foot")[1]) == pytest.approx(0.165945, abs=1e-6)


def test_joint_limits_and_efforts_are_spots():
    m, _ = model(True)
    for leg in LEGS:
        hx = m.getJointId(f"{leg}_hip_x")
        assert m.lowerPositionLimit[m.idx_qs[hx]] == pytest.approx(-HIP_X_LIMIT, abs=1e-5)
        assert m.upperPositionLimit[m.idx_qs[hx]] == pytest.approx(HIP_X_LIMIT, abs=1e-5)
        kn = m.getJointId(f"{leg}_knee")
        limits = (m.lowerPositionLimit[m.idx_qs[kn]], m.upperPositionLimit[m.idx_qs[kn]])
        assert limits == pytest.approx(KNEE_LIMITS[leg], abs=1e-6)
        # [DOC] the knee bends 14 to 160 degrees from straight
        assert math.degrees(-limits[1]) == pytest.approx(14.6, abs=1.0)
        assert math.degrees(-limits[0]) == pytest.approx(160.0, abs=0.1)
        for joint in ("hip_x", "hip_y"):
            index = m.idx_vs[m.getJointId(f"{leg}_{joint}")]
            assert m.effortLimit[index] == pytest.approx(HIP_EFFORT, rel=0.01)
    for joint, effort in ARM_EFFORT.items():
        assert m.effortLimit[m.idx_vs[m.getJointId(joint)]] == pytest.approx(effort, rel=0.02)


def test_arm_length_at_full_extension_and_the_gripper_offset():
    m, d = model(True)
    q = neutral(m)  # arm straight ahead: every arm joint 0
    sh0 = np.array(SH0_IN_BODY)
    wrist = sh0 + np.array([UPPER_ARM, 0.0, 0.0]) + np.array(FOREARM)
    np.testing.assert_allclose(frame(m, d, q, "arm0.link_wr1"), wrist, atol=1e-9)
    np.testing.assert_allclose(frame(m, d, q, "hand"), wrist + np.array([HAND_IN_WRIST, 0.0, 0.0]),
                               atol=1e-9)
    np.testing.assert_allclose(frame(m, d, q, "arm0.link_fngr"), wrist + np.array(GRIPPER_IN_WRIST),
                               atol=1e-9)
    assert frame(m, d, q, "hand")[0] == pytest.approx(1.22937, abs=1e-5)  # not 1.347
