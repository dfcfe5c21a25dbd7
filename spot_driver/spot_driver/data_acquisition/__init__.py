"""Data acquisition: capture requests checked against the robot's capabilities and followed
to the end (``acquisition.py``), the store's captures listed and downloaded as the SDK lays
them out (``store.py``), messages (``conversions.py``), and the ``spot_data_acquisition``
node."""

from spot_driver.core.capability import Capability, Parameter, Section

PARAMETERS = Section(
    "Data acquisition (node spot_data_acquisition)",
    (
        Parameter("data_acquisition_publish_images", True,
                  "publish each completed capture's JPEG images on "
                  "data_acquisition/image/compressed (ros2 bag record keeps them)"),
    ))

CAPABILITY = Capability(
    name="data_acquisition",
    summary="start the data acquisition action and store services (data_acquisition)",
    nodes=("spot_driver.data_acquisition.node:DataAcquisitionNode",),
    parameters=PARAMETERS,
    readme="Data acquisition (node `spot_data_acquisition`)",
    field_test="test/test_data_acquisition_e2e.py::test_a_capture_is_listed_and_downloaded")
