#!/usr/bin/env bash
# Create a DDS-Security (SROS2) keystore for the driver and its operators from
# config/dds/spot_policy.xml: a CA, and for each enclave (/spot_driver, /operator, /observer)
# a key, a certificate and signed permissions. Needs `ros2 security` (apt: ros-<distro>-sros2)
# and a Fast DDS with its security plugins (apt ROS 2 has them; the PyPI wheels do not).
#
#   scripts/sros2_keystore.sh ~/spot_keystore
#
# Then, on the payload:   export ROS_SECURITY_KEYSTORE=~/spot_keystore ROS_SECURITY_ENABLE=true \
#                                ROS_SECURITY_STRATEGY=Enforce ROS_SECURITY_ENCLAVE_OVERRIDE=/spot_driver
# on the operator's computer the same with /operator (or /observer), with a copy of the
# keystore's public/ and that one enclave only (never the CA's private key).
set -euo pipefail
KEYSTORE="${1:?usage: sros2_keystore.sh KEYSTORE_DIR}"
DDS="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/spot_driver/config/dds"
[ -f "$DDS/spot_policy.xml" ] || DDS="$(ros2 pkg prefix spot_driver)/share/spot_driver/config/dds"
command -v ros2 >/dev/null && ros2 security --help >/dev/null 2>&1 \
  || { echo "sros2_keystore.sh: 'ros2 security' not found (install ros-<distro>-sros2)" >&2; exit 2; }
if [ -e "$KEYSTORE/enclaves/governance.p7s" ]; then
  echo "sros2_keystore.sh: $KEYSTORE already has a signed governance; use a new directory" >&2
  exit 2
fi
# sros2 keeps a governance.xml it finds in the keystore and signs it with the new CA.
mkdir -p "$KEYSTORE/enclaves"
cp "$DDS/governance.xml" "$KEYSTORE/enclaves/governance.xml"
ros2 security generate_artifacts -k "$KEYSTORE" -p "$DDS/spot_policy.xml"
echo "keystore in $KEYSTORE: enclaves /spot_driver /operator /observer ($DDS)"
